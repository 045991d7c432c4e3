"""``hivm``: buffer-level IR with explicit memories, pipes and synchronisation (after AscendNPU-IR's HIVM).

A HIVM kernel is a ``func.func`` whose tensor arguments became ``memref<…, gm>`` buffers. Local buffers are
``hivm.alloc``-ed with a static shape (the tile's capacity); every data-moving or computing op names its pipe and
works on the *valid extents* given by trailing ``index`` operands, so one kernel serves every shape (the last tile
of a dynamic shape is partial)::

    hivm.load %gm, %ub, %off, %n        : MTE2   ub[0:n]          = gm[off:off+n]
    hivm.vbinary %a, %b, %dst, %n       : V      dst[0:n]         = fun(a[0:n], b[0:n])   (a or b may be a scalar)
    hivm.store %ub, %gm, %off, %n       : MTE3   gm[off:off+n]    = ub[0:n]

Operand layout (destination-passing style, no results):

===============  ==================================================  =====  ===============================
op               operands                                            pipe   meaning over valid extents e
===============  ==================================================  =====  ===============================
load             src(gm), dst, offsets[src.rank], e[dst.rank]        MTE2   dst[i] = src[offsets + i]  ({dims, steps}:
                                                                            a permuted, strided view of src)
store            src, dst(gm), offsets[dst.rank], e[src.rank]        MTE3   dst[offsets + i] = src[i]  (same)
copy             src, dst, e[dst.rank]                               V      dst[i] = src[i]  (local → local)
vunary           src, dst, e                                         V      dst[i] = fun(src[i])
vbinary          a, b, dst, e                                        V      dst[i] = fun(a[i], b[i])
vcmp             a, b, dst(i1), e                                    V      dst[i] = a[i] <pred> b[i]
vsel             cond(i1), a, b, dst, e                              V      dst[i] = cond[i] ? a[i] : b[i]
vcast            src, dst, e                                         V      dst[i] = cast(src[i])
vbrc             src, dst, e                                         V      dst[i] = src[i with dims → 0]
vreduce          src, dst, e (of src)                                V      dst[i with dims → 0] = ⊕ src[i]
vtranspose       src, dst, e (of dst)                                V      dst[i] = src[perm⁻¹(i)]
vindex           dst                                                 V      dst[i] = Σ_k strides[k]·i_k (whole buffer)
vpermute         src, offsets, dst, e (of dst)                       V      dst[b, i] = src[b] at byte offsets[i]
vfill            dst, e                                              V      dst[i] = value
varange          dst, offset, e                                      V      dst[i] = start + step·(offset + i_d)
vgather          src, index, dst, n, e                               V      dst[i] = src[i with last → index[i]]
vgather_offsets  index, n {es}                                       V      the next vgather's byte offsets
embedding_gather src(gm), index, dst, offsets[src.rank-1], e          S+MTE2 dst[r, j] = src[index[r], off + j]
===============  ==================================================  =====  ===============================

``varange`` counts along the one dim ``d`` of ``dst`` whose static size is not 1 (``offset``: the position of the
tile's first element along it). ``vbrc`` sources and ``vreduce`` destinations keep the rank, with extent 1 in ``dims``. A scalar operand of
``vbinary``/``vcmp``/``vsel`` applies to every element (a vector-scalar instruction).

Kernel function attributes: ``kernel`` (unit), ``fusion_kind``, ``core_type`` (AIV / AIC / MIX, set by
``hivm-infer-core-type``), ``tiling`` (a dictionary: name of an ``index`` parameter of the kernel → size expression
over the shape symbols, evaluated by the host at each launch; ``block_dim`` is one of them).

Synchronisation: ``set_flag``/``wait_flag {src_pipe, dst_pipe, event_ids}`` with an optional ``index`` operand that
selects ``event_ids[selector % len(event_ids)]`` (rotating ids for multi-buffered loops); ``pipe_barrier {pipe}``.
"""

from __future__ import annotations

from ..ir.attrs import BoolAttr, IntAttr, IntListAttr, NumberAttr, StrAttr
from ..ir.core import MemoryEffect, Operation, Pure, Vector, ViewLike, register_op
from ..ir.types import IndexType, MemRefType, ScalarType
from .hfusion import BINARY_FUNS, COMPARE_PREDICATES, REDUCE_KINDS, ROUND_MODES, UNARY_FUNS
from .hivm_layout import LAYOUT_ATTR, check_alloc_layout

