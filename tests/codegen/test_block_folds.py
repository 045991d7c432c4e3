"""Row reductions over rows of whole vector repeats fold block by block (vcgadd/vcgmax/vcgmin: every 32-B block to
one element, level by level), then reduce per repeat (graph_passes.idioms.folds.block_fold_lengths,
codegen.reduce._block_fold_rows): fewer dependent steps and repeat cycles than the pairwise fold."""

import numpy as np
import pytest

from graph_passes.idioms.folds import block_fold_bytes, block_fold_lengths, block_fold_rows

from .helpers import lower, only_kernel, op_levels, run_kernel
from .test_pipeline import _module

NP = {"f16": np.float16, "f32": np.float32}
REF = {"sum": np.sum, "max": np.max, "min": np.min}


def test_block_fold_lengths():
    """Levels while the row is longer than one repeat and the next is whole 32-B blocks; none unless the rows are
    whole repeats (at most 255 of them)."""
    assert block_fold_lengths(4096, 4) == [4096, 512, 64]  # then vcadd: 3 steps (the pairwise fold: 7)
    assert block_fold_lengths(4096, 2) == [4096, 256, 16]
    assert block_fold_lengths(8192, 4) == [8192, 1024, 128, 16]
    assert block_fold_lengths(768, 4) == [768, 96]  # 12 f32 are not whole blocks: 96 fold pairwise
    assert block_fold_lengths(64, 4) == []  # one repeat: vcadd alone
    assert block_fold_lengths(128, 4) == []  # two: 2 steps either way (a vadd, or a vcgadd, then vcadd)
    assert block_fold_lengths(192, 4) == [192, 24]  # three: 2 steps against 3
    assert block_fold_lengths(1000, 4) == []  # not whole repeats
    assert block_fold_lengths(16384, 4) == []  # 256 repeats: more than one instruction's


def test_block_fold_scratch():
    """The first level's results, and the second's unless the source dies (it takes them); rows within 16 KiB."""
    lengths = block_fold_lengths(4096, 4)
    assert block_fold_bytes(2, lengths, 4, in_place=True) == 2 * 512 * 4
    assert block_fold_bytes(2, lengths, 4, in_place=False) == 2 * 512 * 4 + 2 * 64 * 4
    assert block_fold_rows(100, lengths, 4, in_place=False) == 7  # 7 × 2304 B ≤ 16 KiB
    assert block_fold_rows(3, lengths, 4, in_place=True) == 3
    assert block_fold_rows(1, block_fold_lengths(8192, 4), 4, in_place=False, budget=1024) == 0


def _reduce(rows: int, cols: int, dt: str, kind: str) -> str:
    t, r = f"tensor<{rows}x{cols}x{dt}>", f"tensor<{rows}x{dt}>"
    return _module(f"""
  func.func @main(%x: {t}) -> ({r}) {{
    %s = hfusion.reduce %x {{dims = [1], kind = "{kind}"}} : ({t}) -> {r}
    func.return %s : {r}
  }}""")


@pytest.mark.parametrize("rows,cols,dt,kind,levels", [
    (16, 4096, "f16", "min", 3),    # 4096 → 256 → 16, vcmin (f16 max/min fold in f16)
    (9, 2048, "f16", "sum", 3),     # a sum of f16 folds in f32 (cast first): 2048 → 256 → 32, vcadd
    (1000, 1024, "f32", "sum", 3),  # 1024 → 128 → 16, vcadd
    (1000, 512, "f16", "max", 2),   # 512 → 32, vcmax
    (200, 768, "f32", "sum", 3),    # 768 → 96, then the pairwise fold of 96 (2 chunks: 2 steps)
    (4, 8192, "f32", "max", None),  # 8192 → 1024 → 128 → 16 (scratch A, B, A), in groups of rows (16 KiB)
    (8, 4096, "f32", "sum", None),  # 7 rows a group, then 1
])
def test_block_fold_reduces_rows(rows, cols, dt, kind, levels):
    """Each one-pass reduction equals numpy's, with the hazard checker on, in ``levels`` dependent steps (hivm.
    vreduce's runs of vector instructions between barriers; None: several groups of rows, in a program loop)."""
    ck = only_kernel(lower(_reduce(rows, cols, dt, kind)))
    asm = ck.assembly()
    assert {"sum": "vcgadd", "max": "vcgmax", "min": "vcgmin"}[kind] in asm
    assert ("loop g" in asm) == (levels is None)
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (rows, cols)).astype(NP[dt])
    (out,), res = run_kernel(ck, [x], {})
    assert res.stats.hazards_checked
    want = REF[kind](x.astype(np.float64), axis=1)
    tol = dict(rtol=2e-5, atol=1e-4) if dt == "f32" else dict(rtol=1e-2, atol=0.05 if kind == "sum" else 0)
    np.testing.assert_allclose(out.reshape(-1).astype(np.float64), want, **tol)
    if levels is not None:
        assert op_levels(ck, "hivm.vreduce") == levels


def test_block_fold_is_faster_than_the_pairwise_fold():
    """The row minima of 16 rows of 4096 f16: 3 dependent steps where the pairwise fold took 10, and fewer cycles
    than its 2,818 (measured before the block fold; now about 2,160)."""
    ck = only_kernel(lower(_reduce(16, 4096, "f16", "min")))
    x = np.random.default_rng(6).standard_normal((16, 4096)).astype(np.float16)
    (out,), res = run_kernel(ck, [x], {})
    np.testing.assert_array_equal(out.reshape(-1), x.min(1))
    assert op_levels(ck, "hivm.vreduce") == 3
    assert res.stats.cycles < 2_300, res.stats.cycles


def test_a_looped_reduction_keeps_the_pairwise_fold():
    """Rows too long for one pass (their columns tiled, the valid length a launch-time expression) fold pairwise,
    and the schedule sizes their scratch for it (buffers.block_folds: one-pass rows of a static length only)."""
    asm = only_kernel(lower(_reduce(16, 8192, "f32", "max"))).assembly()
    assert "loop j1" in asm and "vcgmax" not in asm
