"""``compile_graph``: one aten FX graph → a :class:`CompiledGraph` (import, verify, run the pipeline, dump)."""

from __future__ import annotations

import os

import torch

from graph_passes.ir.verifier import verify

from .importer import import_graph
from .options import NpuOptions
from .runtime import CompiledGraph
from .stats import COUNTERS

FX_GRAPH_DUMP = "000_fx_graph.txt"


def compile_graph(gm: torch.fx.GraphModule, example_inputs=None, options: NpuOptions | dict | None = None, *,
                  kind: str = "inference") -> CompiledGraph:  # fmt: skip
    """Compile one aten graph (as AOTAutograd hands it over) for execution; ``kind`` names it in dumps/counters."""
    from graph_passes.passes import PassManager

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
    result = import_graph(gm, target=options.chip)
    if options.verify:
        verify(result.module)
    pm = PassManager.from_pipeline(options.pipeline, verify=options.verify, debug_dir=debug_dir)
    pass_ctx = pm.run(result.module)
    return CompiledGraph(
        name=name,
        module=result.module,
        outputs=result.outputs,
        symbol_args=result.symbol_args,
        options=options,
        debug_dir=debug_dir,
        pass_context=pass_ctx,
        stats={"lowered": len(result.lowered)},
    )
