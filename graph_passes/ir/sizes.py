"""Symbolic sizes: the one service that answers shape questions.

Every dimension in the IR is a sympy expression over named shape symbols (``s0``, ``s77`` …), each with an
integer value range. Passes never call sympy on shapes directly; they ask a :class:`SizeVars`.

"Statically known" never guesses: ``statically_known_equal(a, b)`` is True only when ``a == b`` holds for every
binding of the symbols inside their ranges; False means "not provable", not "different".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import sympy

INF = 2**63 - 1  # the upper bound of an unbounded symbol (torch's int_oo)

SYMBOL_NAME = re.compile(r"^[a-z]+[0-9]+$")

def sym(name: str) -> sympy.Symbol:
    """The shape symbol called ``name`` (integer, positive)."""
    if not SYMBOL_NAME.match(name):
        raise ValueError(f"shape symbol name {name!r} must be letters followed by digits, e.g. 's0'")
    return sympy.Symbol(name, integer=True, positive=True)


def as_expr(value) -> sympy.Expr:
    """An int, a symbol name, or an expression → a sympy expression with project symbols."""
    if isinstance(value, sympy.Basic):
        return value
    if isinstance(value, bool):
        raise TypeError(f"a size must be an integer or expression, got {value!r}")
    if isinstance(value, int):
        return sympy.Integer(value)
    if isinstance(value, str):
        return parse_expr(value)
    if hasattr(value, "__index__"):
        return sympy.Integer(int(value))
    raise TypeError(f"a size must be an integer or expression, got {value!r}")


def parse_expr(text: str) -> sympy.Expr:
    """Parse a size expression such as ``s0*128`` or ``floor(s1/2) + 1``."""
    names = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", text)) - {"floor", "ceiling", "Max", "Min", "Mod"}
    local = {n: sym(n) for n in names}
    local.update(floor=sympy.floor, ceiling=sympy.ceiling, Max=sympy.Max, Min=sympy.Min, Mod=sympy.Mod)
    try:
        return sympy.sympify(text, locals=local)
    except (sympy.SympifyError, SyntaxError, TypeError) as e:
        raise ValueError(f"invalid size expression {text!r}: {e}") from None


def expr_str(e) -> str:
    """Text form of a size expression (``s0*128``); parse_expr(expr_str(e)) == e."""
    e = as_expr(e)
    return str(e).replace(" ", "")


def is_static(e) -> bool:
    return as_expr(e).is_Integer


def _interval_product(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    """[a] * [b] over the extended reals, 0 * inf taken as 0 (a size's range may be unbounded either way)."""
    corners = [0.0 if x == 0 or y == 0 else x * y for x in a for y in b]
    return min(corners), max(corners)


PROBE_POINTS = (7, 12, 33)  # each symbol's value at a probe: the base plus twice its index (distinct, positive)


def _nonzero_somewhere(e: sympy.Expr) -> bool:
    """Is ``e`` nonzero at a probe point of positive integers (as the shape symbols are)? Then it is not identically
    zero, and no simplification can show it is."""
    symbols = sorted(e.free_symbols, key=lambda s: s.name)
    for base in PROBE_POINTS:
        value = e.subs({s: base + 2 * i for i, s in enumerate(symbols)})
        if value.is_number and value.is_finite and value != 0:
            return True
    return False


@dataclass
class SizeVars:
    """Knows each shape symbol's range and answers shape questions about expressions over them."""

    ranges: dict[str, tuple[int, int]] = field(default_factory=dict)
    # Note: sizes known equal though written differently (a guard of the graph: s38*s97 == s3*s88), each
    # replaced by its canonical form before a question is answered.
    equal: dict[sympy.Expr, sympy.Expr] = field(default_factory=dict)

    def declare(self, name: str, lo: int = 1, hi: int = INF) -> sympy.Symbol:
        if lo > hi:
            raise ValueError(f"symbol {name}: empty range [{lo}, {hi}]")
        old = self.ranges.get(name)
        if old is not None and old != (lo, hi):
            lo, hi = max(lo, old[0]), min(hi, old[1])
        self.ranges[name] = (lo, hi)
        return sym(name)

    def declare_equal(self, size, canonical) -> None:
        """``size`` equals ``canonical`` whenever the module runs; questions see the canonical form."""
        self.equal[as_expr(size)] = as_expr(canonical)

    def canonical(self, e) -> sympy.Expr:
        """``e`` with every known equality applied until nothing changes."""
        e = as_expr(e)
        for _ in range(len(self.equal)):
            new = e.subs(self.equal)
            if new == e:
                break
            e = new
        return e

    def symbols(self) -> list[sympy.Symbol]:
        return [sym(n) for n in sorted(self.ranges)]

    # -- questions ---------------------------------------------------------------------------------------
    def _bounds(self, e: sympy.Expr) -> tuple[float, float]:
        """Conservative interval of ``e`` over the symbol ranges: interval arithmetic on the expanded form, through
        floor, ceiling, Max, Min and reciprocals of positive intervals; (-inf, inf) where it cannot tell."""
        return self._interval(sympy.expand(as_expr(e)))

    def _interval(self, e: sympy.Expr) -> tuple[float, float]:
        unknown = float("-inf"), float("inf")
        if e.is_Number:
            return float(e), float(e)
        if e.is_Symbol:
            if e.name not in self.ranges:
                return unknown
            lo, hi = self.ranges[e.name]
            return float("-inf") if lo <= -INF else lo, float("inf") if hi >= INF else hi
        if isinstance(e, (sympy.Add, sympy.Max, sympy.Min)):
            parts = [self._interval(a) for a in e.args]
            if isinstance(e, sympy.Add):  # Note: -inf + inf cannot occur: lo <= hi per part
                return sum(p[0] for p in parts), sum(p[1] for p in parts)
            pick = max if isinstance(e, sympy.Max) else min
            return pick(p[0] for p in parts), pick(p[1] for p in parts)
        if isinstance(e, sympy.Mul):
            lo, hi = 1.0, 1.0
            for a in e.args:
                lo, hi = _interval_product((lo, hi), self._interval(a))
            return lo, hi
        if isinstance(e, sympy.Pow) and e.exp.is_Integer:
            lo, hi = self._interval(e.base)
            if e.exp < 0:
                if lo <= 0:
                    return unknown
                lo, hi = 1.0 / hi, 1.0 / lo
            result = 1.0, 1.0
            for _ in range(abs(int(e.exp))):
                result = _interval_product(result, (lo, hi))
            return result
        if isinstance(e, (sympy.floor, sympy.ceiling)):
            lo, hi = self._interval(e.args[0])
            rnd = math.floor if isinstance(e, sympy.floor) else math.ceil
            return (lo if math.isinf(lo) else rnd(lo)), (hi if math.isinf(hi) else rnd(hi))
        return unknown

    def statically_known_equal(self, a, b) -> bool:
        diff = self.canonical(a) - self.canonical(b)
        if diff == 0:
            return True
        if _nonzero_somewhere(diff):  # Note: sympy.simplify of Mod/Min-heavy launch expressions takes seconds
            return False
        return sympy.simplify(diff) == 0

    def statically_known_leq(self, a, b) -> bool:
        diff = sympy.simplify(self.canonical(b) - self.canonical(a))
        if diff.is_Integer:
            return int(diff) >= 0
        return self._bounds(diff)[0] >= 0

    def upper_bound(self, e) -> int | None:
        hi = self._bounds(e)[1]
        return None if hi == float("inf") else int(hi)

    def lower_bound(self, e) -> int | None:
        lo = self._bounds(e)[0]
        return None if lo == float("-inf") else int(lo)

    def simplify(self, e) -> sympy.Expr:
        return sympy.simplify(as_expr(e))

    def evaluate(self, e, bindings: dict[str, int]) -> int:
        """The integer value of ``e`` with every symbol bound; an unbound symbol is an error naming it."""
        e = as_expr(e)
        if e.is_Integer:
            return int(e)
        missing = sorted(s.name for s in e.free_symbols if s.name not in bindings)
        if missing:
            raise KeyError(f"cannot evaluate size {expr_str(e)}: unbound symbol(s) {', '.join(missing)}")
        for name, value in bindings.items():
            rng = self.ranges.get(name)
            if rng and not (rng[0] <= value <= rng[1]):
                raise ValueError(f"symbol {name} = {value} is outside its range [{rng[0]}, {rng[1]}]")
        value = e.subs({sym(n): v for n, v in bindings.items()})
        if not value.is_Integer:
            raise ValueError(f"size {expr_str(e)} evaluates to non-integer {value} under {bindings}")
        return int(value)


def evaluate(e, bindings: dict[str, int]) -> int:
    """Evaluate a size expression without range checks."""
    return SizeVars().evaluate(e, bindings)
