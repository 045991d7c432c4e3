"""Limits of one vector instruction: its repeat's bytes, the repeat field's range, and the lanes a mask op's last
instruction covers."""

from __future__ import annotations

from ..ir.types import DTYPE_BYTES, TensorType

REPEAT_BYTES = 256  # one vector repeat
MAX_REPEAT = 255  # repeats of one vector instruction (the repeat field's 8 bits)


def mask_op_lanes(op) -> int:
    """Elements per repeat of a compare's data operands or a select's result: its last instruction covers whole
    repeats, so its mask and data buffers hold whole repeats once longer than one."""
    data = [v for v in list(op.operands) + list(op.results) if isinstance(v.type, TensorType) and v.type.dtype != "i1"]
    return REPEAT_BYTES // max((DTYPE_BYTES[v.type.dtype] for v in data), default=1)
