"""The text form read back: a recursive-descent parser for what :mod:`graph_passes.ir.printer` prints.

``parse_module(text, filename)`` returns a ``builtin.module``; text without a top-level ``module { … }`` is wrapped
in one. Ops without ``loc("…")`` get a :class:`SourceLoc` ``file:line:col`` (not printed back) so that verifier
errors point at the input line. Errors are one line: ``file:line:col: error: expected ',' or ')', found 'x'``.

The parser checks what only text can get wrong (unknown ops, undefined or redefined names, signatures that
disagree with the operands); everything else is the verifier's job.
"""

from __future__ import annotations

import bisect
import json
import re

import sympy

from .core import OP_REGISTRY, Block, IsolatedFromAbove, Operation, Region, Value
from .printer import SourceLoc
from .sizes import SYMBOL_NAME, parse_expr, sym
from .typed_attrs import TYPED_ATTRS, AttrFieldError
from .types import DTYPES, MEMORY_SCOPES, FunctionType, IndexType, MemRefType, ScalarType, TensorType, Type


class ParseError(ValueError):
    """Invalid text; the message is one line: ``file:line:col: error: …``."""


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")
_VALUE_NAME = re.compile(r"%([A-Za-z0-9_$.]+)")
_OP_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z0-9_.]+")
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\d+)")
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_INT = re.compile(r"\d+")
_DIM_WORD = re.compile(r"[a-z]+[0-9]*")
_KEYWORD_END = re.compile(r"(?![A-Za-z0-9_$.])")


class _Scope:
    def __init__(self, isolated: bool):
        self.isolated = isolated
        self.values: dict[str, Value] = {}


