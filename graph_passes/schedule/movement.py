"""Data-movement kernels: transposes, strided slices, concats (``hfusion-auto-schedule``'s movement schedule).

A kernel whose body only moves data — ``transpose``, ``slice`` (any strides), ``concat``, ``reshape``
(:mod:`.movement_reshape`), ``fill`` — of its arguments computes nothing a vector instruction must see: each result is a set of
*pieces*, boxes of the result copied from a strided, permuted view of one argument (or filled with a constant)::

    out[box.off + i] = arg[src.off + Σ_k i_k·step_k·e(dim_k)]        for i in box.size

(MLIR's ``tensor.concat`` decomposition into ``insert_slice``s, AscendNPU-IR's ``DecomposeTensorConcat``; slices and
transposes compose into the source view). Each piece lowers to loads and stores (``hivm.load``/``hivm.store`` with
``dims``/``steps``, docs/hivm.md): a piece whose innermost dim is contiguous in the argument moves rows (one DMA
burst per row); a permuted one moves its source's rows and is permuted in UB (2-byte 16×16 blocks by
``vtranspose``, others by a gather: :func:`piece_kind`); otherwise (strided or selected columns) one element per
burst, one element per 32-B block in UB.

Work split (:mod:`.movement_split`): the work items of a result are tiles of its *work dims* — the dims split
only where every core's GM writes stay whole 32-B blocks apart, as docs/schedule.md's rule for vector kernels —
flattened, cyclic over the cores; inside a work item every piece that meets it is copied, its other dims tiled
serially, so two cores never write one GM block::

    for t in range(block_idx, tiles_r, block_dim):      # t → one tile [lo_d, hi_d) along each work dim d of result r
        for each piece p:  its part of the work item, tile by tile of the other dims:  load (or vfill), store

Kernels with anything else (compute ops, a slice of a concat …) are not movement kernels: :class:`Unsupported`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import sympy

from ..idioms.transpose import TRANSPOSE_BLOCK, transpose_scratch_bytes
from ..intmath import align_up, ceil_div
from ..ir.core import BlockArgument, Operation, Value
from ..ir.sizes import SizeVars, as_expr
from ..ir.types import DTYPE_BYTES, TensorType
from .kernel_info import Unsupported
from .launch_alignment import launch_block_dim
from .movement_reshape import reshape_pieces
from .movement_split import BLOCK, with_size, block_step, launch_steps, launch_work_dims, spread, static_items

MOVEMENT_OPS = ("hfusion.transpose", "hfusion.slice", "hfusion.concat", "hfusion.reshape", "hfusion.fill")


@dataclass
class Source:
    """A view of one argument (``arg``, seen in GM as ``shape``) or a constant (``value``): value dim k walks GM dim
    ``dims[k]`` (-1: none) by ``steps[k]`` elements, starting at ``offsets`` (one per GM dim of the argument)."""

    arg: Value | None
    dims: list[int]
    steps: list[int]
    offsets: list  # size expressions, one per GM dim
    value: float | int | None = None
    shape: list = field(default_factory=list)  # the argument's GM shape (its own, or the one it is viewed in)

    def contiguous(self) -> bool:
        """Rows of the innermost value dim are contiguous in GM (one burst each)."""
        return self.arg is None or not self.dims or (self.dims[-1] == len(self.shape) - 1 and self.steps[-1] == 1)


@dataclass
class Piece:
    off: list  # box offset in the value (size expressions)
    size: list  # box extents
    src: Source


@dataclass
class MovementInfo:
    func: Operation
    results: list  # returned values
    outputs: list  # out-parameter arguments
    pieces: list  # per result: list[Piece]
    shapes: list  # per result: the shape it is stored in (rank-0 results as [1]); see analyze_movement
    ops: list = field(default_factory=list)


def gm_shape(t: TensorType) -> list:
    """A tensor's shape as a GM buffer (rank 0 as one element)."""
    return list(t.shape) if t.rank else [as_expr(1)]


