"""Reductions over a non-last dim end to end (bias gradients, a layer norm's weight and bias gradients): eager's
results, one pass, spread over the cores in 32-B columns, and a fold of log depth (docs/codegen.md, docs/schedule.md).
The cycle bounds hold the simulated kernels well below what one dependent vector step per reduced row cost. The static
column kernels here are compiled with ``split_reductions`` off: with it on, ``hfusion-split-reductions`` makes them a
partial reduction over slices of rows and a final one (tests/backend/test_split_reductions.py)."""

from __future__ import annotations

import pytest
import torch

import torch_npu_backend
from tests.helpers import assert_close

NO_SPLIT = {"split_reductions": False}

# (shape, cores at least, cycles below): before the tree fold and the 32-B columns the three ran at
# 9,620 (2 cores), 132,562 (1 core) and 2,726 (16 cores) cycles.
COLUMN_SUMS = [((256, 128), 16, 3_000), ((4096, 64), 8, 20_000), ((64, 1024), 43, 1_500)]


@pytest.mark.parametrize("shape,cores,bound", COLUMN_SUMS)
def test_column_sum_matches_eager_in_log_depth(fresh_dynamo, shape, cores, bound):
    g = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
    compiled = torch.compile(lambda g: g.sum(0), backend="npu", options=NO_SPLIT)
    with torch_npu_backend.profile(trace=False) as prof:
        got = compiled(g)
    assert_close(got, g.sum(0), "sum(0)")
    (rec,) = prof.records
    assert rec.simulated and rec.fusion_kind == "ANY_PBR"
    assert rec.block_dim >= cores and rec.cycles < bound, (rec.block_dim, rec.cycles)


@pytest.mark.parametrize("split", [False, True])
def test_layer_norm_weight_and_bias_gradients(fresh_dynamo, split):
    """LayerNorm(128) on 2×128×128, forward and backward: eager's gradients; unsplit, the kernel summing the weight
    and bias gradients over the 256 rows runs in one pass on 16 cores (it ran multi-pass on 2: 19,591 cycles)."""
    torch.manual_seed(0)
    ln = torch.nn.LayerNorm(128)
    ln.weight.data.uniform_(0.5, 1.5)
    x = torch.randn(2, 128, 128, requires_grad=True)
    ln(x).square().sum().backward()
    want = [t.grad.clone() for t in (x, ln.weight, ln.bias)]
    for t in (x, ln.weight, ln.bias):
        t.grad = None
    compiled = torch.compile(ln, backend="npu", options={"split_reductions": split})
    with torch_npu_backend.profile(trace=False) as prof:
        compiled(x).square().sum().backward()
    for t, w, name in zip((x, ln.weight, ln.bias), want, ("x", "weight", "bias")):
        assert_close(t.grad, w, f"grad of {name}")
    if split:
        return
    (grads,) = [r for r in prof.records if r.fusion_kind == "ANY_PBR"]
    assert grads.simulated and grads.block_dim >= 16 and grads.cycles < 6_000, (grads.block_dim, grads.cycles)


def test_reduction_over_a_dim_of_one_is_a_copy(fresh_dynamo):
    """x.sum(1) of 40×1×24: hfusion-flatten-ops drops the unit dim, leaving a reduction over no dim — a copy (the
    kernel wrote nothing before)."""
    x = torch.randn(40, 1, 24)
    assert_close(torch.compile(lambda x: x.sum(1), backend="npu")(x), x.sum(1), "sum(1)")


def _ln_backward_kernel(grad, mean, x, rstd, w):
    """The GPT block's layer-norm backward kernel (benchmarks/model_step.py, FX nodes view_27, sub_1, mul_8, mul_9,
    mul_14, sum_8, sum_9): x̂ and grad·w for the input's gradient, and the weight and bias gradients, column sums of
    grad·x̂ and grad over the batch and sequence dims."""
    g = grad.view(x.shape)
    xhat = (x - mean) * rstd
    return xhat, g * w, (g * xhat).sum((0, 1)), g.sum((0, 1))


def _ln_backward_args(b, t, d=128):
    gen = torch.Generator().manual_seed(b * 1000 + t)
    return (torch.randn(b * t, d, generator=gen), torch.randn(b, t, 1, generator=gen),
            torch.randn(b, t, d, generator=gen), torch.rand(b, t, 1, generator=gen) + 0.5, torch.randn(d, generator=gen))


def _check_ln_backward(compiled, args, what):
    with torch_npu_backend.profile(trace=False) as prof:
        got = compiled(*args)
    for g, w, name in zip(got, _ln_backward_kernel(*args), ("x̂", "grad·w", "weight grad", "bias grad")):
        assert_close(g, w, f"{what}: {name}")
    (rec,) = prof.records
    assert rec.simulated and rec.fusion_kind == "ANY_PBR", rec
    return rec


