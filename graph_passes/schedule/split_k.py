"""Split-K: how many chunks of K a matmul with too few output tiles for the cube cores is cut into (docs/cube.md).

A product ``M × K × N`` whose best tiling leaves cube cores idle (64 × 64 × 16384: at most 16 tiles of 16 × 16, each
reading all of K) runs faster as ``S`` partial products over chunks of K — ``S`` times the work items, each reading
``K / S`` — written as f32 partials ``[S, M, N]`` and summed (and cast) by a vector kernel. The estimate of the split
counts what it adds: the partials' kernel (:func:`~graph_passes.schedule.cube.estimate_product`, f32 output), the
reduction kernel's bytes (the partials read, the result written) over the chip's DDR bandwidth or the vector cores'
GM ports, its per-DMA fixed costs and its launch. A split is made when that total is under ``MARGIN`` of the
unsplit kernel's estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..intmath import align_up, ceil_div
from .cube import ITEMSIZE, estimate_product

CHUNK_ALIGN = 64  # chunk lengths are whole multiples (32-B aligned K offsets for every operand dtype)
MIN_CHUNK = 256  # shorter chunks spend more in per-DMA and drain fixed costs than they save
SPLITS = (2, 3, 4, 6, 8, 12, 16, 24, 32, 48)  # chunk counts tried (divisors and multiples of the core counts)
MARGIN = 0.85  # the split's estimate must be under this fraction of the unsplit one (the estimates err by ~10%)


@dataclass(frozen=True)
class SplitK:
    chunks: int  # S, the partial products (the last chunk may be shorter)
    k_chunk: int  # K of one chunk
    cycles: float  # the split's estimate: partial products + reduction kernel + its launch
    unsplit_cycles: float  # the unsplit kernel's estimate
    reduce_cycles: float  # of which the reduction kernel (launch included)


def reduction_cycles(chunks: int, m: int, n: int, out_dtype: str, target) -> float:
    """Estimated cycles of the kernel summing ``chunks`` f32 partials of ``m × n`` into the ``out_dtype`` result: its
    launch, then its bytes over the busier of the chip's DDR and the vector cores' GM ports, each core's per-DMA
    fixed costs (one strided load of its columns of every partial, a store) and its vector adds (2 cycles a 256-B
    repeat)."""
    cores = target.vector_cores
    read, write = chunks * m * n * 4, m * n * ITEMSIZE[out_dtype]
    per_core = min(cores, ceil_div(m * n * 4, 32))  # a core takes at least a 32-B block of columns
    stream = max((read + write) / target.ddr_bytes_per_cycle,
                 read / per_core / target.gm_port_read_bytes_per_cycle + write / per_core / target.ub_to_gm_bytes_per_cycle)
    fixed = target.dma_fixed_gm_to_ub_cycles + target.dma_fixed_ub_to_gm_cycles  # a strided load, a store
    adds = ceil_div(read, target.vector_bytes_per_repeat * per_core) * target.repeat_cycles("binary")
    return target.launch_cycles + stream + fixed + adds


def choose_split_k(m: int, n: int, k: int, dtype: str, out_dtype: str, target, transpose_a: bool = False,
                   transpose_b: bool = False) -> SplitK | None:
    """The split of least estimate for a static ``m × k × n`` product of ``dtype`` operands giving ``out_dtype``,
    None when the unsplit kernel already fills the cube cores, K is too short to cut, or no split wins by
    ``MARGIN``."""
    if k < 2 * MIN_CHUNK:
        return None
    unsplit = estimate_product(1, m, n, k, dtype, out_dtype, target, transpose_a=transpose_a, transpose_b=transpose_b)
    if unsplit is None:
        return None
    items = ceil_div(m, unsplit.base_m) * ceil_div(n, unsplit.base_n)
    if items * unsplit.tail_strips >= target.aic_cores:
        return None
    best = None
    for s in SPLITS:
        chunk = max(MIN_CHUNK, align_up(ceil_div(k, s), CHUNK_ALIGN))
        chunks = ceil_div(k, chunk)
        if chunks < 2 or (best is not None and chunks == best.chunks):
            continue
        part = estimate_product(chunks, m, n, chunk, dtype, "f32", target, k_total=k, transpose_a=transpose_a,
                                transpose_b=transpose_b)
        if part is None:
            continue
        reduce = reduction_cycles(chunks, m, n, out_dtype, target)
        cand = SplitK(chunks, chunk, part.cycles + reduce, unsplit.cycles, reduce)
        if best is None or cand.cycles < best.cycles:
            best = cand
    return best if best is not None and best.cycles < MARGIN * unsplit.cycles else None
