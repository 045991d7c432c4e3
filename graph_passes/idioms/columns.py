"""A binary's inlined column operand (``[R] → [R, C]``): per-row scalars, or one 32-B block per row in scratch."""

from __future__ import annotations

from ..intmath import align_up, ceil_div
from ..ir.types import DTYPE_BYTES
from .limits import REPEAT_BYTES

SCALAR_COLUMN_MAX_ROWS = 8  # a column operand of at most this many rows a tile is read as per-row scalars ...
SCALAR_COLUMN_MIN_REPEATS = 4  # ... when every row is at least this many vector repeats
SCALAR_COLUMN_FUNS = ("add", "sub", "mul", "max", "min")  # with a vector-scalar instruction (sub: the column second)


def scalar_column(fun: str, column_first: bool, dtype: str, rows: int, cols: int) -> bool:
    """Whether a binary op with an inlined column operand (``[rows, 1]`` broadcast along ``cols``) may read the
    column as one scalar per row (a V→S flag, ``ld_ub`` per row, the vector-scalar instruction per row)
    instead of vbrcb into scratch and the vector-vector instruction with block stride 0.

    The scalar form costs a vector-scalar repeat (1 cycle, PTO vadds/vmuls) where the other costs a binary one (2),
    and per row one scalar load and one instruction more: it pays when the tile has few rows of several repeats —
    a norm's or softmax's rows of thousands of elements, the case AscendNPU-IR meets when it inlines the broadcast
    of a one-element tensor as a scalar (``hfusion-inline-brc``). The scalar unit waits for the vector pipe there,
    and issues nothing else meanwhile (the next tile's load included): the schedule keeps vbrcb for a kernel that
    streams DDR longer than it computes."""
    if fun not in SCALAR_COLUMN_FUNS or (fun == "sub" and column_first) or dtype not in ("f16", "f32"):
        return False
    lanes = REPEAT_BYTES // DTYPE_BYTES[dtype]
    return rows <= SCALAR_COLUMN_MAX_ROWS and ceil_div(cols, lanes) >= SCALAR_COLUMN_MIN_REPEATS


def column_scratch_bytes(rows: int) -> int:
    """Scratch of a binary op with an inlined column operand: one 32-B block per row (vbrcb writes 8 per repeat)."""
    return align_up(rows, 8) * 32
