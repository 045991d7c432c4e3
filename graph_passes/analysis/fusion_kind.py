"""Op patterns and fusion kinds, after AscendNPU-IR's ``FusibleHelper`` and ``InferFuncFusionKind``.

Every op has a *pattern* (elementwise, last-axis reduce, other broadcast, matmul, reshape …). A fusion kind is a
kernel template (PURE_ELEMWISE, ANY_PB, LAST_AXIS_PBR, ANY_PBR, SINGLE_CUBE, …); a kind accepts a set of ops when
every op's pattern is allowed in the kind, every producer→consumer edge inside the set is fusible under the kind's
pattern table (``FusibleHelper::is*Fusible``), the reductions agree on input rank and axis (PBR kinds), and — our
addition, so that one schedule serves the kernel — every op's loop nest embeds in one iteration space
(:func:`shapes_compatible`).

The kind of a set of ops (a function body or a fusion group), as AscendNPU-IR's ``inferFuncFusionKind``:

- no important op → ANY_PB;
- one important op → the kind of its pattern (elementwise/transpose → PURE_ELEMWISE, last-axis reduce →
  LAST_AXIS_PBR, other reduce → ANY_PBR, broadcast/slice → ANY_PB, matmul → SINGLE_CUBE);
- several → the first kind, in enum order, whose check passes; else UNKNOWN.

Note: the cube kinds SHALLOW_CV, SHALLOW_VV, MIX_CV, MIX_C2 exist in the enum (same order and values as
``HFusionEnums.td``) but are not tried for several ops yet: several ops with a matmul among them are UNKNOWN.
"""

from __future__ import annotations

from enum import IntEnum
from functools import lru_cache

from ..ir.core import Broadcast, Constant, Cube, Elementwise, Operation, Reduction
from ..ir.sizes import SizeVars
from ..ir.types import TensorType


class FusionKind(IntEnum):
    """AscendNPU-IR's ``FusionKind`` (``HFusionEnums.td``), same order and values."""

    PURE_ELEMWISE = 1
    ANY_PB = 2
    LAST_AXIS_PBR = 3
    ANY_PBR = 4
    SINGLE_CUBE = 5
    SHALLOW_CV = 6
    SHALLOW_VV = 7
    MIX_CV = 8
    MIX_C2 = 9
    UNKNOWN = 10

    @property
    def counter(self) -> str:
        """Counter name of this kind: ``pure-elemwise``, ``last-axis-pbr`` …"""
        return self.name.lower().replace("_", "-")

    @classmethod
    def parse(cls, text: str) -> "FusionKind":
        try:
            return cls[text]
        except KeyError:
            raise ValueError(f"unknown fusion kind {text!r}; known: {', '.join(k.name for k in cls)}") from None


class OpPattern(IntEnum):
    """AscendNPU-IR's ``OpPattern`` (values as in ``FusibleHelper.h``); >= ELEMENTWISE is outlinable alone."""

    AUXILIARY = 0  # scalar constants, tensor.dim: cloned into the kernel that uses them
    BUFFER = 1  # tensor.empty
    OPAQUE = 2  # stays on the host (calls, tensor constants, unknown ops)
    ZERO_RANK_ELEMWISE = 3
    RESHAPE = 50
    LOAD_STORE = 51
    INSERT_SLICE = 52
    MID_FUSION_AUX = 54
    ELEMENTWISE = 100
    LAST_AXIS_REDUCE = 101
    LAST_AXIS_BROADCAST = 102
    OTHER_REDUCE = 103
    OTHER_BROADCAST = 104
    MATMUL = 105
    MID_FUSION_IMPORTANT_AUX = 109  # concat, gather
    TRANSPOSE = 111
    EXTRACT_SLICE = 112


P = OpPattern
IMPORTANT = frozenset({P.ELEMENTWISE, P.ZERO_RANK_ELEMWISE, P.EXTRACT_SLICE, P.LAST_AXIS_BROADCAST,
                       P.LAST_AXIS_REDUCE, P.MATMUL, P.MID_FUSION_IMPORTANT_AUX, P.OTHER_BROADCAST,
                       P.OTHER_REDUCE, P.TRANSPOSE})  # fmt: skip