class Parser:
    def __init__(self, text: str, filename: str = "<string>"):
        self.text = text
        self.filename = filename
        self.pos = 0
        self.line_starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
        self.scopes: list[_Scope] = [_Scope(isolated=True)]

    # -- positions and errors ------------------------------------------------------------------------------------
    def where(self, pos: int | None = None) -> str:
        pos = self.pos if pos is None else pos
        line = bisect.bisect_right(self.line_starts, pos) - 1
        return f"{self.filename}:{line + 1}:{pos - self.line_starts[line] + 1}"

    def loc(self, pos: int) -> SourceLoc:
        return SourceLoc(self.where(pos))

    def error(self, message: str, pos: int | None = None) -> ParseError:
        return ParseError(f"{self.where(pos)}: error: {message}")

    def found(self) -> str:
        self.skip_ws()
        if self.pos >= len(self.text):
            return "end of input"
        m = re.compile(r"[^\s]{1,20}").match(self.text, self.pos)
        return repr(m.group(0))

    # -- lexing --------------------------------------------------------------------------------------------------
    def skip_ws(self) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n:
            c = text[self.pos]
            if c in " \t\r\n":
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end + 1
            else:
                return

    def at_end(self) -> bool:
        self.skip_ws()
        return self.pos >= len(self.text)

    def peek(self, s: str) -> bool:
        self.skip_ws()
        return self.text.startswith(s, self.pos)

    def peek_keyword(self, word: str) -> bool:
        return self.peek(word) and _KEYWORD_END.match(self.text, self.pos + len(word)) is not None

    def accept(self, s: str) -> bool:
        if self.peek(s):
            self.pos += len(s)
            return True
        return False

    def expect(self, s: str, context: str = "") -> None:
        if not self.accept(s):
            raise self.error(f"expected '{s}'{' ' + context if context else ''}, found {self.found()}")

    def match(self, regex: re.Pattern, what: str, skip: bool = True) -> str:
        if skip:
            self.skip_ws()
        m = regex.match(self.text, self.pos)
        if not m:
            raise self.error(f"expected {what}, found {self.found()}")
        self.pos = m.end()
        return m.group(0)

    def string(self) -> str:
        start = self.pos
        token = self.match(_STRING, "a string")
        try:
            return json.loads(token)
        except json.JSONDecodeError as e:
            raise self.error(f"invalid string escape ({e.msg})", start) from None

    # -- values and scopes ---------------------------------------------------------------------------------------
    def lookup(self, name: str, pos: int, op_name: str) -> Value:
        for scope in reversed(self.scopes):
            if name in scope.values:
                return scope.values[name]
            if scope.isolated:
                break
        raise self.error(f"'{op_name}' op uses undefined value %{name}", pos)

    def define(self, name: str, value: Value, pos: int) -> None:
        for scope in reversed(self.scopes):
            if name in scope.values:
                raise self.error(f"value %{name} is defined twice", pos)
            if scope.isolated:
                break
        self.scopes[-1].values[name] = value
        if not name.split("#")[0].isdigit():
            value.name_hint = name.split("#")[0]

    # -- types ---------------------------------------------------------------------------------------------------
    def parse_type(self) -> Type:
        self.skip_ws()
        start = self.pos
        if self.peek("("):
            return self.parse_function_type()
        if self.accept("tensor<"):
            shape, dtype = self._shape_and_dtype(start)
            self.expect(">", "to end the tensor type")
            return TensorType(tuple(shape), dtype)
        if self.accept("memref<"):
            shape, dtype = self._shape_and_dtype(start)
            scope = None
            if self.accept(","):
                self.skip_ws()
                scope_pos = self.pos
                scope = self.match(_IDENT, "a memory scope")
                if scope not in MEMORY_SCOPES:
                    known = ", ".join(MEMORY_SCOPES)
                    raise self.error(f"unknown memory scope '{scope}' (known: {known})", scope_pos)
            self.expect(">", "to end the memref type")
            return MemRefType(tuple(shape), dtype, scope)
        word = self.match(_IDENT, "a type")
        if word == "index":
            return IndexType()
        if word in DTYPES:
            return ScalarType(word)
        raise self.error(f"unknown type '{word}'", start)

    def _shape_and_dtype(self, start: int):
        """``s0x(s1*2)x128xf32`` (no spaces inside): dims separated by ``x``, the last word is the dtype."""
        shape = []
        while True:
            pos = self.pos
            if self.text.startswith("(", pos):
                shape.append(self._paren_expr())
            elif _INT.match(self.text, pos):
                shape.append(int(self.match(_INT, "a dimension", skip=False)))
            else:
                word = self.match(_DIM_WORD, "a dimension or element type", skip=False)
                if not self.text.startswith("x", self.pos):
                    if word not in DTYPES:
                        raise self.error(f"unknown element type '{word}'", pos)
                    return shape, word
                if not SYMBOL_NAME.match(word):
                    raise self.error(f"invalid dimension '{word}'", pos)
                shape.append(sym(word))
            if not self.text.startswith("x", self.pos):
                raise self.error(f"expected 'x' after a dimension, found {self.found()}")
            self.pos += 1

    def _paren_end(self) -> int:
        """Index just past the ``)`` matching the ``(`` at ``self.pos``."""
        depth = 0
        for i in range(self.pos, len(self.text)):
            c = self.text[i]
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    return i + 1
            elif c == "\n":
                break
        raise self.error("unbalanced '(' (a size expression must close on its line)")

    def _paren_expr(self) -> sympy.Expr:
        start, end = self.pos, self._paren_end()
        try:
            e = parse_expr(self.text[start + 1 : end - 1])
        except ValueError as e:
            raise self.error(str(e), start) from None
        self.pos = end
        return e

    def parse_type_list(self, close: str = ")") -> list[Type]:
        """Types up to (and including) ``close``; the opening bracket is already consumed."""
        types: list[Type] = []
        if self.accept(close):
            return types
        while True:
            types.append(self.parse_type())
            if self.accept(close):
                return types
            self.expect(",", f"or '{close}' in a type list")

    def parse_function_type(self) -> FunctionType:
        self.expect("(")
        inputs = self.parse_type_list()
        self.expect("->", "in a function type")
        results = self.parse_type_list() if self.accept("(") else [self.parse_type()]
        return FunctionType(tuple(inputs), tuple(results))

    # -- attributes ----------------------------------------------------------------------------------------------
    def parse_attr(self):
        self.skip_ws()
        start = self.pos
        if self.peek('"'):
            return self.string()
        if self.accept("["):
            items = []
            if self.accept("]"):
                return items
            while True:
                items.append(self.parse_attr())
                if self.accept("]"):
                    return items
                self.expect(",", "or ']' in a list")
        if self.peek("{"):
            return self.parse_attr_dict(unit_true=True)
        if self.accept("#"):
            return self.parse_typed_attr(start)
        if self.peek("("):
            end = self._paren_end()
            after = re.compile(r"\s*->").match(self.text, end)
            return self.parse_function_type() if after else self._paren_expr()
        if self.accept("-inf"):
            return float("-inf")
        m = _NUMBER.match(self.text, self.pos)
        if m:
            self.pos = m.end()
            token = m.group(0)
            return int(token) if _INT.fullmatch(token.lstrip("+-")) else float(token)
        if self.peek("tensor<") or self.peek("memref<"):
            return self.parse_type()
        word = self.match(_IDENT, "an attribute value")
        if word in ("true", "false"):
            return word == "true"
        if word in ("inf", "nan"):
            return float(word)
        if word == "index":
            return IndexType()
        if word in DTYPES:
            return ScalarType(word)
        if SYMBOL_NAME.match(word):
            return sym(word)
        raise self.error(f"expected an attribute value, found '{word}'", start)

    def parse_typed_attr(self, start: int):
        """``#mnemonic<{fields}>`` after the ``#``: the registered typed attribute, its fields checked."""
        mnemonic = self.match(_IDENT, "a typed attribute name")
        cls = TYPED_ATTRS.get(mnemonic)
        if cls is None:
            known = ", ".join(f"#{m}" for m in sorted(TYPED_ATTRS)) or "none"
            raise self.error(f"unknown typed attribute '#{mnemonic}' (known: {known})", start)
        self.expect("<", f"after '#{mnemonic}'")
        fields = self.parse_positional_fields(cls) if cls.positional else self.parse_attr_dict(unit_true=False)
        self.expect(">", f"to close '#{mnemonic}<'")
        try:
            return cls.from_fields(fields)
        except AttrFieldError as e:
            raise self.error(str(e), start) from None

    def parse_positional_fields(self, cls) -> dict:
        """``value, …, key = value, …`` inside ``#mnemonic<…>``: the positional fields as bare words, then the
        others by name."""
        fields: dict = {}
        for i, name in enumerate(cls.positional):
            if i:
                self.expect(",", f"before the {name} of '#{cls.mnemonic}'")
            fields[name] = self.match(_IDENT, f"the {name} of '#{cls.mnemonic}'")
        while self.accept(","):
            self.skip_ws()
            key_pos = self.pos
            key = self.match(_IDENT, f"a field name of '#{cls.mnemonic}'")
            if key in fields:
                raise self.error(f"field '{key}' given twice", key_pos)
            self.expect("=", f"after field name '{key}'")
            fields[key] = self.parse_attr()
        return fields

    def parse_attr_dict(self, unit_true: bool = True) -> dict:
        self.expect("{")
        attrs: dict = {}
        if self.accept("}"):
            return attrs
        while True:
            self.skip_ws()
            key_pos = self.pos
            key = self.string() if self.peek('"') else self.match(_IDENT, "an attribute name")
            if key in attrs:
                raise self.error(f"attribute '{key}' given twice", key_pos)
            if self.accept("="):
                attrs[key] = self.parse_attr()
            elif unit_true:
                attrs[key] = True
            else:
                raise self.error(f"expected '=' after attribute name '{key}', found {self.found()}")
            if self.accept("}"):
                return attrs
            self.expect(",", "or '}' in an attribute dictionary")

    def parse_loc(self) -> str | None:
        if not self.peek_keyword("loc"):
            return None
        self.pos += 3
        self.expect("(", "after 'loc'")
        self.skip_ws()
        text = self.string()
        self.expect(")", "to end the location")
        return text

    # -- ops -----------------------------------------------------------------------------------------------------
    def parse_result_defs(self) -> list[tuple[str, int, int]]:
        """``%a, %b:2 =`` → [(name, count, pos)]; empty when the op has no results."""
        defs: list[tuple[str, int, int]] = []
        if not self.peek("%"):
            return defs
        while True:
            self.skip_ws()
            pos = self.pos
            name = self.match(_VALUE_NAME, "a value name")[1:]
            count = 1
            if self.text.startswith(":", self.pos):
                self.pos += 1
                count = int(self.match(_INT, "a result count", skip=False))
            defs.append((name, count, pos))
            if self.accept("="):
                return defs
            self.expect(",", "or '=' after result names")

    def parse_op(self) -> Operation:
        self.skip_ws()
        start = self.pos
        defs = self.parse_result_defs()
        self.skip_ws()
        if self.peek_keyword("module"):
            op = self.parse_module_op(start)
        elif self.peek_keyword("func.func"):
            op = self.parse_func(start)
        else:
            op = self.parse_generic(start, sum(c for _, c, _ in defs))
        self._define_results(op, defs)
        return op

    def _define_results(self, op: Operation, defs) -> None:
        count = sum(c for _, c, _ in defs)
        if count != len(op.results):
            raise self.error(f"'{op.name}' op defines {count} result name(s) for {len(op.results)} result(s)",
                             defs[0][2] if defs else None)  # fmt: skip
        i = 0
        for name, n, pos in defs:
            if n == 1 and len(defs) > 1 or n == 1 and len(op.results) == 1:
                self.define(name, op.results[i], pos)
            else:
                for k in range(n):
                    self.define(f"{name}#{k}", op.results[i + k], pos)
                    op.results[i + k].name_hint = None if name.isdigit() else name
            i += n

    def parse_operands(self, op_name: str) -> list[Value]:
        operands: list[Value] = []
        if not self.peek("%"):
            return operands
        while True:
            self.skip_ws()
            pos = self.pos
            name = self.match(_VALUE_NAME, "a value name")[1:]
            if self.text.startswith("#", self.pos):
                self.pos += 1
                name += "#" + self.match(_INT, "a result index", skip=False)
            operands.append(self.lookup(name, pos, op_name))
            if not self.accept(","):
                return operands

    def parse_generic(self, start: int, num_defs: int) -> Operation:
        name_pos = self.pos
        name = self.match(_OP_NAME, "an op name")
        op_cls = OP_REGISTRY.get(name)
        if op_cls is None:
            raise self.error(f"unknown op '{name}'", name_pos)
        operands = self.parse_operands(name)
        attrs = self.parse_attr_dict() if self.peek("{") else {}
        regions: list[Region] = []
        if self.accept("("):
            isolated = op_cls.has_trait(IsolatedFromAbove)
            while True:
                regions.append(self.parse_region(isolated))
                if self.accept(")"):
                    break
                self.expect(",", f"or ')' after a region of '{name}'")
        operand_types, result_types = self.parse_signature(name, bool(operands), num_defs)
        sig_pos = self.pos
        if len(operand_types) != len(operands):
            raise self.error(f"'{name}' op has {len(operands)} operand(s) but its signature lists "
                             f"{len(operand_types)} type(s)", sig_pos)  # fmt: skip
        for i, (v, t) in enumerate(zip(operands, operand_types)):
            if v.type != t:
                raise self.error(f"'{name}' op operand {i} has type {v.type} but the signature says {t}", sig_pos)
        loc = self.parse_loc()
        return op_cls(operands, result_types, attrs, regions, loc if loc is not None else self.loc(start))

    def parse_signature(self, name: str, has_operands: bool, num_defs: int) -> tuple[list[Type], list[Type]]:
        if not self.accept(":"):
            if has_operands or num_defs:
                raise self.error(f"expected ':' and the type signature of '{name}', found {self.found()}")
            return [], []
        if not self.peek("("):
            return self.parse_comma_types(), []
        self.expect("(")
        operand_types = self.parse_type_list()
        self.expect("->", f"in the signature of '{name}'")
        result_types = self.parse_type_list() if self.accept("(") else [self.parse_type()]
        return operand_types, result_types

    def parse_comma_types(self) -> list[Type]:
        types = [self.parse_type()]
        while self.accept(","):
            types.append(self.parse_type())
        return types

    def parse_region(self, isolated: bool = False, entry_args=None) -> Region:
        """``{ [^bb0(%a: t, …):] ops … [^bb1 …] }``; ``entry_args`` [(name, type, pos)] come from a func header."""
        self.expect("{", "to start a region")
        self.scopes.append(_Scope(isolated))
        region = Region()
        block = None
        if entry_args is not None:
            block = region.add_block(Block())
            for name, t, pos in entry_args:
                self.define(name, block.add_arg(t), pos)
        while True:
            if self.accept("}"):
                break
            if self.at_end():
                raise self.error("expected '}' to end a region, found end of input")
            if self.peek("^"):
                block = region.add_block(self.parse_block_header())
                continue
            if block is None:
                block = region.add_block(Block())
            block.append(self.parse_op())
        if not region.blocks:
            region.add_block(Block())
        self.scopes.pop()
        return region

    def parse_block_header(self) -> Block:
        self.expect("^")
        self.match(_IDENT, "a block label", skip=False)
        block = Block()
        if self.accept("("):
            for name, t, pos in self.parse_arg_list():
                self.define(name, block.add_arg(t), pos)
        self.expect(":", "after the block label")
        return block

    def parse_arg_list(self) -> list[tuple[str, Type, int]]:
        """``%a: t, %b: t)`` (the ``(`` is consumed)."""
        args: list[tuple[str, Type, int]] = []
        if self.accept(")"):
            return args
        while True:
            self.skip_ws()
            pos = self.pos
            name = self.match(_VALUE_NAME, "an argument name")[1:]
            self.expect(":", f"after %{name}")
            args.append((name, self.parse_type(), pos))
            if self.accept(")"):
                return args
            self.expect(",", "or ')' in an argument list")

    def parse_func(self, start: int) -> Operation:
        self.pos += len("func.func")
        self.expect("@", "before the function name")
        sym_name = self.string() if self.peek('"') else self.match(_IDENT, "a function name", skip=False)
        self.expect("(", "to start the argument list")
        args = self.parse_arg_list()
        results: list[Type] = []
        if self.accept("->"):
            results = self.parse_type_list() if self.accept("(") else [self.parse_type()]
        extra = {}
        if self.peek_keyword("attributes"):
            self.pos += len("attributes")
            extra = self.parse_attr_dict()
        region = self.parse_region(isolated=True, entry_args=args)
        loc = self.parse_loc()
        ftype = FunctionType(tuple(t for _, t, _ in args), tuple(results))
        attrs = {"sym_name": sym_name, "function_type": ftype, **extra}
        return Operation.create("func.func", [], [], attrs, [region], loc if loc is not None else self.loc(start))

    def parse_module_op(self, start: int) -> Operation:
        self.pos += len("module")
        attrs = {}
        if self.peek_keyword("attributes"):
            self.pos += len("attributes")
            attrs = self.parse_attr_dict()
        region = self.parse_region(isolated=True)
        loc = self.parse_loc()
        return Operation.create("builtin.module", [], [], attrs, [region], loc if loc is not None else self.loc(start))


