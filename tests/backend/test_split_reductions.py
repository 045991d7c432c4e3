"""Reductions to fewer rows than vector cores, end to end (``hfusion-split-reductions``, docs/passes.md): eager's
results, a partial-reduction kernel over many of the 48 cores (work items of whole 32-B blocks of partial results:
8 f32, 16 f16 or 4 i64 rows) and a small final one. Unsplit, these ran on one core
(``x.sum()``: 123,321 cycles) or on as many cores as rows (``amax(-1)`` of 4 rows: 82,387 cycles)."""

from __future__ import annotations

import pytest
import torch

import torch_npu_backend
from tests.helpers import assert_close

GEN = torch.Generator().manual_seed(0)

# (name, fn, input, cores at least, cycles below in total)
CASES = [
    ("sum()", lambda x: x.sum(), torch.randn(1024, 1024, generator=GEN), 32, 10_000),
    ("amax(-1) f16", lambda x: x.amax(-1), torch.randn(4, 262144, generator=GEN).half(), 32, 10_000),
    ("square mean(-1)", lambda x: (x * x).mean(-1), torch.randn(4, 262144, generator=GEN), 32, 12_000),
    ("count of a mask", lambda x: (x > 0).sum(), torch.randn(512, 1024, generator=GEN), 32, 10_000),
    # an i64 sum runs as scalar loops: 269,915 cycles on one core unsplit
    ("i32 sum()", lambda x: x.sum(), torch.randint(-1000, 1000, (64, 1024), dtype=torch.int32, generator=GEN), 16,
     20_000),
]


@pytest.mark.parametrize("name,fn,x,cores,bound", CASES, ids=[c[0] for c in CASES])
def test_split_reduction_matches_eager_on_every_core(fresh_dynamo, name, fn, x, cores, bound):
    compiled = torch.compile(fn, backend="npu")
    with torch_npu_backend.profile(trace=False) as prof:
        got = compiled(x)
    want = fn(x)
    if want.dtype.is_floating_point:
        assert_close(got, want, name)
    else:
        assert torch.equal(got, want), (got, want)
    partial, final = prof.records
    assert partial.simulated and final.simulated
    assert partial.block_dim >= cores, partial.block_dim
    total = partial.cycles + final.cycles
    assert total < bound, (name, partial.cycles, final.cycles)


def test_split_reductions_off_keeps_one_kernel_and_is_slower(fresh_dynamo):
    """The option turns the pass off: x.sum() is one kernel again, on one core, over ten times slower."""
    x = torch.randn(1024, 1024, generator=torch.Generator().manual_seed(1))
    cycles = {}
    for split in (True, False):
        compiled = torch.compile(lambda x: x.sum(), backend="npu", options={"split_reductions": split})
        with torch_npu_backend.profile(trace=False) as prof:
            assert_close(compiled(x), x.sum(), f"sum() split={split}")
        cycles[split] = sum(r.cycles for r in prof.records)
        assert len(prof.records) == (2 if split else 1)
        torch._dynamo.reset()
    assert cycles[False] > 10 * cycles[True], cycles


def test_dynamic_full_sum_splits_along_its_rows(fresh_dynamo):
    """x.sum() with dynamic=True, compiled once: the partial sums keep x's own rows (no static divisor to reshape
    by), spread over the cores in 8-row blocks, then one sum of them (unsplit at 500 rows: 239,650 cycles)."""
    compiled = torch.compile(lambda x: x.sum(), backend="npu", dynamic=True)
    for rows, cores, bound in ((64, 8, 6_000), (500, 48, 15_000)):
        x = torch.randn(rows, 4096, generator=torch.Generator().manual_seed(rows))
        with torch_npu_backend.profile(trace=False) as prof:
            assert_close(compiled(x), x.sum(), f"sum() of {rows} rows", scale=10)
        partial, final = prof.records
        assert partial.block_dim == cores and partial.cycles + final.cycles < bound, (partial, final)
    assert fresh_dynamo["graphs_compiled"] == 1


