"""Reductions over a non-last dim (bias gradients, a layer norm's weight and bias gradients): a tree of pairwise
halves, each level one set of instructions over all the rows it combines — ceil(log2 rows) dependent vector steps,
not one per row — through the real pipeline on the simulator (hazard checker on), against numpy."""

import dataclasses
import math

import numpy as np
import pytest

from codegen import compile_module
from graph_passes.ir.parser import parse_module
from graph_passes.passes import PassManager
from graph_passes.pipelines import PipelineOptions, default_pipeline

from .helpers import lower, only_kernel, op_levels, run_kernel

REF = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod}


def _module(shape: str, dims: list[int], kind: str, out: str, symbols: str = "s0 = [1, 4096]") -> str:
    return f"""module attributes {{symbols = {{{symbols}}}}} {{
  func.func @main(%x: tensor<{shape}xf32>) -> (tensor<{out}xf32>) {{
    %s = hfusion.reduce %x {{dims = {dims}, kind = "{kind}"}} : (tensor<{shape}xf32>) -> tensor<{out}xf32>
    func.return %s : tensor<{out}xf32>
  }}
}}"""


def _fold_levels(ck) -> int:
    """Dependent steps of the kernel's vreduce."""
    return op_levels(ck, "hivm.vreduce")


def _run(ck, x, bindings=None):
    (out,), res = run_kernel(ck, [x], bindings or {})
    assert res.stats.hazards_checked
    return out, res


def test_bias_gradient_folds_in_log_depth():
    """grad.sum(0) of 256x128 f32 (a bias gradient): 8 dependent steps for 256 rows (each core's 32-B column tile
    256 rows deep: 128 pairs, then halves 64 … 1), where one step per row took 255 and ~9,600 cycles."""
    ck = only_kernel(lower(_module("256x128", [0], "sum", "128", symbols="")))
    assert _fold_levels(ck) == math.ceil(math.log2(256))
    x = np.random.default_rng(0).standard_normal((256, 128)).astype(np.float32)
    out, res = _run(ck, x)
    np.testing.assert_allclose(out.reshape(128), x.astype(np.float64).sum(0), rtol=1e-5, atol=1e-5)
    assert res.stats.block_dim == 16  # 32-B column tiles: one GM block of the result per core
    assert res.stats.cycles < 2500, res.stats.cycles  # 9,620 when every row was a dependent step on 2 cores


@pytest.mark.parametrize("kind", ["sum", "max", "min", "prod"])
def test_outer_fold_dynamic_rows(kind):
    """x.<kind>(0) over s0 rows of 40 (multi-pass in tiles of 580 rows, K = 256): the pairs, single rows and
    identity rows of the first level, and the rows past 2K, have counts computed at run time (guarded: a vector
    instruction has at least one repeat); row counts up to K, up to 2K and past it."""
    ck = only_kernel(lower(_module("s0x40", [0], kind, "40")))
    rng = np.random.default_rng(1)
    for s0 in (1, 2, 3, 7, 65, 300, 1000):
        x = (rng.standard_normal((s0, 40)) * (0.1 if kind == "prod" else 1) + (1 if kind == "prod" else 0))
        x = x.astype(np.float32)
        out, _ = _run(ck, x, {"s0": s0})
        np.testing.assert_allclose(out.reshape(40), REF[kind](x.astype(np.float64), axis=0), rtol=2e-5, atol=1e-5)


@pytest.mark.parametrize("kind", ["sum", "max"])
def test_outer_fold_middle_dim(kind):
    """x.<kind>(1) of 3×s0×40: the tree's scratch rows per index of dim 0 (slabs of whole blocks); 100 rows
    take a step of K rows past 2K (K = 32)."""
    ck = only_kernel(lower(_module("3xs0x40", [1], kind, "3x40")))
    rng = np.random.default_rng(2)
    for s0 in (1, 5, 33, 100):
        x = rng.standard_normal((3, s0, 40)).astype(np.float32)
        out, _ = _run(ck, x, {"s0": s0})
        np.testing.assert_allclose(out.reshape(3, 40), REF[kind](x.astype(np.float64), axis=1), rtol=1e-5,
                                   atol=1e-5)


