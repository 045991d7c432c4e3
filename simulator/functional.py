"""Functional-only execution of a launch: the results of a program without its timing.

    rec = execute(prog, chip="ascend910b1", block_dim=48, args={...}, gm=gm, record=True)   # outputs land in gm

The cores are built and issued exactly as a full launch issues them (launch.issue: the same scalar unit, the same
resolved instructions), then every instruction with a functional effect runs its own ``execute`` — the same
instruction semantics as the full simulation — in an order that respects what orders them on the chip: each pipe's
queue in order, the scalar unit's segments (an instruction issued after S item k waits for it), set/wait flags,
``pipe_barrier(ALL)`` and cross-core flags, with data registers bound at the points the full simulation binds them.
There is no clock, no GM model, no hazard bookkeeping and no trace.

Why the outputs are the full simulation's, bit for bit: the full simulation runs the instructions in global time
order, which is one order consistent with those dependencies; its hazard checker proves that every two conflicting
accesses (a write and another access to the same bytes, local or GM) are ordered by them (happens-before). Any two
orders consistent with the dependencies therefore apply every conflicting pair in the same order, and leave every
byte the same. A launch with a race is one the full simulation rejects (RaceError, with ``check_hazards``); the
timing job that runs next to this execution (timing_job.py) reports it, and compares its GM with this one's.

``record=True`` returns a replay.Recording of the order run here: later launches with the same key replay it.
"""
from __future__ import annotations

from collections import defaultdict

from .errors import DeadlockError
from .launch import issue
from .presets import get_chip
from .replay import Recording
from .timing import cross_targets


def execute(program, *, chip, block_dim: int, args: dict, gm, record: bool = False):
    """Run ``program``'s functional effects on ``block_dim`` cores over ``gm`` (see the module docstring). Returns
    a Recording when ``record``, else None. ``DeadlockError`` when nothing can run and instructions are left."""
    chip = get_chip(chip)
    cores = issue(program, chip, block_dim, dict(args), gm)
    items, binds = run(cores)
    return Recording(program.name, chip, cores, items, binds) if record else None


def run(cores) -> tuple[list, list]:
    """Execute issued cores to completion; returns the executed items in order and the data-register binds
    (``(items executed before it, core index, instruction, fields before, bound GM addresses)``, as timing.py)."""
    items: list = []
    binds: list = []
    states = [_State(c) for c in cores]
    for st in states:
        st.bind(0, items, binds)
    progress = True
    while progress:
        progress = False
        for st in states:
            progress |= st.advance(cores, items, binds)
    blocked = [w for st in states for w in st.blocked()]
    if blocked:
        more = f" (and {len(blocked) - 8} more)" if len(blocked) > 8 else ""
        raise DeadlockError("deadlock (functional execution): nothing can run; blocked: " + "; ".join(blocked[:8])
                            + more)
    return items, binds


class _State:
    """One core's progress: queue pointers, S items done, pending flags (counts: no times here)."""

    def __init__(self, core):
        self.core = core
        self.ptr = {p: 0 for p in core.queues}
        self.s_done = 0
        self.flags: dict = defaultdict(int)
        core.xflag_count = defaultdict(int)  # cross-core flags are set by other cores

    def bind(self, seg, items, binds) -> None:
        c = self.core
        for x in c.pending.pop(seg, ()):
            before = dict(x.__dict__)
            x.bind(c)
            binds.append((len(items), c.index, x, before, x.bound_addresses()))

    def advance(self, cores, items, binds) -> bool:
        """Run every instruction of this core that can run; whether any did."""
        c, ptr, flags = self.core, self.ptr, self.flags
        any_run = True
        ran = False
        while any_run:
            any_run = False
            for pipe, q in c.queues.items():
                i = ptr[pipe]
                n = len(q)
                while i < n:
                    x = q[i]
                    if x.seg > self.s_done:
                        break
                    kind = x.KIND
                    if kind == "wait":
                        key = (x.src_pipe, x.dst_pipe, x.event)
                        if not flags[key]:
                            break
                        flags[key] -= 1
                    else:
                        self._effect(x, kind, cores)
                    items.append(x)
                    i += 1
                if i != ptr[pipe]:
                    ptr[pipe] = i
                    any_run = ran = True
            while self.s_done < len(c.s_items) and self._s_step(cores, items, binds):
                any_run = ran = True
        return ran

    def _s_step(self, cores, items, binds) -> bool:
        c = self.core
        x = c.s_items[self.s_done]
        kind = x.KIND
        if kind == "barrier":
            if any(self.ptr[p] < need for p, need in x.need.items()):
                return False
        elif kind == "wait":
            key = (x.src_pipe, x.dst_pipe, x.event)
            if not self.flags[key]:
                return False
            self.flags[key] -= 1
        elif kind == "xwait":
            if not c.xflag_count[x.flag]:
                return False
            c.xflag_count[x.flag] -= 1
        else:
            self._effect(x, kind, cores)
        items.append(x)
        self.s_done += 1
        self.bind(self.s_done, items, binds)
        return True

    def _effect(self, x, kind, cores) -> None:
        """What an instruction that does not wait does: its functional effect, or the flag it sets."""
        if kind in ("op", "dma"):
            x.execute(self.core)
        elif kind == "set":
            self.flags[(x.src_pipe, x.dst_pipe, x.event)] += 1
        elif kind == "xset":
            for o in cross_targets(cores, self.core, x):
                o.xflag_count[x.flag] += 1

    def blocked(self) -> list[str]:
        c = self.core
        out = [f"core {c.name} {p}: {q[self.ptr[p]].mnemonic} (pc {q[self.ptr[p]].pc})"
               for p, q in c.queues.items() if self.ptr[p] < len(q)]
        if self.s_done < len(c.s_items):
            x = c.s_items[self.s_done]
            out.append(f"core {c.name} S: {x.mnemonic} (pc {x.pc})")
        return out
