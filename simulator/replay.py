"""Launch replay: the functional effects of a launch that was already simulated, without timing or hazard checks.

A launch's timing, trace and hazard verdict depend on the program, its arguments, the block dim, the chip and
whether the checker runs, not on the data, with one exception: a DMA whose GM address the scalar unit computed from
a data register (``gm_reg``, isa/dma.py: embedding rows, gathers). A full simulation (``launch(..., record=True)``)
therefore keeps a :class:`Recording`: the resolved instructions with a functional effect (op and dma items, the S
data instructions among them), in the order the scheduler executed them, and the data-register binds at the points
the scheduler made them. ``Recording.replay(gm)`` runs exactly those effects on fresh cores over ``gm``:

    res = launch(prog, ..., gm=gm, record=True)          # full simulation; res.recording
    ...                                                   # a new gm with the same layout and new data
    res.recording.replay(gm2)                             # outputs land in gm2; res.stats still holds

Same instruction objects, same ``execute`` methods, same order, fresh zeroed local memories and data registers:
the results are bit-identical to a full simulation of the same launch. A bind is re-done on every replay (its
register holds this run's data); when it yields a GM address other than the recorded one, the recorded timing does
not apply and :class:`ReplayMismatch` is raised (the caller simulates again). A bind that only feeds a value
(``vadds ... sreg=d``) never mismatches.
"""
from __future__ import annotations

import numpy as np

from . import replay_batch, replay_forms
from .errors import SimulatorError
from .replay_pool import POOL, write_footprint


class ReplayMismatch(SimulatorError):
    """A register-computed GM address differs from the recorded launch's: the recording does not apply."""


class Recording:
    """What :meth:`replay` needs: the cores to rebuild and the steps, each ``(function, core position)``."""

    def __init__(self, name: str, chip, cores, items: list, binds: list):
        self.name = name
        self.cores = [(c.index, c.name, c.kind, c.group) for c in cores]
        self.chip = chip
        steps = _steps(items, binds)
        self.steps = [(f, ci) for f, ci, _ in steps]
        per_core = [[] for _ in cores]
        placed = []  # (core, position in its sequence, instruction or None), in the recorded order
        for f, ci, x in steps:
            placed.append((ci, len(per_core[ci]), x))
            per_core[ci].append((f, x))
        kinds = [c.kind for c in cores]
        rows = [sum(1 for k in kinds[:i] if k == kinds[i]) for i in range(len(cores))]
        deps = replay_batch.gm_dependencies(placed) if len(cores) > 1 else {}
        # the schedule in rounds across cores, identical steps batched (replay_batch.py)
        self.plan = replay_batch.plan(per_core, kinds, rows, deps)
        self._runs = None  # (pool generation, GM bytes, the plan bound to them): the compiled replay
        self.footprint = write_footprint(items)  # the local bytes a replay writes: zeroed after it (replay_pool.py)
        self._cores = None  # (pool generation, cores, stacks): the replay's cores over the pool's rows
        for c in cores:  # the recorded launch is over: drop its memories and queues, keep what the steps name
            c.mem, c.queues, c.s_items, c.pending = {}, {}, [], {}
            for a in ("svc", "seg_vc", "flags", "xflags"):
                if hasattr(c, a):
                    setattr(c, a, None)
        self.n_effects = sum(1 for x in items if x.KIND in ("op", "dma"))
        self.n_binds = len(binds)
        self.replays = 0

    def replay(self, gm, batched: bool = True) -> None:
        """Apply the recorded launch's functional effects to ``gm`` (bit-identical to simulating it again);
        :class:`ReplayMismatch` if a register-computed GM address differs from the recorded one. ``batched``: across
        the cores in rounds, identical steps at once (replay_batch.py), else in the recorded order. The cores'
        local memories are rows of the shared pool (replay_pool.py), zeroed again when the replay is over."""
        cores, stacks = self._pool_cores()
        for c in cores:
            c.gm, c.dregs = gm, {}
        try:
            with np.errstate(all="ignore"):  # fast effects skip their own errstate; no value depends on it
                if batched:
                    for run in self._compiled(cores, stacks, gm):
                        run()
                else:
                    for f, ci in self.steps:
                        f(cores[ci])
        finally:
            POOL.clear(stacks, self.footprint)
            for c in cores:
                c.gm, c.dregs = None, {}
        self.replays += 1

    def _compiled(self, cores, stacks, gm) -> list:
        """The plan bound to these cores' stacks and to ``gm``'s bytes: functions of nothing, each with its operand
        views (local rows, GM bursts) made once. Kept while the pool and the GM bytes stay the same objects (the
        backend replays a key on the GM image it keeps for it)."""
        runs = self._runs
        if runs is None or runs[0] != POOL.generation or runs[1] is not gm.data:
            runs = self._runs = (POOL.generation, gm.data, [op.bind(cores, stacks, gm) for op in self.plan])
        return runs[2]

    def _pool_cores(self):
        """Fresh cores (zeroed local memories, no data registers) over the pool's rows, built once per recording
        (again when the pool has grown)."""
        if self._cores is None or self._cores[0] != POOL.generation:
            cores, stacks = POOL.cores(self.cores, self.chip)
            self._cores = (POOL.generation, cores, stacks)
        return self._cores[1], self._cores[2]


def _steps(items: list, binds: list) -> list:
    """The executed effects in order, each bind placed after the item it followed in the full simulation."""
    steps, b, nb = [], 0, len(binds)
    for i, x in enumerate(items):
        while b < nb and binds[b][0] <= i:
            steps.append(_bind_step(binds[b]))
            b += 1
        if x.KIND in ("op", "dma"):
            steps.append((replay_forms.fast_effect(x), x.core.index, x))
    while b < nb:
        steps.append(_bind_step(binds[b]))
        b += 1
    return steps


def _bind_step(bind):
    _, ci, x, before, after = bind

    def step(core):
        x.__dict__.update(before)
        if after is None:  # a value only
            x.bind(core)
        else:  # an address: compared with the recorded one, which passed the GM check on this layout
            x.bind(core, check_gm=False)
        got = x.bound_addresses()
        if got != after:
            raise ReplayMismatch(f"{x.describe()} on core {core.name}: register-computed GM address {got} differs "
                                 f"from the recorded launch's {after}")
    return step, ci, None
