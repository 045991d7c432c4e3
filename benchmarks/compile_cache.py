"""Cold vs warm compile of a small GPT-2 (random weights, nothing downloaded) through the compile cache on disk.

    python benchmarks/compile_cache.py [--layers 2] [--embd 64] [--heads 4] [--seq 16] [--train]

Runs the same model in two fresh processes sharing one empty ``NPU_CACHE_DIR``: the first compiles every graph and
writes the cache, the second should find every graph there (passes and codegen skipped). Prints, per process, the
wall seconds of the first call (dynamo, AOTAutograd, our compile, the simulated run), of the second call (the run
alone), of ``compile_graph`` (import, then the passes and codegen or the cache; the compiler's modules are imported
before the clock starts), the cache counters, the kernels compiled, the simulated µs and whether the logits match
the first process exactly. A table, not a timed test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

# Note: run as a script, this directory is sys.path[0] and benchmarks/simulator.py would shadow the simulator package.
_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE] + [_ROOT]


def child(args) -> dict:
    """One process: build the model, time the first compiled call, return the figures as a dict."""
    import time

    import torch
    import transformers

    import codegen  # noqa: F401  (Note: the compiler's modules are imported before the clock starts, in both
    import graph_passes.passes  # noqa: F401  processes: a hit would otherwise pay the one-time imports alone)
    import graph_passes.pipelines  # noqa: F401
    import torch_npu_backend
    from torch_npu_backend import compile as compile_module

    compile_s = [0.0]
    compile_graph = compile_module.compile_graph

    def timed_compile_graph(*a, **kw):
        t = time.perf_counter()
        try:
            return compile_graph(*a, **kw)
        finally:
            compile_s[0] += time.perf_counter() - t

    compile_module.compile_graph = timed_compile_graph  # the backend looks it up at each graph
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        n_layer=args.layers, n_embd=args.embd, n_head=args.heads, n_positions=64, vocab_size=256, resid_pdrop=0.0,
        embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0))  # fmt: skip
    ids = torch.randint(0, 256, (2, args.seq), generator=torch.Generator().manual_seed(1))
    compiled = torch.compile(model if args.train else model.eval(), backend="npu")
    def step():
        if args.train:
            out = compiled(input_ids=ids, labels=ids)
            out.loss.backward()
            return out
        with torch.no_grad():
            return compiled(input_ids=ids, labels=ids)

    start = time.perf_counter()
    with torch_npu_backend.profile(trace=False) as prof:
        out = step()
    first = time.perf_counter() - start
    start = time.perf_counter()
    step()
    second = time.perf_counter() - start
    c = torch_npu_backend.COUNTERS
    return {"first_s": first, "second_s": second, "compile_s": compile_s[0], "graphs": c["graphs_compiled"],
            "hits": c["cache_hits"], "misses": c["cache_misses"], "writes": c["cache_writes"],
            "kernels_compiled": c["kernels_compiled"], "sim_us": sum(r.us for r in prof.simulated()),
            "logits": out.logits.detach().flatten().tolist()}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--embd", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--seq", type=int, default=16)
    parser.add_argument("--train", action="store_true", help="a training step (forward and backward graphs)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args)))
        return
    from tabulate import tabulate

    argv = sys.argv[1:]
    rows, first = [], None
    with tempfile.TemporaryDirectory() as cache_dir:
        env = {**os.environ, "NPU_CACHE_DIR": cache_dir}
        for label in ("cold", "warm"):
            run = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", *argv], env=env,
                                 capture_output=True, text=True, check=True)  # fmt: skip
            r = json.loads(run.stdout.strip().splitlines()[-1])
            first = first or r
            rows.append([label, f"{r['first_s']:.2f}", f"{r['second_s']:.2f}", f"{r['compile_s']:.2f}", r["graphs"],
                         r["hits"], r["misses"], r["writes"], r["kernels_compiled"], f"{r['sim_us']:.2f}",
                         r["logits"] == first["logits"]])  # fmt: skip
    print(tabulate(rows, headers=["process", "first call (s)", "second call (s)", "compile_graph (s)", "graphs", "hits",
                                  "misses", "writes", "kernels compiled", "simulated us", "same logits"]))  # fmt: skip
    cold, warm = float(rows[0][3]), float(rows[1][3])
    print(f"\ncompile_graph, warm / cold: {warm / cold:.0%}; first call, warm / cold: "
          f"{float(rows[1][1]) / float(rows[0][1]):.0%}")


if __name__ == "__main__":
    main()
