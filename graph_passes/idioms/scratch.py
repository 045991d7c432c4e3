"""The scratch each op's instruction idioms take: one table, :data:`SCRATCH`, keyed by the HIVM op whose emission
uses the kernel's scratch buffer (``hivm.alloc {scratch = true}``), beside codegen's ``EMITTERS``; every other
emitted op is in :data:`NO_SCRATCH` or, sized per movement tile, :data:`MOVEMENT_SCRATCH`.

A vector kernel's scratch is shared by every op (they run one after the other on PIPE_V), so its size is the
largest need of one op. The schedule sizes it before lowering, from the body op each HIVM op comes from
(:data:`LOWERED_AS`), its buffers and the tile; an entry is ``fn(plan, op, tile, ub_align, wide) -> bytes``
(``plan``: the schedule's BufferPlan; ``wide``: row reductions may fold into up to WIDE_FOLD_PARTIALS partials):

- ``hivm.vreduce``, a last-dim reduction of rows of whole repeats: the first level (and, unless its source dies at
  it, the second) of a block fold of a group of rows (:func:`~.folds.block_fold_lengths`,
  :func:`~.folds.block_fold_rows`: each level reduces every 32-B block to one element); of other rows longer than
  one vector repeat: ``K`` 256-B partials per row for a group of ``G`` rows (:func:`~.folds.row_fold_shape`: the
  column chunks fold into the K partials, which then halve to one) — none when its source dies at it (the rows
  fold in the source's own buffer);
- ``hivm.vreduce`` over a dim that is not the last (a bias gradient's column sums): the rows of a pairwise tree
  fold, ``K`` rows of the kept dims (:func:`~.outer_folds.outer_fold_rows`: the rows r and r + K combine into
  them, then they halve); of a whole 1-D buffer longer than one repeat: the per-repeat partials of every level; a
  last-dim product (any row length): a 256-B row and a 32-B block per row of a group of ``min(rows, SCRATCH_ROWS)``
  rows (a vmul tree) — :func:`~.reductions.reduce_scratch_bytes`;
- ``hivm.vbinary`` with a scalar operand and no vector-scalar instruction (div): one 256-B block (the scalar is
  ``vdup``-ed into it); a bitwise xor, ``(a | b) − (a & b)``, keeps ``a & b`` in a temporary the size of the
  destination; an inlined column operand read through vbrcb: one 32-B block per row
  (:func:`~.columns.column_scratch_bytes`); pow other than x², √x, 1/√x, 1/x, 1: its math temporaries;
- ``hivm.vsel`` with scalar values (0/1 from a mask): one 256-B block per scalar;
- ``hivm.vbrc``, a column broadcast into fewer than 8 rows shorter than 256 B, or a broadcast of one element into
  a buffer that does not span the last dim (:func:`~.broadcasts.element_broadcast`): ``vbrcb``'s 8 blocks (256 B);
- ``hivm.vunary``, a math fun with no vector instruction (erf, gelu_erf, sin, cos): :func:`~.math_funs.math_temps`
  f32 temporaries shaped like the destination (its elements × 4 B each; f16 computes in f32, so two more for the
  f32 input and result);
- ``hivm.vgather`` (and the ``hivm.vgather_offsets`` before it): the index's byte offsets
  (:func:`~.gathers.gather_scratch`); none for a row gather (``hivm.embedding_gather``: its DMAs write dst).
"""

from __future__ import annotations

import math

from ..dialects.arith import BINARY_OPS
from ..intmath import align_up
from ..ir.core import OpResult
from ..ir.types import DTYPE_BYTES, TensorType
from ..idioms.gathers import gather_index
from .broadcasts import column_broadcast_rows, element_broadcast
from .columns import column_scratch_bytes
from .folds import block_fold_lengths, block_fold_scratch
from .gathers import gather_scratch
from .limits import REPEAT_BYTES
from .math_funs import MATH_TEMPS, math_temps
from .reductions import reduce_scratch_bytes
from .transpose import transpose_scratch_bytes

SCALAR_FORMS = ("add", "mul", "max", "min", "sub")  # binary funs a scalar operand never needs scratch for


def _math_scratch(plan, op, tile, ub_align: int) -> int:
    """A math fun's f32 temporaries, each the destination's elements × 4 B (pow: by its constant exponent)."""
    fun = op.attributes.get("fun")
    exponent = None
    if fun == "pow" and isinstance(op.operands[0].type, TensorType):
        c = op.operands[1]
        if isinstance(c, OpResult) and c.op.name == "arith.constant":
            exponent = c.op.attributes["value"]
    k = math_temps(fun, op.result.type.dtype, exponent)
    if k == 0:
        return 0
    n = 1
    for s in plan.of_value[op.result].shape(tile, ub_align):
        n *= s
    return k * align_up(n * 4, ub_align)


def unary_scratch(plan, op, tile, ub_align: int, wide: bool = False) -> int:
    return _math_scratch(plan, op, tile, ub_align) if op.attributes.get("fun") in MATH_TEMPS else 0


