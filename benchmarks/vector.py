"""Vector kernels on the simulated ascend910b1 through ``torch.compile(backend="npu")`` and the profile API.

    .venv/bin/python benchmarks/vector.py [--sizes 1M,16M] [--dtypes f16,f32]

Per workload, size and dtype: simulated µs, roofline µs, efficiency (roofline / simulated), GM bytes, and the
kernels launched fused vs unfused (``fusion=False``: one kernel per op, simulated µs summed). Targets: elementwise
and broadcast at 16M elements ≥ 85% of the bandwidth roofline; softmax and norms ≥ 70% at every size (rows below
a target are flagged and listed). A table, not a timed test.

Inputs are rows of ``COLS`` = 4096 (256 rows at 1M elements, 4096 at 16M); norms and softmax reduce each row. The
roofline (simulator/report.py) is max(DDR bytes — first-touch reads + writes — / chip DDR bandwidth, vector repeat
cycles / vector cores): f16 softmax and norms compute in f32 (as eager does), so their vector work, not their bytes,
bounds them (or, once they read row statistics as scalars, their DDR bytes do). Columns: before µs (``fixed_costs=False``:
the simulator without launch overhead and per-DMA fixed costs), body µs (the kernels with per-DMA fixed costs), launch
µs (5.9 a launch), after µs (both), roofline, efficiency = roofline / body, and unfused before / after µs (launches
included). Body figures at 1M on ascend910b1 (body µs / roofline µs / efficiency; these streaming kernels' bodies
move by at most 0.1 µs with the fixed costs, the launch adds 5.9 µs to each)::

    elementwise chain  f16  4.7 / 4.4  94.2%     f32  8.9 / 8.9  99.0%
    broadcast add      f16  3.2 / 3.0  93.5%     f32  6.2 / 5.9  95.6%
    softmax            f16  3.4 / 3.0  86.8%     f32  5.9 / 5.9  99.2%     (3.7 µs 80.2% with vbrcb'd columns)
    layer norm         f16  4.2 / 3.0  70.7%     f32  6.3 / 5.9  94.2%     (4.7 µs 68.3% with vbrcb'd columns)
    rms norm           f16  3.1 / 3.0  94.1%     f32  6.1 / 5.9  96.6%

(the vbrcb'd-column alternatives measured without fixed costs) and at 16M f16: softmax 47.7 / 47.2 µs 99.1%
(47.2 µs 100.0% with vbrcb'd columns: its work items' vector estimate, 1,026 cycles, just exceeds their DDR share,
1,024, so it reads scalars, whose waits delay the next row's load a little), layer norm 51.2 / 47.2 µs 92.4% (57.5 µs 85.0%). Their row reductions fold block by block
(vcgadd/vcgmax: 4096 → 512 → 64, then vcadd — 3 dependent steps and 73 repeat cycles a f32 row instead of 7–8 and
133; docs/codegen.md), which lowers the roofline with the time: a reduction's repeats are part of the vector work it
counts. f16 softmax and layer norm are software-pipelined (docs/schedule.md): stage 0 of one work item beside stage 1
of the previous, their dependent vector steps paired so each pair pays one start-up; the rows left after the last
full round of 2-row work items go to every core (16 cores take 2 rows, 32 take 1) instead of whole tiles to 32 cores
(docs/schedule.md, *Work split*). Their row max, mean and rstd are read back as per-row scalars (`ld_ub`, then
vadds/vmuls: 1 cycle a repeat instead of 2 for the vsub/vmul with a vbrcb'd column; docs/schedule.md, *Scalar
columns*; layer norm's mean, a row sum times 1/N, is multiplied by the scalar unit as it reads it, one vector step
fewer a work item): f32 layer norm and the rms norms stream DDR longer than they compute, so they keep vbrcb (reading scalars
holds the scalar unit, and the next tile's load with it, until the vector pipe catches up).

Layer norm f16 at 1M is the closest to its target (7,750 cycles of body; 7,832 would be 70%; 7,742 without fixed
costs). Its roofline is its DDR bytes (5,483 cycles; its vector work averages 5.33 rows per core of ~980 repeat
cycles), while the busiest cores have 6 rows (a row is not split across cores; measured without fixed costs, the
cores with 5 end 250–940 cycles earlier): their vector pipe is busy 6,966 cycles between the first tile's load
(~380 cycles) and the last one's store (~373) — the repeats, and 10 dependent steps of 30 a work item (the cast, the
row sum's fold, x − mean, the squares and their fold; rstd and the output).
Rms norm f32 streams at DDR rate (its loads wait ~3,000 cycles per core).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

# Note: run as a script, this directory is sys.path[0] and benchmarks/simulator.py would shadow the simulator package.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE] + [os.path.dirname(_HERE)]

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from tabulate import tabulate  # noqa: E402

import torch_npu_backend  # noqa: E402

COLS = 4096
SIZES = {"1M": 1 << 20, "16M": 1 << 24}
DTYPES = {"f16": torch.float16, "f32": torch.float32}


def _rms_norm(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


WORKLOADS = {
    "elementwise chain": (lambda x, y: torch.relu(x * y + 1.0) * 0.5, lambda n, d: [_t(n, d), _t(n, d)], 0.85),
    "broadcast add": (lambda x, b: x + b, lambda n, d: [_t(n, d), torch.randn(COLS, dtype=d)], 0.85),
    "softmax": (lambda x: torch.softmax(x, -1), lambda n, d: [_t(n, d)], 0.70),
    "layer norm": (lambda x, w, b: F.layer_norm(x, (COLS,), w, b),
                   lambda n, d: [_t(n, d), torch.randn(COLS, dtype=d), torch.randn(COLS, dtype=d)], 0.70),
    "rms norm": (_rms_norm, lambda n, d: [_t(n, d), torch.randn(COLS, dtype=d)], 0.70),
}  # fmt: skip


SIXTEEN_M_TARGETS = ("elementwise chain", "broadcast add")  # their targets are for 16M; the others' for every size


def _t(n, dtype):
    return torch.randn(n // COLS, COLS, dtype=dtype)


def run(fn, inputs, fusion: bool, fixed_costs: bool = True):
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="npu", options={"fusion": fusion, "fixed_costs": fixed_costs})
    with torch.no_grad(), torch_npu_backend.profile(trace=False) as prof:
        compiled(*inputs)
    return prof


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1M,16M")
    ap.add_argument("--dtypes", default="f16,f32")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    args = ap.parse_args(argv)
    rows, misses = [], []
    for name in args.workloads.split(","):
        fn, make, target = WORKLOADS[name]
        for size in args.sizes.split(","):
            for dt in args.dtypes.split(","):
                inputs = make(SIZES[size], DTYPES[dt])
                start = time.perf_counter()
                try:
                    fused = run(fn, inputs, True)
                    wall = time.perf_counter() - start
                    unfused = run(fn, inputs, False)
                    before = run(fn, inputs, True, fixed_costs=False)
                    unfused_before = run(fn, inputs, False, fixed_costs=False)
                except Exception as e:  # noqa: BLE001 - a failing row is reported, the others still run
                    msg = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
                    rows.append([name, size, dt] + [""] * 10 + [f"FAILED: {msg[:160]}"])
                    misses.append(f"{name} {size} {dt}: failed")
                    continue
                body = fused.total_us(launch=False)
                eff = fused.total_roofline_us() / body if body else 0.0
                interp = len(fused.interpreted())
                note = f"{interp} interpreted" if interp else ""
                if (size == "16M" or name not in SIXTEEN_M_TARGETS) and eff < target:
                    misses.append(f"{name} {size} {dt}: {eff:.1%} < {target:.0%}")
                    note = (note + "; " if note else "") + f"below {target:.0%}"
                rows.append([name, size, dt, f"{before.total_us():,.1f}", f"{body:,.1f}", f"{fused.launch_us():,.1f}",
                             f"{fused.total_us():,.1f}", f"{fused.total_roofline_us():,.1f}", f"{eff:.1%}",
                             f"{fused.gm_bytes():,}", len(fused.records),
                             f"{unfused_before.total_us():,.1f} / {unfused.total_us():,.1f} ({len(unfused.records)})",
                             f"{wall:.1f}", note])  # fmt: skip
                print(tabulate(rows[-1:], tablefmt="plain"), file=sys.stderr, flush=True)
    print(tabulate(rows, headers=["workload", "elems", "dtype", "before us", "body us", "launch us", "after us",
                                  "roofline us", "efficiency", "GM bytes", "kernels",
                                  "unfused before / after us (kernels)", "wall s", "note"],
                   disable_numparse=True))  # fmt: skip
    for m in misses:
        print("miss:", m)
    return 0


if __name__ == "__main__":
    sys.exit(main())
