"""Sizes the graph's guards make equal (``size_equalities`` on the module): shape questions see one form, a reshape
between the two forms verifies, the attribute round-trips through text and is checked; and size bounds over
symbols whose range reaches below zero."""

from __future__ import annotations

import pytest
import sympy

import graph_passes  # noqa: F401
from graph_passes.ir import VerifyError, verify
from graph_passes.ir.parser import parse_module
from graph_passes.ir.printer import print_module
from graph_passes.ir.sizes import INF, SizeVars, sym

S0, S1, S2, S3 = (sym(f"s{i}") for i in range(4))

RESHAPE = """module attributes {symbols = {s0 = [2, 64], s1 = [2, 64], s2 = [2, 64], s3 = [2, 64]}%s} {
  func.func @main(%%x: tensor<s2xs3xi64>) -> (tensor<(s0*s1)xi64>) {
    %%0 = hfusion.reshape %%x : (tensor<s2xs3xi64>) -> tensor<(s0*s1)xi64>
    func.return %%0 : tensor<(s0*s1)xi64>
  }
}
"""
EQUAL = ', size_equalities = {"s2*s3" = "s0*s1"}'


def test_questions_see_the_canonical_form():
    sv = SizeVars()
    sv.declare_equal(S2 * S3, S0 * S1)
    assert sv.statically_known_equal(4 * S2 * S3, 4 * S0 * S1)
    assert sv.statically_known_leq(S2 * S3, S0 * S1 + 1)
    assert not SizeVars().statically_known_equal(S2 * S3, S0 * S1)


def test_reshape_between_guarded_equal_sizes_verifies_and_round_trips():
    module = parse_module(RESHAPE % EQUAL)
    verify(module)
    assert EQUAL.strip(", ") in print_module(module)
    verify(parse_module(print_module(module)))


def test_reshape_without_the_equality_is_refused():
    with pytest.raises(VerifyError, match=r"element count changes: s2\*s3 -> s0\*s1"):
        verify(parse_module(RESHAPE % ""))


def test_equality_over_undeclared_symbols_is_refused():
    with pytest.raises(VerifyError, match=r"size_equalities: s2\*s9 = s0\*s1 uses undeclared shape symbol\(s\) s9"):
        verify(parse_module(RESHAPE.replace("(s0*s1)", "(s2*s3)") % ', size_equalities = {"s2*s9" = "s0*s1"}'))


def test_bounds_over_a_symbol_ranging_below_zero():
    """A slice's start ``-s1`` with ``s1 <= 0`` (GPT-2's ``logits_to_keep``): bounds stay defined (they were NaN)."""
    sv = SizeVars()
    sv.declare("s0", 2, INF)
    sv.declare("s1", -INF, 0)
    assert sv.lower_bound(-64 * S1 * S0) == 0
    assert sv.upper_bound(-64 * S1 * S0) is None
    assert sv.upper_bound(S1 + 5) == 5
    assert sv.lower_bound(S0 * S0 - 1) == 3


def test_bounds_through_floor_max_and_division():
    """A view's inferred dim ``floor(s0/4)`` (s0 in [4, 100]) has bytes known above 0 (fusion weighs them; they
    were unknown, so nothing fused), and ``4*floor(s0/4)`` equals ``s0`` by the divisibility dynamo proved."""
    sv = SizeVars()
    sv.declare("s0", 4, 100)
    sv.declare("s1", 2, INF)
    quarter = sympy.floor(S0 / 4)
    assert (sv.lower_bound(quarter * S1), sv.upper_bound(quarter)) == (2, 25)
    assert sv.lower_bound(sympy.ceiling(S0 / 8) + sympy.Max(S1, 7)) == 8
    assert sv.upper_bound(S0 / S1) == 50 and sv.upper_bound(S0 / (S1 - 2)) is None  # a reciprocal through 0: unknown
    assert not sv.statically_known_equal(4 * quarter * S1, S0 * S1)
    sv.declare_equal(4 * quarter, S0)
    assert sv.statically_known_equal(4 * quarter * S1, S0 * S1)


def test_equality_is_still_proved_after_the_probe_points():
    """Sizes that differ at a probe point of positive integers are unequal without simplification (launch-time
    expressions full of Mod and Min took seconds each in sympy.simplify); identities still hold."""
    sv = SizeVars()
    sv.declare("s0", 1, INF)
    assert sv.statically_known_equal((S0 + 1) ** 2, S0**2 + 2 * S0 + 1)
    assert sv.statically_known_equal(sympy.floor((4 * S0 + 2) / 2), 2 * S0 + 1)
    assert not sv.statically_known_equal(sympy.Min(S0, 4), 4)
    assert not sv.statically_known_equal(sympy.Mod(S0, 8) * S1, 0)
