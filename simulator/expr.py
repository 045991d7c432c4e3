"""Integer/float expressions over scalar registers: operand addresses, loop bounds, sizes.

An expression is an Imm, a Reg or a BinOp. `compile_expr` turns one into a Python closure env -> value so
that resolving an instruction's operands costs one call per non-constant field. Text form is infix without
spaces, e.g. `(x_base+(i*256))`, so the assembly can split on whitespace.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass

from .errors import ProgramError

_OPS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv, "%": operator.mod,
    "min": min, "max": max, "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b),
    "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b), ">": lambda a, b: int(a > b),
    ">=": lambda a, b: int(a >= b), "/": operator.truediv,
}
_INFIX = {"+", "-", "*", "//", "%", "<", "<=", "==", "!=", ">", ">=", "/"}


class Expr:
    """Base: supports + - * // % and comparisons with ints/floats/other exprs."""

    def _b(self, op, other, rev=False):
        other = as_expr(other)
        return BinOp(op, other, self) if rev else BinOp(op, self, other)

    def __add__(self, o): return self._b("+", o)
    def __radd__(self, o): return self._b("+", o, True)
    def __sub__(self, o): return self._b("-", o)
    def __rsub__(self, o): return self._b("-", o, True)
    def __mul__(self, o): return self._b("*", o)
    def __rmul__(self, o): return self._b("*", o, True)
    def __floordiv__(self, o): return self._b("//", o)
    def __rfloordiv__(self, o): return self._b("//", o, True)
    def __mod__(self, o): return self._b("%", o)
    def __truediv__(self, o): return self._b("/", o)
    def __lt__(self, o): return self._b("<", o)
    def __le__(self, o): return self._b("<=", o)
    def __gt__(self, o): return self._b(">", o)
    def __ge__(self, o): return self._b(">=", o)
    def eq(self, o): return self._b("==", o)
    def ne(self, o): return self._b("!=", o)


@dataclass(frozen=True, eq=True)
class Imm(Expr):
    value: int | float

    def __str__(self):
        return repr(self.value) if isinstance(self.value, float) else str(self.value)


@dataclass(frozen=True, eq=True)
class Reg(Expr):
    name: str

    def __str__(self):
        return self.name


@dataclass(frozen=True, eq=True)
class BinOp(Expr):
    op: str
    a: Expr
    b: Expr

    def __str__(self):
        if self.op in _INFIX:
            return f"({self.a}{self.op}{self.b})"
        return f"{self.op}({self.a},{self.b})"


def as_expr(v) -> Expr:
    if isinstance(v, Expr):
        return v
    if isinstance(v, bool):
        return Imm(int(v))
    if isinstance(v, (int, float)):
        return Imm(v)
    if isinstance(v, str):
        return Reg(v)
    raise ProgramError(f"cannot use {v!r} ({type(v).__name__}) as an expression")


def emin(a, b) -> Expr:
    return BinOp("min", as_expr(a), as_expr(b))


def emax(a, b) -> Expr:
    return BinOp("max", as_expr(a), as_expr(b))


def regs_of(e: Expr) -> set[str]:
    if isinstance(e, Reg):
        return {e.name}
    if isinstance(e, BinOp):
        return regs_of(e.a) | regs_of(e.b)
    return set()


def compile_expr(e: Expr):
    """Return a closure env -> value."""
    if isinstance(e, Imm):
        v = e.value
        return lambda env: v
    if isinstance(e, Reg):
        name = e.name

        def get(env):
            try:
                return env[name]
            except KeyError:
                raise ProgramError(f"register {name!r} read before it was set") from None
        return get
    if isinstance(e, BinOp):
        fa, fb, f = compile_expr(e.a), compile_expr(e.b), _OPS[e.op]
        return lambda env: f(fa(env), fb(env))
    raise ProgramError(f"not an expression: {e!r}")


# ---- parsing -------------------------------------------------------------------------------------------
def parse_expr(text: str) -> Expr:
    """Parse the printed form back (recursive descent over the infix/func grammar)."""
    toks = _tokenize(text)
    pos, e = _parse_cmp(toks, 0)
    if pos != len(toks):
        raise ProgramError(f"trailing tokens in expression {text!r}")
    return e


def _tokenize(s: str) -> list[str]:
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c.isspace():
            i += 1
        elif s[i:i + 2] in ("//", "<=", ">=", "==", "!="):
            out.append(s[i:i + 2]); i += 2
        elif c in "+-*%()<>,/":
            out.append(c); i += 1
        else:
            j = i
            while j < len(s) and (s[j].isalnum() or s[j] in "_."):
                if (s[j] in "eE" and s[i].isdigit() and not s[i:j].startswith("0x") and j + 1 < len(s)
                        and s[j + 1] in "+-"):
                    j += 1  # exponent sign of a float literal
                j += 1
            if j == i:
                raise ProgramError(f"bad character {c!r} in expression {s!r}")
            out.append(s[i:j]); i = j
    return out


def _parse_cmp(t, p):
    p, a = _parse_add(t, p)
    while p < len(t) and t[p] in ("<", "<=", "==", "!=", ">", ">="):
        op = t[p]; p, b = _parse_add(t, p + 1); a = BinOp(op, a, b)
    return p, a


def _parse_add(t, p):
    p, a = _parse_mul(t, p)
    while p < len(t) and t[p] in ("+", "-"):
        op = t[p]; p, b = _parse_mul(t, p + 1); a = BinOp(op, a, b)
    return p, a


def _parse_mul(t, p):
    p, a = _parse_atom(t, p)
    while p < len(t) and t[p] in ("*", "//", "%", "/"):
        op = t[p]; p, b = _parse_atom(t, p + 1); a = BinOp(op, a, b)
    return p, a


def _parse_atom(t, p):
    if p >= len(t):
        raise ProgramError("unexpected end of expression")
    tok = t[p]
    if tok == "(":
        p, e = _parse_cmp(t, p + 1)
        if t[p] != ")":
            raise ProgramError(f"expected ')' got {t[p]!r}")
        return p + 1, e
    if tok == "-":
        p, e = _parse_atom(t, p + 1)
        if isinstance(e, Imm):
            return p, Imm(-e.value)
        return p, BinOp("-", Imm(0), e)
    if tok in ("min", "max") and p + 1 < len(t) and t[p + 1] == "(":
        p, a = _parse_cmp(t, p + 2)
        if t[p] != ",":
            raise ProgramError(f"expected ',' in {tok}()")
        p, b = _parse_cmp(t, p + 1)
        return p + 1, BinOp(tok, a, b)
    if tok[0].isdigit():
        if any(c in tok for c in ".eE") and not tok.startswith("0x"):
            return p + 1, Imm(float(tok))
        return p + 1, Imm(int(tok, 0))
    if tok in ("inf", "nan"):
        return p + 1, Imm(float(tok))
    return p + 1, Reg(tok)
