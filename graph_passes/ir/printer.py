"""The text form: an MLIR-like printer (its inverse is :mod:`graph_passes.ir.parser`).

Every op prints in one generic form; only ``builtin.module`` and ``func.func`` have a pretty form::

    %0 = hfusion.broadcast %arg1 {dims = [0]} : (tensor<128xf32>) -> tensor<s0x128xf32> loc("expand")
    %1:2 = scf.for %lb, %ub, %step, %a, %b ({
    ^bb0(%iv: index, %x: f32, %y: f32):
      scf.yield %x, %y : f32, f32
    }) : (index, index, index, f32, f32) -> (f32, f32)
    func.return %1 : tensor<s0x128xf32>          (an op without results prints only its operand types)

Values are named per function (an ``IsolatedFromAbove`` op): a name hint when it is printable and still free,
otherwise ``%argN`` for block arguments and ``%N`` for results; a multi-result op defines ``%name:N`` and its
results are used as ``%name#i``. Attribute dictionaries are printed with sorted keys; in the ``attributes {…}``
of a module or function ``True`` prints as a unit attribute (``{kernel}``); the parser accepts that form anywhere. Locations print as ``loc("…")`` unless they are :class:`SourceLoc` (a position in the
parsed input, which the parser records so that verifier errors point at the input line).
"""

from __future__ import annotations

import json
import math
import re

import sympy

from .core import Block, IsolatedFromAbove, Operation, Region, Value
from .sizes import expr_str
from .typed_attrs import FieldDict, TypedAttr
from .types import Type


class SourceLoc(str):
    """A location that is a position in parsed text (``file:line:col``); not printed, so round-trips are exact."""


IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_$.]*$")
_BAD_NAME_CHARS = re.compile(r"[^A-Za-z0-9_$.]")
INDENT = "  "


# ---------------------------------------------------------------------------------------------------------------
# Attribute values


def format_attr(value) -> str:
    """Text of one attribute value; :func:`graph_passes.ir.parser.parse_attr` reads it back."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_float(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Type):
        return str(value)
    if isinstance(value, TypedAttr):  # ``#mnemonic<{fields}>``, defaults left out (ir/typed_attrs.py)
        return f"#{value.mnemonic}<{format_typed_body(value)}>"
    if isinstance(value, sympy.Basic):
        return format_size(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_attr(v) for v in value) + "]"
    if isinstance(value, FieldDict):
        return format_fields(value)
    if isinstance(value, dict):
        return format_attr_dict(value, unit_true=False)
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return format_attr(value.item())
    raise TypeError(f"cannot print attribute value {value!r} of type {type(value).__name__}")


def format_float(x: float) -> str:
    """A float that re-parses as a float: ``1.0``, ``1e-05``, ``inf``, ``-inf``, ``nan``."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(float(x))  # repr always contains '.', 'e' or is inf/nan


def format_size(e) -> str:
    """A size expression: an integer, a bare symbol (``s0``) or a parenthesised expression (``(s0*128)``)."""
    e = sympy.sympify(e)
    if e.is_Integer:
        return str(int(e))
    if e.is_Symbol:
        return e.name
    return f"({expr_str(e)})"


def format_key(key: str) -> str:
    return key if IDENT.match(key) else json.dumps(key, ensure_ascii=False)


def format_attr_dict(attrs: dict, unit_true: bool = False) -> str:
    parts = []
    for key in sorted(attrs):
        value = attrs[key]
        if unit_true and value is True:
            parts.append(format_key(key))
        else:
            parts.append(f"{format_key(key)} = {format_attr(value)}")
    return "{" + ", ".join(parts) + "}"


def format_typed_body(value: TypedAttr) -> str:
    """``{fields}``, or the positional fields bare and then the others: ``zZ, fractal = [16, 16]``."""
    if not value.positional:
        return format_fields(value.fields())
    bare = [str(getattr(value, name)) for name in value.positional]
    rest = [f"{format_key(k)} = {format_attr(v)}" for k, v in value.fields().items() if k not in value.positional]
    return ", ".join(bare + rest)


def format_fields(fields: dict) -> str:
    """A typed attribute's fields in declaration order (not sorted: they read as the record declares them)."""
    return "{" + ", ".join(f"{format_key(k)} = {format_attr(v)}" for k, v in fields.items()) + "}"


def format_loc(loc) -> str:
    if loc is None or isinstance(loc, SourceLoc):
        return ""
    return f" loc({json.dumps(str(loc), ensure_ascii=False)})"


# ---------------------------------------------------------------------------------------------------------------
# Value names


class _Namer:
    """Unique value names in one isolated scope (a function or a module)."""

    def __init__(self):
        self.names: dict[int, str] = {}
        self.used: set[str] = set()
        self.next_result = 0
        self.next_arg = 0

    def _fresh(self, hint: str | None, kind: str) -> str:
        if hint:
            hint = _BAD_NAME_CHARS.sub("_", hint)
            if IDENT.match(hint):
                name, k = hint, 1
                while name in self.used:
                    name, k = f"{hint}_{k}", k + 1
                self.used.add(name)
                return name
        while True:
            if kind == "arg":
                name, self.next_arg = f"arg{self.next_arg}", self.next_arg + 1
            else:
                name, self.next_result = str(self.next_result), self.next_result + 1
            if name not in self.used:
                self.used.add(name)
                return name

    def define_arg(self, arg: Value) -> str:
        name = self._fresh(arg.name_hint, "arg")
        self.names[id(arg)] = "%" + name
        return "%" + name

    def define_results(self, op: Operation) -> str:
        """The text left of ``=``: ``%0`` or ``%0:2``."""
        if not op.results:
            return ""
        base = self._fresh(op.results[0].name_hint, "result")
        if len(op.results) == 1:
            self.names[id(op.results[0])] = "%" + base
            return "%" + base
        for r in op.results:
            self.names[id(r)] = f"%{base}#{r.index}"
        return f"%{base}:{len(op.results)}"

    def use(self, v: Value) -> str:
        name = self.names.get(id(v))
        if name is None:
            return f"%<<undefined {v!r}>>"  # printed IR that a verifier would reject; never crash the printer
        return name