PIPES = ("PIPE_S", "PIPE_MTE1", "PIPE_MTE2", "PIPE_MTE3", "PIPE_M", "PIPE_V", "PIPE_FIX", "PIPE_ALL")
CORE_TYPES = ("AIV", "AIC", "MIX")


def _is_index(v) -> bool:
    return isinstance(v.type, IndexType)


class HIVMOp(Operation):
    """A HIVM op: ``pipe`` names the hardware pipe it runs on (``None`` for scalar/bookkeeping ops)."""

    pipe: str | None = None
    num_buffers = 0  # leading operands that are buffers or scalars; the rest are index operands

    @property
    def buffers(self) -> list:
        return self.operands[: self.num_buffers]

    @property
    def indices(self) -> list:
        return self.operands[self.num_buffers :]

    def pipe_accesses(self) -> list[tuple[str, object, bool]]:
        """(pipe, buffer operand, is a write) of every access: all on ``pipe`` unless an op splits them (an op that
        runs on two pipes, :class:`EmbeddingGatherOp`)."""
        return [(self.pipe, v, False) for v in self.reads()] + [(self.pipe, v, True) for v in self.writes()]

    def reads(self) -> list:
        """Buffer operands this op reads."""
        return [v for v in self.buffers[:-1] if isinstance(v.type, MemRefType)]

    def writes(self) -> list:
        """Buffer operands this op writes."""
        last = self.buffers[-1:] if self.num_buffers else []
        return [v for v in last if isinstance(v.type, MemRefType)]

    def expected_indices(self) -> int:
        return self.buffers[-1].type.rank

    def verify_(self) -> None:
        if len(self.operands) < self.num_buffers:
            raise self.error(f"expects {self.num_buffers} buffer operands, has {len(self.operands)}")
        for i, v in enumerate(self.buffers):
            if not isinstance(v.type, (MemRefType, ScalarType, IndexType)):
                raise self.error(f"operand {i} must be a buffer or a scalar, got {v.type}")
        if not all(_is_index(v) for v in self.indices):
            raise self.error("trailing operands (offsets, extents) must be index values")
        n = self.expected_indices()
        if len(self.indices) != n:
            raise self.error(f"expects {n} index operand(s) (offsets/extents), has {len(self.indices)}")


def _memref(op: HIVMOp, i: int) -> MemRefType:
    t = op.operands[i].type
    if not isinstance(t, MemRefType):
        raise op.error(f"operand {i} must be a buffer, got {t}")
    return t


# ---------------------------------------------------------------------------------------------------------------
# Scalars, buffers


@register_op
class GetBlockIdxOp(Operation):
    """``hivm.get_block_idx``: the index of the core running this kernel instance (0 ≤ idx < block_dim)."""

    name = "hivm.get_block_idx"
    result_names = ("result",)
    traits = (Pure,)


@register_op
class AllocOp(Operation):
    """``hivm.alloc``: a local buffer. ``multi_buffer = n`` asks for n rotating copies; ``offsets`` (one byte
    offset per copy) is written by ``hivm-plan-memory``. ``scratch = true``: the kernel's temporary UB for the code
    generator's multi-instruction idioms (long-row and whole-buffer reductions, in-place scalar operands); no op
    names it, it is live for the whole kernel (sized by ``hfusion-auto-schedule``, docs/codegen.md); ``stages = n``:
    a software-pipelined kernel's scratch, one equal part per stage. ``buffer = i``: the buffer i of the kernel's
    schedule it allocates (``convert-to-hivm``), whose copies ``hivm-mark-multi-buffer`` reads there. ``layout``:
    a cube-path buffer's ``#hivm.data_layout`` (``hivm-infer-data-layout``, dialects/hivm_layout.py)."""

    name = "hivm.alloc"
    result_names = ("result",)
    attribute_schema = {"multi_buffer": IntAttr(optional=True), "offsets": IntListAttr(optional=True),
                        "buffer": IntAttr(optional=True),
                        "scratch": BoolAttr(optional=True), "stages": IntAttr(optional=True),
                        "layout": LAYOUT_ATTR}
    traits = (MemoryEffect,)

    def verify_(self) -> None:
        t = self.result.type
        if not isinstance(t, MemRefType) or not t.is_static:
            raise self.error(f"allocates a buffer of static shape, got {t}")
        if t.scope == "gm":
            raise self.error("cannot allocate global memory inside a kernel")
        n = self.attributes.get("multi_buffer", 1)
        offsets = self.attributes.get("offsets")
        if n < 1:
            raise self.error(f"multi_buffer must be >= 1, got {n}")
        if offsets is not None and len(offsets) != n:
            raise self.error(f"has {len(offsets)} offsets for {n} buffer copies")
        if self.attributes.get("scratch") and (n != 1 or self.result.uses):
            raise self.error("a scratch buffer has one copy and no uses (the code generator addresses it)")
        check_alloc_layout(self)


