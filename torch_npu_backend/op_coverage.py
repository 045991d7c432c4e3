"""The coverage report: which aten ops a model or function uses and where each one runs, as a CSV.

    rows = torch_npu_backend.coverage_report(model, x, path="coverage.csv", backward=True)
    npu-coverage gpt2 -o gpt2.csv          # a built-in small model (random weights), or
    npu-coverage mypkg.mymod:make -o f.csv  # make() returns (callable, args) or (callable, args, kwargs)

One row per (graph, aten op, status, detail): ``count`` FX nodes, the ``dtypes`` they read and produce, their result
``shapes`` and whether any size is ``symbolic`` (``dynamic=True``). Statuses:

- ``simulated``: every kernel holding one of its nodes ran on the simulator;
- ``interpreted``: a kernel holding it runs in the reference interpreter (``detail``: the reason);
- ``host fallback``: run eagerly on the host inside the graph (``detail``: the reason, docs/runtime.md);
- ``host prologue``: f64 scalar arithmetic done on the host before the graph runs (host_scalars.py);
- ``decomposed``: the op is in the aten graph without our decomposition table but not in the graph the backend
  compiled; ``detail`` lists the ops its decomposition traces into for the first such node;
- ``no kernel``: a view, reshape or metadata op the host plan runs as a rule (``detail``: "view or metadata"), or a
  node no kernel op keeps the location of (a pass folded it, e.g. a multiply by one, or merged it with an equal
  one).

How: the function runs twice. First through AOTAutograd with no decompositions, recording its aten graphs (the
reference for ``decomposed``), then through ``backend="npu"``, recording each compiled graph with its FX graph
(``backend.GRAPH_OBSERVERS``): a node is placed by its name, which kernels keep as their ops' locations
(``KernelInfo.source``) and host fallbacks as their ``node``. Ops that dispatch itself decomposes (PyTorch's
CompositeImplicitAutograd ops, e.g. ``linear`` into ``t`` and ``addmm``) are in neither graph and not listed.
"""

from __future__ import annotations

import csv
import importlib
import warnings
from collections import Counter
from dataclasses import dataclass, field

import torch
import torch._dynamo
import torch.fx

SIMULATED = "simulated"
INTERPRETED = "interpreted"
HOST_FALLBACK = "host fallback"
HOST_PROLOGUE = "host prologue"
DECOMPOSED = "decomposed"
NO_KERNEL = "no kernel"
COLUMNS = ("graph", "op", "status", "detail", "count", "dtypes", "shapes", "symbolic")
MAX_SHAPES = 4


@dataclass
class CoverageRow:
    graph: str  # forward / backward / inference
    op: str  # aten.mm.default
    status: str
    detail: str = ""
    count: int = 0
    dtypes: set = field(default_factory=set)
    shapes: list = field(default_factory=list)
    symbolic: bool = False

    def csv_row(self) -> dict:
        shapes = self.shapes[:MAX_SHAPES] + (["..."] if len(self.shapes) > MAX_SHAPES else [])
        return {"graph": self.graph, "op": self.op, "status": self.status, "detail": self.detail, "count": self.count,
                "dtypes": " ".join(sorted(self.dtypes)), "shapes": " ".join(shapes),
                "symbolic": "yes" if self.symbolic else "no"}  # fmt: skip


def coverage_report(fn, *args, path: str | None = None, backward: bool = False, dynamic: bool = False,
                    options: dict | None = None, example_kwargs: dict | None = None) -> list[CoverageRow]:  # fmt: skip
    """Run ``fn(*args, **example_kwargs)`` through ``backend="npu"`` (and, ``backward``, the gradient of the sum of
    its floating outputs) and return — and with ``path`` write as CSV — one row per aten op and status."""
    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.aot_autograd import make_boxed_func
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from . import backend

    kwargs = example_kwargs or {}
    reference: list[tuple[str, torch.fx.GraphModule]] = []

    def record(kind):
        def compiler(gm, example_inputs):
            reference.append((kind, gm))
            return make_boxed_func(gm.forward)

        return compiler

    def reference_backend(gm, example_inputs):
        with sdpa_kernel([SDPBackend.MATH]):  # as backend.npu_backend traces attention
            return aot_autograd(fw_compiler=record("forward"), bw_compiler=record("backward"),
                                inference_compiler=record("inference"))(gm, example_inputs)  # fmt: skip

    _run(torch.compile(fn, backend=reference_backend, dynamic=dynamic), args, kwargs, backward)
    compiled: list[tuple[str, torch.fx.GraphModule, object]] = []
    observer = lambda gm, graph, kind: compiled.append((kind, gm, graph))  # noqa: E731
    backend.GRAPH_OBSERVERS.append(observer)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="npu: ")  # the fallbacks are the report's rows
            _run(torch.compile(fn, backend="npu", dynamic=dynamic, options=options), args, kwargs, backward)
    finally:
        backend.GRAPH_OBSERVERS.remove(observer)
        torch._dynamo.reset()
    rows = _rows(reference, compiled)
    if path is not None:
        write_csv(rows, path)
    return rows


