"""``hivm`` cube ops: the Cube unit's data path L1 → L0A/L0B → mmad → L0C → FixPipe (after AscendNPU-IR's
``hivm.hir.load``/``mmadL1``/``fixpipe``, at the level of one L0 step).

A cube kernel moves a box of each operand GM → L1 with ``hivm.load`` (MTE2; the L1 buffer holds ND rows, in the
operand's GM orientation: a transposed operand is read in place and transposed by the MTE1 load), then per L0
step::

    hivm.load_l0a %l1, %l0a, %k_off, %m, %k {transpose}    MTE1  L0A (zZ) = A[0:m, k_off:+k] of the L1 tile
    hivm.load_l0b %l1, %l0b, %k_off, %n_off, %k, %n {transpose}
                                                          MTE1  L0B (nZ) = B[k_off:+k, n_off:+n] of the L1 tile
    hivm.mmad %l0a, %l0b, %l0c, %init, %m, %k, %n          M     L0C (NZ, f32) = (init ? 0 : L0C) + A @ B
    hivm.fixpipe %l0c, %gm, %off…, %m, %n {relu}           FIX   gm[off : +m, : +n] = cast(relu?(L0C))

With ``transpose`` the L1 tile holds the operand transposed (A as k×m rows, B as n×k rows): the MTE1 load reads
it in place (``load_l1_to_l0a/b`` with transpose), so a ``.t()`` of a weight never becomes a transpose kernel.
``init`` (0 or 1, an index value) starts the accumulation. Padding beyond m, k,
n is zero in L0A/L0B (the MTE1 loads write it), so partial tiles need no special case.

Layouts (``#hivm.data_layout``, dialects/hivm_layout.py; set by ``hivm-infer-data-layout``): L1 ND (transposed
for a transposed operand), L0A zZ, L0B nZ, L0C zN, GM ND; the MTE1 loads convert ND → zZ / nZ and the fixpipe
zN → ND, each recording the conversion as ``src_layout``/``dst_layout``, which the verifier checks against the
buffers' layouts.
"""

from __future__ import annotations

from ..ir.attrs import BoolAttr
from ..ir.core import Cube, MemoryEffect, register_op
from .hivm import HIVMOp, _memref
from .hivm_layout import LAYOUT_ATTR, check_op_layouts

CUBE_INPUT_DTYPES = ("f16", "bf16", "f32")
ACCUMULATOR = {"f16": "f32", "bf16": "f32", "f32": "f32"}


class _CubeLoad(HIVMOp):
    """MTE1: a 2-D window of an L1 tile into an L0 operand buffer."""

    operand_names = ("src", "dst", "*indices")
    attribute_schema = {"transpose": BoolAttr(False), "src_layout": LAYOUT_ATTR, "dst_layout": LAYOUT_ATTR}
    traits = (MemoryEffect,)
    pipe = "PIPE_MTE1"
    num_buffers = 2
    n_indices = 0

    def expected_indices(self) -> int:
        return self.n_indices

    def verify_(self) -> None:
        super().verify_()
        src, dst = _memref(self, 0), _memref(self, 1)
        if src.rank != 2 or dst.rank != 2:
            raise self.error(f"moves a 2-D window between 2-D buffers, got {src} and {dst}")
        if src.dtype != dst.dtype or src.dtype not in CUBE_INPUT_DTYPES:
            raise self.error(f"cube operands are {', '.join(CUBE_INPUT_DTYPES)} of one type, got {src.dtype} and "
                             f"{dst.dtype}")
        check_op_layouts(self)


@register_op
class LoadL0AOp(_CubeLoad):
    """``hivm.load_l0a %l1, %l0a, %k_off, %m, %k``: L0A = A[0:m, k_off:+k] (L1 holds A, or A^T with transpose)."""

    name = "hivm.load_l0a"
    n_indices = 3


@register_op
class LoadL0BOp(_CubeLoad):
    """``hivm.load_l0b %l1, %l0b, %k_off, %n_off, %k, %n``: L0B = B[k_off:+k, n_off:+n] (L1 holds B, or B^T)."""

    name = "hivm.load_l0b"
    n_indices = 4


@register_op
class MmadOp(HIVMOp):
    """``hivm.mmad %l0a, %l0b, %l0c, %init, %m, %k, %n``: L0C = (init ? 0 : L0C) + L0A @ L0B in f32."""

    name = "hivm.mmad"
    operand_names = ("a", "b", "c", "*indices")
    traits = (MemoryEffect, Cube)
    pipe = "PIPE_M"
    num_buffers = 3

    def expected_indices(self) -> int:
        return 4

    def reads(self) -> list:
        return [self.operands[0], self.operands[1], self.operands[2]]  # accumulates into C unless init

    def verify_(self) -> None:
        super().verify_()
        a, b, c = (_memref(self, i) for i in range(3))
        if a.dtype != b.dtype or a.dtype not in CUBE_INPUT_DTYPES:
            raise self.error(f"operands are {', '.join(CUBE_INPUT_DTYPES)} of one type, got {a.dtype}, {b.dtype}")
        if c.dtype != ACCUMULATOR[a.dtype]:
            raise self.error(f"accumulates {a.dtype} products in {ACCUMULATOR[a.dtype]}, got {c.dtype}")
        check_op_layouts(self)


@register_op
class FixpipeOp(HIVMOp):
    """``hivm.fixpipe %l0c, %gm, %offsets…, %m, %n {relu}``: GM[offsets : +m, : +n] = cast(relu?(L0C[0:m, 0:n])).
    A GM destination of rank r > 2 takes its r offsets; the box spans its last two dims."""

    name = "hivm.fixpipe"
    operand_names = ("src", "dst", "*indices")
    attribute_schema = {"relu": BoolAttr(False), "src_layout": LAYOUT_ATTR, "dst_layout": LAYOUT_ATTR}
    traits = (MemoryEffect,)
    pipe = "PIPE_FIX"
    num_buffers = 2

    def expected_indices(self) -> int:
        return _memref(self, 1).rank + 2

    def offsets(self):
        return self.indices[: self.operands[1].type.rank]

    def verify_(self) -> None:
        super().verify_()
        src, dst = _memref(self, 0), _memref(self, 1)
        if src.rank != 2 or src.dtype != "f32":
            raise self.error(f"drains a 2-D f32 accumulator, got {src}")
        if dst.rank < 2 or dst.dtype not in ("f32", "f16", "bf16"):
            raise self.error(f"writes a matrix of f32, f16 or bf16, got {dst}")
        check_op_layouts(self)