def decode_source(data: bytes, filename: str = "<string>") -> str:
    """The text of a source file's bytes; bytes that are not UTF-8 are a :class:`ParseError` at the first of them."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        before = data[: e.start].decode("utf-8")
        line = before.count("\n") + 1
        col = len(before) - (before.rfind("\n") + 1) + 1
        raise ParseError(f"{filename}:{line}:{col}: error: invalid UTF-8 byte 0x{data[e.start]:02x}") from None


def parse_module(text: str, filename: str = "<string>") -> Operation:
    """Parse a module; top-level ops without ``module { … }`` around them are wrapped in one. Text with neither
    (empty, or only comments) is an error."""
    p = Parser(text, filename)
    if p.at_end():
        raise p.error("expected 'module' or an op, found end of input (the input is empty)")
    if p.peek_keyword("module"):
        module = p.parse_op()
        if not p.at_end():
            raise p.error(f"expected end of input after the module, found {p.found()}")
        return module
    region = Region([Block()])
    while not p.at_end():
        region.blocks[0].append(p.parse_op())
    return Operation.create("builtin.module", [], [], {}, [region], SourceLoc(p.where(0)))


def parse_type(text: str) -> Type:
    p = Parser(text, "<type>")
    t = p.parse_type()
    if not p.at_end():
        raise p.error(f"expected end of type, found {p.found()}")
    return t


def parse_attr(text: str):
    p = Parser(text, "<attribute>")
    v = p.parse_attr()
    if not p.at_end():
        raise p.error(f"expected end of attribute, found {p.found()}")
    return v


__all__ = ["parse_module", "decode_source", "parse_type", "parse_attr", "ParseError", "Parser"]