def analyze_movement(func: Operation, sizes: SizeVars) -> MovementInfo:
    """Pieces of every result of a data-movement kernel; :class:`Unsupported` when ``func`` is not one.

    A returned reshape whose pieces cannot be re-expressed in its shape (``2x8x4x8 -> 16x32`` after a transpose
    that made dims 2 and 3 two walks of the source) is stored in its operand's shape instead: the out-parameter
    is viewed in that shape (the same elements in the same row-major order, docs/hivm.md)."""
    body = func.body
    ops = list(body.ops[:-1])
    output_args = list(func.attributes.get("output_args") or [])
    args = list(body.args)
    outputs = [args[i] for i in output_args]
    results = list(body.ops[-1].operands)
    if not any(op.name in ("hfusion.transpose", "hfusion.concat", "hfusion.slice") for op in ops):
        raise Unsupported(func.sym_name, "moves no data (no transpose, slice or concat)")
    pieces: dict = {}
    for a in args:
        if isinstance(a.type, TensorType) and a not in outputs:
            reshapes = _viewed_as(a, sizes)
            shape = gm_shape(reshapes[0].result.type if reshapes else a.type)
            pieces[a] = [Piece([as_expr(0)] * len(shape), shape, Source(a, list(range(len(shape))), [1] * len(shape),
                                                                        [as_expr(0)] * len(shape), shape=shape))]
            pieces.update((r.result, pieces[a]) for r in reshapes)
    stored_as: dict = {}  # a returned reshape the pieces cannot follow -> the value it reshapes
    for op in ops:
        if op.name == "arith.constant" and not isinstance(op.result.type, TensorType) or op.result in pieces:
            continue
        if op.name not in MOVEMENT_OPS:
            raise Unsupported(op.name, "is not a data-movement op")
        try:
            pieces[op.result] = _op_pieces(op, pieces, sizes)
        except Unsupported:
            if op.name != "hfusion.reshape" or any(u.name != "func.return" for u in op.result.users):
                raise
            stored_as[op.result] = op.operands[0]  # the out-parameter is viewed in the operand's shape
    if len(results) != len(outputs):
        raise Unsupported(func.sym_name, f"returns {len(results)} values for {len(outputs)} out-parameters")
    values = [stored_as.get(r, r) for r in results]
    for v in values:
        if v not in pieces or isinstance(v, BlockArgument):
            raise Unsupported(func.sym_name, "returns an argument unchanged")
    return MovementInfo(func, results, outputs, [pieces[v] for v in values], [gm_shape(v.type) for v in values],
                        ops)


def _viewed_as(arg: Value, sizes: SizeVars) -> list:
    """The reshapes of ``arg`` when it is read only through reshapes to one shape (its GM view is that shape:
    a split of ``(s0*s1)x32`` into ``s0xs1x4x8`` needs no symbolic step), else []."""
    users = list(arg.users)
    if not users or any(u.name != "hfusion.reshape" for u in users):
        return []
    shape = gm_shape(users[0].result.type)
    same = all(len(gm_shape(u.result.type)) == len(shape) and
               all(sizes.statically_known_equal(x, y) for x, y in zip(gm_shape(u.result.type), shape)) for u in users)
    return users if same else []


def _op_pieces(op: Operation, pieces: dict, sizes: SizeVars) -> list:
    a = op.attributes
    if op.name == "hfusion.fill":
        shape = gm_shape(op.result.type)
        rank = len(shape)
        return [Piece([as_expr(0)] * rank, shape, Source(None, [-1] * rank, [1] * rank, [], a["value"]))]
    if op.name == "hfusion.concat":
        dim, out, at = a["dim"], [], as_expr(0)
        for v in op.operands:
            for p in pieces[v]:
                off = list(p.off)
                off[dim] = as_expr(off[dim] + at)
                out.append(Piece(off, list(p.size), p.src))
            at = at + as_expr(v.type.shape[dim])
        return out
    src = pieces[op.operands[0]]
    if op.name == "hfusion.reshape":
        walks = reshape_pieces(src, gm_shape(op.operands[0].type), gm_shape(op.result.type), sizes)
        return [Piece(off, size, replace(p.src, dims=dims, steps=steps))
                for p, (off, size, dims, steps) in zip(src, walks)]
    if op.name == "hfusion.transpose":
        perm = a["perm"]
        return [Piece([p.off[k] for k in perm], [p.size[k] for k in perm],
                      replace(p.src, dims=[p.src.dims[k] for k in perm], steps=[p.src.steps[k] for k in perm]))
                for p in src]
    if len(src) != 1:
        raise Unsupported(op.name, "slices a value made of several pieces (a concat)")
    s = src[0].src
    dims, steps, offsets = list(s.dims), list(s.steps), list(s.offsets)
    for k, (o, st) in enumerate(zip(a["offsets"], a["strides"])):
        if not as_expr(st).is_Integer:
            raise Unsupported(op.name, f"stride {st} is not a constant")
        if s.arg is not None and dims[k] != -1:
            offsets[dims[k]] = as_expr(offsets[dims[k]] + as_expr(o) * steps[k])
        steps[k] *= int(st)
    return [Piece([as_expr(0)] * len(a["sizes"]), [as_expr(x) for x in a["sizes"]],
                  replace(s, dims=dims, steps=steps, offsets=offsets))]


