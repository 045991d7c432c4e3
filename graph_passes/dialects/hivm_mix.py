"""``hivm`` ops of mix (cube + vector) kernels: cross-core flags and the sub-block index (after AscendNPU-IR's
``hivm.hir.sync_block_set`` / ``sync_block_wait`` and ``hivm.hir.get_sub_block_idx``; docs/cube.md, *Cube–vector
fusion*).

A MIX_CV kernel is two functions (``hivm-split-mix-kernel``'s result, built directly by ``convert-to-hivm``): the
AIC part, run by the cube core of each group, and the AIV part, run by the group's two vector cores::

    hivm.sync_block_set {pipe = "PIPE_FIX", flag = 0}   runs in the FIX pipe's queue once its earlier work is done;
                                                        raises cross-core flag 0 on the other cores of the group
                                                        (AIC → both AIVs, AIV → its AIC)
    hivm.sync_block_wait {flag = 0}                     blocks the scalar unit until a matching set arrived
    %sb = hivm.get_sub_block_idx                        0 or 1 on the two AIVs of a group (0 on the AIC)

Flags count: the k-th wait on a core consumes the k-th set that reached it.
"""

from __future__ import annotations

from ..ir.attrs import IntAttr, StrAttr
from ..ir.core import MemoryEffect, Operation, Pure, register_op
from .hivm import PIPES, HIVMOp

CROSS_CORE_FLAGS = 11  # ASCENDC: flag ids 0-10 (AscendNPU-IR reserves 16, 14/15 internal); simulator/presets.py


class _BlockSync(HIVMOp):
    traits = (MemoryEffect,)

    def reads(self) -> list:
        return []

    def writes(self) -> list:
        return []

    def expected_indices(self) -> int:
        return 0

    def verify_(self) -> None:
        super().verify_()
        flag = self.attributes["flag"]
        if not 0 <= flag < CROSS_CORE_FLAGS:
            raise self.error(f"cross-core flag {flag} is not one of the {CROSS_CORE_FLAGS} ids "
                             f"0-{CROSS_CORE_FLAGS - 1}")


@register_op
class SyncBlockSetOp(_BlockSync):
    """``hivm.sync_block_set {pipe, flag}``: raise cross-core ``flag`` once ``pipe``'s earlier work is done."""

    name = "hivm.sync_block_set"
    attribute_schema = {"pipe": StrAttr(PIPES), "flag": IntAttr()}

    @property
    def pipe(self) -> str:
        return self.attributes["pipe"]

    def verify_(self) -> None:
        super().verify_()
        if self.attributes["pipe"] in ("PIPE_S", "PIPE_ALL"):
            raise self.error(f"sets a cross-core flag from a pipe's queue, not {self.attributes['pipe']}")


@register_op
class SyncBlockWaitOp(_BlockSync):
    """``hivm.sync_block_wait {flag}``: block the scalar unit until a set of ``flag`` arrived."""

    name = "hivm.sync_block_wait"
    attribute_schema = {"flag": IntAttr()}


@register_op
class GetSubBlockIdxOp(Operation):
    """``hivm.get_sub_block_idx``: which of its group's two vector cores runs this instance (0 on a cube core)."""

    name = "hivm.get_sub_block_idx"
    result_names = ("result",)
    traits = (Pure,)