@register_op
class MultiBufferSelectOp(Operation):
    """``hivm.multi_buffer_select %counter, %buf0, %buf1 …``: the copy ``counter % n`` (written by
    ``hivm-enable-multi-buffer``; each iteration of a loop works on the next copy)."""

    name = "hivm.multi_buffer_select"
    operand_names = ("counter", "*copies")
    result_names = ("result",)
    traits = (Pure, ViewLike)

    def verify_(self) -> None:
        if not _is_index(self.operand("counter")):
            raise self.error("counter must be an index")
        types = {str(v.type) for v in self.operands[1:]} | {str(self.result.type)}
        if len(self.operands) < 3 or len(types) != 1:
            raise self.error(f"selects among >= 2 buffers of the result's type, got {', '.join(sorted(types))}")


# ---------------------------------------------------------------------------------------------------------------
# Data movement


class _Transfer(HIVMOp):
    """A GM ↔ local box copy. Without ``dims`` the local buffer has the GM buffer's rank and local dim k walks GM
    dim k. With ``dims`` (one entry per local dim: the GM dim it walks, or -1 for a local dim of extent 1 that walks
    none) and ``steps`` (elements of that GM dim per local step, default 1) the box is a strided, permuted view of
    GM: ``local[i] <-> gm[offsets + Σ_k i_k·steps[k]·e(dims[k])]`` (e(g): unit vector of GM dim g). A transpose is
    a permutation in ``dims``, a strided slice a step, a selected row a GM dim no local dim walks. GM addresses are
    row-major linear, so a walk may run past its GM dim's extent into the dims outside it, and two local dims may
    walk one GM dim (a reshape that merged or split dims of a data-movement kernel, schedule/movement_reshape.py)."""

    attribute_schema = {"dims": IntListAttr(optional=True), "steps": IntListAttr(optional=True)}
    traits = (MemoryEffect,)
    num_buffers = 2
    gm_index = 0  # which buffer operand is in GM

    @property
    def gm(self):
        return self.operands[self.gm_index]

    @property
    def local(self):
        return self.operands[1 - self.gm_index]

    def expected_indices(self) -> int:
        return _memref(self, self.gm_index).rank + _memref(self, 1 - self.gm_index).rank

    def offsets(self):
        return self.indices[: self.gm.type.rank]

    def extents(self):
        return self.indices[self.gm.type.rank :]

    def gm_dims(self) -> list[int]:
        """Per local dim, the GM dim it walks (-1: none)."""
        dims = self.attributes.get("dims")
        return list(dims) if dims is not None else list(range(self.local.type.rank))

    def gm_steps(self) -> list[int]:
        steps = self.attributes.get("steps")
        return list(steps) if steps is not None else [1] * self.local.type.rank

    def verify_(self) -> None:
        super().verify_()
        gm_rank, local_rank = _memref(self, self.gm_index).rank, _memref(self, 1 - self.gm_index).rank
        dims, steps = self.attributes.get("dims"), self.attributes.get("steps")
        if dims is None:
            if steps is not None:
                raise self.error("steps need dims")
            if gm_rank != local_rank:
                raise self.error(f"GM rank {gm_rank} and local rank {local_rank} differ; give dims")
            return
        if len(dims) != local_rank or (steps is not None and len(steps) != local_rank):
            raise self.error(f"dims/steps need one entry per local dim ({local_rank}), got {list(dims)}, "
                             f"{None if steps is None else list(steps)}")
        if any(not -1 <= g < gm_rank for g in dims):
            raise self.error(f"dims {list(dims)} must be GM dims in [0, {gm_rank}) or -1")
        if steps is not None and any(s < 1 for s in steps):
            raise self.error(f"steps {list(steps)} must be positive")


