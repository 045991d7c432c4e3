"""The schedule of a device kernel: ``hfusion-auto-schedule``'s decisions, carried in the IR as typed attributes.

A vector kernel's ``schedule`` is a :class:`VectorSchedule` — the tile, how the work items are split and
distributed over the cores, the buffer plan (every UB buffer, the body values it holds and its copies: the
multi-buffer depth), the scratch, software pipelining and the idioms chosen (scalar columns, in-place and block
folds). A data-movement kernel's is a :class:`MovementSchedule`. ``convert-to-hivm`` builds the kernel from the
attribute and ``hivm-mark-multi-buffer`` reads each buffer's copies from it; neither re-derives them, so
``npu-opt`` can replay the lowering from a hand-edited schedule. The sizes that depend on shape symbols (trip
counts, the block dim) are the kernel's ``tiling`` attribute, the host tiling function.

Body values are named by position, as a printed kernel reads them: ``a<i>`` is the kernel's argument i and
``o<j>`` the result of the j-th op of its body (``o<j>.<k>`` its result k). The verifier checks that every
reference names a value of the buffer's dtype.

Text form (one line in the IR)::

    schedule = #hfusion.schedule<{kind = "PURE_ELEMWISE", tile = [12288], ub_bytes = 196608, buffers = [
        {dtype = "f16", dims = [0], values = ["a0"], copies = 2, loaded = true}, ...]}>
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..ir.typed_attrs import Record, TypedAttr, register_attr

DISTRIBUTIONS = ("cyclic", "cyclic-balanced-tail", "cyclic-if-aligned")
BUFFER_ROLES = ("value", "partial")
VALUE_REF = re.compile(r"^(a\d+|o\d+(\.\d+)?)$")


@dataclass(frozen=True)
class BufferDecl(Record):
    """One UB buffer of the plan: the tile's extent in the domain dims it spans (1 elsewhere), ``copies`` of it."""

    dtype: str
    dims: tuple[int, ...]  # domain dims spanned
    values: tuple[str, ...] = ()  # the body values it holds, in order (an elementwise op writing in place appends)
    copies: int = 1  # the multi-buffer depth: rotating copies, so one tile's DMA overlaps the next tile's compute
    role: str = "value"  # "partial": a multi-pass reduction's per-tile partial (``of`` names the reduction)
    of: str = ""
    loaded: bool = False  # filled by a DMA from GM (a load, or rows gathered from GM)
    stored: bool = False  # drained by a DMA to GM
    fixed: tuple[tuple[int, int], ...] = ()  # (dim, extent) independent of the tile: a gathered row's length
    whole_repeats: bool = False  # rows padded to 256 elements (a column mask's operands)
    lanes: tuple[int, ...] = ()  # lanes per repeat of the compares/selects it feeds: rows padded to whole repeats

    def __post_init__(self):
        if self.role not in BUFFER_ROLES:
            raise ValueError(f"role must be one of {', '.join(BUFFER_ROLES)}, got {self.role!r}")
        if self.copies < 1:
            raise ValueError(f"copies must be >= 1, got {self.copies}")
        for ref in self.values + ((self.of,) if self.of else ()):
            if not VALUE_REF.match(ref):
                raise ValueError(f"value reference {ref!r} is neither a<i> (argument) nor o<j> (op result)")


