"""IR element types → simulator dtype names and numpy dtypes (the host side of GM buffers)."""

from __future__ import annotations

import numpy as np

from simulator.dtypes import DTYPES as SIM_DTYPES

# IR dtype -> simulator dtype name (the vector unit's names; i64 only in vconv); i1 moves through GM/DMA as bytes.
SIM_NAME = {"f16": "f16", "bf16": "bf16", "f32": "f32", "i8": "i8", "ui8": "u8", "i16": "i16", "i32": "i32",
            "i64": "i64"}
ITEMSIZE = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i1": 1, "i8": 1, "ui8": 1, "i16": 2, "i32": 4, "i64": 8}


def np_dtype(dtype: str) -> np.dtype:
    """The numpy dtype of GM data of IR element type ``dtype``."""
    if dtype in SIM_NAME:
        return SIM_DTYPES[SIM_NAME[dtype]]
    return {"i1": np.dtype(np.bool_), "f64": np.dtype(np.float64)}[dtype]


def sim_dtype(dtype: str) -> str | None:
    """The simulator's name for ``dtype``, or None when the vector unit has no such type."""
    return SIM_NAME.get(dtype)