@register_op
class LoadOp(_Transfer):
    name = "hivm.load"
    operand_names = ("src", "dst", "*indices")
    pipe = "PIPE_MTE2"
    gm_index = 0


@register_op
class StoreOp(_Transfer):
    name = "hivm.store"
    operand_names = ("src", "dst", "*indices")
    pipe = "PIPE_MTE3"
    gm_index = 1


@register_op
class CopyOp(HIVMOp):
    name = "hivm.copy"
    operand_names = ("src", "dst", "*extents")
    traits = (MemoryEffect,)
    pipe = "PIPE_V"
    num_buffers = 2


# ---------------------------------------------------------------------------------------------------------------
# Vector compute


SCALAR_LOOP_DTYPES = ("i64",)  # element types the A2 vector unit cannot compute on (i64 exists only in vconv)


def lowers_to_scalar_loops(op: "HIVMOp") -> bool:
    """A vector op on i64 runs as a scalar loop over UB on the scalar unit (AscendNPU-IR's
    ``ShouldLowerToScalarLoops.cpp``: an op whose element type is i64; casts are ``vconv``s and stay vector ops,
    except an i64 ↔ i32 cast of a column, :func:`is_column_int_cast`)."""
    if isinstance(op, VCastOp):
        return is_column_int_cast(op)
    if isinstance(op, (VTransposeOp, VGatherOp, VGatherOffsetsOp, VIndexOp, VPermuteOp)):
        return False  # a transpose moves bytes; a gather's i64 indices are split into words on the vector unit
    return any(isinstance(v.type, MemRefType) and v.type.dtype in SCALAR_LOOP_DTYPES for v in op.buffers)


def is_column_int_cast(op: "HIVMOp") -> bool:
    """An i64 ↔ i32 cast of a column (one element per row: last dim 1, some other dim above 1). ``vconv`` writes
    whole 32-B rows per repeat, and the two columns' row pitches (their elements' sizes, or the padding of the
    other operands of the kernel) need not be alike, so it runs as a scalar loop — one load and one wrapping store
    per element, torch's cast — cheap for the column's few elements. Our choice: AscendNPU-IR keeps casts on the
    vector unit."""
    types = [v.type for v in op.buffers if isinstance(v.type, MemRefType)]
    if sorted(t.dtype for t in types) != ["i32", "i64"]:
        return False
    shape = types[0].shape
    return len(shape) > 1 and shape[-1] == 1 and any(d != 1 for d in shape[:-1])


class VectorOp(HIVMOp):
    """A vector op: ``PIPE_V``, or ``PIPE_S`` when it lowers to a scalar loop (:func:`lowers_to_scalar_loops`)."""

    traits = (MemoryEffect, Vector)

    @property
    def pipe(self) -> str:
        return "PIPE_S" if lowers_to_scalar_loops(self) else "PIPE_V"


@register_op
class VUnaryOp(VectorOp):
    name = "hivm.vunary"
    operand_names = ("src", "dst", "*extents")
    attribute_schema = {"fun": StrAttr(UNARY_FUNS)}
    num_buffers = 2


@register_op
class VBinaryOp(VectorOp):
    """``scalar_column``: codegen may read a column operand (``[rows, 1]``) as one scalar per row where
    ``idioms.columns.scalar_column`` allows (the schedule's ``BufferPlan.scalar_columns``). ``column_scale = c``: the
    column operand is read multiplied by ``c`` (rounded to its dtype) — a row sum standing for its mean, the
    multiply done by the scalar unit on each row's value (convert-to-hivm's scaled columns)."""

    name = "hivm.vbinary"
    operand_names = ("lhs", "rhs", "dst", "*extents")
    attribute_schema = {"fun": StrAttr(BINARY_FUNS), "scalar_column": BoolAttr(optional=True),
                        "column_scale": NumberAttr(optional=True)}
    num_buffers = 3


@register_op
class VCmpOp(VectorOp):
    name = "hivm.vcmp"
    operand_names = ("lhs", "rhs", "dst", "*extents")
    attribute_schema = {"predicate": StrAttr(COMPARE_PREDICATES)}
    num_buffers = 3


@register_op
class VSelOp(VectorOp):
    name = "hivm.vsel"
    operand_names = ("cond", "true_value", "false_value", "dst", "*extents")
    num_buffers = 4


@register_op
class VCastOp(VectorOp):
    name = "hivm.vcast"
    operand_names = ("src", "dst", "*extents")
    attribute_schema = {"round_mode": StrAttr(ROUND_MODES, optional=True, default="rint")}
    num_buffers = 2