def test_outer_fold_multipass():
    """A column sum whose rows do not fit UB (s0 unbounded): each tile of rows folds as a tree into the partial,
    which accumulates."""
    ck = only_kernel(lower(_module("s0x300", [0], "sum", "300", symbols="s0 = [1, 100000]")))
    x = np.random.default_rng(3).standard_normal((5000, 300)).astype(np.float32)
    out, _ = _run(ck, x, {"s0": 5000})
    np.testing.assert_allclose(out.reshape(300), x.astype(np.float64).sum(0), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("scratch", [0, 2048])
def test_outer_fold_adapts_to_a_smaller_scratch(scratch):
    """With less scratch than the whole tree (here set by hand after the schedule), the fold takes K rows that fit
    (2048 B: 64 rows of 32 B, rows from 128 on K at a time) or, with none, accumulates in dst itself: more
    dependent steps, the same result."""
    from graph_passes.idioms.outer_folds import outer_fold_bytes, outer_fold_rows

    text = _module("256x128", [0], "sum", "128", symbols="")
    module = parse_module(text)
    head, tail = default_pipeline(PipelineOptions(split_reductions=False)).split(",convert-to-hivm,")
    PassManager.from_pipeline(head, verify=True).run(module)
    kernel = next(op for op in module.walk() if op.name == "func.func" and op.attributes.get("kernel"))
    sched = kernel.attributes["schedule"]
    assert list(sched.tile) == [256, 8] and sched.scratch_bytes == outer_fold_bytes(128, 1, 32) == 4096
    kernel.attributes["schedule"] = dataclasses.replace(sched, scratch_bytes=scratch)
    PassManager.from_pipeline("convert-to-hivm," + tail, verify=True).run(module)
    (ck,) = compile_module(module).values()
    k = outer_fold_rows(256, 1, 32, scratch)
    assert k == (64 if scratch else 1)
    x = np.random.default_rng(4).standard_normal((256, 128)).astype(np.float32)
    out, res = _run(ck, x)
    np.testing.assert_allclose(out.reshape(128), x.astype(np.float64).sum(0), rtol=1e-5, atol=1e-5)
    if scratch:  # level 0, two more steps of 64 rows, log2(64) halves
        assert _fold_levels(ck) == 1 + 2 + 6
    else:  # rows 0 and 1, then one program loop step per row
        assert "loop j" in ck.assembly()


def test_outer_fold_scratch_sizes():
    """The schedule's scratch for a non-last-dim reduction: the rows of the fold with the fewest dependent steps
    (the smallest on a tie) when wide, at most 16 KiB of rows otherwise; none for rows that fold as fast straight
    into dst."""
    from graph_passes.idioms.outer_folds import outer_fold_levels, outer_fold_rows
    from graph_passes.idioms.reductions import reduce_scratch_bytes

    assert reduce_scratch_bytes([256, 8], [0], 4, 32, wide=True) == 128 * 32
    assert reduce_scratch_bytes([256, 128], [0], 4, 32, wide=True) == 128 * 512
    assert reduce_scratch_bytes([256, 128], [0], 4, 32) == 32 * 512  # 16 KiB
    assert reduce_scratch_bytes([3, 5, 40], [1], 4, 32, wide=True) == 3 * 2 * 160  # per index of dim 0
    assert reduce_scratch_bytes([3, 64], [0], 4, 32, wide=True) == 0
    # 300 rows: 128 scratch rows take the 9 steps 256 would (rows 256-299 fold in one more step of K)
    assert outer_fold_rows(300, 1, 32) == 128 and outer_fold_levels(300, 128) == outer_fold_levels(300, 256) == 9
    assert outer_fold_rows(256, 1, 32) == 128 and outer_fold_levels(256, 128) == 8
    assert outer_fold_rows(256, 1, 32, budget=2048) == 64 and outer_fold_levels(256, 64) == 9
    assert outer_fold_rows(3, 1, 32) == 1 and outer_fold_rows(5, 1, 32) == 2