def write_csv(rows: list[CoverageRow], path: str) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow(r.csv_row())


def _run(compiled, args, kwargs, backward: bool) -> None:
    torch._dynamo.reset()
    if not backward:
        with torch.no_grad():
            compiled(*args, **kwargs)
        return
    out = compiled(*args, **kwargs)
    outs = [t for t in _tensors(out) if t.requires_grad and t.is_floating_point()]
    if not outs:
        raise ValueError("coverage_report(backward=True): no output requires grad (nothing to differentiate)")
    sum(o.float().sum() for o in outs).backward()


def _tensors(x) -> list:
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, dict) or hasattr(x, "values") and hasattr(x, "keys"):  # dicts, transformers' ModelOutput
        return [t for v in x.values() for t in _tensors(v)]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _tensors(v)]
    return []


def _placement(graph) -> dict[str, tuple[str, str]]:
    """FX node name → (status, detail) for one CompiledGraph."""
    where: dict[str, tuple[str, str]] = {}
    if graph.host_prologue is not None:
        for n in graph.host_prologue.module.graph.nodes:
            if n.op == "call_function":
                where[n.name] = (HOST_PROLOGUE, "f64 scalar computed on the host")
    for info in graph.kernels.values():
        status = (SIMULATED, "") if info.compiled is not None else (INTERPRETED, info.reason or "")
        for name in info.source:
            if where.get(name, (None,))[0] != INTERPRETED:  # one interpreted kernel is enough to say so
                where[name] = status
    if graph.options.execute == "interpret":
        where = {name: (INTERPRETED, "execute='interpret'") for name in where}
    for fb in graph.fallbacks:
        where[fb.node] = (HOST_FALLBACK, fb.reason)
    return where


def _rows(reference, compiled) -> list[CoverageRow]:
    rows: dict[tuple, CoverageRow] = {}
    present: dict[str, set[str]] = {}
    for kind, gm, graph in compiled:
        where = _placement(graph)
        interpret = graph.options.execute == "interpret"
        for node in _op_nodes(gm):
            status, detail = where.get(node.name, (INTERPRETED, "execute='interpret'") if interpret
                                       else (NO_KERNEL, _no_kernel_reason(node)))  # fmt: skip
            _add(rows, kind, node, status, detail)
            present.setdefault(kind, set()).add(str(node.target))
    from .decompositions import decomposition_table

    table = decomposition_table()
    for kind, gm in reference:
        for node in _op_nodes(gm):
            if str(node.target) in present.get(kind, ()):
                continue
            key = (kind, str(node.target), DECOMPOSED)
            detail = rows[key].detail if key in rows else _decomposed_into(node, table)
            _add(rows, kind, node, DECOMPOSED, detail)
    order = {"forward": 0, "inference": 0, "backward": 1}
    return sorted(rows.values(), key=lambda r: (order.get(r.graph, 2), r.op, r.status))


def _no_kernel_reason(node: torch.fx.Node) -> str:
    if node.target.is_view or node.target in _HOST_RULE_OPS:
        return "view or metadata (a host rule)"
    return "no kernel op keeps its location (folded, merged or rewritten by a pass)"


_HOST_RULE_OPS = {torch.ops.aten.sym_size.int, torch.ops.aten.sym_numel.default, torch.ops.aten.sym_stride.int}


def _op_nodes(gm: torch.fx.GraphModule):
    for node in gm.graph.nodes:
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
            yield node


def _add(rows: dict, kind: str, node: torch.fx.Node, status: str, detail: str) -> None:
    key = (kind, str(node.target), status, detail) if status != DECOMPOSED else (kind, str(node.target), status)
    row = rows.get(key)
    if row is None:
        row = rows[key] = CoverageRow(kind, str(node.target), status, detail)
    row.count += 1
    vals = [a.meta.get("val") for a in node.all_input_nodes] + _flat(node.meta.get("val"))
    for v in vals:
        if isinstance(v, torch.Tensor):
            row.dtypes.add(_dtype_name(v.dtype))
            row.symbolic |= any(not isinstance(d, int) for d in v.shape)
    for v in _flat(node.meta.get("val")):
        if isinstance(v, torch.Tensor):
            shape = "[" + ",".join(str(d) for d in v.shape) + "]"
            if shape not in row.shapes:
                row.shapes.append(shape)


def _flat(v) -> list:
    if isinstance(v, (list, tuple)):
        return [x for e in v for x in _flat(e)]
    return [v]


def _dtype_name(dtype: torch.dtype) -> str:
    from .dtypes import TORCH_TO_IR
    from .fallback import HOST_DTYPES

    return TORCH_TO_IR.get(dtype) or HOST_DTYPES.get(dtype) or str(dtype).removeprefix("torch.")


