"""torch dtype ↔ IR dtype name (``torch.bool`` is ``i1``)."""

from __future__ import annotations

import torch

from .errors import UnsupportedDtypeError

TORCH_TO_IR = {
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int32: "i32",
    torch.int64: "i64",
    torch.bool: "i1",
}
"""The dtypes the importer accepts (the issue's f32, f16, bf16, i32, i64, bool)."""

IR_TO_TORCH = {
    "f32": torch.float32,
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "f64": torch.float64,
    "i1": torch.bool,
    "i8": torch.int8,
    "ui8": torch.uint8,
    "ui16": torch.uint16,
    "ui32": torch.uint32,
    "ui64": torch.uint64,
    "i16": torch.int16,
    "i32": torch.int32,
    "i64": torch.int64,
    "c32": torch.complex32,
    "c64": torch.complex64,
    "c128": torch.complex128,
}
"""Every IR dtype the interpreter can execute (wider than what the importer emits)."""

LOW_PRECISION = ("f16", "bf16")


def ir_dtype(dtype: torch.dtype, node: str | None = None) -> str:
    try:
        return TORCH_TO_IR[dtype]
    except KeyError:
        raise UnsupportedDtypeError(dtype, node) from None


def torch_dtype(dtype: str) -> torch.dtype:
    try:
        return IR_TO_TORCH[dtype]
    except KeyError:
        raise ValueError(f"IR dtype {dtype!r} has no torch dtype") from None


def opmath(dtype: str) -> str:
    """The dtype composite lowerings compute in: f32 for f16/bf16 (as eager's CPU kernels do), else itself."""
    return "f32" if dtype in LOW_PRECISION else dtype