@register_op
class VBrcOp(VectorOp):
    name = "hivm.vbrc"
    operand_names = ("src", "dst", "*extents")
    attribute_schema = {"dims": IntListAttr()}
    num_buffers = 2


@register_op
class VReduceOp(VectorOp):
    """``fold_in_place``: src dies here and codegen may fold its rows in src's own buffer (it writes src too)."""

    name = "hivm.vreduce"
    operand_names = ("src", "dst", "*extents")
    attribute_schema = {"kind": StrAttr(REDUCE_KINDS), "dims": IntListAttr(), "fold_in_place": BoolAttr(optional=True)}
    num_buffers = 2

    def writes(self) -> list:
        return super().writes() + (self.reads() if self.attributes.get("fold_in_place") else [])

    def expected_indices(self) -> int:
        return _memref(self, 0).rank


@register_op
class VTransposeOp(VectorOp):
    name = "hivm.vtranspose"
    operand_names = ("src", "dst", "*extents")
    attribute_schema = {"perm": IntListAttr()}
    num_buffers = 2


@register_op
class VIndexOp(VectorOp):
    """``hivm.vindex %dst {strides, clamp}``: ``dst[i] = Σ_k strides[k]·i_k`` over the whole static shape of the i32
    buffer ``dst`` (its padding included), the last index ``i_{r-1}`` taken at most ``clamp - 1``: the byte offsets
    of a permutation's source elements, one per destination element, for ``hivm.vpermute`` (built once, before the
    loop that uses it; codegen: ``vci`` and vector-scalar ops)."""

    name = "hivm.vindex"
    operand_names = ("dst",)
    attribute_schema = {"strides": IntListAttr(), "clamp": IntAttr()}
    num_buffers = 1

    def expected_indices(self) -> int:
        return 0

    def verify_(self) -> None:
        super().verify_()
        t = _memref(self, 0)
        if t.dtype != "i32" or len(self.attributes["strides"]) != t.rank or self.attributes["clamp"] < 1:
            raise self.error(f"writes i32 offsets with one stride per dim of {t} and a clamp >= 1")


@register_op
class VPermuteOp(VectorOp):
    """``hivm.vpermute %src, %offsets, %dst, %e…``: ``dst[b, i] = the element at byte offsets[i] of src[b]`` for the
    valid rows of ``dst`` (Ascend C ``Gather`` with byte offsets; ``offsets`` from ``hivm.vindex``): ``offsets`` has
    the shape of ``dst``'s trailing dims, its first possibly longer (a gather repeat reads a whole repeat of
    offsets); ``dst``'s leading dims ``b`` are batch dims that ``src`` shares. A permuted copy of a box loaded in its
    source's dim order (data-movement kernels, docs/schedule.md)."""

    name = "hivm.vpermute"
    operand_names = ("src", "offsets", "dst", "*extents")
    num_buffers = 3

    def verify_(self) -> None:
        super().verify_()
        src, offsets, dst = (_memref(self, i) for i in range(3))
        o, d = offsets.static_shape(), dst.static_shape()
        m = len(d) - len(o)
        if src.dtype != dst.dtype or offsets.dtype != "i32" or not o or m < 0 or o[1:] != d[m + 1:] or o[0] < d[m]:
            raise self.error(f"permutes {src} into {dst} by {offsets}: the element types must match and the "
                             f"offsets be i32 of the destination's trailing shape (its first dim may be longer)")


@register_op
class VFillOp(VectorOp):
    name = "hivm.vfill"
    operand_names = ("dst", "*extents")
    attribute_schema = {"value": NumberAttr()}
    num_buffers = 1


@register_op
class VArangeOp(VectorOp):
    """``hivm.varange %dst, %offset, %e…  {start, step}``: ``dst[i] = start + step·(offset + i_d)`` along the one
    dim ``d`` of ``dst`` whose static size is not 1 (AscendNPU-IR's ``hivm.hir.varange``; CreateVecIndex)."""

    name = "hivm.varange"
    operand_names = ("dst", "*indices")
    attribute_schema = {"start": NumberAttr(), "step": NumberAttr()}
    num_buffers = 1

    def expected_indices(self) -> int:
        return 1 + _memref(self, 0).rank

    def offset(self):
        return self.indices[0]

    def extents(self):
        return self.indices[1:]

    def verify_(self) -> None:
        super().verify_()
        t = _memref(self, 0)
        if sum(1 for n in t.static_shape() if n != 1) > 1:
            raise self.error(f"counts along one dim; {t} has several dims of size > 1")


