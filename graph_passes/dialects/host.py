"""``host``: work that stays on the host inside a compiled graph.

- ``host.fallback`` — one aten op the backend cannot compile (no lowering, an argument combination its lowering
  refuses, a dtype the device does not hold, a random op drawn with the host's generator), run eagerly on the host
  with the real op. Operands are the op's tensor arguments (they leave the device), results its tensor outputs (they
  return to it). Attributes: ``target`` (the aten overload, ``aten.kthvalue.default``), ``node`` (the FX node),
  ``reason``, and ``args``/``kwargs``: the call's arguments as attribute data, where ``{operand = i}`` stands for
  tensor operand ``i``, a size expression for a symbolic size, ``{none = true}`` for None, ``{dtype = "float32"}``
  for a dtype (the runtime's ``host_fallback`` module encodes and decodes them). ``outputs`` (optional): the
  positions of the op's tuple result that the graph reads, one result each (the others are dropped on the host;
  their traced sizes may not be the sizes the host kernel gives, as ``_embedding_bag_forward_only``'s unread
  ``offset2bag``); absent: every tensor output.

Note: the op is opaque to every pass. It has the ``MemoryEffect`` trait, so canonicalize never drops it and cse never
merges two of them (two draws of ``rand`` are two values), and it is not a fusion pattern (``OPAQUE``), so fusion
partitions the kernels around it and the lowering leaves it in the host function. The passes keep the host
function's op order, which keeps random ops in eager's order of draws.
"""

from __future__ import annotations

from ..ir.attrs import AnyAttr, StrAttr
from ..ir.core import MemoryEffect, Operation, register_op
from ..ir.types import TensorType


@register_op
class FallbackOp(Operation):
    name = "host.fallback"
    operand_names = ("*inputs",)
    result_names = ("*results",)
    attribute_schema = {"target": StrAttr(), "node": StrAttr(), "reason": StrAttr(), "args": AnyAttr(optional=False),
                        "kwargs": AnyAttr(optional=False), "outputs": AnyAttr()}  # fmt: skip
    traits = (MemoryEffect,)

    def verify_(self) -> None:
        if not isinstance(self.attributes["args"], list) or not isinstance(self.attributes["kwargs"], dict):
            raise self.error("attribute 'args' must be a list and 'kwargs' a dictionary")
        for i, v in enumerate(list(self.operands) + list(self.results)):
            if not isinstance(v.type, TensorType):
                raise self.error(f"operands and results must be tensors, value {i} is {v.type}")
        kwargs = self.attributes["kwargs"]
        refs = sorted(_operand_refs(self.attributes["args"]) + [i for v in kwargs.values() for i in _operand_refs(v)])
        if refs != list(range(len(self.operands))):
            raise self.error(f"arguments refer to operands {refs}, the op has {len(self.operands)} operand(s)")
        outputs = self.attributes.get("outputs")
        if outputs is not None and (not isinstance(outputs, list) or len(outputs) != len(self.results)):
            raise self.error(f"attribute 'outputs' {outputs!r} must list one position per result "
                             f"({len(self.results)})")


def _operand_refs(value) -> list[int]:
    """The operand indices ``{operand = i}`` entries of an argument structure refer to, in order."""
    if isinstance(value, dict):
        if set(value) == {"operand"}:
            return [value["operand"]]
        return [i for v in value.values() for i in _operand_refs(v)]
    if isinstance(value, list):
        return [i for v in value for i in _operand_refs(v)]
    return []
