"""Where a GPT-2 forward's simulated time goes: a small Hugging Face GPT-2 (random weights, nothing downloaded)
through ``torch.compile(backend="npu")``, profiled.

    python benchmarks/gpt2_profile.py [--layers 2] [--embd 128] [--heads 4] [--batch 2] [--seq 32] [--vocab 512]

Runs one inference forward (logits, and the loss with ``--loss``) under the profile API, checks the logits against
eager, prints ``Profile.table()`` (every launch), then totals per fusion kind: launches, cube and vector kernels
(by core type: AIC is the Cube unit, AIV the vector unit), simulated µs (kernel bodies, launch overhead, both) and
the simulator's wall seconds. A launch the reference interpreter ran is listed as ``(interpreted)`` with its reason.
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
import transformers  # noqa: E402
from tabulate import tabulate  # noqa: E402

import torch_npu_backend  # noqa: E402


def kind_totals(records) -> list[list]:
    """Rows ``[kind, launches, cube, vector, mixed, body us, launch us, total us, wall s]`` per fusion kind (cube:
    AIC kernels, vector: AIV, mixed: MIX), the most simulated time first; interpreted launches under
    ``"<kind> (interpreted)"``."""
    kinds = defaultdict(lambda: [0, 0, 0, 0, 0.0, 0.0, 0.0])
    for r in records:
        k = kinds[f"{r.fusion_kind}" + ("" if r.simulated else " (interpreted)")]
        k[0] += 1
        k[1] += r.core_type == "AIC"
        k[2] += r.core_type == "AIV"
        k[3] += r.core_type not in ("AIC", "AIV")
        k[4] += r.us or 0.0
        k[5] += r.launch_us or 0.0
        k[6] += r.wall_s
    return [[kind, n, cube, vec, mix, body, launch, body + launch, wall]
            for kind, (n, cube, vec, mix, body, launch, wall)
            in sorted(kinds.items(), key=lambda kv: -kv[1][4] - kv[1][5])]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--embd", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--vocab", type=int, default=512)
    ap.add_argument("--loss", action="store_true", help="pass labels: the forward computes the loss too")
    a = ap.parse_args(argv)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        n_layer=a.layers, n_embd=a.embd, n_head=a.heads, n_positions=max(64, a.seq), vocab_size=a.vocab,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0)).eval()
    ids = torch.randint(0, a.vocab, (a.batch, a.seq))
    kw = dict(input_ids=ids, labels=ids) if a.loss else dict(input_ids=ids)
    with torch.no_grad():
        want = model(**kw).logits
        compiled = torch.compile(model, backend="npu")
        t0 = time.time()
        with torch_npu_backend.profile(trace=False) as prof:
            got = compiled(**kw).logits
        wall = time.time() - t0
    err = ((got - want).abs().max() / want.abs().max()).item()

    print(f"GPT-2 forward, {a.layers} layers, n_embd={a.embd}, heads={a.heads}, {a.batch}x{a.seq} tokens, "
          f"vocab={a.vocab}{', with the loss' if a.loss else ''}: on the simulated ascend910b1\n")
    print(prof.table())
    print()
    rows = [[k, n, c, v, m, f"{b:,.2f}", f"{lu:,.2f}", f"{t:,.2f}", f"{w:,.1f}"]
            for k, n, c, v, m, b, lu, t, w in kind_totals(prof.records)]
    print(tabulate(rows, headers=["kind", "launches", "cube", "vector", "mixed", "body us", "launch us", "total us",
                                  "wall s"], disable_numparse=True))
    for r in prof.interpreted():
        print(f"interpreted: {r.kernel} ({','.join(r.source)}): {r.reason}")
    cube = sum(r.core_type == "AIC" for r in prof.records)
    vector = sum(r.core_type == "AIV" for r in prof.records)
    print(f"\ntotal: {len(prof.records)} launches ({cube} cube, {vector} vector, "
          f"{len(prof.records) - cube - vector} mixed; "
          f"{len(prof.interpreted())} interpreted), {prof.total_us():,.1f} us simulated "
          f"({prof.total_us(launch=False):,.1f} us kernel bodies + {prof.launch_us():,.1f} us launch overhead), "
          f"{wall:,.0f} s wall (compile and simulation); logits' largest difference {err:.1e} of their max")
    return 0


if __name__ == "__main__":
    sys.exit(main())
