"""The schedule of a cube kernel: which matmul it computes, its tile, K steps and buffers (docs/cube.md).

A SINGLE_CUBE kernel's body is one ``hfusion.matmul`` / ``hfusion.batch_matmul`` of two kernel arguments. The
output is cut into ``base_m`` × ``base_n`` tiles, one L0C accumulator each; a core takes tiles cyclically (tile
``t`` = ``block_idx``, ``+ block_dim``, …). Per tile the K dim is walked in L1 steps of ``l1_k`` (one GM → L1 box
of each operand, double-buffered so the next box loads while the cube works) and, inside, L0 steps of ``base_k``
(MTE1 loads of L0A/L0B windows, double-buffered, and one ``mmad``); the accumulator drains through FixPipe.

The tile is chosen by an estimate of the kernel's time (as tuned GEMM libraries choose tiles by wave count):
``waves × max(cube, MTE2, MTE1, FixPipe cycles of one tile)``, with ``waves = ceil(tiles / cube cores)``, bounded
below by the chip's DDR bandwidth over the bytes every tile reads; the capacities and alignments come from the
target (L1, L0A, L0B, L0C; fractals of 16 × k0, k0 = 32 B / element).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy

from ..dialects.hivm_cube import ACCUMULATOR, CUBE_INPUT_DTYPES
from ..dialects.schedule_attrs import CubeBufferDecl, CubeSchedule
from ..intmath import align_up, ceil_div

round_up = align_up
from ..ir.core import Operation
from ..ir.sizes import SizeVars, as_expr
from .kernel_info import Unsupported

ITEMSIZE = {"f16": 2, "bf16": 2, "f32": 4}
FRACTAL = 16  # rows of a fractal (m0 = n0 = 16)
TILE_SIDES = (16, 32, 64, 96, 128, 192, 256)
K_STEPS = (32, 64, 128, 256, 512)
GM_LINE = 512  # bytes of a GM line (the L2's fill unit; HARDWARE.md: GM addresses aligned to 512 B run fastest)
ASSUMED_ROWS = 4096  # rows assumed for a symbolic M with no upper bound when estimating (large: full tiles)


@dataclass(frozen=True)
class CubeKernel:
    """What a cube kernel computes: ``out[b] = op(a[b]) @ op(b[b])`` over args ``a``, ``b`` → arg ``out``."""

    func: Operation
    op: Operation
    a: int  # argument positions
    b: int
    out: int
    batch: object  # size expression (1 for hfusion.matmul)
    m: object
    n: object
    k: object
    dtype: str  # operand element type
    out_dtype: str
    transpose_a: bool
    transpose_b: bool
    batched_a: bool  # the operand has a batch dim (else one matrix for every batch)
    batched_b: bool
    k_chunk: int = 0  # split-K partial products: batch s multiplies the chunk [s·k_chunk, (s+1)·k_chunk) of K
    pad_n: int = 0  # the result has n + pad_n columns, the last pad_n of them zeros (hfusion-pad-matmul-output)

    @property
    def n_out(self):
        """Columns of the result: ``n``, or ``n + pad_n`` for a padded product."""
        return as_expr(self.n) + self.pad_n

    @property
    def chunk_k(self):
        """K of one product: the chunk's for split-K partial products, else the whole contraction."""
        return self.k_chunk or self.k

    @property
    def k0(self) -> int:
        return 32 // ITEMSIZE[self.dtype]