_SINGLE_KIND = {
    P.ELEMENTWISE: FusionKind.PURE_ELEMWISE,
    P.ZERO_RANK_ELEMWISE: FusionKind.PURE_ELEMWISE,
    P.MID_FUSION_IMPORTANT_AUX: FusionKind.PURE_ELEMWISE,
    P.TRANSPOSE: FusionKind.PURE_ELEMWISE,
    P.LAST_AXIS_REDUCE: FusionKind.LAST_AXIS_PBR,
    P.OTHER_REDUCE: FusionKind.ANY_PBR,
    P.MATMUL: FusionKind.SINGLE_CUBE,
    P.EXTRACT_SLICE: FusionKind.ANY_PB,
    P.LAST_AXIS_BROADCAST: FusionKind.ANY_PB,
    P.OTHER_BROADCAST: FusionKind.ANY_PB,
}


def op_pattern(op: Operation) -> OpPattern:
    """The pattern of one op (``FusibleHelper::getOpPattern``)."""
    if op.has_trait(Elementwise) or op.name in ("hfusion.fill", "hfusion.arange"):
        out = op.results[0].type if op.results else None
        return P.ZERO_RANK_ELEMWISE if isinstance(out, TensorType) and out.rank == 0 else P.ELEMENTWISE
    name = op.name
    if op.has_trait(Reduction):
        dims = op.attributes["dims"]
        last = op.operand("input").type.rank - 1
        return P.LAST_AXIS_REDUCE if dims == [last] else P.OTHER_REDUCE
    if op.has_trait(Broadcast):
        dims = op.attributes["dims"]
        in_rank = op.operand("input").type.rank
        return P.LAST_AXIS_BROADCAST if dims == [in_rank] else P.OTHER_BROADCAST
    if op.has_trait(Cube):
        return P.MATMUL
    if op.has_trait(Constant):
        return P.OPAQUE if isinstance(op.result.type, TensorType) else P.AUXILIARY
    if name == "tensor.empty":
        return P.BUFFER
    if name == "tensor.dim":
        return P.AUXILIARY
    if name in ("hfusion.reshape", "hfusion.bitcast"):
        return P.RESHAPE
    if name == "hfusion.slice":
        return P.EXTRACT_SLICE
    if name in ("hfusion.concat", "hfusion.gather"):
        return P.MID_FUSION_IMPORTANT_AUX
    if name == "hfusion.transpose":
        return P.TRANSPOSE
    return P.OPAQUE


def is_important(op: Operation) -> bool:
    return op_pattern(op) in IMPORTANT


def single_kind(op: Operation) -> FusionKind:
    """The kind of a kernel holding only ``op`` (``FusibleHelper::getSingleFusionKind``)."""
    return _SINGLE_KIND.get(op_pattern(op), FusionKind.UNKNOWN)


# ---------------------------------------------------------------------------------------------------------------
# Pattern tables: (producer patterns, consumer patterns) rows per kind, from FusibleHelper::is<Kind>Fusible.

_ELEM_LIKE = frozenset({P.ELEMENTWISE, P.ZERO_RANK_ELEMWISE, P.EXTRACT_SLICE, P.INSERT_SLICE, P.LOAD_STORE,
                        P.MID_FUSION_AUX, P.MID_FUSION_IMPORTANT_AUX, P.RESHAPE, P.TRANSPOSE})  # fmt: skip
_BROADCASTS = frozenset({P.LAST_AXIS_BROADCAST, P.OTHER_BROADCAST})

_FUSIBLE: dict[FusionKind, list[tuple[frozenset, frozenset]]] = {
    FusionKind.PURE_ELEMWISE: [(_ELEM_LIKE, _ELEM_LIKE)],
    FusionKind.ANY_PB: [(_ELEM_LIKE | _BROADCASTS, _ELEM_LIKE | _BROADCASTS)],
    FusionKind.LAST_AXIS_PBR: [
        (_ELEM_LIKE, _ELEM_LIKE | _BROADCASTS | {P.LAST_AXIS_REDUCE}),  # elementwise feeds a last-axis reduce
        (_BROADCASTS | {P.LAST_AXIS_REDUCE}, _ELEM_LIKE | _BROADCASTS),  # no reduce right after a reduce/broadcast
    ],
    FusionKind.ANY_PBR: [
        (_ELEM_LIKE | _BROADCASTS | {P.LAST_AXIS_REDUCE, P.OTHER_REDUCE},
         _ELEM_LIKE | _BROADCASTS | {P.LAST_AXIS_REDUCE, P.OTHER_REDUCE}),
    ],  # fmt: skip
}
VECTOR_KINDS = tuple(_FUSIBLE)  # the kinds tried for several ops, in enum order


