"""Element types: short names used in the ISA and assembly, and their numpy dtypes (bf16 via ml_dtypes)."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from .errors import ProgramError

DTYPES: dict[str, np.dtype] = {
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "i8": np.dtype(np.int8),
    "u8": np.dtype(np.uint8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "u16": np.dtype(np.uint16),
    "i64": np.dtype(np.int64),  # vconv only (s64 <-> f32, s32); the vector unit has no i64 arithmetic
}
FLOAT_TYPES = ("f16", "bf16", "f32")


def np_dtype(name: str) -> np.dtype:
    try:
        return DTYPES[name]
    except KeyError:
        raise ProgramError(f"unknown dtype {name!r}; known: {sorted(DTYPES)}") from None


_ITEMSIZE = {k: v.itemsize for k, v in DTYPES.items()}


def itemsize(name: str) -> int:
    size = _ITEMSIZE.get(name)
    return size if size is not None else np_dtype(name).itemsize  # np_dtype names the unknown dtype


def dtype_name(dt) -> str:
    """Inverse of np_dtype for numpy dtypes (used by the host helpers)."""
    dt = np.dtype(dt)
    for k, v in DTYPES.items():
        if v == dt:
            return k
    raise ProgramError(f"dtype {dt} has no simulator name")
