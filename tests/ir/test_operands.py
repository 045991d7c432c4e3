"""Operands read by their declared names (``Operation.operand``)."""

import pytest

import graph_passes  # noqa: F401
from graph_passes.ir import OP_REGISTRY
from graph_passes.ir.core import Operation, Value
from graph_passes.ir.types import IndexType, ScalarType


class _Around(Operation):
    """Fixed operands on both sides of a variadic group (no registered op has that layout)."""

    name = "test.around"
    operand_names = ("first", "*middle", "last")


def _values(n: int) -> list[Value]:
    return [Value(IndexType()) for _ in range(n)]


def test_fixed_names_read_their_operand():
    lhs, rhs = _values(2)
    op = OP_REGISTRY["arith.addi"]([lhs, rhs], [IndexType()])
    assert op.operand("lhs") is lhs and op.operand("rhs") is rhs
    counter, *copies = _values(3)
    select = OP_REGISTRY["hivm.multi_buffer_select"]([counter, *copies], [ScalarType("f32")])
    assert select.operand("counter") is counter


@pytest.mark.parametrize("count", [2, 3, 5])
def test_a_name_after_the_variadic_group_counts_from_the_end(count):
    values = _values(count)
    op = _Around(values)
    assert op.operand("first") is values[0] and op.operand("last") is values[-1]


@pytest.mark.parametrize("name", ["*middle", "middle", "nope"])
def test_variadic_or_unknown_names_are_refused_naming_the_op(name):
    op = _Around(_values(3))
    with pytest.raises(ValueError, match=r"test\.around: no fixed operand .* \(operands: first, \*middle, last\)"):
        op.operand(name)
