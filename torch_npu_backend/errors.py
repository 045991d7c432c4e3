"""Errors raised by the frontend; each names the thing that is not supported and where it came from."""

from __future__ import annotations


SUPPORTED_DTYPES = "torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.bool"


class NpuCompileError(Exception):
    """Base of the backend's compile-time errors."""


class UnsupportedOpError(NpuCompileError):
    """An aten op (or an op/argument combination) has no lowering; names the op and the FX node."""

    def __init__(self, op, node: str | None = None, reason: str | None = None):
        self.op = str(op)
        self.node = node
        self.reason = reason
        self.unsupported: list = []  # fallback="error": every node without a compiled form (fallback.Fallback)
        where = f" (FX node '{node}')" if node else ""
        why = f": {reason}" if reason else ""
        super().__init__(f"no npu lowering for aten op {self.op}{where}{why}")


class NpuFallbackWarning(UserWarning):
    """Ops of a compiled graph run eagerly on the host (per-op fallback); one per graph, naming them all."""


class UnsupportedDtypeError(NpuCompileError):
    """A tensor dtype the backend does not compile; names the dtype and the FX node."""

    def __init__(self, dtype, node: str | None = None):
        self.dtype = dtype
        where = f" in FX node '{node}'" if node else ""
        super().__init__(f"unsupported dtype {dtype}{where}; supported: {SUPPORTED_DTYPES}")
