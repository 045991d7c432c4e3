"""Pass infrastructure: passes, their registry, pipeline strings, the pass manager and dumps.

    from graph_passes.passes import PassManager
    ctx = PassManager.from_pipeline("canonicalize,cse", verify=True, debug_dir=None, stop_after=None).run(module)
    ctx.counters["cse"]["ops-merged"]; ctx.timings["cse"]; print(ctx.report())
"""

from .base import ModulePass, PassContext, PassError, PipelineError
from .manager import PassManager, PassVerifyError
from .pipeline_syntax import build_pipeline, parse_pipeline_text, pipeline_text
from .registry import PASS_REGISTRY, load_all_passes, register_pass

load_all_passes()

__all__ = [
    "ModulePass", "PassContext", "PassError", "PipelineError", "PassManager", "PassVerifyError", "PASS_REGISTRY",
    "register_pass", "load_all_passes", "build_pipeline", "parse_pipeline_text", "pipeline_text",
]  # fmt: skip
