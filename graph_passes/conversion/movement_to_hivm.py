"""Lower one scheduled data-movement kernel (transposes, strided slices, concats) to a HIVM function.

The schedule (:mod:`graph_passes.schedule.movement`) gives each result a tile and its pieces, the tiling the tile
count of each work dim (``r{r}_tiles{d}``, :mod:`graph_passes.schedule.movement_split`); per result, per work item
(a tile along every work dim, flattened, cyclic over the cores), per piece meeting it, per tile of the other dims::

    for t in range(block_idx, tiles_r, block_dim):
        (i_d …) = t unflattened over the work dims (the innermost fastest)
        lo_d = i_d·T_d;  hi_d = min(lo_d + T_d, N_d)
        for each piece p (box off/size in the result, source view of an argument or a constant):
            for s_d in range(max(lo_d, off_d), min(hi_d, off_d + size_d), T_d):  # work dims: 0 or 1 trip
                for j_d in range(0, size_d, T_d):                               # the other dims
                    hivm.load  arg → buf  at src.off + (s - off, j…)·steps along src.dims   (or hivm.vfill buf)
                    hivm.store buf → out  at (s…, off_d + j_d …)

A piece spanning a work dim needs no loop there (its rows are the work item's); an extent is a constant when every
tile of its dim is whole (codegen drops a dim of extent 1 and merges whole dims into longer bursts).

A piece whose innermost dim is contiguous in its argument uses a row buffer (``memref<T0x…xT'>``, last dim padded
to 32 B); a 2-byte piece whose last two dims are the argument's swapped loads source rows into ``[…, T', 16]``,
``hivm.vtranspose``-s them into ``[…, 16, T']`` and stores rows; another permutation of 2- or 4-byte elements
loads the box in its argument's dim order (``psrc<i>``, contiguous rows), ``hivm.vpermute``-s it into the row
buffer by a table of source offsets (``hivm.vindex`` into ``ptable<i>``, once, before the work loop) and stores
rows; the others use a buffer with one element per 32-B block (a
trailing dim of 32 / es elements of which only the first is used): codegen moves them one element per DMA burst
(docs/codegen.md).
"""

from __future__ import annotations

import math

from ..dialects import hivm
from ..dialects.func import FuncOp, ReturnOp
from ..ir.sizes import as_expr
from ..ir.types import DTYPE_BYTES, IndexType, MemRefType, TensorType
from ..dialects.schedule_attrs import MovementSchedule
from ..schedule.movement import (MovementInfo, batch_dims, buffer_dtype, buffer_shapes, gm_shape, permute_order,
                                 piece_kind)
from .hfusion_to_hivm import KernelLowering