def allowed_patterns(kind: FusionKind) -> frozenset:
    rows = _FUSIBLE.get(kind, [])
    return frozenset().union(*(a | b for a, b in rows)) if rows else frozenset()


def is_fusible(kind: FusionKind, producer: OpPattern, consumer: OpPattern) -> bool:
    """May ``producer``'s result feed ``consumer`` inside one kernel of ``kind``?"""
    return any(producer in a and consumer in b for a, b in _FUSIBLE.get(kind, []))


def _reduce_signature(op: Operation) -> tuple[int, int]:
    """(input rank of a last-axis reduce or -1, the reduce dim of a one-dim reduce or -1)."""
    p = op_pattern(op)
    if p not in (P.LAST_AXIS_REDUCE, P.OTHER_REDUCE):
        return -1, -1
    dims = op.attributes["dims"]
    rank = op.operand("input").type.rank if p == P.LAST_AXIS_REDUCE else -1
    return rank, (dims[0] if len(dims) == 1 else -1)


def fits(kind: FusionKind, ops: list[Operation]) -> bool:
    """Do ``ops`` form one kernel of ``kind`` as far as patterns go (edges, reduce rank/dim agreement)?"""
    allowed = allowed_patterns(kind)
    members = set(ops)
    ranks, dims = set(), set()
    for op in ops:
        p = op_pattern(op)
        if p in (P.AUXILIARY, P.BUFFER):
            continue
        if p not in allowed:
            return False
        for r in op.results:
            for user in r.users:
                if user in members and not is_fusible(kind, p, op_pattern(user)):
                    return False
        rank, dim = _reduce_signature(op)
        if rank >= 0:
            ranks.add(rank)
        if dim >= 0:
            dims.add(dim)
    return len(ranks) <= 1 and len(dims) <= 1


# ---------------------------------------------------------------------------------------------------------------
# One iteration space


def anchor_shape(op: Operation) -> tuple | None:
    """The loop nest an op runs (its result for elementwise/broadcast ops, its input for reduce/transpose)."""
    p = op_pattern(op)
    if p in (P.LAST_AXIS_REDUCE, P.OTHER_REDUCE, P.TRANSPOSE):
        return tuple(op.operand("input").type.shape)
    if p in (P.ELEMENTWISE, P.ZERO_RANK_ELEMWISE, P.LAST_AXIS_BROADCAST, P.OTHER_BROADCAST, P.EXTRACT_SLICE,
             P.MID_FUSION_IMPORTANT_AUX):  # fmt: skip
        t = op.results[0].type
        return tuple(t.shape) if isinstance(t, TensorType) else None
    return None


@lru_cache(maxsize=8192)
def _known_equal(a, b) -> bool:
    # Note: equality needs no symbol ranges (SizeVars.statically_known_equal does not use them), so it is cached.
    return a == b or SizeVars().statically_known_equal(a, b)


def _is_subsequence(small, big, sizes: SizeVars) -> bool:
    i = 0
    for d in small:
        while i < len(big) and not _known_equal(big[i], d):
            i += 1
        if i == len(big):
            return False
        i += 1
    return True


def shapes_compatible(ops: list[Operation], sizes: SizeVars) -> bool:
    """Does every op's loop nest embed in the largest one (its dims a subsequence, unit dims ignored), and do the
    loop nests of the largest rank agree (a ``6x1`` slice beside a ``6x5`` one is not one domain)?

    Note: this is stricter than AscendNPU-IR, which checks only reduce rank/axis; it keeps e.g. two last-axis
    reductions over different shapes out of one kernel, which one tiling could not serve.
    """
    raw = [a for a in (anchor_shape(op) for op in ops) if a is not None]
    if not raw:
        return True
    rank = max(len(a) for a in raw)  # the loop nests of the domain's rank are the domain: one shape
    full = [a for a in raw if len(a) == rank]
    if any(not all(_known_equal(x, y) for x, y in zip(a, full[0])) for a in full[1:]):
        return False
    anchors = [tuple(d for d in a if not _known_equal(d, 1)) for a in raw]
    space = max(anchors, key=len)
    return all(_is_subsequence(a, space, sizes) for a in anchors)


