"""Simulator benchmark: the example kernels at full size on a chip preset. Prints a table; asserts nothing.

    python benchmarks/simulator.py [--chip ascend910b1] [--no-hazards] [--small] [--exact]

Columns: before us (the kernel simulated without fixed costs, `ChipSpec.without_fixed_costs()`, which reproduces the
simulator's cycles before launch overhead and per-DMA fixed costs were modelled), body us (the cores' time with the
per-DMA fixed costs), launch us (launch overhead, charged before the cores start), after us (launch + body), roofline
us (bound), efficiency = roofline / body, per-pipe busy %, and the simulator's own speed (instructions simulated per
wall-clock second and per CPU second of this process, of the after run; CPU seconds are steadier on a shared
machine). ``--exact`` forces the simulator's exact path (``NPU_SIM_EXACT=1``, simulator/symmetry.py): the cycles
are the same, only the simulator's speed differs. The GEMM runs twice: with the
balanced work split (whole 128x256 blocks plus an even share of the leftover blocks per core) and, for
comparison, with whole blocks dealt round-robin (6 or 5 blocks per core).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

# Note: numpy's multi-threaded BLAS is several times slower than one thread for the simulator's small
# 128x128 mmad products on small machines; the benchmark pins one thread (set before numpy loads).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from tabulate import tabulate

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

from simulator import get_chip  # noqa: E402
from simulator.examples import run_gemm, run_vector_add  # noqa: E402
from simulator.isa import LANE_NAMES  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chip", default="ascend910b1")
    ap.add_argument("--no-hazards", action="store_true")
    ap.add_argument("--small", action="store_true", help="1M-element add and 1024^3 GEMM")
    ap.add_argument("--exact", action="store_true", help="force the simulator's exact path (NPU_SIM_EXACT=1)")
    a = ap.parse_args()
    if a.exact:
        os.environ["NPU_SIM_EXACT"] = "1"
    chip = get_chip(a.chip)
    check = not a.no_hazards
    rng = np.random.default_rng(0)
    n = (1 if a.small else 16) * 1024 * 1024
    size = 1024 if a.small else 2048
    vec_cores = chip.aiv_cores or chip.aic_cores
    x = rng.standard_normal(n).astype(np.float16)
    y = rng.standard_normal(n).astype(np.float16)
    A = rng.uniform(-1, 1, (size, size)).astype(np.float16)
    B = rng.uniform(-1, 1, (size, size)).astype(np.float16)
    runs = []
    for label, fn in [
        (f"vector add f16 {n >> 20}M, double-buffered", lambda c: run_vector_add(x, y, chip=c, block_dim=vec_cores,
                                                                                  buffers=2, check_hazards=check)),
        (f"vector add f16 {n >> 20}M, single-buffered", lambda c: run_vector_add(x, y, chip=c, block_dim=vec_cores,
                                                                                  buffers=1, check_hazards=check)),
        # Note: on all cores the chip's shared DDR is the bottleneck for both variants; on 8 cores each core's own
        # DMA path is, and there double buffering's overlap of load, add and store shows (docs/simulator.md).
        (f"vector add f16 {n >> 20}M on 8 cores, double-buffered",
         lambda c: run_vector_add(x, y, chip=c, block_dim=8, buffers=2, check_hazards=check)),
        (f"vector add f16 {n >> 20}M on 8 cores, single-buffered",
         lambda c: run_vector_add(x, y, chip=c, block_dim=8, buffers=1, check_hazards=check)),
        (f"GEMM f16 {size}^3, balanced split", lambda c: run_gemm(A, B, chip=c, block_dim=chip.aic_cores,
                                                                   check_hazards=check)),
        (f"GEMM f16 {size}^3, whole blocks only", lambda c: run_gemm(A, B, chip=c, block_dim=chip.aic_cores,
                                                                      balance=False, check_hazards=check)),
    ]:
        _, before = fn(chip.without_fixed_costs())
        t, cpu = time.perf_counter(), time.process_time()
        out, res = fn(chip)
        wall, cpu = time.perf_counter() - t, time.process_time() - cpu
        s = res.stats
        busy = ", ".join(f"{LANE_NAMES[p]} {r:.0%}" for p, r in s.busy_ratio.items())
        runs.append((label, f"{before.stats.us:,.1f}", f"{s.us:,.1f}", f"{s.launch_us:,.1f}", f"{s.total_us:,.1f}",
                     f"{s.roofline_us:,.1f} ({s.bound})", f"{s.efficiency:.1%}", busy,
                     f"{s.instructions:,}", f"{s.instructions / wall:,.0f}", f"{s.instructions / cpu:,.0f}",
                     f"{wall:.1f}"))
        if "GEMM" in label:
            ref = A.astype(np.float32) @ B.astype(np.float32)
            err = float(np.abs(out.astype(np.float32) - ref).max())
            print(f"{label}: max |error| vs fp32 numpy: {err:.3g}; "
                  f"{2 * size ** 3 / (s.total_us * 1e-6) / 1e12:.1f} TFLOPS with the launch "
                  f"({2 * size ** 3 / (before.stats.us * 1e-6) / 1e12:.1f} before) of {chip.peak_f16_tflops:.1f} peak")
        else:
            assert np.array_equal(out, x + y)
    print(f"chip {chip.name}: {chip.aic_cores} AIC / {vec_cores} vector cores at {chip.clock_mhz} MHz; "
          f"hazard check {'on' if check else 'OFF'}; simulator path {'exact' if a.exact else 'fast'}")
    print(tabulate(runs, headers=["kernel", "before us", "body us", "launch us", "after us", "roofline us",
                                  "efficiency", "busy (avg over cores)", "instructions", "instr/s", "instr/CPU-s",
                                  "wall s"],
                   disable_numparse=True))


if __name__ == "__main__":
    main()
