"""``arith``: constants and scalar/index arithmetic (host tiling computations, loop bounds).

``arith.constant`` holds a scalar (``value = 1.0`` with an ``f32`` result) or a small dense tensor
(``value = [1.0, 2.0]`` with a ``tensor<2xf32>`` result, values in row-major order).
"""

from __future__ import annotations

from ..ir.attrs import AnyAttr, StrAttr
from ..ir.core import Constant, Operation, Pure, register_op
from ..ir.types import IndexType, ScalarType, TensorType


def _flat(v):
    if isinstance(v, (list, tuple)):
        return [x for item in v for x in _flat(item)]
    return [v]


@register_op
class ConstantOp(Operation):
    name = "arith.constant"
    result_names = ("result",)
    attribute_schema = {"value": AnyAttr(optional=False)}
    traits = (Pure, Constant)

    def verify_(self) -> None:
        t = self.result.type
        v = self.attributes["value"]
        if isinstance(t, (ScalarType, IndexType)):
            if not isinstance(v, (int, float, bool)):
                raise self.error(f"scalar constant of type {t} needs a number, got {v!r}")
        elif isinstance(t, TensorType):
            if not t.is_static:
                raise self.error(f"tensor constant must have a static shape, got {t}")
            n = 1
            for d in t.static_shape():
                n *= d
            flat = _flat(v)
            if len(flat) != n and len(flat) != 1:
                raise self.error(f"tensor constant of type {t} needs {n} values (or 1 splat), got {len(flat)}")
        else:
            raise self.error(f"cannot hold a constant of type {t}")


_BINARY_INDEX = {
    "arith.addi": "a + b",
    "arith.subi": "a - b",
    "arith.muli": "a * b",
    "arith.floordivsi": "a // b",
    "arith.ceildivsi": "-(-a // b)",
    "arith.remsi": "a % b",
    "arith.minsi": "min(a, b)",
    "arith.maxsi": "max(a, b)",
}
"""Integer/index binary ops and their meaning (used by docs and the interpreter)."""


def _make_binary(op_name: str, meaning: str):
    cls = type(
        op_name.split(".")[1].capitalize() + "Op",
        (Operation,),
        {
            "name": op_name,
            "operand_names": ("lhs", "rhs"),
            "result_names": ("result",),
            "traits": (Pure,),
            "__doc__": f"``{op_name}``: result = {meaning} on integers/index.",
            "verify_": _verify_same_scalar,
            "__module__": __name__,
        },
    )
    globals()[cls.__name__] = cls  # importable by name: pickle (the compile cache) finds the class
    return register_op(cls)


def _verify_same_scalar(self) -> None:
    types = {str(v.type) for v in self.operands} | {str(self.result.type)}
    if len(types) != 1:
        raise self.error(f"operands and result must have one scalar type, got {', '.join(sorted(types))}")
    if not isinstance(self.result.type, (ScalarType, IndexType)):
        raise self.error(f"works on scalars, got {self.result.type}")


BINARY_OPS = {name: _make_binary(name, meaning) for name, meaning in _BINARY_INDEX.items()}


@register_op
class IndexCastOp(Operation):
    """``arith.index_cast``: integer ↔ index."""

    name = "arith.index_cast"
    operand_names = ("input",)
    result_names = ("result",)
    traits = (Pure,)


@register_op
class CmpIOp(Operation):
    """``arith.cmpi``: integer comparison to i1."""

    name = "arith.cmpi"
    operand_names = ("lhs", "rhs")
    result_names = ("result",)
    traits = (Pure,)
    attribute_schema = {"predicate": StrAttr(("eq", "ne", "lt", "le", "gt", "ge"))}