def analyze_cube_kernel(func: Operation) -> CubeKernel:
    """The matmul of a SINGLE_CUBE kernel, or :class:`Unsupported` naming what else its body holds."""
    body = func.body
    ops = [op for op in body.ops if op.name != "func.return"]
    if len(ops) != 1 or ops[0].name not in ("hfusion.matmul", "hfusion.batch_matmul"):
        names = ", ".join(op.name for op in ops)
        raise Unsupported(ops[0].name if ops else "func.func", f"a cube kernel is one matmul, this one holds {names}")
    op = ops[0]
    if len(op.operands) != 2:
        raise Unsupported(op.name, "an accumulating matmul (init) is not a cube kernel: run hivm-normalize-matmul")
    ret = body.ops[-1]
    args = list(body.args)
    for v in op.operands:
        if v not in args:
            raise Unsupported(op.name, "an operand is computed inside the kernel (a prologue): not a kernel argument")
    if len(ret.operands) != 1 or ret.operands[0] is not op.result:
        raise Unsupported(op.name, "the kernel must return the product itself")
    outs = list(func.attributes.get("output_args") or [])
    if len(outs) != 1:
        raise Unsupported(op.name, f"a cube kernel has one output, got {len(outs)}")
    a, b = op.operands
    ta, tb = bool(op.attributes.get("transpose_a")), bool(op.attributes.get("transpose_b"))
    at, bt, ot = a.type, b.type, op.result.type
    dtype = at.dtype
    if dtype not in CUBE_INPUT_DTYPES or bt.dtype != dtype:
        raise Unsupported(op.name, f"cube operands are {', '.join(CUBE_INPUT_DTYPES)} of one type, got "
                                   f"{at.dtype} @ {bt.dtype}")
    if ot.dtype not in (dtype, ACCUMULATOR[dtype]):
        raise Unsupported(op.name, f"a {dtype} product gives {dtype} or {ACCUMULATOR[dtype]}, not {ot.dtype}")
    m, k = (at.shape[-1], at.shape[-2]) if ta else (at.shape[-2], at.shape[-1])
    n = bt.shape[-2] if tb else bt.shape[-1]
    batched = op.name == "hfusion.batch_matmul"
    return CubeKernel(func, op, args.index(a), args.index(b), outs[0], ot.shape[0] if batched else 1,
                      m, n, k, dtype, ot.dtype, ta, tb, batched and at.rank == 3, batched and bt.rank == 3,
                      op.attributes.get("k_chunk") or 0, op.attributes.get("pad_n") or 0)


@dataclass(frozen=True)
class CubeTile:
    base_m: int
    base_n: int
    base_k: int
    l1_k: int
    cycles: float  # the estimate
    waves: int
    work_item: str
    acc_parts: int = 1
    tail_strips: int = 1


def work_item(ck: CubeKernel) -> str:
    """What one core takes at a time so that no two cores write one 32-B block of the output (the DMA unit the
    hazard checker tracks): one tile when output rows are whole blocks (tile columns start on 16-element
    boundaries), else a band of rows (band starts are ``base_m``·rows apart, whole blocks since ``base_m`` is a
    multiple of 16), else — batches not whole blocks either — a group of batches that is (:func:`batch_group`)."""
    es = ITEMSIZE[ck.out_dtype]
    if _aligned(ck.n_out * es):
        return "tile"
    if as_expr(ck.batch) == 1 or _aligned(as_expr(ck.m) * ck.n_out * es):
        return "band"
    return "batch"


def batch_group(ck: CubeKernel):
    """Batches a "batch" work item holds: the fewest whose output is whole 32-B blocks (``32 / gcd(m·n·es, 32)``),
    or every batch (one work item) when the batch's size is known only at launch."""
    nbytes = as_expr(ck.m) * ck.n_out * ITEMSIZE[ck.out_dtype]
    if not nbytes.is_Integer:
        return as_expr(ck.batch)
    return 32 // math.gcd(int(nbytes), 32)


def _aligned(nbytes) -> bool:
    nbytes = as_expr(nbytes)
    return nbytes.is_Integer and int(nbytes) % 32 == 0


def _static(e, sizes: SizeVars, assumed: int) -> int:
    e = as_expr(e)
    if e.is_Integer:
        return int(e)
    hi = sizes.upper_bound(e)
    return int(hi) if hi is not None else assumed


@dataclass(frozen=True)
class _Problem:
    """What the tile estimate reads of one cube kernel: its sizes (a symbolic one at its bound), element sizes, work
    item and batch group, and the target."""

    B: int
    M: int
    N: int
    K: int
    es: int
    k0: int
    out_es: int
    frac_cycles: int  # cube cycles per 16 x k0 x 16 fractal of the operand dtype
    item: str
    group: int
    target: object
    lines: bool = False  # charge MTE2 whole GM lines for narrow box rows (split-K's decision: :func:`box_bytes`)
    transpose_a: bool = False
    transpose_b: bool = False