def test_dynamic_reduction_is_not_split(fresh_dynamo):
    """A reduction over one dynamic dim keeps its one kernel (the split needs a divisor of the reduced count)."""
    compiled = torch.compile(lambda x: x.sum(-1), backend="npu", dynamic=True)
    for n in (40000, 50000):
        x = torch.randn(2, n, generator=torch.Generator().manual_seed(n))
        with torch_npu_backend.profile(trace=False) as prof:
            assert_close(compiled(x), x.sum(-1), f"sum(-1) n={n}")
        assert len(prof.records) == 1


def test_bad_option_is_named():
    with pytest.raises(torch_npu_backend.OptionsError, match="option split_reductions must be a bool"):
        torch_npu_backend.NpuOptions.from_dict({"split_reductions": 1})


# (name, fn, input, kernels, cycles below in total): unsplit, one kernel on one core per row (28,500 and 53,300).
ROW_KERNELS = [
    ("softmax 4x65536", lambda x: torch.softmax(x, -1), torch.randn(4, 65536, generator=GEN), 5, 12_000),
    ("layer norm 8x65536 f16", lambda x: torch.nn.functional.layer_norm(x, (65536,)),
     torch.randn(8, 65536, generator=GEN).half(), 5, 20_000),
]


@pytest.mark.parametrize("name,fn,x,kernels,bound", ROW_KERNELS, ids=[c[0] for c in ROW_KERNELS])
def test_row_kernel_over_few_long_rows_splits_both_reductions(fresh_dynamo, name, fn, x, kernels, bound):
    """Softmax and layer norm over a few long rows: both reductions split (the second through the row broadcast of
    the first's result), then the normalisation over every core; eager's results."""
    compiled = torch.compile(fn, backend="npu")
    with torch_npu_backend.profile(trace=False) as prof:
        got = compiled(x)
    assert_close(got, fn(x.float()).to(x.dtype), name)
    assert len(prof.records) == kernels and all(r.simulated for r in prof.records)
    total = sum(r.cycles for r in prof.records)
    assert total < bound, (name, [r.cycles for r in prof.records])


# (shape, unsplit cycles for the record, split bound): column sums read 32-B strips of every row unsplit.
COLUMN_SUMS = [((8192, 128), 38_900, 10_000), ((65536, 16), 39_250, 10_000)]


@pytest.mark.parametrize("shape,unsplit,bound", COLUMN_SUMS, ids=[f"{a}x{b}" for (a, b), _, _ in COLUMN_SUMS])
def test_column_sum_splits_its_rows(fresh_dynamo, shape, unsplit, bound):
    """g.sum(0) over many rows of few columns (a bias gradient): slices of rows reduced on every core in 512-B
    stretches, then the slices' sums; eager's result."""
    g = torch.randn(*shape, generator=torch.Generator().manual_seed(2))
    compiled = torch.compile(lambda g: g.sum(0), backend="npu")
    with torch_npu_backend.profile(trace=False) as prof:
        got = compiled(g)
    # a sum of thousands of terms in another order than eager's: rounding grows with the count
    assert_close(got, g.sum(0), "sum(0)", scale=10)
    partial, final = prof.records
    assert partial.block_dim == 48, partial.block_dim
    assert partial.cycles + final.cycles < bound < unsplit, (partial.cycles, final.cycles)


def test_logsumexp_kernels_all_run_on_the_simulator(fresh_dynamo):
    """logsumexp over 4 long rows: its max splits; its sum of exp(x - max) does not (the max reaches it through a
    keepdim reshape and a select, which the partial kernel could not lower), so no kernel falls back to the
    interpreter."""
    x = torch.randn(4, 65536, generator=torch.Generator().manual_seed(3))
    compiled = torch.compile(lambda x: torch.logsumexp(x, -1), backend="npu")
    with torch_npu_backend.profile(trace=False) as prof:
        got = compiled(x)
    assert_close(got, torch.logsumexp(x, -1), "logsumexp")
    assert len(prof.records) == 4 and all(r.simulated for r in prof.records), prof.records


def _centre(x):
    return x - x.mean(0)


def _batch_norm(x):
    return (x - x.mean(0)) / (x.var(0, unbiased=False) + 1e-5).sqrt()


# (name, fn, shape, µs unsplit for the record, split bound): the statistics' kernel ran on one core per 32-B strip.
BROADCAST_BACK = [("x - x.mean(0)", _centre, (8192, 128), 35.2, 15), ("x - x.mean(0)", _centre, (65536, 16), 133.3, 15),
                  ("batch norm", _batch_norm, (8192, 128), 63.7, 20), ("batch norm", _batch_norm, (65536, 16), 359.0, 20)]


