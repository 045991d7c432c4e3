"""``tensor``: tensor creation and shape queries.

- ``tensor.empty`` — an uninitialised tensor of the result type (destination of out-parameter style ops).
- ``tensor.dim {index = i}`` — the size of dim ``i`` of a tensor, as an ``index``.
"""

from __future__ import annotations

from ..ir.attrs import IntAttr
from ..ir.core import Operation, Pure, register_op
from ..ir.types import IndexType, TensorType


@register_op
class EmptyOp(Operation):
    name = "tensor.empty"
    result_names = ("result",)
    traits = (Pure,)

    def verify_(self) -> None:
        if not isinstance(self.result.type, TensorType):
            raise self.error(f"result must be a tensor, got {self.result.type}")


@register_op
class DimOp(Operation):
    name = "tensor.dim"
    operand_names = ("source",)
    result_names = ("result",)
    attribute_schema = {"index": IntAttr()}
    traits = (Pure,)

    def verify_(self) -> None:
        src = self.operand("source").type
        i = self.attributes["index"]
        if not isinstance(src, TensorType) or not 0 <= i < src.rank:
            raise self.error(f"dim index {i} out of range for {src}")
        if not isinstance(self.result.type, IndexType):
            raise self.error("result must be index")
