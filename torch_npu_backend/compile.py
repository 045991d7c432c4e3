"""``compile_graph``: one aten FX graph → a :class:`CompiledGraph`.

execute="simulate" (the default)::

    import → verify → hfusion_pipeline (fuse, flatten, kinds)            dumps: NNN_<pass>.mlir
           → lower_with_retry (auto-schedule … inject-sync; the memory-plan retry ladder)   dumps: lowering/
           → codegen per HIVM kernel                                      dumps: kernel_<name>.s, host_plan.mlir

execute="interpret": import → verify → ``options.pipeline`` → run @main in the reference interpreter.

Between import and the passes the compile cache (``compile_cache.py``) is asked for the imported module's IR text
and the options; a hit fills the graph from the entry and skips the passes and codegen, a miss compiles and writes
the entry.

Nodes the backend cannot compile are ``host.fallback`` ops in @main (fallback.py); each compile with any warns once,
listing them (op, FX node, reason); ``fallback="error"`` makes the import fail instead.
"""

from __future__ import annotations

import functools
import os
import warnings

import torch

from graph_passes.ir.verifier import verify

from . import compile_cache
from .errors import NpuFallbackWarning
from .host_scalars import split_host_scalars
from .importer import import_graph
from .options import NpuOptions
from .runtime import CompiledGraph, KernelInfo
from .stats import COUNTERS

FX_GRAPH_DUMP = "000_fx_graph.txt"
HOST_PROLOGUE_DUMP = "000_host_prologue.txt"
LOWERING_DUMPS = "lowering"
HOST_PLAN_DUMP = "host_plan.mlir"
LADDER_DUMP = "retry_ladder.txt"
PASS_REPORT_DUMP = "passes.txt"


def compile_graph(gm: torch.fx.GraphModule, example_inputs=None, options: NpuOptions | dict | None = None, *,
                  kind: str = "inference") -> CompiledGraph:  # fmt: skip
    """Compile one aten graph (as AOTAutograd hands it over) for execution; ``kind`` names it in dumps/counters."""
    from graph_passes.passes import PassContext, PassManager

    options = options if isinstance(options, NpuOptions) else NpuOptions.from_dict(options)
    index = COUNTERS["graphs_compiled"]
    COUNTERS["graphs_compiled"] += 1
    COUNTERS[f"graphs_{kind}"] += 1
    name = f"graph_{index:03d}_{kind}"
    debug_dir = os.path.join(options.debug_dir, name) if options.debug_dir else None
    if debug_dir:
        os.makedirs(debug_dir, exist_ok=True)
        with open(os.path.join(debug_dir, FX_GRAPH_DUMP), "w") as f:
            f.write(gm.print_readable(print_output=False, include_stride=True, include_device=True))
    gm, host_prologue = split_host_scalars(gm)
    if debug_dir and host_prologue is not None:
        with open(os.path.join(debug_dir, HOST_PROLOGUE_DUMP), "w") as f:
            f.write(host_prologue.print_readable())
    result = import_graph(gm, target=options.chip, fallback=options.fallback)
    if result.fallbacks:
        COUNTERS["ops_fallen_back"] += len(result.fallbacks)
        warnings.warn(f"npu: {name}: {len(result.fallbacks)} op(s) run eagerly on the host (fallback): "
                      + "; ".join(map(str, result.fallbacks)), NpuFallbackWarning, stacklevel=2)  # fmt: skip
    if options.verify:
        verify(result.module)
    graph = CompiledGraph(name=name, module=result.module, outputs=result.outputs, symbol_args=result.symbol_args,
                          options=options, debug_dir=debug_dir, stats={"lowered": len(result.lowered)},
                          predicates=result.predicates, host_prologue=host_prologue,
                          fallbacks=result.fallbacks)  # fmt: skip
    cache = compile_cache.for_options(options)
    key = None
    if cache is not None:
        from graph_passes.ir.printer import print_module

        key = compile_cache.cache_key(print_module(result.module), options)
        payload = cache.load(key, check=functools.partial(_payload_problem, options))
        if payload is not None:
            for f in _PAYLOAD_FIELDS:
                setattr(graph, f, payload[f])
            graph.stats["cache"] = "hit"
            return graph
    if options.execute == "interpret":
        pm = PassManager.from_pipeline(options.pipeline, verify=options.verify, debug_dir=debug_dir)
        graph.pass_context = pm.run(result.module)
    else:
        _lower(graph, result.module, options, PassContext(), debug_dir)
    if cache is not None:
        graph.stats["cache"] = "miss"
        cache.store(key, _payload(graph))
    return graph


_PAYLOAD_FIELDS = ("module", "tensor_module", "pass_context", "kernels", "ladder")
"""What the passes and codegen compute: all a cache hit needs to fill a CompiledGraph the importer started."""