def _decomposed_into(node: torch.fx.Node, table: dict) -> str:
    """The aten ops the decomposition of ``node``'s op traces into (its example values, sizes at their hints)."""
    from torch.fx.experimental.proxy_tensor import make_fx

    if node.target not in table:
        return "not in the compiled graph (no decomposition entry: traced differently)"

    def real(a):
        if isinstance(a, torch.fx.Node):
            v = a.meta.get("val")
            if isinstance(v, torch.Tensor):
                shape = [_hint(d) for d in v.shape]
                return torch.rand(shape).to(v.dtype) if v.dtype.is_floating_point else torch.zeros(shape, dtype=v.dtype)
            if isinstance(v, torch.SymInt):
                return _hint(v)
            return v
        if isinstance(a, (list, tuple)):
            return type(a)(real(x) for x in a)
        return a

    try:
        args, kwargs = real(list(node.args)), {k: real(v) for k, v in node.kwargs.items()}
        traced = make_fx(lambda: table[node.target](*args, **kwargs), decomposition_table=table)()
    except Exception as e:  # noqa: BLE001 — the row still says decomposed; the detail says why there is no list
        return f"core-aten decomposition (not traced: {type(e).__name__})"
    ops = dict.fromkeys(str(n.target).removeprefix("aten.") for n in _op_nodes(traced))
    return "into " + " ".join(ops) if ops else "into views and constants"


def _hint(d) -> int:
    return d if isinstance(d, int) else int(d.node.hint if d.node.hint is not None else 2)


# -- the command line -------------------------------------------------------------------------------------------


def _builtin(name: str):
    """(callable, args, kwargs) of a small built-in model, random weights (transformers from small configs)."""
    torch.manual_seed(0)
    if name == "mlp":
        model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.LayerNorm(64),
                                    torch.nn.Linear(64, 10), torch.nn.Softmax(-1))  # fmt: skip
        return model, (torch.randn(8, 32),), {}
    import transformers

    small = dict(vocab_size=256)
    decoder = dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
                   max_position_embeddings=64, **small)  # fmt: skip
    if name == "gpt2":
        model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
            n_layer=2, n_embd=64, n_head=4, n_positions=64, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
            bos_token_id=0, eos_token_id=0, **small))  # fmt: skip
    elif name == "bert":
        model = transformers.BertForMaskedLM(transformers.BertConfig(
            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, **decoder))  # fmt: skip
    elif name == "llama":
        model = transformers.LlamaForCausalLM(transformers.LlamaConfig(num_key_value_heads=2, **decoder))
    else:
        raise ValueError(f"npu-coverage: unknown model {name!r} (built in: {', '.join(BUILTIN_MODELS)})")
    ids = torch.randint(0, 256, (2, 16), generator=torch.Generator().manual_seed(1))
    return model, (), {"input_ids": ids, "labels": ids}


BUILTIN_MODELS = ("mlp", "gpt2", "bert", "llama")


def _load(target: str):
    if target in BUILTIN_MODELS:
        return _builtin(target)
    if ":" not in target:
        raise ValueError(f"npu-coverage: {target!r} is neither a built-in model ({', '.join(BUILTIN_MODELS)}) nor "
                         "module:function")  # fmt: skip
    mod, _, attr = target.partition(":")
    made = getattr(importlib.import_module(mod), attr)()
    if not isinstance(made, tuple) or len(made) not in (2, 3) or not callable(made[0]):
        raise ValueError(f"npu-coverage: {target}() must return (callable, args) or (callable, args, kwargs)")
    return made[0], tuple(made[1]), dict(made[2]) if len(made) == 3 else {}


def main(argv=None) -> int:
    import argparse
    import sys

    from tabulate import tabulate

    p = argparse.ArgumentParser(prog="npu-coverage", description="Write the aten-op coverage CSV of a model or "
                                "function compiled with backend='npu'.")  # fmt: skip
    p.add_argument("target", help=f"a built-in model ({', '.join(BUILTIN_MODELS)}) or module:function returning "
                   "(callable, args) or (callable, args, kwargs)")  # fmt: skip
    p.add_argument("-o", "--output", default="coverage.csv", help="the CSV to write (default: coverage.csv)")
    p.add_argument("--backward", action="store_true", help="also the backward graph (gradient of the outputs' sum)")
    p.add_argument("--dynamic", action="store_true", help="compile with dynamic=True (symbolic sizes)")
    a = p.parse_args(argv)
    try:
        fn, args, kwargs = _load(a.target)
    except (ValueError, ImportError, AttributeError) as e:
        print(str(e) if str(e).startswith("npu-coverage") else f"npu-coverage: {a.target}: {e}", file=sys.stderr)
        return 2
    if isinstance(fn, torch.nn.Module) and not a.backward:
        fn.eval()
    rows = coverage_report(fn, *args, path=a.output, backward=a.backward, dynamic=a.dynamic, example_kwargs=kwargs)
    by_status = Counter()
    for r in rows:
        by_status[(r.graph, r.status)] += r.count
    print(tabulate([[g, s, c] for (g, s), c in sorted(by_status.items())], headers=["graph", "status", "nodes"]))
    print(f"{len(rows)} rows written to {a.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
