"""``cse``: merge identical pure ops (same name, operands, attributes and result types).

Scoped like MLIR's CSE: an op is replaced by an identical one that dominates it — earlier in the same block or in
an enclosing block of the same function. Ops with regions and ops without the ``Pure`` trait are never merged.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Block, IsolatedFromAbove, Operation, Pure
from ..ir.printer import format_attr_dict
from .base import ModulePass, PassContext
from .registry import register_pass


def op_key(op: Operation) -> tuple:
    """What makes two pure ops the same: name, operands, attributes and result types."""
    return (
        op.name,
        tuple(id(v) for v in op.operands),
        format_attr_dict(op.attributes),  # a canonical text of the attributes (hashable, order-free)
        tuple(str(r.type) for r in op.results),
    )


def _cse_block(block: Block, scopes: list[dict]) -> int:
    """Merge within ``block``; ``scopes`` holds the tables of enclosing blocks (outermost first)."""
    table: dict[tuple, Operation] = {}
    scopes = scopes + [table]
    merged = 0
    for op in list(block.ops):
        if op.regions:
            inner_scopes = [] if op.has_trait(IsolatedFromAbove) else scopes
            for region in op.regions:
                for inner in region.blocks:
                    merged += _cse_block(inner, inner_scopes)
            continue
        if not op.has_trait(Pure) or not op.results:
            continue
        key = op_key(op)
        existing = next((s[key] for s in reversed(scopes) if key in s), None)
        if existing is None:
            table[key] = op
            continue
        op.replace_with(existing.results)
        merged += 1
    return merged


@register_pass
@dataclass(frozen=True)
class CSE(ModulePass):
    """Merge identical pure ops where the first dominates the others."""

    name = "cse"

    def run(self, module: Operation, ctx: PassContext) -> None:
        merged = 0
        for region in module.regions:
            for block in region.blocks:
                merged += _cse_block(block, [])
        ctx.count("ops-merged", merged)
