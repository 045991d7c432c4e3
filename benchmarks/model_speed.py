"""How long a compiled model's calls take on the host: eager, the npu backend's first call (compile and full
simulation), its second call (each launch replayed, ``simulate="once"``, the default; the best of three later calls) and its second call with
``simulate="every"`` (every launch simulated again), the first call with the timing jobs serial and on a pool of
two workers (``workers=1`` / ``2``, compile cache off), Inductor's first and second call.

    .venv/bin/python benchmarks/model_speed.py [--gpt2-small] [--no-every] [--no-inductor] [--workers 1,2]
                                               [--only 'GPT-2 (2x64, 2x16 tok) forward' ...]

Rows: GPT-2 and Llama from the small configs of tests/backend/test_hf_models.py (2 layers, width 64, 2x16 tokens),
an inference forward and a training step (forward with the loss, backward); ``--gpt2-small`` adds GPT-2 small (12
layers, n_embd 768, 12 heads, 1x128 tokens; slow: minutes per full simulation). Columns: wall seconds of each call,
the simulated µs of one call (launches included), the launches replayed in the second call, and the simulator's
speed in the first call (instructions simulated per wall second of simulation). Random weights, nothing downloaded.
A table, not a timed test.

Each column group is one function of :data:`MEASURES` (``spec -> {column: value}``); ``warm_compile_cache`` is the
slot for a second process's first call with a warm compile cache (n/a until there is one).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass

# Note: run as a script, this directory is sys.path[0] and benchmarks/simulator.py would shadow the simulator package.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE] + [os.path.dirname(_HERE)]

import torch  # noqa: E402
import transformers  # noqa: E402
from tabulate import tabulate  # noqa: E402

import torch_npu_backend  # noqa: E402


@dataclass
class Spec:
    """One row: a model builder, its input ids, inference forward or training step."""

    name: str
    build: object  # () -> a transformers model (random weights, seeded)
    ids: torch.Tensor
    train: bool

    def model(self):
        torch.manual_seed(0)
        return self.build().train(self.train)

    def call(self, fn):
        """One call: the forward (no grad) or a training step (loss, backward); returns the wall seconds."""
        t0 = time.perf_counter()
        if self.train:
            out = fn(input_ids=self.ids, labels=self.ids)
            out.loss.backward()
        else:
            with torch.no_grad():
                fn(input_ids=self.ids)
        return time.perf_counter() - t0


def gpt2(layers=2, embd=64, heads=4, vocab=256):
    return lambda: transformers.GPT2LMHeadModel(transformers.GPT2Config(
        n_layer=layers, n_embd=embd, n_head=heads, n_positions=max(64, 128), vocab_size=vocab, resid_pdrop=0.0,
        embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0))


def llama():
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=256, num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
        max_position_embeddings=64, num_key_value_heads=2))


# ---- measures: spec -> {column: value} ------------------------------------------------------------------------------
def eager(spec: Spec, args) -> dict:
    model = spec.model()
    spec.call(model)  # warm-up
    return {"eager s": min(spec.call(model) for _ in range(REPEAT))}


def _npu(spec: Spec, options: dict):
    torch._dynamo.reset()
    model = spec.model()
    compiled = torch.compile(model, backend="npu", options=options)
    with torch_npu_backend.profile(trace=False) as first:
        t1 = spec.call(compiled)
    t2 = float("inf")
    for _ in range(REPEAT):  # the best of REPEAT later calls (a shared machine's noise)
        with torch_npu_backend.profile(trace=False) as second:
            t2 = min(t2, spec.call(compiled))
    torch._dynamo.reset()
    return t1, t2, first, second


def npu_once(spec: Spec, args) -> dict:
    t1, t2, first, second = _npu(spec, {})
    sims = [r.result.stats for r in first.simulated() if r.result is not None]
    instr, wall = sum(s.instructions for s in sims), sum(s.wall_seconds for s in sims)
    return {"npu 1st call s (compile + simulation)": t1, "npu 2nd call s (replay)": t2,
            "replayed": f"{len(second.replayed())}/{len(second.simulated())}",
            "simulated us": second.total_us(), "sim instr/s (1st call)": instr / wall if wall else float("nan")}


def npu_every(spec: Spec, args) -> dict:
    if args.no_every:
        return {"npu 2nd call s (simulate=every)": "skipped"}
    _, t2, _, _ = _npu(spec, {"simulate": "every"})
    return {"npu 2nd call s (simulate=every)": t2}


def inductor(spec: Spec, args) -> dict:
    cols = ("inductor 1st call s", "inductor 2nd call s")
    if args.no_inductor:
        return dict.fromkeys(cols, "skipped")
    torch._dynamo.reset()
    try:
        compiled = torch.compile(spec.model(), backend="inductor")
        t1 = spec.call(compiled)
        t2 = min(spec.call(compiled) for _ in range(REPEAT))
    except Exception as e:  # noqa: BLE001 - a missing C++ toolchain, say; the table says so
        return dict.fromkeys(cols, f"error: {type(e).__name__}")
    finally:
        torch._dynamo.reset()
    return dict(zip(cols, (t1, t2)))


def npu_workers(spec: Spec, args) -> dict:
    """The first call (compile cache off, so both compile) with the timing jobs serial (``workers=1``: every new
    launch simulated in full at once) and fanned out to a pool of 2 (outputs from the functional executor, timing
    jobs in the pool); whether the two calls' profiles (simulated µs, per-launch cycles) are the same."""
    out, profiles = {}, []
    if not args.workers:
        return out
    for n in args.workers:
        torch._dynamo.reset()
        compiled = torch.compile(spec.model(), backend="npu", options={"workers": n, "cache": False})
        with torch_npu_backend.profile(trace=False) as prof:
            out[f"npu 1st call s, workers={n}"] = spec.call(compiled)
        profiles.append([(r.kernel, r.cycles) for r in prof.records])
        torch._dynamo.reset()
    out["same profile"] = "yes" if all(p == profiles[0] for p in profiles) else "NO"
    return out


