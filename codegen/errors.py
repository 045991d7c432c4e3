"""The one error codegen raises: an HIVM op (or dtype, or form) it cannot emit, with the op's location and why."""

from __future__ import annotations


class CodegenError(Exception):
    """``CodegenError(op, reason)``: the message names the op, its location (``op.loc``) and the reason."""

    def __init__(self, op, reason: str):
        self.op = op
        self.reason = reason
        if op is None:
            super().__init__(f"codegen: {reason}")
        else:
            super().__init__(f"{op.loc or '<unknown>'}: codegen cannot emit '{op.name}': {reason}")
