"""Timing (phase 2 of a launch): all cores' pipe queues advanced together in global time order.

Every pipe executes its queue in order. The head instruction x of pipe p starts at

    start = max(issue_time(x), free(p), time of the matching set_flag if x is a wait_flag)

and occupies p for `cost` cycles (head latency added when p was idle or after pipe_barrier(p)). DMAs are
timed by the GM model (gm_model.py). A cross-core set is seen by the waiting cores `cross_core_handoff_cycles`
after it runs (presets.py); the launch overhead is charged before time 0 (report.py), not here. Ready heads sit in one heap keyed by start time, so instructions of
all cores execute in global start order: that order drives GM L2 residency, the functional effects and the
hazard checker's vector clocks. When nothing is ready but queues are not empty, the kernel deadlocked.

Instructions reading data registers (``core.pending``, a DMA at a register-computed address) are bound right after
the S item before them runs (those issued before any S item, at the start), before they can be ready.
"""
from __future__ import annotations

import heapq
from collections import defaultdict, deque

import numpy as np

from .errors import DeadlockError, SyncError
from .gm_model import GmModel
from .hazards import NP, HazardChecker
from .isa.base import PIPE_INDEX


class Scheduler:
    def __init__(self, chip, cores, gm, check_hazards: bool, record_trace: bool = True,
                 local_cores: set | None = None):
        """``local_cores``: the cores whose local accesses the hazard checker looks at (None: all; symmetry.py)."""
        self.chip, self.cores, self.gm = chip, cores, gm
        self.n_streams = len(cores) * NP
        self.items: list = []
        self.binds: list = []  # (items executed before it, core, instruction, fields before, bound GM addresses)
        self.gm_model = GmModel(chip, len(cores), max(gm.top, 1))
        self.check = HazardChecker(cores, max(gm.top, 1), self.items, local_cores) if check_hazards else None
        self.record_trace = record_trace
        self.events: list = []     # (core, pipe, name, start, dur, pc)
        self.flows: list = []      # (set core, set pipe, set time, wait core, wait pipe, wait time)
        self.busy = defaultdict(float)       # (core, pipe) -> cycles
        self.path_bytes = defaultdict(int)
        self.flops = {"cube": 0, "vector": 0}
        self.compute_cycles = {"M": 0, "V": 0}  # throughput cycles (no head latency), for the roofline
        for c in cores:
            c.ptr = {p: 0 for p in c.queues}
            c.s_ptr = 0
            c.free = {p: 0.0 for p in c.pipes}
            c.drained = {p: False for p in c.pipes}
            c.op_end = {p: -1.0 for p in c.pipes}  # end of the last op/dma (sync items do not keep a pipe busy)
            c.seg_end, c.seg_vc = [], []
            c.flags = defaultdict(deque)
            c.xflags = defaultdict(deque)
            c.port_free = 0.0
            c.svc = {p: np.zeros(self.n_streams, np.int32) for p in c.pipes}
            c.joined = {p: 0 for p in c.pipes}
            c.s_published = 0  # the S stream's clock other pipes inherit through issue order
            self._bind(c, 0)
        self.heap: list = []
        self.queued: set = set()
        self.counter = 0

    # ---- readiness ---------------------------------------------------------------------------------
    def _ready(self, c, pipe):
        if pipe == "S":
            i = c.s_ptr
            if i >= len(c.s_items):
                return None
            x = c.s_items[i]
            t = (c.seg_end[i - 1] if i else 0.0) + x.sofs
            if x.KIND == "barrier":
                for p, need in x.need.items():
                    if c.ptr[p] < need:
                        return None
                    t = max(t, c.free[p])
                return t
            if x.KIND in ("op", "set"):
                return t
            if x.KIND == "wait":
                dq = c.flags.get((x.src_pipe, x.dst_pipe, x.event))
                return max(t, dq[0][0]) if dq else None
            dq = c.xflags.get(x.flag)
            if not dq:
                return None
            return max(t, dq[0][0])
        q = c.queues[pipe]
        i = c.ptr[pipe]
        if i >= len(q):
            return None
        x = q[i]
        if x.seg > len(c.seg_end):
            return None
        t = (c.seg_end[x.seg - 1] if x.seg else 0.0) + x.sofs
        f = c.free[pipe]
        if f > t:
            t = f
        if x.KIND == "wait":
            dq = c.flags.get((x.src_pipe, x.dst_pipe, x.event))
            if not dq:
                return None
            if dq[0][0] > t:
                t = dq[0][0]
        return t

    def _push(self, c, pipe):
        key = (c.index, pipe)
        if key in self.queued:
            return
        t = self._ready(c, pipe)
        if t is not None:
            self.counter += 1
            heapq.heappush(self.heap, (t, self.counter, c.index, pipe))
            self.queued.add(key)

    # ---- main loop ---------------------------------------------------------------------------------
    def run(self):
        for c in self.cores:
            for p in c.pipes:
                self._push(c, p)
        cores = self.cores
        while self.heap:
            t, _, ci, pipe = heapq.heappop(self.heap)
            self.queued.discard((ci, pipe))
            c = cores[ci]
            touched = self._execute(c, pipe, t)
            if pipe == "S":  # a new segment, flags set by S: any pipe of the core may be ready now
                for p in c.pipes:
                    self._push(c, p)
            else:
                # Note: only this pipe (its next head), S (a barrier's drained pipes, a flag for S) and a set_flag's
                # waiting pipe can have become ready; the pushes keep the order of a push of every pipe, so ties in
                # the heap break the same way.
                x = self.items[-1]
                woken = x.dst_pipe if x.KIND == "set" else None
                for p in c.pipes:
                    if p == pipe or p == "S" or p == woken:
                        self._push(c, p)
            for o in touched:
                self._push(o, "S")
        self._check_done()

    def _execute(self, c, pipe, t):
        chip = self.chip
        if pipe == "S":
            x = c.s_items[c.s_ptr]
            c.s_ptr += 1
        else:
            x = c.queues[pipe][c.ptr[pipe]]
            c.ptr[pipe] += 1
        x.gid = len(self.items)
        self.items.append(x)
        s = c.index * NP + PIPE_INDEX[pipe]
        vc = c.svc[pipe]
        if pipe != "S" and x.seg > c.joined[pipe]:
            np.maximum(vc, c.seg_vc[x.seg - 1], out=vc)
            c.joined[pipe] = x.seg
        kind = x.KIND
        touched = ()
        if kind == "wait":
            st, svc, sgid, spipe, sci = c.flags[(x.src_pipe, x.dst_pipe, x.event)].popleft()
            np.maximum(vc, svc, out=vc)
            self.flows.append((sci, spipe, st, c.index, pipe, t))
        elif kind == "barrier" and pipe == "S":
            for p in c.pipes:
                np.maximum(vc, c.svc[p], out=vc)
        elif kind == "xwait":
            st, svc, sgid, spipe, sci = c.xflags[x.flag].popleft()
            np.maximum(vc, svc, out=vc)
            self.flows.append((sci, spipe, st, c.index, pipe, t))
        vc[s] += 1
        seq = int(vc[s])
        # ---- duration
        if kind == "dma":
            starts, length, write = x.gm_access()
            cap = chip.ub_to_gm_bpc if pipe == "MTE3" else (chip.l0c_to_gm_bpc if pipe == "FIX" else None)
            end, c.port_free = self.gm_model.transfer(starts, length, write, c.port_free, t, cap, x.PATH)
            dur = end - t
            c.drained[pipe] = False
        elif kind == "op":
            dur = cyc = x.cycles(chip)
            if t > c.op_end[pipe] or c.drained[pipe]:
                dur += x.head(chip)
            c.drained[pipe] = False
            if pipe in ("M", "V"):
                self.compute_cycles[pipe] += cyc
        else:
            dur = 0
            if kind == "barrier" and pipe != "S":
                c.drained[pipe] = True
        end = t + dur
        if pipe != "S":
            c.free[pipe] = end
            if kind in ("op", "dma"):
                c.op_end[pipe] = end
        self.busy[(c.index, pipe)] += dur
        # ---- effects
        if self.check is not None:
            self.check.check(x, s, seq, vc)
        if kind in ("op", "dma"):
            x.execute(c)
            pb = x.path_bytes()
            if pb:
                self.path_bytes[pb[0]] += pb[1]
            fl = x.flops()
            if fl:
                self.flops["cube" if pipe == "M" else "vector"] += fl
        elif kind == "set":
            key = (x.src_pipe, x.dst_pipe, x.event)
            dq = c.flags[key]
            if dq:
                prev = self.items[dq[-1][2]]
                raise SyncError(f"set_flag {x.src_pipe}->{x.dst_pipe} event {x.event} (pc {x.pc}, core {c.name}) "
                                f"while the previous set (pc {prev.pc}) has not been waited for")
            dq.append((t, vc.copy(), x.gid, pipe, c.index))
        elif kind == "xset":
            touched = self._targets(c, x)
            snap = vc.copy()
            seen = t + chip.cross_core_handoff_cycles  # the flag reaches the other cores after the hand-off
            for o in touched:
                o.xflags[x.flag].append((seen, snap, x.gid, pipe, c.index))
        if pipe == "S":
            # Later issues of every pipe start after this item, but only pipe_barrier(ALL) publishes the scalar
            # unit's own UB accesses to them; otherwise they need a flag from S (ASCENDC HardEvent S_V, S_MTE3 ...)
            snap = vc.copy()
            if kind == "barrier":
                c.s_published = seq
            snap[s] = c.s_published
            c.seg_end.append(end)
            c.seg_vc.append(snap)
            self._bind(c, len(c.seg_end))
        if self.record_trace:
            self.events.append((c.index, pipe, x.mnemonic, t, dur, x.pc))
        return touched

    def _bind(self, c, seg):
        for x in c.pending.pop(seg, ()):
            before = dict(x.__dict__)
            x.bind(c)
            self.binds.append((len(self.items), c.index, x, before, x.bound_addresses()))  # for replay.py

    def _targets(self, c, x):
        return cross_targets(self.cores, c, x)

    # ---- end ---------------------------------------------------------------------------------------
    def _check_done(self):
        blocked = []
        for c in self.cores:
            for p, q in c.queues.items():
                if c.ptr[p] < len(q):
                    blocked.append(self._why(c, q[c.ptr[p]]))
            if c.s_ptr < len(c.s_items):
                blocked.append(self._why(c, c.s_items[c.s_ptr]))
        if blocked:
            more = f" (and {len(blocked) - 8} more)" if len(blocked) > 8 else ""
            raise DeadlockError("deadlock: nothing can run; blocked: " + "; ".join(blocked[:8]) + more)

    def _why(self, c, x):
        what = f"core {c.name} {x.pipe}: {x.mnemonic} (pc {x.pc})"
        if x.KIND == "wait":
            return (f"{what} waits for set_flag {x.src_pipe}->{x.dst_pipe} event {x.event}, which is never "
                    f"set (or was consumed by an earlier wait)")
        if x.KIND == "xwait":
            return f"{what} waits for cross-core flag {x.flag}, which no core sets"
        if x.seg > len(c.seg_end):
            return f"{what} is issued after a blocked scalar-unit wait"
        return f"{what} waits for an earlier instruction"

    def makespan(self) -> float:
        end = 0.0
        for c in self.cores:
            scalar_end = (c.seg_end[-1] if c.seg_end else 0.0) + c.end_sofs
            end = max(end, scalar_end, *c.free.values())
        return end


def cross_targets(cores, c, x) -> list:
    """The cores a ``cross_set`` ``x`` run on core ``c`` signals: every other core (mode "all"), else the other
    kind's cores of its group."""
    if x.mode == "all":
        return [o for o in cores if o is not c]
    return [o for o in cores if o.group == c.group and o is not c and (o.kind != c.kind)]
