"""The profiling API: one record per kernel launch of every compiled graph run inside ``with profile():``.

    with torch_npu_backend.profile() as prof:
        compiled(x)
    print(prof.table()); prof.total_us(); prof.total_us(launch=False); prof.write_trace("trace.json")

A record says which kernel ran, where (``executed``: "simulator" or "interpreter", with the ``reason`` a kernel was
interpreted; "host" for an aten op run eagerly on the host — a per-op fallback of kind "host fallback", with its
reason and the bytes it moved each way), what it came from (fusion kind, FX nodes), under which shape bindings, and — for simulated launches —
cycles, µs, the roofline bound, efficiency, per-pipe busy ratios, GM bytes and whether the hazard checker ran.

A simulated launch's time has two parts: the launch overhead (``launch_us``, charged before the cores start;
docs/simulator.md, *Fixed costs*) and the kernel body (``cycles``/``us``, which the roofline and efficiency compare).
``total_us()`` includes the launches; ``total_us(launch=False)`` is the bodies alone.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field

from tabulate import tabulate

_ACTIVE: list["Profile"] = []
HOST_FALLBACK = "host fallback"  # the kind of a host fallback's record (``executed="host"``)

# msprof lane names, in the order a table shows them
PIPE_COLUMNS = (("MTE2", "MTE2"), ("V", "VEC"), ("MTE3", "MTE3"), ("S", "SCALAR"), ("MTE1", "MTE1"), ("M", "CUBE"),
                ("FIX", "FIXP"))
CUBE_PIPES = ("MTE1", "M", "FIX")  # shown for the kernels that use them


@dataclass
class KernelRecord:
    """One kernel launch (or one interpreted kernel call, or one host fallback) of one graph run."""

    graph: str
    kernel: str
    fusion_kind: str | None
    core_type: str | None
    executed: str  # "simulator" | "interpreter" | "host" (a host fallback: ``kernel`` is the aten op)
    source: tuple[str, ...]  # FX node names of the kernel's ops (their ``loc``s), in body order
    bindings: dict[str, int]
    reason: str | None = None  # why a kernel was interpreted or an op fell back to the host; for a simulated kernel,
    # why it was not replayed
    block_dim: int | None = None
    cycles: float | None = None
    us: float | None = None  # kernel body (the cores' time), without the launch overhead
    launch_us: float | None = None  # launch overhead, charged before the cores start
    roofline_us: float | None = None
    efficiency: float | None = None
    bound: str | None = None
    busy: dict[str, float] = field(default_factory=dict)  # pipe -> busy ratio (0..1)
    gm_bytes: int | None = None
    hazards_checked: bool | None = None
    schedule: object = None  # the kernel's schedule attribute (a cube kernel's tile, K steps and waves)
    d2h_bytes: int | None = None  # host fallback: bytes of its tensor arguments, moved device -> host
    h2d_bytes: int | None = None  # host fallback: bytes of its results, moved host -> device
    wall_s: float = 0.0  # host wall time of the launch (simulation, replay or interpretation)
    replayed: bool = False  # simulate="once": the outputs came from replaying the launch's recorded simulation;
    # cycles, us and the rest are the recorded simulation's
    result: object = field(default=None, repr=False)  # simulator.LaunchResult of a simulated launch

    @property
    def simulated(self) -> bool:
        return self.executed == "simulator"


class Profile:
    """Records collected while the context is active (``records`` in launch order)."""

    def __init__(self, trace: bool = True):
        self.trace = trace
        self.records: list[KernelRecord] = []

    def simulated(self) -> list[KernelRecord]:
        return [r for r in self.records if r.simulated]

    def interpreted(self) -> list[KernelRecord]:
        """Device kernels run by the reference interpreter (not simulated)."""
        return [r for r in self.records if r.executed == "interpreter"]

    def fallbacks(self) -> list[KernelRecord]:
        """Ops run eagerly on the host (per-op fallback)."""
        return [r for r in self.records if r.executed == "host"]

    def transfer_bytes(self) -> int:
        """Bytes the host fallbacks moved between the device and the host, both ways (no time is charged)."""
        return sum((r.d2h_bytes or 0) + (r.h2d_bytes or 0) for r in self.fallbacks())

    def total_us(self, launch: bool = True) -> float:
        """Simulated time of all launches, back to back, including each launch's overhead (``launch=False``: the
        kernel bodies alone). Interpreted kernels have no simulated time."""
        body = sum(r.us for r in self.records if r.us is not None)
        return body + self.launch_us() if launch else body

    def launch_us(self) -> float:
        """Launch overhead of all simulated launches."""
        return sum(r.launch_us for r in self.records if r.launch_us is not None)

    def total_roofline_us(self) -> float:
        return sum(r.roofline_us for r in self.records if r.roofline_us is not None)

    def gm_bytes(self) -> int:
        return sum(r.gm_bytes for r in self.records if r.gm_bytes is not None)

    def table(self) -> str:
        """One row per record (tabulate); interpreted kernels show their reason in the last column."""
        rows = []
        for r in self.records:
            src = ",".join(r.source)
            if len(src) > 40:
                src = src[:37] + "..."
            bind = " ".join(f"{k}={v}" for k, v in sorted(r.bindings.items()))
            if r.simulated:
                busy = " ".join(f"{lane} {r.busy.get(p, 0.0):.0%}" for p, lane in PIPE_COLUMNS
                                if p in r.busy and (p not in CUBE_PIPES or r.busy[p] > 0))
                note = "; ".join(n for n in ("" if r.hazards_checked else "hazard check OFF", r.reason or "") if n)
                rows.append([r.graph, r.kernel, r.fusion_kind, src, bind, r.executed,
                             "replayed" if r.replayed else "simulated", f"{r.cycles:,.0f}",
                             f"{r.launch_us or 0.0:,.2f}", f"{r.us:,.2f}", f"{r.roofline_us:,.2f}", f"{r.efficiency:.1%}", busy,
                             f"{r.gm_bytes:,}", note])  # fmt: skip
            elif r.executed == "host":
                note = f"host fallback ({r.reason}); {r.d2h_bytes:,} B to host, {r.h2d_bytes:,} B back"
                rows.append([r.graph, r.kernel, r.fusion_kind, src, bind, r.executed, "", "", "", "", "", "", "", "",
                             note])  # fmt: skip
            else:
                rows.append([r.graph, r.kernel, r.fusion_kind, src, bind, r.executed, "", "", "", "", "", "", "",
                             "", r.reason])  # fmt: skip
        headers = ["graph", "kernel", "kind", "FX nodes", "bindings", "ran on", "timing", "cycles", "launch us", "us", "roofline us",
                   "efficiency", "busy", "GM bytes", "note"]  # fmt: skip
        kernels = len(self.simulated()) + len(self.interpreted())
        replayed = len(self.replayed())
        total = f"total: {kernels} launches ({len(self.simulated())} simulated, {replayed} of them replayed, "
        total += f"{len(self.interpreted())} interpreted), {self.total_us():,.2f} us simulated with launches "
        total += f"({self.launch_us():,.2f} us launch overhead, {self.total_us(launch=False):,.2f} us kernel bodies)"
        if self.fallbacks():
            total += f"; {len(self.fallbacks())} host fallbacks moving {self.transfer_bytes():,} B (no time charged)"
        return tabulate(rows, headers=headers) + "\n" + total

    def replayed(self) -> list[KernelRecord]:
        """Simulated launches whose outputs came from a replay (``simulate="once"``); their timing is recorded."""
        return [r for r in self.records if r.replayed]

    def trace_events(self) -> list:
        """Every simulated launch's Chrome trace events, placed back to back on one time line; each launch's cores
        get their own process ids, named ``<kernel>#<n>: <core>`` (``<kernel>#<n>: launch`` holds the launch overhead's
        slice, before the cores' events)."""
        out, t0, pid0 = [], 0.0, 0
        for n, r in enumerate(self.simulated()):
            if r.result is None or not r.result.events:
                continue
            events = r.result.trace_events()
            pids = set()
            for e in events:
                e = dict(e)
                e["pid"] = e["pid"] + pid0
                pids.add(e["pid"])
                if "ts" in e:
                    e["ts"] = e["ts"] + t0
                if e.get("ph") == "M" and e["name"] == "process_name":
                    e["args"] = {"name": f"{r.kernel}#{n}: {e['args']['name']}"}
                if e.get("ph") in ("s", "f"):
                    e["id"] = f"{n}-{e['id']}"
                out.append(e)
            pid0 = max(pids) + 1 if pids else pid0
            t0 += r.us + (r.launch_us or 0.0)
        return out

    def write_trace(self, path) -> None:
        if not self.trace:
            raise ValueError("this profile collected no trace events: use profile(trace=True)")
        with open(path, "w") as f:
            json.dump({"traceEvents": self.trace_events(), "displayTimeUnit": "ns"}, f)


@contextlib.contextmanager
def profile(trace: bool = True):
    """Collect one :class:`KernelRecord` per kernel launch of compiled graphs run inside the block; ``trace``
    asks the simulator for timelines (``write_trace``)."""
    prof = Profile(trace)
    _ACTIVE.append(prof)
    try:
        yield prof
    finally:
        _ACTIVE.remove(prof)


def active() -> list[Profile]:
    return list(_ACTIVE)


def record(rec: KernelRecord) -> None:
    for p in _ACTIVE:
        p.records.append(rec)


def wants_trace() -> bool:
    return any(p.trace for p in _ACTIVE)