def binary_scratch(plan, op, tile, ub_align: int, wide: bool = False) -> int:
    fun = op.attributes.get("fun")
    if fun == "pow":
        return _math_scratch(plan, op, tile, ub_align)
    if plan.columns(op):
        rows = 1
        for s in plan.of_value[op.result].shape(tile, ub_align)[:-1]:
            rows *= s
        return column_scratch_bytes(rows)
    scalars = sum(not isinstance(v.type, TensorType) for v in op.operands)
    if fun == "bitwise_xor":  # the a & b temporary (+ the scalar)
        return align_up(plan.of_value[op.result].nbytes(tile, ub_align), ub_align) + scalars * REPEAT_BYTES
    if fun not in SCALAR_FORMS:
        return REPEAT_BYTES if scalars else 0
    return 0


def select_scratch(plan, op, tile, ub_align: int, wide: bool = False) -> int:
    """Each scalar value is vdup'ed into a block of its own."""
    return sum(not isinstance(v.type, TensorType) for v in op.operands) * REPEAT_BYTES


def broadcast_scratch(plan, op, tile, ub_align: int, wide: bool = False) -> int:
    """A column broadcast into < 8 rows shorter than 8 blocks: vbrcb stages its 8 blocks in scratch; so does an
    element broadcast. A row broadcast (vcopy) takes none."""
    dst, src = plan.of_value[op.result], plan.of_value[op.operands[0]]
    shape = dst.shape(tile, ub_align)
    if element_broadcast(shape, src.shape(tile, ub_align)):
        return REPEAT_BYTES
    if len(shape) - 1 not in dst.mask or len(shape) - 1 in src.mask:
        return 0
    rows, pitch = column_broadcast_rows(shape, src.shape(tile, ub_align))
    return REPEAT_BYTES if rows < 8 and pitch * DTYPE_BYTES[dst.dtype] < REPEAT_BYTES else 0


def gather_op_scratch(plan, op, tile, ub_align: int, wide: bool = False) -> int:
    """A row gather needs none: its DMAs write dst."""
    if op.operands[0] in plan.row_gathers:
        return 0
    index = plan.of_value[gather_index(op)]
    return gather_scratch(index.shape(tile, ub_align), index.dtype, ub_align, DTYPE_BYTES[op.result.type.dtype])


def reduce_scratch(plan, op, tile, ub_align: int, wide: bool = False) -> int:
    src = plan.of_value[op.operands[0]]
    shape = src.shape(tile, ub_align)
    if op in plan.in_place:  # a block fold's first level still needs scratch (the source takes the second)
        es, rows = DTYPE_BYTES[src.dtype], math.prod(shape[:-1])
        return block_fold_scratch(rows, block_fold_lengths(shape[-1], es) if op in plan.blocks else [], es, True)
    dims = [src.mask[i] for i in op.attributes["dims"]]  # the reduced domain dims
    return reduce_scratch_bytes(shape, dims, DTYPE_BYTES[src.dtype], ub_align, op.attributes["kind"], wide,
                                blocks=op in plan.blocks)


SCRATCH = {
    "hivm.vunary": unary_scratch,
    "hivm.vbinary": binary_scratch,
    "hivm.vsel": select_scratch,
    "hivm.vbrc": broadcast_scratch,
    "hivm.vgather": gather_op_scratch,
    "hivm.vgather_offsets": gather_op_scratch,  # writes the offsets its vgather reads
    "hivm.vreduce": reduce_scratch,
}

# The HIVM op each body op of a vector kernel lowers to (convert-to-hivm), for the body ops whose HIVM op may take
# scratch. The others take none: a compare (vcmp has a vector-scalar form), a cast, a fill, an arange, and an fma
# or clamp (two vbinary of add and mul, or max and min, each with a vector-scalar form).
LOWERED_AS = {
    "hfusion.elemwise_unary": "hivm.vunary",
    "hfusion.elemwise_binary": "hivm.vbinary",
    "hfusion.select": "hivm.vsel",
    "hfusion.broadcast": "hivm.vbrc",
    "hfusion.gather": "hivm.vgather",
    "hfusion.reduce": "hivm.vreduce",
}

# A movement kernel's scratch, sized per tile by its schedule: a block transpose's group of blocks (by row length).
MOVEMENT_SCRATCH = {"hivm.vtranspose": transpose_scratch_bytes}

# Emitted ops that take no scratch: the scalar unit's, DMAs (a row gather's included), syncs, and vector ops whose
# instructions read and write their own buffers only.
NO_SCRATCH = frozenset({
    "arith.constant", "arith.index_cast", *BINARY_OPS,
    "hivm.get_block_idx", "hivm.get_sub_block_idx", "hivm.alloc", "hivm.multi_buffer_select",
    "hivm.load", "hivm.store", "hivm.embedding_gather",
    "hivm.copy", "hivm.vcmp", "hivm.vcast", "hivm.vfill", "hivm.varange", "hivm.vindex", "hivm.vpermute",
    "hivm.set_flag", "hivm.wait_flag", "hivm.pipe_barrier", "hivm.sync_block_set", "hivm.sync_block_wait",
    "hivm.load_l0a", "hivm.load_l0b", "hivm.mmad", "hivm.fixpipe",  # the cube side: no UB
})


def op_scratch(plan, op, tile, ub_align: int, wide: bool = False) -> int:
    """Scratch bytes the HIVM op that body op ``op`` lowers to takes (0: none)."""
    size = SCRATCH.get(LOWERED_AS.get(op.name))
    return size(plan, op, tile, ub_align, wide) if size is not None else 0