@pytest.mark.parametrize("name,fn,shape,unsplit,bound", BROADCAST_BACK,
                         ids=[f"{c[0]} {c[2][0]}x{c[2][1]}" for c in BROADCAST_BACK])
def test_column_statistics_broadcast_back_split_over_few_strips(fresh_dynamo, name, fn, shape, unsplit, bound):
    """Column statistics broadcast back over columns with fewer 32-B strips than cores (a batch norm over 128 or 16
    features): each statistic's sum splits over the rows on every core, the normalisation runs over every core;
    eager's values."""
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(3))
    with torch_npu_backend.profile(trace=False) as prof:
        got = torch.compile(fn, backend="npu")(x)
    assert_close(got, fn(x), name, scale=10)
    assert all(r.simulated for r in prof.records)
    assert max(r.block_dim for r in prof.records) == 48
    assert sum(r.us for r in prof.records) < bound < unsplit, [(r.kernel, r.block_dim, r.us) for r in prof.records]


def test_column_mean_broadcast_back_over_many_strips_stays_one_kernel(fresh_dynamo):
    """x - x.mean(0) over 2048x768 f32: 96 strips of 32 B, every core busy unsplit; one kernel reads x once (two
    passes over its rows: 11.9 µs; split into statistics and normalisation, 20.0)."""
    x = torch.randn(2048, 768, generator=torch.Generator().manual_seed(4))
    with torch_npu_backend.profile(trace=False) as prof:
        got = torch.compile(_centre, backend="npu")(x)
    assert_close(got, _centre(x), "x - x.mean(0)")
    (kernel,) = prof.records
    assert kernel.block_dim == 48 and kernel.us < 14, (kernel.block_dim, kernel.us)


def test_batch_norm_2d_statistics_reduce_rows_first(fresh_dynamo):
    """BatchNorm2d in training over [16, 64, 16, 16], forward and backward: each sum over dims (0, 2, 3) of the
    [16, 64, 256] view runs as rows of every (n, c) over the cores (43 or 48), then over n; eager's output, gradients and
    running statistics. One kernel per statistic over 8 channel strips took 58.2 µs in all."""
    torch.manual_seed(0)
    bn, ref = torch.nn.BatchNorm2d(64), torch.nn.BatchNorm2d(64)
    x = torch.randn(16, 64, 16, 16, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_()
    with torch_npu_backend.profile(trace=False) as prof:
        y = torch.compile(bn, backend="npu")(x)
        y.square().sum().backward()
    want = ref(x_ref)
    want.square().sum().backward()
    assert_close(y, want, "output")
    assert_close(x.grad, x_ref.grad, "grad x", scale=10)
    assert_close(bn.weight.grad, ref.weight.grad, "grad weight", scale=10)
    assert_close(bn.running_var, ref.running_var, "running var")
    assert all(r.simulated for r in prof.records)
    rows = [r for r in prof.records if r.fusion_kind == "LAST_AXIS_PBR"]
    assert len(rows) >= 2 and all(r.block_dim >= 43 for r in rows), [(r.fusion_kind, r.block_dim) for r in rows]
    assert sum(r.us for r in prof.records) < 25, [(r.fusion_kind, r.block_dim, r.us) for r in prof.records]


def test_integer_sum_over_dims_around_a_kept_one_reduces_rows_first(fresh_dynamo):
    """x.sum((0, 2)) of i32 [16, 64, 64] (accumulated in i64 scalar loops): the trailing dim first as rows over the
    cores, then dim 0; one kernel over the 64 kept channels took 10.6 µs. Eager's values exactly."""
    x = torch.randint(-50, 50, (16, 64, 64), dtype=torch.int32, generator=torch.Generator().manual_seed(10))
    with torch_npu_backend.profile(trace=False) as prof:
        got = torch.compile(lambda x: x.sum((0, 2)), backend="npu")(x)
    assert torch.equal(got, x.sum((0, 2)))
    rows, final = prof.records
    assert rows.simulated and final.simulated and rows.block_dim >= 43, (rows.block_dim, rows.reason, final.reason)
    assert rows.us + final.us < 6, (rows.us, final.us)