@register_attr
@dataclass(frozen=True)
class VectorSchedule(TypedAttr):
    """The schedule of a vector kernel (``hfusion-auto-schedule``; docs/schedule.md)."""

    mnemonic = "hfusion.schedule"
    kind: str  # the kernel's fusion kind
    tile: tuple[int, ...]  # elements per domain dim of one work item's tile
    ub_bytes: int  # UB of the buffers x copies plus the scratch, at the busiest point
    buffers: tuple[BufferDecl, ...] = ()
    reduce_dims: tuple[int, ...] = ()
    reduce_looped: bool = False  # the reduced dims are tiled: one pass over GM per reduction, then the outputs
    passes: int = 1  # passes over GM a work item makes
    distribution: str = "cyclic"  # how work items go to cores: cyclic, last round balanced, one core unless aligned
    block_dim: int = 0  # a fixed core count (1: work items would share GM blocks); 0: the tiling's
    serial_dims: tuple[int, ...] = ()  # parallel dims whose tiles loop inside a work item
    split_dims: tuple[int, ...] = ()  # symbolic parallel dims whose work-item step is chosen per launch (step{d})
    scratch_bytes: int = 0  # the code generator's temporary UB (part of ub_bytes)
    stage_split: int = -1  # software-pipelined work items: stage 0 computes the first stage_split values (-1: off)
    scalar_columns: bool = False  # column operands read as per-row scalars where the idiom allows
    inlined: tuple[str, ...] = ()  # broadcasts their binary users read in place (no buffer)
    hoisted: tuple[str, ...] = ()  # values computed once per core, before the work-item loop
    in_place_folds: tuple[str, ...] = ()  # reductions folding in their source's buffer
    block_folds: tuple[str, ...] = ()  # reductions whose rows fold block by block

    def __post_init__(self):
        if self.distribution not in DISTRIBUTIONS:
            raise ValueError(f"distribution must be one of {', '.join(DISTRIBUTIONS)}, got {self.distribution!r}")
        if any(t < 1 for t in self.tile):
            raise ValueError(f"tile sizes must be >= 1, got {list(self.tile)}")
        for i, b in enumerate(self.buffers):
            if b.role == "partial" and not b.of:
                raise ValueError(f"buffer {i} is a partial without the reduction it belongs to ('of')")

    @property
    def pipelined(self) -> bool:
        return self.stage_split >= 0

    @property
    def io_copies(self) -> int:
        """The copies of the buffers DMAs fill or drain (the kernel's multi-buffer depth; 1 when none has more)."""
        return max((b.copies for b in self.buffers if b.loaded or b.stored), default=1)

    def refs(self) -> list[str]:
        """Every value reference of the schedule (for the verifier)."""
        out = [r for b in self.buffers for r in b.values + ((b.of,) if b.of else ())]
        return out + list(self.inlined + self.hoisted + self.in_place_folds + self.block_folds)


@register_attr
@dataclass(frozen=True)
class MovementSchedule(TypedAttr):
    """The schedule of a data-movement kernel (transposes, strided slices, concats; schedule/movement.py)."""

    mnemonic = "hfusion.movement_schedule"
    tiles: tuple[tuple[int, ...], ...]  # per result: its tile, in its own dims
    ub_bytes: int
    multi_buffer: int = 2  # copies of each buffer a DMA fills or drains inside the work-item loop
    distribution: str = "cyclic"

    def __post_init__(self):
        if self.multi_buffer < 1:
            raise ValueError(f"multi_buffer must be >= 1, got {self.multi_buffer}")


def value_ref(v, func) -> str:
    """The reference of body value ``v`` of kernel ``func`` (``a<i>`` or ``o<j>``/``o<j>.<k>``)."""
    body = func.regions[0].blocks[0]
    if v in body.args:
        return f"a{body.args.index(v)}"
    j = body.ops.index(v.op)
    k = v.op.results.index(v)
    return f"o{j}" if k == 0 else f"o{j}.{k}"


def resolve_ref(ref: str, func):
    """The body value ``ref`` names in kernel ``func``, or None when it names none."""
    body = func.regions[0].blocks[0]
    if ref.startswith("a"):
        i = int(ref[1:])
        return body.args[i] if i < len(body.args) else None
    j, _, k = ref[1:].partition(".")
    j, k = int(j), int(k or 0)
    if j >= len(body.ops) or k >= len(body.ops[j].results):
        return None
    return body.ops[j].results[k]