def warm_compile_cache(spec: Spec, args) -> dict:
    """Slot: a second process's first call with a warm compile cache (no compile cache yet)."""
    return {"2nd process, warm compile cache s": "n/a"}


MEASURES = [eager, npu_once, npu_workers, npu_every, inductor, warm_compile_cache]
REPEAT = 3  # later calls are the best of this many (eager: after a warm-up call)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpt2-small", action="store_true", help="add GPT-2 small (12 layers, d 768, 128 tokens)")
    ap.add_argument("--no-every", action="store_true", help="skip the simulate='every' second call")
    ap.add_argument("--no-inductor", action="store_true", help="skip Inductor")
    ap.add_argument("--workers", type=lambda v: [int(n) for n in v.split(",") if n], default=[1, 2],
                    help="comma-separated worker counts for the first-call columns (default 1,2; '' skips them)")
    ap.add_argument("--only", action="append", default=[],
                    help="run only the rows whose name contains this text (repeatable), e.g. 'GPT-2 (2x64, 2x16 tok) "
                         "forward'")
    args = ap.parse_args(argv)
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 256, (2, 16), generator=gen)
    specs = [Spec(f"{n} {'train step' if t else 'forward'}", b, ids, t)
             for n, b in (("GPT-2 (2x64, 2x16 tok)", gpt2()), ("Llama (2x64, 2x16 tok)", llama)) for t in (False, True)]
    if args.gpt2_small:
        big = torch.randint(0, 50257, (1, 128), generator=gen)
        specs += [Spec(f"GPT-2 small (12x768, 1x128 tok) {'train step' if t else 'forward'}",
                       gpt2(12, 768, 12, 50257), big, t) for t in (False, True)]
    if args.only:
        specs = [s for s in specs if any(o in s.name for o in args.only)]
    rows, headers = [], []
    for spec in specs:
        row = {"model": spec.name}
        for m in MEASURES:
            row.update(m(spec, args))
        rows.append(row)
        headers += [h for h in row if h not in headers]
        print(f"... {spec.name}: done", file=sys.stderr, flush=True)
    fmt = lambda v: (f"{v:,.0f}" if v >= 1000 else f"{v:.3g}") if isinstance(v, float) else v  # noqa: E731
    print(tabulate([[fmt(r.get(h, "")) for h in headers] for r in rows], headers=headers, disable_numparse=True))
    print(f"\nseconds of host wall time per call (eager and every 2nd call: the best of {REPEAT}); simulated us: one "
          "call on the simulated ascend910b1, launches included; replayed: launches of the 2nd call replayed / "
          "simulated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
