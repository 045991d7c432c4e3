"""PIPE_V index instructions: ``vci`` (an index vector) and ``vgather`` (elements of UB by UB byte offsets).

Both are Ascend C level-0 vector APIs on Atlas A2 (ASCENDC: ``CreateVecIndex``, ``Gather``); AscendNPU-IR's
``hivm.varange`` / ``hivm.vgather`` lower to them (its vector templates ``Arange1D``, ``Gather1D``). Repeats and
masks work as for every vector instruction (:mod:`.vector`): ``repeat`` repeats of ``lanes = 256 / element size``
elements, ``mask`` active elements per repeat.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Access
from .vector import VectorInstr
from ..dtypes import FLOAT_TYPES, itemsize, np_dtype
from ..errors import ProgramError

VCI_DTYPES = ("i16", "f16", "i32", "f32")  # ASCENDC CreateVecIndex, Atlas A2: int16_t/half/int32_t/float
GATHER_DTYPES = ("i16", "u16", "i32", "f16", "bf16", "f32")  # ASCENDC Gather, Atlas A2 (also uint32_t)


@dataclass
class VCi(VectorInstr):
    """CreateVecIndex: element e of repeat r (active, e < mask) gets ``first + r*lanes + e``.

    for r in range(repeat): for e in range(mask): dst[r][e] = first + r*lanes + e

    The value is formed exactly and rounded to the dtype once (float dtypes round to nearest even); an integer
    value outside the dtype's range is an error. Cost class "scalar" (ASCENDC, PTO: vector-scalar ops and vdup
    ≈1 cycle per repeat; like vdup it writes one operand and reads none)."""
    dtype: str
    dst: object
    first: object
    repeat: object = 1
    mask: object = 0
    dst_blk: object = 1
    dst_rep: object = 8
    EXPRS = ("dst", "first", "repeat", "mask", "dst_blk", "dst_rep")
    MNEMONIC = "vci"
    COST = "scalar"

    def validate(self):
        if self.dtype not in VCI_DTYPES:
            raise ProgramError(f"vci: dtype {self.dtype} not supported (ASCENDC CreateVecIndex on A2: "
                               f"{', '.join(VCI_DTYPES)})")

    def flops(self):
        return 0

    def operands_spec(self):
        return [(True, self.dst, self.dtype, self.dst_blk, self.dst_rep)]

    def execute(self, core):
        k = np.arange(self.repeat)[:, None] * self.lanes + np.arange(self.mask)[None, :]
        values = k.astype(np.float64 if self.dtype in FLOAT_TYPES else np.int64) + self.first
        dt = np_dtype(self.dtype)
        if self.dtype not in FLOAT_TYPES:
            info = np.iinfo(dt)
            lo, hi = int(values.min()), int(values.max())
            if lo < info.min or hi > info.max:
                raise ProgramError(f"{self.describe()}: indices {lo}..{hi} do not fit {self.dtype} "
                                   f"[{info.min}, {info.max}]")
        self.store(core, self.dst, self.dtype, self.dst_blk, self.dst_rep, values.astype(dt))


@dataclass
class VGather(VectorInstr):
    """Gather: element e of repeat r = the element at byte ``src + offsets[r*lanes + e]``.

    for r in range(repeat): for e in range(mask):
        dst[r][e] = UB[src + u32 offset at (offset + (r*lanes + e)*4)]

    ``offset`` holds u32 byte offsets relative to ``src`` (ASCENDC Gather's ``srcOffset``; contiguous, 4 B each);
    ``src_len`` is the byte length of the source (its LocalTensor): an offset outside ``[0, src_len)`` or not a
    multiple of the element size is an error naming the element and the numbers (the hardware's result is
    undefined there; Ascend C's debug checks reject it). Cost class "binary" (ASCENDC, PTO: vector-vector ops
    ≈2 cycles per repeat; a gather reads two operands per element, its offsets and its source)."""
    dtype: str
    dst: object
    src: object
    offset: object
    src_len: object
    repeat: object = 1
    mask: object = 0
    dst_rep: object = 8
    EXPRS = ("dst", "src", "offset", "src_len", "repeat", "mask", "dst_rep")
    MNEMONIC = "vgather"
    COST = "binary"

    def validate(self):
        if self.dtype not in GATHER_DTYPES:
            raise ProgramError(f"vgather: dtype {self.dtype} not supported (ASCENDC Gather on A2: "
                               f"{', '.join(GATHER_DTYPES)})")

    def flops(self):
        return 0

    def operands_spec(self):
        return [(True, self.dst, self.dtype, 1, self.dst_rep)]

    def _offset_bytes(self):
        return self.repeat * self.lanes * 4

    def check(self, core):
        super().check(core)
        ub = core.local("UB", self)
        if self.src_len <= 0:
            raise ProgramError(f"{self.describe()}: src_len={self.src_len} must be positive")
        ub.check(self.describe(), np.asarray([self.src]), self.src_len, align=32)
        ub.check(self.describe(), np.asarray([self.offset]), self._offset_bytes(), align=32)

    def accesses(self, core):
        read = ((self.repeat - 1) * self.lanes + self.mask) * 4  # the active lanes' offsets (execute reads these)
        offs = Access("UB", False, self.offset + np.arange(0, read, 32), 32, self.tag("offset"))
        src = Access("UB", False, self.src + np.arange(0, self.src_len, 32), 32, self.tag("src"))
        return [offs, src] + super().accesses(core)

    def execute(self, core):
        es = itemsize(self.dtype)
        k = (np.arange(self.repeat)[:, None] * self.lanes + np.arange(self.mask)[None, :]).reshape(-1)
        words = core.mem["UB"].view("i32")[self.offset // 4 + k].view(np.uint32).astype(np.int64)
        bad = (words >= self.src_len) | (words % es != 0)
        if bad.any():
            i = int(np.argmax(bad))
            r, e = divmod(int(k[i]), self.lanes)
            raise ProgramError(f"{self.describe()}: element {e} of repeat {r} has source offset {int(words[i])} B, "
                               f"outside the source of {self.src_len} B ({self.src_len // es} elements of {es} B) "
                               f"or not a multiple of {es}: index out of range")
        vals = core.mem["UB"].view(self.dtype)[(self.src + words) // es].reshape(self.repeat, self.mask)
        self.store(core, self.dst, self.dtype, 1, self.dst_rep, vals)