# ---------------------------------------------------------------------------------------------------------------
# Printer


class Printer:
    def __init__(self):
        self.lines: list[str] = []
        self.namers: list[_Namer] = [_Namer()]

    @property
    def namer(self) -> _Namer:
        return self.namers[-1]

    def emit(self, depth: int, text: str) -> None:
        self.lines.append(INDENT * depth + text)

    # -- ops -----------------------------------------------------------------------------------------------------
    def print_op(self, op: Operation, depth: int) -> None:
        if op.name == "builtin.module":
            self._print_module(op, depth)
        elif op.name == "func.func":
            self._print_func(op, depth)
        else:
            self._print_generic(op, depth)

    def _print_module(self, op: Operation, depth: int) -> None:
        attrs = f"attributes {format_attr_dict(op.attributes, unit_true=True)} " if op.attributes else ""
        self.emit(depth, f"module {attrs}{{")
        self.namers.append(_Namer())
        for region in op.regions:
            for block in region.blocks:
                for inner in block.ops:
                    self.print_op(inner, depth + 1)
        self.namers.pop()
        self.emit(depth, "}" + format_loc(op.loc))

    def _print_func(self, op: Operation, depth: int) -> None:
        ftype = op.attributes.get("function_type")
        sym_name = op.attributes.get("sym_name", "")
        if not op.regions or len(op.regions[0].blocks) != 1 or ftype is None:
            self._print_generic(op, depth)  # malformed: the generic form shows everything
            return
        self.namers.append(_Namer())
        block = op.regions[0].blocks[0]
        args = ", ".join(f"{self.namer.define_arg(a)}: {a.type}" for a in block.args)
        results = f" -> ({', '.join(map(str, ftype.results))})" if ftype.results else ""
        rest = {k: v for k, v in op.attributes.items() if k not in ("sym_name", "function_type")}
        attrs = f" attributes {format_attr_dict(rest, unit_true=True)}" if rest else ""
        self.emit(depth, f"func.func @{sym_name}({args}){results}{attrs} {{")
        for inner in block.ops:
            self.print_op(inner, depth + 1)
        self.namers.pop()
        self.emit(depth, "}" + format_loc(op.loc))

    def _print_generic(self, op: Operation, depth: int) -> None:
        operands = ", ".join(self.namer.use(v) for v in op.operands)
        results = self.namer.define_results(op)  # results are named before the regions, as they print first
        head = (f"{results} = " if results else "") + op.name + (f" {operands}" if operands else "")
        if op.attributes:
            head += " " + format_attr_dict(op.attributes)
        if not op.regions:
            self.emit(depth, head + self._signature(op))
            return
        isolated = op.has_trait(IsolatedFromAbove)
        if isolated:
            self.namers.append(_Namer())
        self.emit(depth, head + " (")  # _print_region appends "{"
        for i, region in enumerate(op.regions):
            if i:
                self.lines[-1] += ", "
            self._print_region(region, depth)
        self.lines[-1] += ")" + self._signature(op)
        if isolated:
            self.namers.pop()

    def _signature(self, op: Operation) -> str:
        operand_types = [str(v.type) for v in op.operands]
        if not op.results:
            sig = f" : {', '.join(operand_types)}" if operand_types else ""
        else:
            result_types = [str(r.type) for r in op.results]
            res = result_types[0] if len(result_types) == 1 else f"({', '.join(result_types)})"
            sig = f" : ({', '.join(operand_types)}) -> {res}"
        return sig + format_loc(op.loc)

    def _print_region(self, region: Region, depth: int) -> None:
        self.lines[-1] += "{"
        for b_i, block in enumerate(region.blocks):
            if block.args or b_i > 0:
                args = ", ".join(f"{self.namer.define_arg(a)}: {a.type}" for a in block.args)
                self.emit(depth, f"^bb{b_i}" + (f"({args})" if block.args else "") + ":")
            for inner in block.ops:
                self.print_op(inner, depth + 1)
        self.emit(depth, "}")


def print_op(op: Operation) -> str:
    """The text of ``op`` (and everything nested in it), ending with a newline."""
    p = Printer()
    p.print_op(op, 0)
    return "\n".join(p.lines) + "\n"


def print_module(op: Operation) -> str:
    """The text of a module (any op works; a module is the usual root)."""
    return print_op(op)


def print_block(block: Block) -> str:
    p = Printer()
    for op in block.ops:
        p.print_op(op, 0)
    return "\n".join(p.lines) + "\n"


__all__ = ["print_module", "print_op", "print_block", "format_attr", "format_float", "SourceLoc"]