def choose_cube_tile(ck: CubeKernel, sizes: SizeVars, target) -> CubeTile:
    """The tile of least estimated time that fits L1, L0A, L0B and L0C with ping-pong at L1 and L0."""
    B = _static(ck.batch, sizes, 1)
    item = work_item(ck)
    group = min(B, _static(batch_group(ck), sizes, B)) if item == "batch" else 1
    p = _Problem(B, _static(ck.m, sizes, ASSUMED_ROWS), _static(ck.n, sizes, ASSUMED_ROWS),
                 _static(ck.chunk_k, sizes, ASSUMED_ROWS), ITEMSIZE[ck.dtype], ck.k0, ITEMSIZE[ck.out_dtype],
                 target.cube_cycles_per_fractal(ck.dtype), item, group, target)
    best = best_tile(p)
    if best is None:
        raise Unsupported(ck.op.name, f"no cube tile fits L0A {target.l0a_bytes} B / L0B {target.l0b_bytes} B / "
                                      f"L0C {target.l0c_bytes} B / L1 {target.l1_bytes} B for {ck.dtype}")
    return best


def estimate_product(B: int, M: int, N: int, K: int, dtype: str, out_dtype: str, target, *, k_total: int = 0,
                     transpose_a: bool = False, transpose_b: bool = False) -> CubeTile | None:
    """The best tile (and its estimate) of a static product of ``B`` unbatched-operand products ``M × K × N`` (the
    split-K partial products' kernel when ``B`` > 1: ``K`` a chunk of ``k_total``), its work item as
    :func:`work_item` would choose it; MTE2 charged in whole GM lines (:func:`box_bytes`)."""
    out_es = ITEMSIZE[out_dtype]
    item = "tile" if N * out_es % 32 == 0 else ("band" if B == 1 or M * N * out_es % 32 == 0 else "batch")
    group = min(B, 32 // math.gcd(M * N * out_es, 32)) if item == "batch" else 1
    es = ITEMSIZE[dtype]
    return best_tile(_Problem(B, M, N, K, es, 32 // es, out_es, target.cube_cycles_per_fractal(dtype), item, group,
                              target, True, transpose_a, transpose_b), k_total or K)


def best_tile(p: "_Problem", k_pitch: int = 0) -> CubeTile | None:
    """The candidate of least estimate (ties: :func:`_tie_rank`), None when no tile fits; ``k_pitch``: the operands'
    K when it is not ``p.K`` (split-K chunks)."""
    best = None
    for bm, bn, base_k, l1_k, parts in _candidates(p.M, p.N, round_up(p.K, p.k0), p.es, p.target):
        cand = _estimate(p, bm, bn, base_k, l1_k, parts, k_pitch or p.K)
        if best is None or cand.cycles < best.cycles * 0.999 or (
                cand.cycles <= best.cycles * 1.001 and _tie_rank(cand) > _tie_rank(best)):
            best = cand
    return best


def _tie_rank(t: CubeTile) -> tuple:
    """Among tiles of one estimate: the larger tile (fewer drains, more reuse), then the deeper L0 step (fewer
    instructions and flags a tile), then the deeper L1 step (fewer DMAs)."""
    return t.base_m * t.base_n, t.base_k, t.l1_k


def _candidates(M: int, N: int, Kp: int, es: int, target):
    """(base_m, base_n, base_k, l1_k, acc_parts) that fit L0C, L0A and L0B (two copies of each operand window)
    and L1 (two boxes of each operand)."""
    for bm in _sides(M):
        for bn in _sides(N):
            if bm * bn * 4 > target.l0c_bytes:
                continue
            for base_k in sorted({min(k, Kp) for k in K_STEPS}):
                if 2 * bm * base_k * es > target.l0a_bytes:
                    continue
                for l1_k in sorted({min(round_up(k, base_k), round_up(Kp, base_k)) for k in K_STEPS}):
                    if 2 * (bm + bn) * l1_k * es > target.l1_bytes:
                        continue
                    for parts in acc_parts(bn):
                        if 2 * base_k * bn // parts * es <= target.l0b_bytes:
                            yield bm, bn, base_k, l1_k, parts


def _sides(extent: int) -> list[int]:
    """Tile sides worth trying along a dim of ``extent``: the standard ones up to it, and the dim itself rounded up
    to a fractal when that is smaller than the largest (one tile covers it)."""
    whole = round_up(extent, FRACTAL)
    return sorted({s for s in TILE_SIDES if s <= whole} | ({whole} if whole <= TILE_SIDES[-1] else set()))


def _estimate(p: _Problem, bm: int, bn: int, base_k: int, l1_k: int, parts: int, k_pitch: int) -> CubeTile:
    """Waves × work-item time, bounded below by the chip's DDR bandwidth over the bytes the kernel moves; the last
    wave of a "tile" kernel whose tiles are all whole may be cut into column strips (:func:`_tail_strips`)."""
    B, M, N, K, es, t = p.B, p.M, p.N, p.K, p.es, p.target
    cores = t.aic_cores
    per_item = {"tile": 1, "band": ceil_div(N, bn), "batch": p.group * ceil_div(M, bm) * ceil_div(N, bn)}[p.item]
    items = ceil_div(B * ceil_div(M, bm) * ceil_div(N, bn), per_item)
    waves = ceil_div(items, cores)
    em, en = min(bm, M), min(bn, N)

    def tile_time(width: int) -> float:
        """A tile's time: its busiest pipe (cube, MTE2 at the core's GM port plus the per-DMA fixed cost, MTE1)
        plus the FixPipe drain the cube waits for: with the accumulator in two column parts, a part's drain
        overlaps the other part's last L1 step (and the next tile's first), so only what exceeds that step is
        exposed; with one part the whole drain is."""
        cube = ceil_div(em, FRACTAL) * ceil_div(K, p.k0) * ceil_div(width, FRACTAL) * p.frac_cycles
        l1_steps = ceil_div(K, l1_k)
        if p.lines:
            step = min(l1_k, K)
            a_box = box_bytes(step, em * es, M * es) if p.transpose_a else box_bytes(em, step * es, k_pitch * es)
            b_box = box_bytes(width, step * es, k_pitch * es) if p.transpose_b else box_bytes(step, width * es, N * es)
            moved = (a_box + b_box) * K / step
        else:
            moved = (em + width) * K * es
        mte2 = moved / t.gm_port_read_bytes_per_cycle + l1_steps * 2 * t.dma_fixed_gm_to_l1_cycles
        mte1 = ceil_div(K, base_k) * (parts * round_up(em, FRACTAL) * base_k * es / t.l1_to_l0a_bytes_per_cycle
                                      + base_k * round_up(width, FRACTAL) * es / t.l1_to_l0b_bytes_per_cycle)
        n_parts = min(parts, ceil_div(width, bn // parts))
        drain = em * min(width, bn // parts) * p.out_es / t.l0c_to_gm_bytes_per_cycle + t.dma_fixed_l0c_to_gm_cycles
        exposed = drain if n_parts == 1 else n_parts * max(0.0, drain - cube / l1_steps / n_parts)
        return max(cube, mte2, mte1, n_parts * drain) + exposed

    per_tile = tile_time(en)
    strips = _tail_strips(items, cores, bn) if p.item == "tile" and B == 1 and N % bn == 0 else 1
    widest = ceil_div(bn // FRACTAL, strips) * FRACTAL  # strips are whole fractals, the widest has this many columns
    if strips > 1 and tile_time(widest) < per_tile:
        body = (waves - 1) * per_tile + tile_time(widest)
    else:
        strips, body = 1, waves * per_item * per_tile
    unique = (B * M * K + B * K * N + B * M * N) * es
    cycles = max(body, unique / t.ddr_bytes_per_cycle)
    return CubeTile(bm, bn, base_k, l1_k, cycles, waves, p.item, parts, strips)


def box_bytes(rows: int, row_bytes: int, pitch: int) -> int:
    """GM bytes an operand box of ``rows`` rows of ``row_bytes``, ``pitch`` bytes apart, costs at a core's port: the
    simulator's L2 fills whole 512-B lines (HARDWARE.md: 512-B aligned GM runs fastest) and a core reading a line
    another core is filling waits for that fill, so a box costs the lines it touches — its rows rounded up to lines
    when they are a line or more apart, else the span they cover."""
    if pitch < GM_LINE:
        return align_up((rows - 1) * pitch + row_bytes, GM_LINE)
    return rows * align_up(row_bytes, GM_LINE)


def _tail_strips(items: int, cores: int, bn: int) -> int:
    """Column strips each tile of a last, partial wave is cut into so that its strips occupy as many cores as they
    can (strips of whole fractals: at most ``bn / 16``); 1 when the last wave is full."""
    tail = items % cores
    if items < cores or tail == 0:
        return 1
    return max(1, min(cores // tail, bn // FRACTAL))


def acc_parts(base_n: int) -> tuple[int, ...]:
    """Column parts the accumulator may be cut into: one, or two when each is whole fractals (one drains while
    the other is computed, at the price of a drain's fixed cost more a tile)."""
    return (1, 2) if base_n % (2 * FRACTAL) == 0 else (1,)


def cube_buffers(ck: CubeKernel, tile: CubeTile) -> tuple[CubeBufferDecl, ...]:
    """L1 boxes in the operands' GM orientation (a transposed operand is transposed by the MTE1 load), L0
    windows, the accumulator parts; two copies of every operand buffer (ping-pong), one accumulator buffer per
    part (``acc_parts`` copies of ``base_m`` × ``base_n / acc_parts``)."""
    bm, bn, bk, l1k, dt = tile.base_m, tile.base_n, tile.base_k, tile.l1_k, ck.dtype
    a_l1 = (l1k, bm) if ck.transpose_a else (bm, l1k)
    b_l1 = (bn, l1k) if ck.transpose_b else (l1k, bn)
    part = bn // tile.acc_parts
    return (CubeBufferDecl("a_l1", "l1", dt, a_l1, 2), CubeBufferDecl("b_l1", "l1", dt, b_l1, 2),
            CubeBufferDecl("a_l0", "l0a", dt, (bm, bk), 2), CubeBufferDecl("b_l0", "l0b", dt, (bk, part), 2),
            CubeBufferDecl("c_l0", "l0c", ACCUMULATOR[dt], (bm, part), tile.acc_parts))


def cube_schedule(ck: CubeKernel, tile: CubeTile, static_shape: bool) -> CubeSchedule:
    return CubeSchedule("SINGLE_CUBE", tile.base_m, tile.base_n, tile.base_k, tile.l1_k, tile.work_item,
                        tile.acc_parts, tile.tail_strips if static_shape else 1, tile.waves if static_shape else 0,
                        cube_buffers(ck, tile), ck.k_chunk)


def cube_tiling(ck: CubeKernel, schedule: CubeSchedule, cores: int) -> dict:
    """The host tiling function: the sizes, tile counts and the block dim, as size expressions."""
    def norm(e):
        e = sympy.simplify(as_expr(e))
        return int(e) if e.is_Integer else e

    m_tiles = sympy.ceiling(as_expr(ck.m) / schedule.base_m)
    n_tiles = sympy.ceiling(as_expr(ck.n) / schedule.base_n)
    out = {"m": norm(ck.m), "n": norm(ck.n), "k": norm(ck.k), "m_tiles": norm(m_tiles), "n_tiles": norm(n_tiles)}
    if ck.k_chunk:
        out["k_chunk"] = ck.k_chunk
    if ck.pad_n:  # the result's columns (the fixpipe of the last column tile writes the zero columns too)
        out["n_out"] = norm(ck.n_out)
    if schedule.work_item == "batch":
        group = batch_group(ck)
        items = sympy.ceiling(as_expr(ck.batch) / group)
        out["batch"], out["batch_group"] = norm(ck.batch), norm(group)
    else:
        items = as_expr(ck.batch) * (m_tiles * n_tiles if schedule.work_item == "tile" else m_tiles)
    if schedule.tail_strips > 1:  # static: the last wave's tiles, each cut into strips
        full = int(items) // cores * cores
        out["full_items"] = full
        items = full + (int(items) - full) * schedule.tail_strips
    out["items"], out["block_dim"] = norm(items), norm(sympy.Min(cores, items))
    return out


def is_static_kernel(ck: CubeKernel) -> bool:
    return all(as_expr(e).is_Integer for e in (ck.batch, ck.m, ck.n, ck.k))

