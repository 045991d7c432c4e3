"""Size predicates: boolean facts about shape symbols that a graph asserts (``torch._check(T <= 128)``).

A predicate is a sympy boolean over the IR's shape symbols: a relation (``s0 <= 64``, ``Eq(Mod(s0, 8), 0)``,
``s1 >= s0``) or an ``And``/``Or``/``Not`` of relations. The host checks it on every run with the symbol bindings
(:meth:`SizePredicate.check`); the bounds it proves on single symbols (:func:`proven_bounds`) narrow the symbols'
declared ranges, which passes read through :class:`graph_passes.ir.sizes.SizeVars`. Narrowing is sound only because
the check runs: a run whose sizes break the predicate fails before any kernel does.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from .sizes import INF, SizeVars, expr_str


class SizePredicateError(RuntimeError):
    """A size predicate of a compiled graph is false for the sizes of a run."""


@dataclass(frozen=True)
class SizePredicate:
    """``expr`` asserted at ``loc`` (the node computing it), with the frontend's ``message``."""

    expr: sympy.Basic
    loc: str
    message: str = ""

    def __str__(self) -> str:
        return expr_str(self.expr)

    def holds(self, bindings: dict[str, int]) -> bool:
        missing = sorted(s.name for s in self.expr.free_symbols if s.name not in bindings)
        if missing:
            raise KeyError(f"cannot check size predicate {self} ({self.loc}): unbound symbol(s) {', '.join(missing)}")
        value = self.expr.subs({s: bindings[s.name] for s in self.expr.free_symbols})
        if value not in (sympy.true, sympy.false):
            raise ValueError(f"size predicate {self} ({self.loc}) is undecided under {bindings}: {value}")
        return bool(value)

    def check(self, bindings: dict[str, int]) -> None:
        """Raise :class:`SizePredicateError` naming the predicate, its node and the sizes when it is false."""
        if self.holds(bindings):
            return
        sizes = ", ".join(f"{s.name} = {bindings[s.name]}" for s in sorted(self.expr.free_symbols, key=str))
        note = f" ({self.message})" if self.message else ""
        raise SizePredicateError(f"size predicate {self} asserted by node '{self.loc}' is false for {sizes}{note}")


def proven_bounds(pred, sizes: SizeVars) -> dict[str, tuple[int, int]]:
    """Symbol name → (lo, hi) that ``pred`` implies, given the ranges ``sizes`` already knows (INF: no bound).

    Conjunctions contribute each part; a relation ``f <= g`` (``<``, ``>=``, ``>``, ``==`` alike) bounds a symbol
    ``s`` when ``f - g`` is ``a*s + r`` with ``a`` and ``r`` free of ``s`` and ``a`` of known sign: ``2*s0 <= 128``
    gives ``s0 <= 64``, ``s0*s1 <= 4096`` with ``s1 >= 2`` gives ``s0 <= 2048``. ``Or``, ``Not``, ``!=`` and
    non-linear uses (``Mod``, ``floor``) prove nothing here.
    """
    out: dict[str, tuple[int, int]] = {}
    for rel in _conjuncts(pred):
        for le in _as_nonpositive(rel):  # each is a fact "le <= 0"
            for s in le.free_symbols:
                lo, hi = _bound_from(le, s, sizes)
                old = out.get(s.name, (1, INF))
                out[s.name] = (max(old[0], lo), min(old[1], hi))
    return out


def _conjuncts(pred) -> list:
    if isinstance(pred, sympy.And):
        return [c for a in pred.args for c in _conjuncts(a)]
    return [pred]


def _as_nonpositive(rel) -> list[sympy.Expr]:
    """``rel`` as expressions ``e`` with ``e <= 0`` (integers: ``a < b`` is ``a - b + 1 <= 0``)."""
    diff = sympy.expand(rel.lhs - rel.rhs) if isinstance(rel, sympy.core.relational.Relational) else None
    if diff is None:
        return []
    if isinstance(rel, sympy.LessThan):
        return [diff]
    if isinstance(rel, sympy.StrictLessThan):
        return [diff + 1]
    if isinstance(rel, sympy.GreaterThan):
        return [-diff]
    if isinstance(rel, sympy.StrictGreaterThan):
        return [-diff + 1]
    if isinstance(rel, sympy.Equality):
        return [diff, -diff]
    return []


def _bound_from(le: sympy.Expr, s: sympy.Symbol, sizes: SizeVars) -> tuple[int, int]:
    """Bounds on ``s`` from ``le <= 0`` where ``le = a*s + r``: ``s <= -r/a`` (a > 0) or ``s >= -r/a`` (a < 0)."""
    poly = sympy.Poly(le, s) if le.is_polynomial(s) else None
    if poly is None or poly.degree() != 1:
        return 1, INF
    a, r = poly.coeff_monomial(s), poly.coeff_monomial(1)
    a_lo, a_hi = sizes.lower_bound(a), sizes.upper_bound(a)
    neg_r_hi = sizes.upper_bound(-r)
    if a_lo is not None and a_lo > 0 and neg_r_hi is not None:
        # s <= -r/a: largest when -r is largest, over the smallest a when -r >= 0 (else the largest a)
        den = a_lo if neg_r_hi >= 0 else a_hi
        return (1, INF) if den is None else (1, neg_r_hi // den)
    if a.is_Integer and a < 0 and r.is_Integer:
        return -(int(r) // int(a)), INF  # s >= ceil(-r/a); only constant coefficients (sizes never scale by -symbol)
    return 1, INF
