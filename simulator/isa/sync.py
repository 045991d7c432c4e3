"""Synchronisation: set_flag / wait_flag between pipes of one core, pipe_barrier, cross-core flags.

    set_flag(src, dst, e)   runs in `src`'s queue: after all earlier `src` work completes, raise flag e
    wait_flag(src, dst, e)  runs in `dst`'s queue: blocks `dst` until the matching set (k-th wait <-> k-th set)
                            (src or dst may be S, the scalar unit: a wait on S blocks it, like any S data item)
    pipe_barrier(p)         p's next instruction waits for p's earlier work (and pays p's start-up again);
                            pipe_barrier(ALL) drains every pipe and blocks the scalar unit until then
    cross_set(pipe, flag)   runs in `pipe`'s queue; raises `flag` on the other cores of the AI-core group
                            (AIC -> both AIVs, AIV -> its AIC), or on every core of the launch (mode=all)
    cross_wait(flag)        blocks the scalar unit (ASCENDC: CrossCoreWaitFlag) until a matching set arrives
Event ids are checked against the chip (8 per pipe pair, 11 cross-core flag ids) at issue.
"""
from __future__ import annotations

from dataclasses import dataclass

from .base import PIPES, Instr
from ..errors import ProgramError, SyncError

SYNC_PIPES = tuple(p for p in PIPES if p != "S")
FLAG_PIPES = PIPES  # set_flag/wait_flag also pair S with a pipe (ASCENDC HardEvent S_V, V_S, MTE2_S, S_MTE3 ...)


def _pipe(name, what, pipes=SYNC_PIPES):
    if name not in pipes:
        raise ProgramError(f"{what}: unknown pipe {name!r}; pipes are {pipes}")
    return name


@dataclass
class SetFlag(Instr):
    src_pipe: str
    dst_pipe: str
    event: object
    EXPRS = ("event",)
    MNEMONIC = "set_flag"
    KIND = "set"

    def validate(self):
        _pipe(self.src_pipe, self.MNEMONIC, FLAG_PIPES); _pipe(self.dst_pipe, self.MNEMONIC, FLAG_PIPES)
        if self.src_pipe == self.dst_pipe:
            raise ProgramError(f"set_flag: src and dst pipe are both {self.src_pipe}; use pipe_barrier")

    @property
    def pipe(self):
        return self.src_pipe

    def check(self, core):
        n = core.chip.event_ids
        if not 0 <= self.event < n:
            raise SyncError(f"{self.describe()}: event id {self.event} on {self.src_pipe}->{self.dst_pipe} "
                            f"exceeds the {n} event ids per pipe pair (ASCENDC)")

    def cycles(self, chip):
        return 0


@dataclass
class WaitFlag(SetFlag):
    MNEMONIC = "wait_flag"
    KIND = "wait"

    @property
    def pipe(self):
        return self.dst_pipe


@dataclass
class PipeBarrier(Instr):
    barrier_pipe: str
    MNEMONIC = "pipe_barrier"
    KIND = "barrier"

    def validate(self):
        if self.barrier_pipe != "ALL":
            _pipe(self.barrier_pipe, "pipe_barrier")

    @property
    def pipe(self):
        return "S" if self.barrier_pipe == "ALL" else self.barrier_pipe

    def check(self, core):
        pass

    def cycles(self, chip):
        return 0


@dataclass
class CrossCoreSet(Instr):
    set_pipe: str
    flag: object
    mode: str = "group"
    EXPRS = ("flag",)
    MNEMONIC = "cross_set"
    KIND = "xset"

    def validate(self):
        _pipe(self.set_pipe, "cross_set")
        if self.mode not in ("group", "all"):
            raise ProgramError(f"cross_set: mode {self.mode!r} must be 'group' or 'all'")

    @property
    def pipe(self):
        return self.set_pipe

    def check(self, core):
        n = core.chip.cross_core_flag_ids
        if not 0 <= self.flag < n:
            raise SyncError(f"{self.describe()}: cross-core flag id {self.flag} exceeds the {n} ids (ASCENDC)")

    def cycles(self, chip):
        return 0


@dataclass
class CrossCoreWait(Instr):
    flag: object
    EXPRS = ("flag",)
    MNEMONIC = "cross_wait"
    KIND = "xwait"

    check = CrossCoreSet.check

    def cycles(self, chip):
        return 0
