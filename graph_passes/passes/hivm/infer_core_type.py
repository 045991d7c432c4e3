"""``hivm-infer-core-type``: mark each device kernel AIV, AIC or MIX from the units its ops run on.

After AscendNPU-IR's ``InferCoreType``: a kernel whose ops all run on the Vector unit (vector ops, UB loads and
stores) is ``AIV``; one that uses only the Cube unit (``Cube`` ops; their loads and fixpipes) is ``AIC``; one with
both is ``MIX`` (an AIC + 2×AIV group). A kernel still at tensor level (``hivm.unsupported``) is typed the same
way from its hfusion ops' traits, so the runtime knows which cores would run it. Kernels with neither (pure data
movement) are ``AIV``. Counters ``aiv``, ``aic``, ``mix``: kernels of each type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...ir.core import Cube, Operation, Vector
from .. import ModulePass, PassContext, register_pass


def infer_core_type(func: Operation) -> str:
    cube = vector = False
    for op in func.walk():
        if op.has_trait(Cube):
            cube = True
        elif op.has_trait(Vector):
            vector = True
    if cube and vector:
        return "MIX"
    return "AIC" if cube else "AIV"


@register_pass
@dataclass(frozen=True)
class InferCoreType(ModulePass):
    """Set core_type = AIV / AIC / MIX on every device kernel from the units its ops use."""

    name: ClassVar[str] = "hivm-infer-core-type"

    def run(self, module: Operation, ctx: PassContext) -> None:
        for kind in ("aiv", "aic", "mix"):
            ctx.count(kind, 0)
        for func in module.functions:
            if not func.attributes.get("kernel"):
                continue
            # the two parts of a mix kernel (convert-to-hivm's split) are one AIC + 2×AIV launch
            core_type = "MIX" if func.attributes.get("mix_part") else infer_core_type(func)
            func.attributes["core_type"] = core_type
            ctx.count(core_type.lower())
