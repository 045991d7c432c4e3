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

from .core import Core
from .errors import SimulatorError


class ReplayMismatch(SimulatorError):
    """A register-computed GM address differs from the recorded launch's: the recording does not apply."""


class Recording:
    """What :meth:`replay` needs: the cores to rebuild and the steps, each ``(function, core position)``."""

    def __init__(self, name: str, chip, cores, items: list, binds: list):
        self.name = name
        self.cores = [(c.index, c.name, c.kind, c.group) for c in cores]
        self.chip = chip
        self.steps = _steps(items, binds)
        for c in cores:  # the recorded launch is over: drop its memories and queues, keep what the steps name
            c.mem, c.queues, c.s_items, c.pending = {}, {}, [], {}
            for a in ("svc", "seg_vc", "flags", "xflags"):
                if hasattr(c, a):
                    setattr(c, a, None)
        self.n_effects = sum(1 for x in items if x.KIND in ("op", "dma"))
        self.n_binds = len(binds)
        self.replays = 0

    def replay(self, gm) -> None:
        """Apply the recorded launch's functional effects to ``gm`` (bit-identical to simulating it again);
        :class:`ReplayMismatch` if a register-computed GM address differs from the recorded one."""
        chip = self.chip
        cores = [Core(i, name, kind, chip, gm, group) for i, name, kind, group in self.cores]
        for f, ci in self.steps:
            f(cores[ci])
        self.replays += 1


def _steps(items: list, binds: list) -> list:
    """The executed effects in order, each bind placed after the item it followed in the full simulation."""
    steps, b, nb = [], 0, len(binds)
    for i, x in enumerate(items):
        while b < nb and binds[b][0] <= i:
            steps.append(_bind_step(binds[b]))
            b += 1
        if x.KIND in ("op", "dma"):
            steps.append((x.execute, x.core.index))
    while b < nb:
        steps.append(_bind_step(binds[b]))
        b += 1
    return steps


def _bind_step(bind):
    _, ci, x, before, after = bind

    def step(core):
        x.__dict__.update(before)
        x.bind(core)
        got = x.bound_addresses()
        if got != after:
            raise ReplayMismatch(f"{x.describe()} on core {core.name}: register-computed GM address {got} differs "
                                 f"from the recorded launch's {after}")
    return step, ci
