"""Size predicates (``graph_passes.ir.size_predicates``): the bounds a predicate proves on its symbols, and the
per-run check with its error."""

from __future__ import annotations

import pytest
import sympy

from graph_passes.ir.size_predicates import SizePredicate, SizePredicateError, proven_bounds
from graph_passes.ir.sizes import INF, SizeVars, sym

S0, S1 = sym("s0"), sym("s1")


def _sizes(**ranges) -> SizeVars:
    sv = SizeVars()
    for name in ("s0", "s1"):
        sv.declare(name, *ranges.get(name, (2, INF)))
    return sv


@pytest.mark.parametrize(
    "pred, bounds",
    [
        (S0 <= 64, {"s0": (1, 64)}),
        (S0 < 65, {"s0": (1, 64)}),
        (sympy.Integer(64) >= S0, {"s0": (1, 64)}),
        (S0 >= 3, {"s0": (3, INF)}),
        (S0 > 2, {"s0": (3, INF)}),
        (2 * S0 + 1 <= 129, {"s0": (1, 64)}),
        (3 * S0 <= 100, {"s0": (1, 33)}),  # floor(100/3)
        (sympy.Eq(S0, 16), {"s0": (16, 16)}),
        (sympy.And(S0 >= 4, S0 <= 64), {"s0": (4, 64)}),
        (S0 * S1 <= 4096, {"s0": (1, 2048), "s1": (1, 2048)}),  # the other symbol is at least 2
        (S0 + S1 <= 100, {"s0": (1, 98), "s1": (1, 98)}),
    ],
    ids=str,
)
def test_bounds_a_predicate_proves(pred, bounds):
    got = {k: v for k, v in proven_bounds(pred, _sizes()).items() if v != (1, INF)}
    assert got == bounds


@pytest.mark.parametrize(
    "pred",
    [sympy.Ne(S0, 7), sympy.Or(S0 <= 4, S0 >= 64), sympy.Eq(sympy.Mod(S0, 8), 0), S1 >= S0, S0**2 <= 100],
    ids=str,
)
def test_predicates_that_prove_no_bound(pred):
    assert all(v == (1, INF) for v in proven_bounds(pred, _sizes()).values())


def test_a_symbolic_coefficient_uses_its_proven_lower_bound():
    assert proven_bounds(S0 * S1 <= 4096, _sizes(s1=(16, INF)))["s0"] == (1, 256)


def test_a_false_predicate_names_itself_its_node_and_the_sizes():
    pred = SizePredicate(sympy.Eq(sympy.Mod(S0, 8), 0), "eq", "Runtime assertion failed")
    pred.check({"s0": 16, "s1": 3})
    with pytest.raises(SizePredicateError, match=r"Eq\(Mod\(s0,8\),0\) asserted by node 'eq' is false for s0 = 12"):
        pred.check({"s0": 12})
    with pytest.raises(KeyError, match="unbound symbol"):
        pred.check({"s1": 12})
