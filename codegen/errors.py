"""The one error codegen raises: an HIVM op (or dtype, or form) it cannot emit, with the op's location and why."""

from __future__ import annotations


class CodegenError(Exception):
    """``CodegenError(op, reason)``: the message names the op, its location (``op.loc``) and the reason."""

    def __init__(self, op, reason: str, kernel: str | None = None):
        self.op, self.reason, self.kernel = op, reason, kernel
        where = f" in kernel @{kernel}" if kernel else ""
        if op is None:
            super().__init__(f"codegen{where}: {reason}")
        else:
            super().__init__(f"{op.loc or '<unknown location>'}: codegen cannot emit '{op.name}'{where}: {reason}")
