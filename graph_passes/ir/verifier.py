"""Module verification: structure, dominance and every op's own ``verify_``.

Errors name the op, its location and what is wrong: ``add_1: 'hfusion.elemwise_binary' op …``.
"""

from __future__ import annotations

from .core import IsolatedFromAbove, Operation, Terminator, Value, VerifyError


def verify(root: Operation) -> None:
    """Verify ``root`` and everything nested in it; raise :class:`VerifyError` on the first problem."""
    _verify_op(root, visible=set())


def _verify_op(op: Operation, visible: set[int]) -> None:
    op.verify_structure()
    for i, v in enumerate(op.operands):
        if id(v) not in visible:
            raise op.error(f"operand {i} ({_describe(v)}) does not dominate this use")
    for r_i, region in enumerate(op.regions):
        inner_visible = set() if op.has_trait(IsolatedFromAbove) else set(visible)
        for block in region.blocks:
            block_visible = set(inner_visible)
            block_visible.update(id(a) for a in block.args)
            for j, inner in enumerate(block.ops):
                if inner.parent is not block:
                    raise inner.error("has a stale parent pointer")
                if inner.has_trait(Terminator) and j != len(block.ops) - 1:
                    raise inner.error("is a terminator but is not last in its block")
                _verify_op(inner, block_visible)
                block_visible.update(id(r) for r in inner.results)
    op.verify_()


def _describe(v: Value) -> str:
    if hasattr(v, "op"):
        return f"result {v.index} of {v.op.name}"
    return f"block argument {v.index}"


__all__ = ["verify", "VerifyError"]
