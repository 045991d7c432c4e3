"""``hivm-verify-memory-plan``: check the plan hivm-plan-memory wrote (no stage after it may trust a wrong one).

For every function: every local buffer (UB, L1, L0A/B/C) has one offset per copy, each copy lies within its scope's
capacity, and no two copies whose lifetimes overlap share a byte (:mod:`graph_passes.analysis.plan_check`, with
the lifetimes plan-memory places by). The first violation is a one-line :class:`MemoryPlanError` naming the kernel,
both buffers, their byte ranges and their live ranges; the count of further ones follows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...analysis.plan_check import plan_violations
from ...target import module_target
from .. import ModulePass, PassContext, PassError, register_pass


class MemoryPlanError(PassError):
    """A memory plan that lets two live buffers share bytes, overruns a scope, or misses a buffer."""


@register_pass
@dataclass(frozen=True)
class VerifyMemoryPlan(ModulePass):
    """Check that no two simultaneously live local buffers share a byte of any scope."""

    name: ClassVar[str] = "hivm-verify-memory-plan"

    def run(self, module, ctx: PassContext) -> None:
        target = module_target(module)
        ctx.count("kernels-verified", 0)
        violations = []
        for func in [op for op in module.walk() if op.name == "func.func"]:
            if not any(op.name == "hivm.alloc" for op in func.walk()):
                continue
            violations.extend(plan_violations(func, target))
            ctx.count("kernels-verified")
        if violations:
            more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
            raise MemoryPlanError(f"{self.name}: {violations[0]}{more}")


__all__ = ["VerifyMemoryPlan", "MemoryPlanError"]
