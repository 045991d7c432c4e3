"""Multi-core launch: build the cores, issue each core's program (phase 1), time everything together
(phase 2, timing.py), and return stats, trace and functional results (in `gm`).

    res = launch(prog, chip="ascend910b1", block_dim=48, args={"x": x, "n": n}, gm=gm)
    res.stats.cycles, res.stats.us, res.stats.efficiency
    print(res.summary_table()); res.write_trace("trace.json")

Core placement: an 'aiv' program runs on `block_dim` vector cores, an 'aic' program on cube cores, a
MixProgram on `block_dim` groups of one AIC + two AIVs (subblock_idx 0/1). On a coupled chip (910A) every
core holds all units, so aiv and aic programs both run on the AI cores.

Two paths, the same results (cycles, per-pipe busy, trace, hazard verdict, GM bytes): the exact path checks every
core's accesses; the fast path (symmetry.py) checks local accesses on one core per class of identical streams (GM
accesses on every core). A launch with cross-core flags or register-computed GM addresses takes the exact path, and
one whose fast run finds a race or a buffer-tag error is simulated again exactly, so the error is the one the exact
path reports. ``exact=True`` or the environment variable ``NPU_SIM_EXACT=1`` forces the exact path.
"""
from __future__ import annotations

import time

from . import symmetry
from .core import Core
from .errors import BufferTagError, ProgramError, RaceError
from .memory import GlobalMemory
from .presets import get_chip
from .program import MixProgram, Program
from .replay import Recording
from .report import LaunchResult, collect_stats
from .timing import Scheduler


def _cores(program, chip, block_dim, gm):
    if block_dim < 1:
        raise ProgramError(f"launch {program.name}: block_dim={block_dim} must be >= 1")
    if isinstance(program, MixProgram):
        if chip.coupled:
            raise ProgramError(f"launch {program.name}: mix kernels need a split chip; {chip.name} is coupled")
        if block_dim > chip.aic_cores:
            raise ProgramError(f"launch {program.name}: block_dim={block_dim} groups > {chip.aic_cores} AI cores")
        cores, progs = [], []
        for g in range(block_dim):
            cores.append(Core(len(cores), f"aic{g}", "aic", chip, gm, g)); progs.append((program.aic, g, 0, 1))
            for sb in range(2):
                cores.append(Core(len(cores), f"aiv{2 * g + sb}", "aiv", chip, gm, g))
                progs.append((program.aiv, g, sb, 2))
        return cores, progs
    if chip.coupled:
        limit, kind = chip.aic_cores, "coupled"
    elif program.core_type == "aiv":
        limit, kind = chip.aiv_cores, "aiv"
    else:
        limit, kind = chip.aic_cores, "aic"
    if block_dim > limit:
        raise ProgramError(f"launch {program.name}: block_dim={block_dim} > {limit} {program.core_type} cores "
                           f"on {chip.name}")
    prefix = "core" if chip.coupled else kind
    cores = [Core(i, f"{prefix}{i}", kind, chip, gm, i // 2 if kind == "aiv" else i) for i in range(block_dim)]
    return cores, [(program, i, 0, 1) for i in range(block_dim)]


def issue(program: Program | MixProgram, chip, block_dim: int, args: dict, gm: GlobalMemory) -> list[Core]:
    """Phase 1: the launch's cores, each with its program issued into its pipe queues (checked: ``args`` must bind
    exactly the program's params)."""
    missing = [p for p in program.params if p not in args]
    extra = [a for a in args if a not in program.params]
    if missing or extra:
        raise ProgramError(f"launch {program.name}: missing args {missing}, unexpected args {extra}; "
                           f"params are {program.params}")
    cores, progs = _cores(program, chip, block_dim, gm)
    checked: dict = {}  # instructions checked on a core of the launch, by kind and static key (core.py)
    for core, (prog, bidx, sb, sbn) in zip(cores, progs):
        env = dict(args, block_idx=bidx, block_num=block_dim, subblock_idx=sb, subblock_num=sbn)
        core.issue(prog, env, checked)
    return cores


def launch(program: Program | MixProgram, *, chip="ascend910b1", block_dim: int = 1, args: dict | None = None,
           gm: GlobalMemory, check_hazards: bool = True, trace: bool = True, record: bool = False,
           exact: bool | None = None) -> LaunchResult:
    """Run `program` on `block_dim` cores (or groups); results land in `gm`. See the module docstring.
    ``record``: keep a replay.Recording in ``result.recording`` (replays the functional effects alone).
    ``exact``: force the exact path (None: unless ``NPU_SIM_EXACT=1``, the fast path where it applies)."""
    chip = get_chip(chip)
    args = dict(args or {})
    t0 = time.perf_counter()
    cores = issue(program, chip, block_dim, args, gm)
    if exact is None:
        exact = symmetry.exact_forced()
    reps = None if exact or not check_hazards else symmetry.representatives(cores)
    sched = Scheduler(chip, cores, gm, check_hazards, trace, local_cores=reps)
    try:
        sched.run()
    except (RaceError, BufferTagError):
        if reps is None:
            raise
        # the first race in global order may be on a core the fast path did not look at: simulate again exactly,
        # so the error is the one the exact path reports (timing and hazards do not depend on GM data here)
        cores = issue(program, chip, block_dim, args, gm)
        sched = Scheduler(chip, cores, gm, check_hazards, trace)
        sched.run()
    wall = time.perf_counter() - t0
    stats = collect_stats(program.name, chip, block_dim, cores, sched, check_hazards, wall)
    recording = Recording(program.name, chip, cores, sched.items, sched.binds) if record else None
    return LaunchResult(stats, chip, [c.name for c in cores], sched.events if trace else [],
                        sched.flows if trace else [], recording)