def test_layer_norm_backward_kernel_runs_whole_repeats(fresh_dynamo):
    """Its 32-B column tiles ([2, 128, 8] f32 on 16 cores) are whole tiles of a static dim: static extents, so the
    elementwise ops run flat over whole 256-B repeats (they ran one 32-B block per repeat), the column broadcasts
    of the mean and rstd are vbrcb alone, and the weight row is copied 8 rows per repeat: 5,246 cycles before
    (4,126 after)."""
    compiled = torch.compile(_ln_backward_kernel, backend="npu", options=NO_SPLIT)
    rec = _check_ln_backward(compiled, _ln_backward_args(2, 128), "static")
    assert rec.block_dim == 16 and rec.cycles < 4_600, (rec.block_dim, rec.cycles)


def test_layer_norm_backward_kernel_with_dynamic_rows(fresh_dynamo):
    """Batch and sequence symbolic (one compile, three sizes): the columns still spread over 16 cores in 32-B tiles,
    and the multi-pass kernel's reduced tiles take the rows the narrowed columns leave room for ([1, 560, 8], three
    passes over one tile per batch; they were sized for 512 columns: [1, 35, 8]). Before: 28,250, 21,516 and 42,544
    cycles."""
    compiled = torch.compile(_ln_backward_kernel, backend="npu")
    for (b, t), bound in (((2, 128), 11_000), ((2, 96), 10_000), ((4, 100), 19_000)):
        args = _ln_backward_args(b, t)
        for a in args[:4]:
            torch._dynamo.mark_dynamic(a, 0)
        for a in args[1:4]:
            torch._dynamo.mark_dynamic(a, 1)
        rec = _check_ln_backward(compiled, args, f"{b}x{t}")
        assert rec.block_dim == 16 and rec.cycles < bound, ((b, t), rec.block_dim, rec.cycles)
    assert fresh_dynamo["graphs_compiled"] == 1


# (shape, cores, cycles below): with symbolic rows and columns the column step is a tiling parameter chosen per
# launch; before, every work item took 512 columns (one core below 513 columns: 35,111, 2,560 (2 cores) and
# 8,970 cycles).
DYNAMIC_COLUMN_SUMS = [((4096, 64), 8, 16_000), ((64, 1024), 43, 1_500), ((1000, 40), 5, 4_500)]


def test_dynamic_column_sums_spread_over_the_cores(fresh_dynamo):
    """g.sum(0) compiled once for symbolic shapes: columns in steps of Min(64, 8·ceiling(n1 / 384)) f32 (32-B
    steps over 48 cores, at most the 64-column tile), so the block dim follows the columns of each launch."""
    compiled = torch.compile(lambda g: g.sum(0), backend="npu", dynamic=True)
    for shape, cores, bound in DYNAMIC_COLUMN_SUMS:
        g = torch.randn(*shape, generator=torch.Generator().manual_seed(shape[1]))
        with torch_npu_backend.profile(trace=False) as prof:
            got = compiled(g)
        assert_close(got, g.sum(0), f"sum(0) of {shape}")
        (rec,) = prof.records
        assert rec.simulated and rec.fusion_kind == "ANY_PBR"
        assert rec.block_dim == cores and rec.cycles < bound, (shape, rec.block_dim, rec.cycles)
    assert fresh_dynamo["graphs_compiled"] == 1


def test_split_gradient_sums_beside_a_residual_stay_simulated(fresh_dynamo):
    """x + LayerNorm(x) into a Linear, backward: the weight and bias gradients split (hfusion-split-reductions) and
    both read the output gradient reshaped to slices. One reshape shared by the two (a cse after the split) was taken
    by fuse-ops into the row kernel of the residual's gradient, which could not lower it: that kernel fell back to
    the interpreter. Every kernel runs on the simulator (the matmuls as cube kernels), with eager's gradients."""
    torch.manual_seed(0)
    ln, lin = torch.nn.LayerNorm(128), torch.nn.Linear(128, 128)
    x = torch.randn(2, 128, 128, requires_grad=True)

    def step(x):
        return lin(x + ln(x)).square().sum()

    step(x).backward()
    want = [t.grad.clone() for t in (x, ln.weight, ln.bias)]
    for t in (x, ln.weight, ln.bias):
        t.grad = None
    with torch_npu_backend.profile(trace=False) as prof:
        torch.compile(step, backend="npu")(x).backward()
    for t, w, name in zip((x, ln.weight, ln.bias), want, ("x", "weight", "bias")):
        assert_close(t.grad, w, f"grad of {name}", scale=10)
    assert not prof.interpreted(), [(r.kernel, r.reason) for r in prof.interpreted()]
