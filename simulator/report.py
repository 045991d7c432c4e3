"""Per-launch statistics, the roofline, and tabulate summaries.

Roofline (in cycles, whole chip):
    compute bound = max(sum of mmad fractal cycles / AIC cores, sum of vector repeat cycles / AIV cores)
    memory bound  = max(DDR bytes / chip DDR B/cycle, GM bytes / chip L2 B/cycle)
    roofline      = max(compute, memory);  efficiency = roofline / simulated cycles
DDR bytes are the model's DDR traffic (first-touch read lines + all written lines); GM bytes are every
byte the DMAs moved. Both bandwidths are CANN-INI rates x AI cores (presets.py).

Launch overhead (presets.py `launch_cycles`, PTO) is charged on the timeline before the cores start: the
cores' time 0 is `launch_cycles` after the launch. `cycles` / `us` are the kernel body (first core start to
last core end), the figure the roofline and efficiency compare; `launch_cycles` / `launch_us` the overhead;
`total_cycles` / `total_us` both. The trace shows the overhead as its own slice (process "launch").
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from tabulate import tabulate

from .isa.base import LANE_NAMES, PIPE_INDEX, PIPES

PATHS = ("GM->UB", "GM->L1", "L1->L0A", "L1->L0B", "L0C->GM", "L0C->UB", "UB->GM")


@dataclass
class Stats:
    kernel: str
    chip: str
    block_dim: int
    cores: int
    cycles: float
    us: float
    busy: dict                 # pipe -> cycles summed over cores
    busy_ratio: dict           # pipe -> busy / (cycles * cores having the pipe)
    busy_per_core: dict        # core name -> {pipe: cycles}
    bytes: dict                # data path -> bytes
    gm_bytes: int
    ddr_bytes: int
    l2_hit_bytes: int
    flops_cube: int
    flops_vector: int
    compute_bound_cycles: float
    memory_bound_cycles: float
    roofline_cycles: float
    roofline_us: float
    bound: str
    efficiency: float
    instructions: int
    hazards_checked: bool
    wall_seconds: float
    launch_cycles: float = 0.0   # charged before the cores start (not in `cycles`)
    launch_us: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def total_cycles(self) -> float:
        """Launch overhead + kernel body."""
        return self.launch_cycles + self.cycles

    @property
    def total_us(self) -> float:
        return self.us + self.launch_us

    @property
    def instructions_per_second(self) -> float:
        return self.instructions / self.wall_seconds if self.wall_seconds else 0.0


def collect_stats(name, chip, block_dim, cores, sched, checked, wall) -> Stats:
    cycles = sched.makespan()
    busy, per_core, have = {}, {}, {}
    for c in cores:
        # S: only its data instructions (ld_ub/st_ub/...) keep it busy in the stats (issue and mov cycles do not)
        pipes = [p for p in c.pipes if p != "S" or sched.busy.get((c.index, p), 0.0)]
        per_core[c.name] = {p: sched.busy.get((c.index, p), 0.0) for p in pipes}
        for p in pipes:
            busy[p] = busy.get(p, 0.0) + sched.busy.get((c.index, p), 0.0)
            have[p] = have.get(p, 0) + 1
    ratio = {p: (busy[p] / (cycles * have[p]) if cycles else 0.0) for p in busy}
    vec_cores = chip.aiv_cores or chip.aic_cores
    compute = max(sched.compute_cycles["M"] / chip.aic_cores, sched.compute_cycles["V"] / vec_cores)
    g = sched.gm_model
    memory = max(g.ddr_bytes / chip.ddr_bpc_chip, g.gm_bytes / chip.l2_bpc_chip)
    roof = max(compute, memory)
    n_instr = sum(c.n_issued() + c.scalar_instructions for c in cores)
    return Stats(
        kernel=name, chip=chip.name, block_dim=block_dim, cores=len(cores), cycles=cycles,
        us=cycles / chip.clock_mhz, busy=busy, busy_ratio=ratio, busy_per_core=per_core,
        bytes={p: sched.path_bytes.get(p, 0) for p in PATHS if sched.path_bytes.get(p, 0)},
        gm_bytes=g.gm_bytes, ddr_bytes=g.ddr_bytes, l2_hit_bytes=g.l2_hit_bytes,
        flops_cube=sched.flops["cube"], flops_vector=sched.flops["vector"],
        compute_bound_cycles=compute, memory_bound_cycles=memory, roofline_cycles=roof,
        roofline_us=roof / chip.clock_mhz, bound="compute" if compute >= memory else "memory",
        efficiency=roof / cycles if cycles else 0.0, instructions=n_instr, hazards_checked=checked,
        wall_seconds=wall, launch_cycles=chip.launch_overhead_cycles,
        launch_us=chip.launch_overhead_cycles / chip.clock_mhz)


@dataclass
class LaunchResult:
    stats: Stats
    chip: object
    core_names: list
    events: list
    flows: list
    recording: object = None  # replay.Recording of a launch(record=True)
    replayed: bool = False  # this launch's outputs came from replaying `recording` (stats, events: the recorded run's)
    note: str | None = None  # why a launch that could have been replayed was simulated again

    def replayable(self, trace: bool) -> bool:
        """Whether a later launch with this one's key may replay it: when it wants a trace, only if this one has
        its events."""
        return bool(self.events) or not trace

    def summary_table(self) -> str:
        return summary_table(self.stats)

    def trace_events(self) -> list:
        return trace_events(self)

    def write_trace(self, path) -> None:
        with open(path, "w") as f:
            json.dump({"traceEvents": self.trace_events(), "displayTimeUnit": "ns"}, f)


def summary_table(s: Stats) -> str:
    rows = [
        ("kernel", s.kernel), ("chip", s.chip), ("block_dim / cores", f"{s.block_dim} / {s.cores}"),
        ("cycles (body)", f"{s.cycles:,.0f}"), ("time (us, body)", f"{s.us:,.2f}"),
        ("launch overhead (us)", f"{s.launch_us:,.2f}"), ("time with launch (us)", f"{s.total_us:,.2f}"),
        ("roofline (us)", f"{s.roofline_us:,.2f} ({s.bound}-bound)"), ("efficiency", f"{s.efficiency:.1%}"),
        ("cube / vector FLOPs", f"{s.flops_cube:,} / {s.flops_vector:,}"),
        ("GM bytes (DDR / L2 hits)", f"{s.gm_bytes:,} ({s.ddr_bytes:,} / {s.l2_hit_bytes:,})"),
        ("instructions", f"{s.instructions:,}"),
        ("hazard check", "on" if s.hazards_checked else "OFF (races not detected)"),
    ]
    rows += [(f"bytes {p}", f"{b:,}") for p, b in s.bytes.items()]
    rows += [(f"busy {LANE_NAMES[p]}", f"{s.busy_ratio[p]:.1%}") for p in PIPES if p in s.busy_ratio]
    return tabulate(rows, tablefmt="simple")


def trace_events(res: LaunchResult) -> list:
    """Chrome trace events: pid = core, tid = pipe lane (msprof names), flow arrows set -> wait; the launch
    overhead is one slice on its own process ("launch", after the cores), the cores' events follow it."""
    mhz = res.chip.clock_mhz
    out = []
    t0 = res.stats.launch_cycles
    if t0:
        lp = len(res.core_names)
        out.append({"ph": "M", "name": "process_name", "pid": lp, "args": {"name": "launch"}})
        out.append({"ph": "M", "name": "thread_name", "pid": lp, "tid": 0, "args": {"name": "launch overhead"}})
        out.append({"ph": "X", "name": "launch", "pid": lp, "tid": 0, "ts": 0.0, "dur": t0 / mhz,
                    "args": {"cycles": t0}})
    for ci, name in enumerate(res.core_names):
        out.append({"ph": "M", "name": "process_name", "pid": ci, "args": {"name": name}})
        for p in PIPES:
            out.append({"ph": "M", "name": "thread_name", "pid": ci, "tid": PIPE_INDEX[p],
                        "args": {"name": LANE_NAMES[p]}})
    for ci, pipe, mnem, t, dur, pc in res.events:
        out.append({"ph": "X", "name": mnem, "pid": ci, "tid": PIPE_INDEX[pipe], "ts": (t0 + t) / mhz,
                    "dur": max(dur, 0.5) / mhz, "args": {"pc": pc, "cycles": dur}})
    for i, (sc, sp, st, wc, wp, wt) in enumerate(res.flows):
        out.append({"ph": "s", "id": i, "name": "flag", "cat": "sync", "pid": sc, "tid": PIPE_INDEX[sp],
                    "ts": (t0 + st) / mhz})
        out.append({"ph": "f", "id": i, "name": "flag", "cat": "sync", "pid": wc, "tid": PIPE_INDEX[wp],
                    "ts": (t0 + wt) / mhz, "bp": "e"})
    return out