class MovementLowering(KernelLowering):
    """Builds the HIVM function of a movement kernel (shares the index and loop helpers of the vector lowering)."""

    def __init__(self, info: MovementInfo, schedule: MovementSchedule, tiling: dict):
        self.info = info
        self.tiles = [list(t) for t in schedule.tiles]
        self.tiling = tiling
        self.counts = {"loads": 0, "stores": 0, "vector-ops": 0}

    def build(self) -> FuncOp:
        info, func = self.info, self.info.func
        old_args = list(func.body.args)
        views = {p.src.arg: p.src.shape for ps in info.pieces for p in ps if p.src.arg is not None}
        views.update(zip(info.outputs, info.shapes))  # arguments and outputs may be viewed reshaped
        arg_types = [MemRefType(tuple(views.get(a, gm_shape(a.type))), a.type.dtype, "gm")
                     if isinstance(a.type, TensorType) else a.type for a in old_args]  # fmt: skip
        new = self.begin_function(old_args, arg_types)
        bid = self.op(hivm.GetBlockIdxOp, [], [IndexType()]).result
        bid.name_hint = "bid"
        bufs, scratch = [], 0
        for r, res in enumerate(info.results):
            shapes = buffer_shapes(info, r, self.tiles[r])
            scratch = max(scratch, math.prod(shapes.pop("scratch", [0])))
            with self.located(res):
                allocs = {kind: self.op(hivm.AllocOp, [], [MemRefType(tuple(shape), buffer_dtype(info, r, kind))]).result
                          for kind, shape in shapes.items()}  # fmt: skip
            for kind, v in allocs.items():
                v.name_hint = f"ub_{kind}{r}"
            bufs.append(allocs)
        if scratch:  # vtranspose's blocks before they are copied into rows (one for the kernel, planned like any)
            self.op(hivm.AllocOp, [], [MemRefType((scratch,), "i8")], scratch=True).result.name_hint = "scratch"
        for r, res in enumerate(info.results):
            with self.located(res):
                self.offset_tables(r, bufs[r])
        for r, res in enumerate(info.results):
            with self.located(res):
                self.result(r, bid, bufs[r])
        self.create(ReturnOp, [], [])
        new.set_function_type()
        return new

    def offset_tables(self, r: int, bufs: dict) -> None:
        """Before the work loop, once: per ``permute`` piece, the byte offset in its source buffer (its argument's dim
        order) of every element of the row buffer after the batch dims (``hivm.vindex``; the last dim's padding
        reads a valid element)."""
        es = DTYPE_BYTES[buffer_dtype(self.info, r, "rows")]
        for i, p in enumerate(self.info.pieces[r]):
            if piece_kind(p, self.tiles[r]) != "permute":
                continue
            order, src, m = permute_order(p), bufs[f"psrc{i}"].type.static_shape(), batch_dims(p)
            strides = [math.prod(src[j + 1:]) * es for j in range(len(src))]
            self.vec(hivm.VIndexOp, [bufs[f"ptable{i}"]],
                     strides=[strides[order.index(k)] for k in range(m, len(src))], clamp=self.tiles[r][-1])

    def result(self, r: int, bid, bufs: dict) -> None:
        """The work loop of result ``r``: work item t is one tile along each work dim (``r{r}_tiles{d}`` in the
        tiling, row-major over them: the innermost work dim varies fastest)."""
        info, tile, shape = self.info, self.tiles[r], self.info.shapes[r]
        loop = self.open_loop(bid, self.size(self.tiling[f"r{r}_tiles"]), self.params["block_dim"], "t")
        work = [d for d in range(len(shape)) if f"r{r}_tiles{d}" in self.tiling]
        bounds, rest = {}, loop.body.args[0]
        for k, d in enumerate(reversed(work)):  # the innermost work dim varies fastest
            count = self.size(self.tiling[f"r{r}_tiles{d}"])
            index = rest
            if k < len(work) - 1:
                index = self.arith("remsi", rest, count, f"i{d}")
                rest = self.arith("floordivsi", rest, count, f"i{work[-k - 2]}" if k == len(work) - 2 else None)
            # a dim stepped per launch (movement_split.launch_steps) steps by its tiling parameter, at most the tile
            step = self.params[f"r{r}_step{d}"] if f"r{r}_step{d}" in self.tiling else self.const(tile[d])
            lo = index if tile[d] == 1 else self.arith("muli", index, step, f"r{d}_lo")
            whole = _divides(tile[d], shape[d]) and all(_spans(p, d, shape) for p in info.pieces[r])
            bounds[d] = (lo, None if whole else  # a partial tile or piece: its rows end at the dim's end
                         self.arith("minsi", self.add(lo, step), self.size(shape[d]), f"r{d}_hi"))
        for i, p in enumerate(info.pieces[r]):
            with self.located(p.src.arg if p.src.arg is not None else info.results[r]):
                self.piece(r, i, p, bounds, bufs)
        self.close_loop(loop)

    def constant(self, v) -> int | None:
        return next((c for c, u in self.consts.items() if u is v), None)

    def add(self, a, b):
        """a + b, folded when either is the constant 0 or both are constants."""
        ca, cb = self.constant(a), self.constant(b)
        if ca is not None and cb is not None:
            return self.const(ca + cb)
        return b if ca == 0 else a if cb == 0 else self.arith("addi", a, b)

    def mul(self, a, k: int):
        ca = self.constant(a)
        return self.const(ca * k) if ca is not None else a if k == 1 else self.arith("muli", a, self.const(k))

    def piece(self, r: int, i: int, p, bounds: dict, bufs: dict) -> None:
        """Copy the part of piece ``p`` inside the work item: along a work dim d its rows ``bounds[d]`` (a loop of
        0 or 1 trips when the piece covers part of the dim), along the other dims tile by tile."""
        tile, shape, rank = self.tiles[r], self.info.shapes[r], len(self.info.shapes[r])
        index, extents, loops = [], [], []
        for d in range(rank):
            off, size, end = as_expr(p.off[d]), as_expr(p.size[d]), as_expr(p.off[d]) + as_expr(p.size[d])
            if d in bounds and _spans(p, d, shape):  # the piece spans the work item's rows
                lo, hi = bounds[d]
                index.append(lo)
                extents.append(self.const(tile[d]) if _divides(tile[d], shape[d]) else
                               self.arith("subi", hi, lo, f"len{d}"))
            elif d in bounds:
                lo, hi = bounds[d]
                lo = lo if _zero(off) else self.arith("maxsi", lo, self.size(off), f"lo{d}")
                hi = hi if end == as_expr(shape[d]) else self.arith("minsi", hi, self.size(end), f"hi{d}")
                loop = self.open_loop(lo, hi, self.const(tile[d]), f"s{d}")
                loops.append(loop)
                s = loop.body.args[0]
                index.append(self.arith("subi", s, self.size(off), f"i{d}") if not _zero(off) else s)
                extents.append(self.arith("subi", hi, s, f"len{d}"))
            elif size.is_Integer and int(size) <= tile[d]:
                index.append(self.const(0))
                extents.append(self.size(size))
            else:
                loop = self.open_loop(self.const(0), self.size(size), self.const(tile[d]), f"j{d}")
                loops.append(loop)
                j = loop.body.args[0]
                index.append(j)
                extents.append(self.const(tile[d]) if _divides(tile[d], size) else
                               self.arith("minsi", self.arith("subi", self.size(size), j), self.const(tile[d]),
                                          f"len{d}"))
        out_off = [self.add(self.size(p.off[d]), index[d]) for d in range(rank)]
        src, kind, out = p.src, piece_kind(p, tile), self.args[self.info.outputs[r]]
        if src.arg is None:
            self.vec(hivm.VFillOp, [bufs["rows"], *extents], value=src.value)
            self.store(bufs["rows"], out, out_off, extents)
        elif kind == "rows":
            self.load(p, index, bufs["rows"], extents, src.dims, src.steps)
            self.store(bufs["rows"], out, out_off, extents)
        elif kind == "gather":  # one element per 32-B block: a trailing local dim of extent 1 walking no GM dim
            one = [self.const(1)]
            self.load(p, index, bufs["gather"], extents + one, src.dims + [-1], src.steps + [1])
            self.store(bufs["gather"], out, out_off, extents + one, dims=list(range(rank)) + [-1])
        elif kind == "permute":  # the box as the argument holds it, permuted in UB, result rows out
            order = permute_order(p)
            src_buf = bufs[f"psrc{i}"]
            self.load(p, index, src_buf, [extents[k] for k in order], [src.dims[k] for k in order],
                      [src.steps[k] for k in order])
            self.vec(hivm.VPermuteOp, [src_buf, bufs[f"ptable{i}"], bufs["rows"], *extents])
            self.store(bufs["rows"], out, out_off, extents)
        else:  # blocks: source rows in, vtranspose, result rows out
            swap = list(range(rank - 2)) + [rank - 1, rank - 2]
            self.load(p, index, bufs["tsrc"], [extents[k] for k in swap], [src.dims[k] for k in swap],
                      [src.steps[k] for k in swap])
            self.vec(hivm.VTransposeOp, [bufs["tsrc"], bufs["tdst"], *extents], perm=swap)
            self.store(bufs["tdst"], out, out_off, extents)
        for loop in reversed(loops):
            self.close_loop(loop)

    def load(self, p, index, buf, extents, dims, steps) -> None:
        """Load ``p``'s source view at the piece-local ``index`` (one entry per piece dim) into ``buf``."""
        src, offsets = p.src, []
        for g, o in enumerate(src.offsets):
            off = self.size(o)
            for k, walked in enumerate(src.dims):  # a split dim walks its GM dim at two strides
                if walked == g:
                    off = self.add(off, self.mul(index[k], src.steps[k]))
            offsets.append(off)
        self.counts["loads"] += 1
        self.create(hivm.LoadOp, [self.args[src.arg], buf, *offsets, *extents], [], dims=list(dims),
                    steps=list(steps))

    def store(self, buf, out, offsets, extents, **attrs) -> None:
        self.counts["stores"] += 1
        self.create(hivm.StoreOp, [buf, out, *offsets, *extents], [], **attrs)


def _spans(p, d: int, shape: list) -> bool:
    """Piece ``p`` covers the whole of dim ``d``."""
    return _zero(p.off[d]) and as_expr(p.off[d]) + as_expr(p.size[d]) == as_expr(shape[d])


def _divides(t: int, n) -> bool:
    """Every tile of ``t`` along a dim of ``n`` is whole (``n`` a multiple of ``t``; any ``n`` when ``t`` is 1)."""
    n = as_expr(n)
    return t == 1 or (n.is_Integer and int(n) % t == 0)


def _zero(e) -> bool:
    e = as_expr(e)
    return e.is_Integer and int(e) == 0
