"""``scf``: structured control flow.

``scf.for %iv = %lb to %ub step %step iter_args(...)``: the body block has the induction variable and the loop-
carried values as arguments and ends with ``scf.yield`` of the next loop-carried values::

    for iv in range(lb, ub, step): carried = body(iv, *carried)
"""

from __future__ import annotations

from ..ir.core import Operation, Terminator, register_op
from ..ir.types import IndexType


@register_op
class ForOp(Operation):
    name = "scf.for"
    operand_names = ("lower", "upper", "step", "*init_args")
    result_names = ("*results",)
    num_regions = 1

    def verify_(self) -> None:
        for i in range(3):
            if not isinstance(self.operands[i].type, IndexType):
                raise self.error(f"bound {self.operand_names[i]} must be index, got {self.operands[i].type}")
        inits = self.operands[3:]
        body = self.body
        if len(body.args) != 1 + len(inits):
            raise self.error(f"body needs {1 + len(inits)} arguments (iv + iter_args), has {len(body.args)}")
        if len(self.results) != len(inits):
            raise self.error(f"has {len(self.results)} results for {len(inits)} iter_args")
        term = body.terminator
        if term is None or term.name != "scf.yield":
            raise self.error("body must end with scf.yield")
        if [v.type for v in term.operands] != [v.type for v in inits]:
            raise term.error("yields types that do not match the loop's iter_args")


@register_op
class YieldOp(Operation):
    name = "scf.yield"
    operand_names = ("*values",)
    traits = (Terminator,)