def _embedding(small, big) -> list[int]:
    """Positions of ``small``'s dims in ``big`` (the greedy subsequence match of :func:`_is_subsequence`)."""
    out, i = [], 0
    for d in small:
        while i < len(big) and not _known_equal(big[i], d):
            i += 1
        out.append(i)
        i += 1
    return out


def reductions_agree(ops: list[Operation]) -> bool:
    """Do all reductions reduce the same dims of the iteration space (non-unit dims, placed as in
    :func:`shapes_compatible`)? One schedule tiles one set of reduced dims (``reduce_dims``): a kernel whose
    reductions reduce different dims (a full sum beside a row sum) is not one domain.

    Note: stricter than AscendNPU-IR's reduce rank/axis agreement, which lets ``x.sum()`` and ``x.sum(1)`` share a
    kernel that its AnyPBR schedule handles with separate loop nests; ours has one."""
    anchors = [a for a in (anchor_shape(op) for op in ops) if a is not None]
    if not anchors:
        return True
    space = max((tuple(d for d in a if not _known_equal(d, 1)) for a in anchors), key=len)
    reduced = set()
    for op in ops:
        if op_pattern(op) not in (P.LAST_AXIS_REDUCE, P.OTHER_REDUCE):
            continue
        shape = op.operand("input").type.shape
        kept = [i for i, d in enumerate(shape) if not _known_equal(d, 1)]
        pos = dict(zip(kept, _embedding([shape[i] for i in kept], space)))
        reduced.add(frozenset(pos[i] for i in op.attributes["dims"] if i in pos))
    return len(reduced) <= 1


def group_kind(ops: list[Operation], sizes: SizeVars | None = None) -> FusionKind:
    """The fusion kind of a kernel made of ``ops`` (UNKNOWN when no kind accepts them)."""
    sizes = sizes or SizeVars()
    important = [op for op in ops if is_important(op)]
    if not important:
        return FusionKind.ANY_PB
    if len(important) == 1:
        return single_kind(important[0])
    if is_mix_cv(ops):
        return FusionKind.MIX_CV
    if not shapes_compatible(ops, sizes) or not reductions_agree(ops):
        return FusionKind.UNKNOWN
    for kind in VECTOR_KINDS:
        if fits(kind, ops):
            return kind
    return FusionKind.UNKNOWN


# the ops of an epilogue a MIX_CV kernel applies to its product's tiles (elementwise maps, broadcasts of rows)
EPILOGUE_PATTERNS = frozenset({P.ELEMENTWISE, P.LAST_AXIS_BROADCAST, P.OTHER_BROADCAST, P.AUXILIARY, P.BUFFER})


def is_mix_cv(ops: list[Operation]) -> bool:
    """One rank-2 ``hfusion.matmul`` of kernel arguments (no prologue) and an elementwise epilogue over its result:
    every other op elementwise or a broadcast (a bias row), of the product's shape or broadcast to it, and the
    product used by the epilogue only (hfusion-fuse-mix-cv builds such kernels; docs/cube.md)."""
    cube = [op for op in ops if op_pattern(op) == P.MATMUL]
    if len(cube) != 1 or cube[0].name != "hfusion.matmul" or len(cube[0].operands) != 2:
        return False
    mm = cube[0]
    inside = {id(op) for op in ops}
    if any(getattr(v, "op", None) is not None and id(v.op) in inside for v in mm.operands):
        return False
    shape = tuple(mm.result.type.shape)
    rest = [op for op in ops if op is not mm]
    if not rest or any(op_pattern(op) not in EPILOGUE_PATTERNS for op in rest):
        return False
    for op in rest:
        for r in op.results:
            if isinstance(r.type, TensorType) and r.type.rank and tuple(r.type.shape) != shape and not any(
                    u.op.has_trait(Broadcast) for u in r.uses):
                return False  # a value off the product's domain that is not a row broadcast to it
    return True


def infer_func_fusion_kind(func: Operation, sizes: SizeVars | None = None) -> FusionKind:
    """The kind of a whole function body (``hfusion::inferFuncFusionKind``)."""
    ops = [op for op in func.body.ops if op.name != "func.return"]
    return group_kind(ops, sizes)