CUBE_SCOPES = ("l1", "l0a", "l0b", "l0c")
CUBE_WORK_ITEMS = ("tile", "band", "batch")


@dataclass(frozen=True)
class CubeBufferDecl(Record):
    """One buffer of a cube kernel: its role (``a_l1``, ``b_l1``, ``a_l0``, ``b_l0``, ``c_l0``), scope, static
    shape and element type, and its rotating copies (ping-pong)."""

    role: str
    scope: str
    dtype: str
    shape: tuple[int, ...]
    copies: int = 1

    def __post_init__(self):
        if self.scope not in CUBE_SCOPES:
            raise ValueError(f"scope must be one of {', '.join(CUBE_SCOPES)}, got {self.scope!r}")
        if self.copies < 1:
            raise ValueError(f"copies must be >= 1, got {self.copies}")


@register_attr
@dataclass(frozen=True)
class CubeSchedule(TypedAttr):
    """The schedule of a cube kernel (schedule/cube.py, docs/cube.md): the output tile ``base_m`` × ``base_n`` (one
    L0C accumulator), the K step of an L1 box (``l1_k``) and of one mmad (``base_k``), the buffers with their
    copies (ping-pong at L1 and L0), what a core's work item is (``work_item``: one tile; a band of ``base_m``
    rows, every tile of it, when output rows are not whole 32-B blocks, so no two cores write one block; a whole
    batch when batches are not either), into how many column parts the accumulator is cut (``acc_parts``: the
    cube finishes part 0 of an L1 step before part 1, so one part drains through FixPipe while the other is
    computed), how many column strips each tile of a partial last wave is cut into (``tail_strips``: the strips
    fill the cores the whole tiles would leave idle), the estimate it was chosen by (``waves`` of work items over
    the cube cores; 0 when the shape is known only at launch) and, for split-K partial products (``hfusion-split-k``),
    the K of one chunk (``k_chunk``; 0: the whole of K), and whether the tile's A rows stay in L1 over all of K
    while each accumulator part runs its own K loop (``resident_a``: a MIX_CV kernel's cv-pipelining, so part 0
    is drained, and handed to the vector cores, before part 1's B columns are loaded; docs/cube.md), and the slots
    of a MIX_CV kernel's ring workspace per group (``ws_slots``: each drained part goes to slot ``p mod ws_slots`` of
    its group, a cross-core flag per slot each way; 0: the workspace holds the whole product)."""

    mnemonic = "hfusion.cube_schedule"
    kind: str
    base_m: int
    base_n: int
    base_k: int
    l1_k: int
    work_item: str = "tile"
    acc_parts: int = 1
    tail_strips: int = 1
    waves: int = 0
    buffers: tuple[CubeBufferDecl, ...] = ()
    k_chunk: int = 0
    resident_a: bool = False
    ws_slots: int = 0

    def __post_init__(self):
        if self.work_item not in CUBE_WORK_ITEMS:
            raise ValueError(f"work_item must be one of {', '.join(CUBE_WORK_ITEMS)}, got {self.work_item!r}")
        if min(self.base_m, self.base_n, self.base_k, self.l1_k) < 1:
            raise ValueError("tile sizes must be >= 1")
        if self.l1_k % self.base_k:
            raise ValueError(f"l1_k = {self.l1_k} must be a multiple of base_k = {self.base_k}")
        if self.tail_strips < 1 or self.tail_strips > self.base_n // 16:
            raise ValueError(f"tail_strips = {self.tail_strips} must be 1 .. base_n / 16 = {self.base_n // 16}")
        if self.acc_parts < 1 or self.base_n % (16 * self.acc_parts):
            raise ValueError(f"base_n = {self.base_n} must be acc_parts = {self.acc_parts} parts of whole fractals")

    def buffer(self, role: str) -> int:
        for i, b in enumerate(self.buffers):
            if b.role == role:
                return i
        raise ValueError(f"the cube schedule has no buffer {role!r}")
