"""A builder that inserts new ops at an insertion point and keeps a default location."""

from __future__ import annotations

from .core import Block, Operation


class Builder:
    def __init__(self, block: Block | None = None, index: int | None = None, loc: str | None = None):
        self.block = block
        self.index = index
        self.loc = loc

    @classmethod
    def at_end(cls, block: Block, loc: str | None = None) -> "Builder":
        return cls(block, None, loc)

    @classmethod
    def before(cls, op: Operation, loc: str | None = None) -> "Builder":
        return cls(op.parent, op.parent.ops.index(op), loc if loc is not None else op.loc)

    def insert(self, op: Operation) -> Operation:
        if op.loc is None:
            op.loc = self.loc
        if self.index is None:
            self.block.append(op)
        else:
            self.block.insert(self.index, op)
            self.index += 1
        return op

    def create(self, op_cls: type[Operation], operands=(), result_types=(), regions=(), **attributes) -> Operation:
        """Build ``op_cls`` and insert it; keyword arguments are attributes (``None`` values are dropped)."""
        attrs = {k: v for k, v in attributes.items() if v is not None}
        return self.insert(op_cls(list(operands), list(result_types), attrs, list(regions), self.loc))