@register_op
class VGatherOp(VectorOp):
    """``hivm.vgather %src, %index, %dst, %n, %e…``: ``dst[i] = src[i with its last dim → index[i]]`` for ``i`` in the
    valid extents ``e`` of ``dst`` (AscendNPU-IR's ``hivm.hir.vgather``, last axis; Ascend C ``Gather``). ``src``
    holds whole rows of ``n`` valid elements; ``index`` (i32 or i64) has extent 1 in the dims it is broadcast
    along. An index outside ``[0, n)`` is an error when the kernel runs."""

    name = "hivm.vgather"
    operand_names = ("src", "index", "dst", "*indices")
    attribute_schema = {"converted": BoolAttr(optional=True)}  # the hivm.vgather_offsets right before it did that
    num_buffers = 3

    def expected_indices(self) -> int:
        return 1 + _memref(self, 2).rank

    def row_length(self):
        return self.indices[0]

    def extents(self):
        return self.indices[1:]

    def verify_(self) -> None:
        super().verify_()
        _verify_gather(self)


@register_op
class VGatherOffsetsOp(VectorOp):
    """``hivm.vgather_offsets %index, %n {es}``: the checked byte offsets of the ``hivm.vgather {converted}`` that
    follows it (same index, row length ``n``, element size ``es``), into the scratch (codegen.index_ops). It reads
    only the index, so the wait for the gather's source rows (a load) comes after it: the conversion overlaps the
    load instead of following it."""

    name = "hivm.vgather_offsets"
    operand_names = ("index", "*indices")
    attribute_schema = {"es": IntAttr()}
    num_buffers = 1

    def expected_indices(self) -> int:
        return 1

    def reads(self) -> list:
        return [self.operand("index")]

    def writes(self) -> list:
        return []  # the scratch, which the vgather right after it reads (codegen refuses a vector op in between)

    def verify_(self) -> None:
        super().verify_()
        if _memref(self, 0).dtype not in ("i32", "i64"):
            raise self.error(f"converts an index of {_memref(self, 0).dtype}: i32 or i64")


def _verify_gather(op: HIVMOp, min_rank: int = 1) -> tuple:
    """Source, index and destination of a gather: the element types match, the index is i32 or i64, one rank."""
    src, idx, dst = (_memref(op, i) for i in range(3))
    if src.dtype != dst.dtype or idx.dtype not in ("i32", "i64"):
        raise op.error(f"gathers {src.dtype} into {dst.dtype} by {idx.dtype}: the element types must match "
                       f"and the index be i32 or i64")
    if not src.rank == idx.rank == dst.rank or src.rank < min_rank:
        raise op.error(f"source, index and result ranks differ (or are below {min_rank}): {src}, {idx}, {dst}")
    return src, idx, dst


def element_gather(rank: int, dim: int) -> bool:
    """Whether a ``hivm.embedding_gather`` along ``dim`` of a rank-``rank`` source picks one element per row (the
    last dim of a rank-2 source) rather than whole rows or slabs along ``dim``."""
    return rank == 2 and dim == 1