def _payload(graph: CompiledGraph) -> dict:
    return {"execute": graph.options.execute, **{f: getattr(graph, f) for f in _PAYLOAD_FIELDS}}


def _payload_problem(options: NpuOptions, payload) -> str | None:
    if not isinstance(payload, dict) or any(f not in payload for f in _PAYLOAD_FIELDS):
        return "payload is not a compiled graph"
    if payload.get("execute") != options.execute:
        return f"payload compiled for execute={payload.get('execute')!r}, not {options.execute!r}"
    return None


def _lower(graph: CompiledGraph, module, options: NpuOptions, ctx, debug_dir) -> None:
    """HFusion pipeline, the retry ladder down to HIVM, codegen; fills ``graph.module/tensor_module/kernels``."""
    from codegen import CodegenError, compile_kernel
    from codegen.kernel_key import kernel_key
    from graph_passes.passes import PassManager
    from graph_passes.pipelines import hfusion_pipeline, lower_with_retry

    popts = options.pipeline_options()
    PassManager.from_pipeline(hfusion_pipeline(popts), verify=options.verify, debug_dir=debug_dir).run(module, ctx)
    lowering_dir = os.path.join(debug_dir, LOWERING_DUMPS) if debug_dir else None
    ladder = lower_with_retry(module, popts, verify=options.verify, debug_dir=lowering_dir, ctx=ctx)
    graph.tensor_module, graph.module, graph.pass_context, graph.ladder = module, ladder.module, ctx, ladder.attempts
    COUNTERS["ladder_retries"] += len(ladder.attempts)
    compiled = {}  # kernel_key -> CompiledKernel: a repeated layer's kernels share one (codegen/kernel_key.py)
    for f in ladder.module.functions:
        if not f.attributes.get("kernel") or f.attributes.get("mix_part") == "aiv":
            continue  # a mix kernel's AIV part is compiled with its AIC part, the function the host launches
        name = f.sym_name
        info = KernelInfo(name, f.attributes.get("fusion_kind"), f.attributes.get("core_type"),
                          _source(module.lookup(name) or f), schedule=f.attributes.get("schedule"))  # fmt: skip
        unsupported = f.attributes.get("hivm.unsupported")
        if unsupported is not None:
            info.reason = _unsupported_reason(info.core_type, unsupported, f.attributes.get("hivm.unsupported_reason"))
        else:
            key = kernel_key(f, ladder.module)
            try:
                info.compiled = compiled.get(key) or compile_kernel(f, ladder.module)
            except CodegenError as e:
                info.reason = f"codegen: {e}"
            if info.compiled is not None:
                COUNTERS["kernels_shared"] += key in compiled
                compiled[key] = info.compiled
        COUNTERS["kernels_compiled" if info.compiled is not None else "kernels_left_interpreted"] += 1
        graph.kernels[name] = info
    if debug_dir:
        _dump(graph, debug_dir)


def _unsupported_reason(core_type: str | None, op_name: str, detail: str | None) -> str:
    if core_type == "MIX":
        return f"mix kernel ({op_name}): cube-vector fusion is not built yet"
    return f"not lowered to HIVM: {op_name} (hivm.unsupported)" + (f": {detail}" if detail else "")


def _source(kernel) -> tuple[str, ...]:
    """The FX nodes a kernel came from: its ops' locations, in body order, without repeats."""
    locs = dict.fromkeys(op.loc for op in kernel.walk() if op is not kernel and op.loc)
    return tuple(str(loc).strip('"') for loc in locs)


def _dump(graph: CompiledGraph, debug_dir: str) -> None:
    from graph_passes.ir.printer import print_module

    for name, info in graph.kernels.items():
        if info.compiled is not None:
            with open(os.path.join(debug_dir, f"kernel_{name}.s"), "w") as f:
                f.write(info.compiled.assembly() + "\n")
    with open(os.path.join(debug_dir, HOST_PLAN_DUMP), "w") as f:
        f.write("// host plan: the host function; hivm.launch runs a kernel on the simulator, func.call of a kernel\n"
                "// runs it in the reference interpreter\n")
        for name, info in graph.kernels.items():
            where = "simulator" if info.compiled is not None else f"interpreter ({info.reason})"
            f.write(f"// @{name} [{info.fusion_kind}] -> {where}\n")
        for fb in graph.fallbacks:
            f.write(f"// host fallback, run eagerly on the host: {fb}\n")
        for pred in graph.predicates:
            f.write(f"// size predicate, checked before each run: {pred} (FX node '{pred.loc}')\n")
        f.write(print_module(graph.module.lookup("main")) + "\n")
    with open(os.path.join(debug_dir, LADDER_DUMP), "w") as f:
        f.write("".join(f"failed: {a}\n" for a in graph.ladder) + "ok\n")
    with open(os.path.join(debug_dir, PASS_REPORT_DUMP), "w") as f:
        f.write(graph.pass_context.report() + "\n")
