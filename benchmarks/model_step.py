"""One training step of a GPT-style block through ``torch.compile(backend="npu")``: where the simulated time goes.

    .venv/bin/python benchmarks/model_step.py [--d 128] [--heads 4] [--seq 128] [--batch 2] [--vocab 512] [--top 15]

The block (``examples/gpt_block.py``: embedding, layer norm, attention with a causal mask, GELU MLP, cross-entropy) runs forward and backward
once, compiled, with the profile API; the loss and every gradient are compared with eager. The step runs twice: with
the chip's fixed costs (launch overhead, per-DMA fixed costs; docs/simulator.md) and without (``fixed_costs=False``,
the simulator's timing before they were modelled: the "before" columns). Prints the slowest kernels (before µs, body
µs with the per-DMA fixed costs, launch µs, roofline µs, efficiency = roofline / body, block dim, the simulator's wall
seconds, the FX nodes they came from), then totals per fusion kind (before, and after with the launches), then the
step's totals. Matmuls are cube kernels on the simulator (SINGLE_CUBE); a launch the reference interpreter ran
shows as ``(interpreted)`` in the totals.
A table, not a timed test.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict

# Note: run as a script, this directory is sys.path[0] and benchmarks/simulator.py would shadow the simulator package.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE] + [os.path.dirname(_HERE)]

import torch  # noqa: E402
from tabulate import tabulate  # noqa: E402

import torch_npu_backend  # noqa: E402
from examples.gpt_block import GPTBlock  # noqa: E402


def _step(model, idx):
    model.zero_grad()
    loss = model(idx)
    loss.backward()
    return loss.detach(), {n.removeprefix("_orig_mod."): p.grad.detach().clone() for n, p in model.named_parameters()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=512)
    ap.add_argument("--top", type=int, default=15)
    a = ap.parse_args(argv)
    torch.manual_seed(0)
    model = GPTBlock(a.d, a.heads, a.vocab)
    idx = torch.randint(0, a.vocab, (a.batch, a.seq))
    want_loss, want = _step(model, idx)
    torch._dynamo.reset()
    with torch_npu_backend.profile(trace=False) as before:
        _step(torch.compile(model, backend="npu", options={"fixed_costs": False}), idx)
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="npu")
    t0 = time.time()
    with torch_npu_backend.profile(trace=False) as prof:
        loss, got = _step(compiled, idx)
    wall = time.time() - t0
    worst = max(((g - want[n]).abs().max() / (want[n].abs().max() + 1e-12)).item() for n, g in got.items())

    recs = prof.records
    if [(r.kernel, r.executed) for r in before.records] != [(r.kernel, r.executed) for r in recs]:
        raise RuntimeError("the step with and without fixed costs launched different kernels; cannot pair them")
    before_us = {id(r): b.us for r, b in zip(recs, before.records)}
    sim = [r for r in recs if r.executed == "simulator"]
    print(f"GPT-style block, d={a.d} heads={a.heads} seq={a.seq} batch={a.batch} vocab={a.vocab}: one training step "
          f"on the simulated ascend910b1\n")
    rows = [[f"{before_us[id(r)]:,.2f}", f"{r.us:,.2f}", f"{r.launch_us or 0.0:,.2f}", f"{r.roofline_us:,.2f}",
             f"{r.efficiency:.1%}", r.block_dim, r.fusion_kind, f"{r.wall_s:,.1f}", r.graph.split("_")[-1],
             ",".join(r.source)[:60]]
            for r in sorted(sim, key=lambda r: -r.us)[:a.top]]
    print(tabulate(rows, headers=["before us", "body us", "launch us", "roofline us", "efficiency", "block dim",
                                  "kind", "wall s", "graph", "FX nodes"], disable_numparse=True))
    kinds = defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0, 0.0])
    for r in recs:
        k = kinds[r.fusion_kind + ("" if r.executed == "simulator" else " (interpreted)")]
        k[0] += 1
        k[1] += before_us[id(r)] or 0.0
        k[2] += r.us or 0.0
        k[3] += r.launch_us or 0.0
        k[4] += r.roofline_us or 0.0
        k[5] += r.wall_s or 0.0
    print()
    print(tabulate([[k, n, f"{b:,.2f}", f"{us:,.2f}", f"{lu:,.2f}", f"{us + lu:,.2f}", f"{roof:,.2f}",
                     f"{roof / us:.1%}" if us else "-", f"{w:,.1f}"]
                    for k, (n, b, us, lu, roof, w) in sorted(kinds.items(), key=lambda kv: -kv[1][2] - kv[1][3])],
                   headers=["kind", "launches", "before us", "body us", "launch us", "after us", "roofline us",
                            "efficiency", "wall s"], disable_numparse=True))
    print(f"\ntotal: {len(recs)} launches ({len(sim)} simulated, {len(recs) - len(sim)} interpreted), "
          f"{before.total_us():,.1f} us simulated before fixed costs; after: {prof.total_us():,.1f} us with the "
          f"launches ({prof.total_us(launch=False):,.1f} us kernel bodies + {prof.launch_us():,.1f} us launch "
          f"overhead), {wall:,.0f} s wall for the step; loss {loss.item():.6f} "
          f"(eager {want_loss.item():.6f}), largest gradient difference {worst:.1e} of the gradient's max")
    return 0


if __name__ == "__main__":
    sys.exit(main())