# -- the schedule ----------------------------------------------------------------------------------------------------


PERMUTE_DTYPES = ("f16", "bf16", "i16", "f32", "i32")  # what vgather moves (ASCENDC Gather on A2: b16 and b32)
GATHER_LANES = 128  # elements of the widest vgather repeat (256 B of b16): the offsets one repeat reads


def piece_kind(p: Piece, tile: list[int] | None = None) -> str:
    """How a piece moves in tiles ``tile`` (None: any tile; ``rows`` and ``blocks`` do not depend on it):

    - ``rows``: its innermost dim is contiguous in the argument (or it is a fill): one DMA burst per row;
    - ``blocks``: 2-byte elements whose last two dims are swapped relative to the argument (the innermost source
      dim is the piece's dim -2): rows of the source are loaded (32-B bursts of 16 elements), ``hivm.vtranspose``
      turns them in UB 16×16 at a time, rows of the result are stored;
    - ``permute``: another permutation (or 4-byte elements) of 2- or 4-byte elements, one of whose dims walks the
      argument's innermost dim with step 1: the box is loaded in the source's dim order (:func:`permute_order`,
      rows contiguous in GM), ``hivm.vpermute`` gathers it into the result's rows by a table of source offsets
      (``hivm.vindex``, built once per kernel), rows are stored. Unless the tile is one result row whose source
      runs are shorter than 32 B: gathered, that row is one DMA each way paying a 32-B granule per element, as the
      permute's load would, and the permute's vector pass only delays it;
    - ``gather``: anything else (a strided or selected column, 1- or 8-byte elements): one element per DMA burst
      and per 32-B block in UB.
    """
    src = p.src
    if src.arg is None or src.contiguous():
        return "rows"
    gm_rank, rank, dtype = len(src.shape), len(src.dims), src.arg.type.dtype
    if (DTYPE_BYTES[dtype] == 2 and rank >= 2 and src.dims[-2] == gm_rank - 1 and src.steps[-2] == 1
            and src.dims[-1] != -1):
        return "blocks"
    inner = _innermost(p)
    if dtype in PERMUTE_DTYPES and inner is not None and (tile is None or tile[inner] * DTYPE_BYTES[dtype] >= BLOCK
                                                          or math.prod(tile[:-1]) > 1):
        return "permute"
    return "gather"


def _innermost(p: Piece) -> int | None:
    """The piece dim that walks its argument's innermost dim with step 1 (None: no such dim)."""
    last = len(p.src.shape) - 1
    return next((k for k, (g, st) in enumerate(zip(p.src.dims, p.src.steps)) if g == last and st == 1), None)


def permute_order(p: Piece) -> list[int]:
    """The piece's dims in the order its argument holds them (by GM dim, then by falling step; the dim walking the
    innermost GM dim with step 1 last): a ``permute`` piece is loaded into a buffer of this dim order, whose rows
    are contiguous in GM."""
    inner = _innermost(p)
    rest = sorted((k for k in range(len(p.src.dims)) if k != inner), key=lambda k: (p.src.dims[k], -p.src.steps[k]))
    return rest + [inner]


def batch_dims(p: Piece) -> int:
    """The leading dims a ``permute`` piece keeps in place (``permute_order`` starts ``0, 1, …``): its offset table
    covers the dims after them, and the gather walks them with the buffers' strides."""
    order = permute_order(p)
    return next(k for k in range(len(order)) if order[k] != k)


