"""A launch's timing simulation as an independent job: what a process pool, Dask or Ray runs.

Once a launch's outputs come from the functional executor (functional.py), its timing — the full simulation with
the hazard checker, exactly ``launch()`` — no longer holds anything up and can run anywhere:

    job = TimingJob(program, chip, block_dim, args, snapshot(gm), check_hazards=True, trace=False)
    functional.execute(program, chip=chip, block_dim=block_dim, args=args, gm=gm)     # outputs now
    out = run(job)                       # elsewhere, later: a TimingOutcome (or the launch's SimulatorError)
    out.check(gm)                        # the full simulation's GM equals the functional one, byte for byte

``TimingJob`` holds plain data (the program, the chip spec, the launch arguments and a copy of the GM before the
launch) and pickles; :func:`run` is a module-level function of it, the one job function every executor calls. A
hazard, a deadlock or a sync error the full simulation finds is raised by :func:`run` (and so by the future that
ran it) as the same error the launch would have raised. The outcome carries the full simulation's LaunchResult
(stats, core names, trace events when ``trace``; no recording) and a SHA-256 of its final GM, which ``check``
compares with the functional execution's: the two never differ on a launch the hazard checker passed.
"""
from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass

from .errors import SimulatorError
from .launch import launch
from .memory import GlobalMemory
from .report import LaunchResult


class FunctionalMismatch(SimulatorError):
    """The full simulation left GM different from the functional execution of the same launch."""


@dataclass
class TimingJob:
    program: object  # Program or MixProgram
    chip: object  # ChipSpec (fixed costs as the launch had them)
    block_dim: int
    args: dict
    gm: GlobalMemory  # the launch's GM before it ran (snapshot())
    check_hazards: bool = True
    trace: bool = False
    size: int = 0  # instructions with a functional effect: what the job costs, for deciding whether a pool pays

    @property
    def name(self) -> str:
        return self.program.name


@dataclass
class TimingOutcome:
    result: LaunchResult  # the full simulation's (recording None)
    gm_digest: str  # SHA-256 of its final GM

    def check(self, gm_digest: str, name: str) -> None:
        """Raise FunctionalMismatch when the functional execution's GM digest differs."""
        if gm_digest != self.gm_digest:
            raise FunctionalMismatch(f"{name}: the functional execution's GM (sha256 {gm_digest[:12]}) differs from "
                                     f"the full simulation's ({self.gm_digest[:12]}) on "
                                     f"{self.result.stats.block_dim} cores: the launch has a race the hazard "
                                     f"checker {'missed' if self.result.stats.hazards_checked else 'was off for'}")


def snapshot(gm: GlobalMemory) -> GlobalMemory:
    """A copy of ``gm`` (its allocated bytes only) for a job to simulate on."""
    out = copy.copy(gm)
    out.data = gm.data[:max(gm.top, 1)].copy()
    out._starts, out._ends = list(gm._starts), list(gm._ends)
    return out


def digest(gm: GlobalMemory) -> str:
    """SHA-256 of ``gm``'s allocated bytes."""
    return hashlib.sha256(gm.data[:gm.top].tobytes()).hexdigest()


def run(job: TimingJob) -> TimingOutcome:
    """The job function: the full simulation of the launch (``launch()``, hazard checker as the job says) on the
    job's GM. Raises what the launch raises (RaceError, DeadlockError, SyncError ...)."""
    res = launch(job.program, chip=job.chip, block_dim=job.block_dim, args=job.args, gm=job.gm,
                 check_hazards=job.check_hazards, trace=job.trace)
    return TimingOutcome(res, digest(job.gm))
