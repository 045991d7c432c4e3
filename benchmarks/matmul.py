"""Matmuls on the simulated Cube unit through ``torch.compile(backend="npu")`` and the profile API.

    .venv/bin/python benchmarks/matmul.py [--quick] [--chip ascend910b1]

Per workload: the kernels it launched (cube / vector), simulated µs of the kernel bodies (``total_us(launch=False)``,
per-DMA fixed costs included) and with the launches (``total_us()``), roofline µs (per kernel max(cube bound, GM
bound), summed), efficiency = roofline / simulated bodies, busy % of the largest cube kernel's Cube (M), MTE1, MTE2
and FixPipe pipes, its tile (base M x N x K, L1 K step, accumulator parts, split-K chunk), waves of work items over
the cube cores, and the wall seconds of the compiled call (simulation included). Targets: fp16 GEMM 4096^3 >= 85% of
the cube roofline, GEMV >= 80% of its GM roofline. ``--quick`` leaves out the GEMMs above 2048^3; ``--only TEXT``
runs the workloads whose label holds TEXT; ``--options split_k=False`` adds compile options (split-K before /
after). A table, not a timed test.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

# Note: the simulator's mmad forms each 128 x 128 x 128 product with numpy (float64, BLAS); a multi-threaded BLAS is
# many times slower than one thread for products that small on a small, busy machine (1024^3 under cProfile: 9.6 s in
# the 576 mmads with the default threads, 0.67 s with one), so the benchmark pins one thread before numpy loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

# Note: run as a script, this directory is sys.path[0] and benchmarks/simulator.py would shadow the simulator package.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE] + [os.path.dirname(_HERE)]

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from tabulate import tabulate  # noqa: E402

import torch_npu_backend  # noqa: E402

F16 = torch.float16


def _t(*shape):
    return torch.randn(*shape, dtype=F16)


def _gemm(n):
    return f"GEMM f16 {n}^3", (lambda a, b: a @ b), lambda: [_t(n, n), _t(n, n)]


def workloads(quick: bool):
    sizes = (1024, 1536, 2048) if quick else (1024, 1536, 2048, 3072, 4096)
    rows = [_gemm(n) for n in sizes]
    rows += [
        ("GEMV f16 1x4096x4096", lambda x, w: x @ w, lambda: [_t(1, 4096), _t(4096, 4096)]),
        ("LM head 128x768x50257, x @ W.t()", lambda x, w: x @ w.t(), lambda: [_t(128, 768), _t(50257, 768)]),
        ("f16 77x1000x333", lambda a, b: a @ b, lambda: [_t(77, 1000), _t(1000, 333)]),
        ("linear 256x1024x1024", lambda x, w, b: F.linear(x, w, b), lambda: [_t(256, 1024), _t(1024, 1024), _t(1024)]),
        ("linear 256x1024x1024 + gelu", lambda x, w, b: F.gelu(F.linear(x, w, b)),
         lambda: [_t(256, 1024), _t(1024, 1024), _t(1024)]),
        # the same two kernels apart (a SINGLE_CUBE and a vector kernel): cube-vector fusion before / after
        ("linear 256x1024x1024 + gelu, unfused (cv_fusion=False)", lambda x, w, b: F.gelu(F.linear(x, w, b)),
         lambda: [_t(256, 1024), _t(1024, 1024), _t(1024)], {"cv_fusion": False}),
        # few output tiles, long K: split-K (hfusion-split-k) candidates
        ("split-K f16 64x64x16384", lambda a, b: a @ b, lambda: [_t(64, 16384), _t(16384, 64)]),
        ("split-K f16 128x128x8192", lambda a, b: a @ b, lambda: [_t(128, 8192), _t(8192, 128)]),
        ("split-K f16 256x256x4096", lambda a, b: a @ b, lambda: [_t(256, 4096), _t(4096, 256)]),
        ("split-K GEMV-like f16 16x1024x16384", lambda a, b: a @ b, lambda: [_t(16, 16384), _t(16384, 1024)]),
        ("split-K weight grad f16 x.t() @ g 64x64x16384", lambda x, g: x.t() @ g, lambda: [_t(16384, 64), _t(16384, 64)]),
    ]
    return rows


def _tile(rec) -> tuple[str, str]:
    s = rec.schedule
    if s is None or not hasattr(s, "base_m"):
        return "", ""
    parts = f", {s.acc_parts} parts" if s.acc_parts > 1 else ""
    chunk = f", K chunks of {s.k_chunk}" if getattr(s, "k_chunk", 0) else ""
    return f"{s.base_m}x{s.base_n}x{s.base_k} (L1 k {s.l1_k}{parts}, {s.work_item}{chunk})", str(s.waves or "")


def _option(kv: str):
    name, value = kv.split("=", 1)
    return name, {"True": True, "False": False}.get(value, int(value) if value.isdigit() else value)


def run(label, fn, make, chip, extra=None):
    torch._dynamo.reset()
    inputs = make()
    compiled = torch.compile(fn, backend="npu", options={"chip": chip, **(extra or {})})
    with torch_npu_backend.profile(trace=False) as prof:
        start = time.perf_counter()
        compiled(*inputs)
        wall = time.perf_counter() - start
    sim = prof.simulated()
    cube = [r for r in sim if r.core_type in ("AIC", "MIX")]  # a MIX kernel: the cube and its fused epilogue
    vector = [r for r in sim if r.core_type not in ("AIC", "MIX")]
    us = prof.total_us(launch=False)
    roof = sum(r.roofline_us for r in sim)
    main = max(cube, key=lambda r: r.us) if cube else None
    busy = [f"{main.busy.get(p, 0.0):.0%}" if main else "" for p in ("M", "MTE1", "MTE2", "FIX")]
    tile, waves = _tile(main) if main else ("", "")
    mix = sum(r.core_type == "MIX" for r in cube)
    kernels = f"{len(cube)} / {len(vector)}" + (f" ({mix} mix)" if mix else "") + (
        f" (+{len(prof.interpreted())} interpreted)" if prof.interpreted() else "")
    return [label, kernels, f"{us:,.2f}", f"{prof.total_us():,.2f}", f"{roof:,.2f}", f"{roof / us:.1%}" if us else "", *busy, tile, waves,
            f"{wall:.1f}"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="leave out the GEMMs above 2048^3")
    ap.add_argument("--chip", default="ascend910b1")
    ap.add_argument("--only", default="", help="run only the workloads whose label contains this text")
    ap.add_argument("--options", default="", help="extra compile options, name=value,... (e.g. split_k=False)")
    args = ap.parse_args(argv)
    extra = dict(_option(kv) for kv in args.options.split(",") if kv)
    rows = []
    for label, fn, make, *own in workloads(args.quick):
        if args.only not in label:
            continue
        rows.append(run(label, fn, make, args.chip, {**(own[0] if own else {}), **extra}))
        print(f"  {label}: {rows[-1][2]} us, {rows[-1][5]}", file=sys.stderr, flush=True)
    headers = ["workload", "kernels cube / vector", "sim us", "+ launch us", "roofline us", "efficiency", "Cube", "MTE1", "MTE2", "FIX",
               "tile", "waves", "wall s"]
    print(f"matmuls on {args.chip} (kernel bodies; busy %: the largest cube kernel's pipes)")
    print(tabulate(rows, headers=headers))


if __name__ == "__main__":
    main()