def buffer_shapes(info: MovementInfo, r: int, tile: list[int]) -> dict:
    """Local buffers of result ``r`` for ``tile``: ``rows`` (row pieces, fills and the permuted results; last dim
    padded to 32 B), ``gather`` (one element per 32-B block: a trailing dim of 32 / es elements), ``tsrc``/``tdst``
    (a block transpose's source rows ``[..., T', 16]`` and result rows ``[..., 16, T']``, T' the last tile rounded to
    16; the tile of dim -2 is at most 16), ``psrc<i>`` (piece i of kind ``permute`` as its argument holds it, in
    :func:`permute_order`, last dim padded), ``ptable<i>`` (its i32 source offsets, ``rows``' shape without the
    piece's :func:`batch_dims`, with rows added to its first dim for the offsets a last partial gather repeat reads;
    one copy) and
    ``scratch`` (``[bytes]``: the blocks vtranspose writes before they are copied into ``tdst``'s rows)."""
    g = max(1, BLOCK // DTYPE_BYTES[info.results[r].type.dtype])
    pad = lambda n: align_up(n, g)  # noqa: E731
    kinds = {piece_kind(p, tile) for p in info.pieces[r]}
    out, scratch = {}, 0
    if kinds & {"rows", "permute"}:
        out["rows"] = list(tile[:-1]) + [pad(tile[-1])]
    if "gather" in kinds:
        out["gather"] = list(tile) + [g]
    if "blocks" in kinds:
        n = TRANSPOSE_BLOCK
        cols = align_up(tile[-1], n)
        out["tsrc"] = list(tile[:-2]) + [cols, n]
        out["tdst"] = list(tile[:-2]) + [n, cols]
        scratch = transpose_scratch_bytes(cols)
    for i, p in enumerate(info.pieces[r]):
        if piece_kind(p, tile) == "permute":
            order = permute_order(p)
            out[f"psrc{i}"] = [tile[k] for k in order[:-1]] + [pad(tile[order[-1]])]
            m = batch_dims(p)  # the table: the dims after them, + rows covering one more gather repeat
            inner = math.prod(out["rows"][m + 1:])
            out[f"ptable{i}"] = [out["rows"][m] + ceil_div(GATHER_LANES, inner)] + out["rows"][m + 1:]
    if scratch:
        out["scratch"] = [scratch]
    return out


def result_bytes(info: MovementInfo, r: int, tile: list[int], multi_buffer: int) -> int:
    """UB bytes of result ``r``'s buffers (32-B aligned) × the multi-buffer depth (the scratch and the offset tables:
    one copy)."""
    total = 0
    for kind, shape in buffer_shapes(info, r, tile).items():
        nbytes = math.prod(shape) * DTYPE_BYTES[buffer_dtype(info, r, kind)]
        total += align_up(nbytes, BLOCK) * (1 if kind == "scratch" or kind.startswith("ptable") else multi_buffer)
    return total


def buffer_dtype(info: MovementInfo, r: int, kind: str) -> str:
    """The element type of result ``r``'s buffer ``kind`` (bools move as the bytes GM holds)."""
    if kind == "scratch":
        return "i8"
    if kind.startswith("ptable"):
        return "i32"
    dtype = info.results[r].type.dtype
    return "i8" if dtype == "i1" else dtype


def ub_bytes(info: MovementInfo, tiles: list, multi_buffer: int) -> int:
    return sum(result_bytes(info, r, t, multi_buffer) for r, t in enumerate(tiles))


def choose_tiles(info: MovementInfo, sizes: SizeVars, ub_capacity: int, cores: int, multi_buffer: int,
                 max_tile_elems: int = 0) -> list[list[int]]:
    """Per result, the tile of its dims: the inner dims from the innermost outwards as large as the result's share
    of UB allows, dim 0 a multiple of the whole-block row step; then static dims are shrunk until the work items
    (:mod:`.movement_split`) fill the cores. A dim along which a ``permute`` piece's source rows run starts at a
    32-B run of elements (before the others grow), and a new tile of it is a multiple of the run too, unless whole
    runs give too few work items to feed every core (then parallelism wins: a small transpose is latency-bound)."""
    share = ub_capacity // max(1, len(info.results))
    tiles = []
    for r, shape in enumerate(info.shapes):
        rank = len(shape)
        uppers = _uppers(shape, sizes)
        es = DTYPE_BYTES[info.results[r].type.dtype]

        def fits(t):
            if max_tile_elems > 0 and math.prod(t) > max_tile_elems:
                return False
            return result_bytes(info, r, t, multi_buffer) <= share

        g = max(1, BLOCK // es)
        blocks = any(piece_kind(p) == "blocks" for p in info.pieces[r])
        runs = {_innermost(p) for p in info.pieces[r] if piece_kind(p) == "permute"}  # source rows of permutes
        tile = [min(uppers[d], g) if d in runs else 1 for d in range(rank)]  # whole 32-B runs of them first
        for d in reversed(range(rank)):
            lo, hi = tile[d], uppers[d] if not (blocks and d == rank - 2) else min(uppers[d], TRANSPOSE_BLOCK)
            if not fits(tile):
                raise Unsupported(info.func.sym_name, f"no tile of result {r} fits UB ({share} B)")
            while lo < hi:
                mid = (lo + hi + 1) // 2
                lo, hi = (mid, hi) if fits(with_size(tile, d, mid)) else (lo, mid - 1)
            t = lo
            if d == rank - 1 and t < uppers[d] and rank > 1:
                t = max(t // g * g, min(t, g))
            tile[d] = t
        steps = [block_step(shape, es, d) for d in range(rank)]
        whole_runs = [math.lcm(s, g) if d in runs else s for d, s in enumerate(steps)]
        if tile[0] < uppers[0]:  # dim 0 is always split (its slabs are the whole result)
            step = whole_runs[0]
            if tile[0] >= step:
                tile[0] = tile[0] // step * step
            else:
                tile[0] = step
                while not fits(tile) and any(t > 1 for t in tile[1:]):
                    d = max(range(1, rank), key=lambda k: tile[k])
                    tile[d] = max(1, tile[d] // 2)
        spread_tile = spread(shape, es, tile, uppers, cores, whole_runs, fits)
        if runs and static_items(shape, es, spread_tile, uppers) < cores:
            broken = spread(shape, es, tile, uppers, cores, steps, fits)
            if static_items(shape, es, broken, uppers) > static_items(shape, es, spread_tile, uppers):
                spread_tile = broken
        tiles.append(spread_tile)
    return tiles


def _uppers(shape: list, sizes: SizeVars) -> list[int]:
    """Upper bounds of a result's dims (2**31 for an unbounded one)."""
    uppers = [sizes.upper_bound(s) for s in shape]
    return [u if u is not None and u < 2**40 else 2**31 for u in uppers]


def tiling_params(info: MovementInfo, tiles: list, cores: int, sizes: SizeVars) -> dict:
    """The ``tiling`` attribute: every symbolic size the lowering uses (result dims, piece boxes, source offsets),
    the tile count of each work dim d of result r (``r{r}_tiles{d}``; the lowering splits exactly these dims), the
    work items per result (``r{r}_tiles``, their product) and ``block_dim``."""
    out: dict = {}

    def add(name, e):
        e = as_expr(e)
        if not e.is_Integer and all(e != v for v in out.values()):  # one parameter per distinct expression
            out[name] = e

    counts, checks = [], []
    for r, shape in enumerate(info.shapes):
        for d, n in enumerate(shape):
            add(f"r{r}_n{d}", n)
        for i, p in enumerate(info.pieces[r]):
            for d, (o, s) in enumerate(zip(p.off, p.size)):
                add(f"r{r}_p{i}_off{d}", o)
                add(f"r{r}_p{i}_len{d}", s)
                add(f"r{r}_p{i}_end{d}", as_expr(o) + as_expr(s))
            for g, o in enumerate(p.src.offsets):
                add(f"r{r}_p{i}_src{g}", o)
        es, uppers = DTYPE_BYTES[info.results[r].type.dtype], _uppers(shape, sizes)
        dims, need = launch_work_dims(shape, es, tiles[r], uppers)
        checks += need
        steps = launch_steps(shape, es, tiles[r], uppers, dims, cores)
        for d in dims:
            if d in steps:
                out[f"r{r}_step{d}"] = steps[d]
            out[f"r{r}_tiles{d}"] = sympy.ceiling(as_expr(shape[d]) / steps.get(d, tiles[r][d]))
        count = sympy.Mul(*[as_expr(out[f"r{r}_tiles{d}"]) for d in dims])
        counts.append(count)
        out[f"r{r}_tiles"] = _norm(count)
    out["block_dim"] = _norm(sympy.Min(cores, sympy.Max(*counts)) if len(counts) > 1 else sympy.Min(cores, counts[0]))
    if checks:  # every core when the launch's sizes keep the work dims' writes whole blocks apart, else one
        out["block_dim"] = _norm(launch_block_dim(out["block_dim"], checks, BLOCK))
    return {k: _norm(v) for k, v in out.items()}


def _norm(e):
    e = as_expr(e)
    return int(e) if e.is_Integer else e
