"""``hfusion-infer-fusion-kind``: label each kernel function with its fusion kind (AscendNPU-IR's
``InferFuncFusionKind``), as a ``fusion_kind`` string attribute.

Which functions: the kernels (``kernel = true``) when the module has any; otherwise every function, each taken as
the body of one would-be kernel (so the pass can be run, and tested, on a plain host function). A kernel whose
recorded kind differs from the inferred one gets the inferred kind, as AscendNPU-IR does (it warns).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...analysis.fusion_kind import infer_func_fusion_kind
from ...ir.core import Operation
from .. import ModulePass, PassContext, register_pass


@register_pass
@dataclass(frozen=True)
class InferFusionKind(ModulePass):
    """Label each kernel function (or, without kernels, each function) with its fusion kind."""

    name: ClassVar[str] = "hfusion-infer-fusion-kind"

    def run(self, module: Operation, ctx: PassContext) -> None:
        sizes = module.size_vars()
        funcs = module.functions
        kernels = [f for f in funcs if f.attributes.get("kernel")]
        for func in kernels or funcs:
            kind = infer_func_fusion_kind(func, sizes)
            func.attributes["fusion_kind"] = kind.name
            ctx.count(kind.counter)