@register_op
class EmbeddingGatherOp(HIVMOp):
    """``hivm.embedding_gather %src, %index, %dst, %off…, %e…``: whole rows of a GM table picked by indices in UB,
    ``dst[r, j…] = src[index[r], off + j…]`` for ``r < e[0]``, ``j < e[1:]`` (``off``: offsets in the dims after the
    gathered dim 0). After AscendNPU-IR's ``hivm.embedding_gather`` (src in GM, index tile, bound = src's dim 0,
    offsets, numels), which on A5 is a SIMT kernel; A2 has no SIMT, so the op is what Ascend C gather kernels do:
    the scalar unit reads each index from UB (``GetValue``, PIPE_S) and issues one MTE2 copy of the row at the
    address it computed (``DataCopy``). It thus reads ``index`` on PIPE_S and reads ``src`` / writes ``dst`` on
    PIPE_MTE2 (:meth:`pipe_accesses`): inject-sync orders the index's producer before it with a flag to S, and its
    consumers after it with flags from MTE2. ``index`` (i32 or i64) has extent 1 in every dim but 0. An index outside
    ``[0, src.shape[0])`` is an error when the kernel runs.

    ``dim`` = the last dim instead of 0: one element of each row, ``dst[r, 0] = src[off + r, index[r, 0]]``
    (``off``: the offset in dim 0; a cross-entropy's target logit, one DMA of one element per row); the index and
    ``dst`` rows are then 32-B padded rows of one element.

    ``dim`` = a middle dim ``d`` of a rank ≥ 3 source: slabs, ``dst[i…, r, j…] = src[off + i…, index[r], off + j…]``
    (the index has extent 1 in every dim but ``d``; ``flip``/``roll``/``index_select`` along dim 1)."""

    name = "hivm.embedding_gather"
    operand_names = ("src", "index", "dst", "*indices")
    attribute_schema = {"dim": IntAttr(optional=True)}  # absent: 0
    traits = (MemoryEffect,)
    pipe = "PIPE_MTE2"
    num_buffers = 3

    def expected_indices(self) -> int:
        return _memref(self, 0).rank - 1 + _memref(self, 2).rank

    def offsets(self):
        return self.indices[: self.operand("src").type.rank - 1]

    def extents(self):
        return self.indices[self.operand("src").type.rank - 1 :]

    def pipe_accesses(self) -> list[tuple[str, object, bool]]:
        src, index, dst = self.buffers
        return [("PIPE_S", index, False), ("PIPE_MTE2", src, False), ("PIPE_MTE2", dst, True)]

    def verify_(self) -> None:
        super().verify_()
        src, idx, _ = _verify_gather(self, min_rank=2)
        dim = self.attributes.get("dim", 0)
        if not 0 <= dim < src.rank - 1 and not element_gather(src.rank, dim):
            raise self.error(f"gathers along dim {dim} of {src}: a dim but the last (rows or slabs), or dim 1 of a "
                             "rank-2 source (one element per row)")
        if not element_gather(src.rank, dim) and idx.is_static and \
                any(n != 1 for d, n in enumerate(idx.static_shape()) if d != dim):
            raise self.error(f"the index {idx} must have extent 1 in every dim but {dim} (one index per slab)")


# ---------------------------------------------------------------------------------------------------------------
# Synchronisation


class FlagOp(Operation):
    operand_names = ("*selector",)
    attribute_schema = {
        "src_pipe": StrAttr(PIPES),
        "dst_pipe": StrAttr(PIPES),
        "event_ids": IntListAttr(),
    }
    traits = (MemoryEffect,)

    def verify_(self) -> None:
        ids = self.attributes["event_ids"]
        if not ids:
            raise self.error("needs at least one event id")
        if len(self.operands) > 1 or (self.operands and not _is_index(self.operands[0])):
            raise self.error("takes at most one index operand (the event id selector)")
        if len(ids) > 1 and not self.operands:
            raise self.error(f"rotating event ids {ids} need a selector operand")


@register_op
class SetFlagOp(FlagOp):
    """``hivm.set_flag``: runs on ``src_pipe``; signals ``dst_pipe`` once the src pipe's earlier work is done."""

    name = "hivm.set_flag"


@register_op
class WaitFlagOp(FlagOp):
    """``hivm.wait_flag``: runs on ``dst_pipe``; blocks it until the matching set_flag."""

    name = "hivm.wait_flag"


@register_op
class PipeBarrierOp(Operation):
    """``hivm.pipe_barrier {pipe}``: later work on ``pipe`` waits for its earlier work (``PIPE_ALL``: everything)."""

    name = "hivm.pipe_barrier"
    attribute_schema = {"pipe": StrAttr(PIPES)}
    traits = (MemoryEffect,)


# ---------------------------------------------------------------------------------------------------------------
# Host side


@register_op
class LaunchOp(Operation):
    """``hivm.launch %in…, %out… {callee = "k"}``: the host launches HIVM kernel ``@k`` on ``block_dim`` cores
    (from the kernel's ``tiling``). Operands are the kernel's tensor arguments in order (inputs, then the
    out-parameters); results are the out-parameters after the kernel wrote them (one per ``output_args`` entry
    of the kernel). Tiling parameters are not operands: the host evaluates them from the shape symbols."""

    name = "hivm.launch"
    operand_names = ("*args",)
    result_names = ("*results",)
    attribute_schema = {"callee": StrAttr()}
    traits = (MemoryEffect,)
