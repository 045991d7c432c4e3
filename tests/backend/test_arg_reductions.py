"""argmax/argmin and max.dim/min.dim (lowerings/arg_reductions.py): ties give the first index, a NaN counts as the
extreme (its first occurrence), every dtype, every kernel on the simulator."""

from __future__ import annotations

import pytest
import torch

import torch_npu_backend

NAN = float("nan")


def _run(fn, x):
    torch._dynamo.reset()
    with torch_npu_backend.profile(trace=False) as prof:
        out = torch.compile(fn, backend="npu")(x)
    assert prof.records and not prof.interpreted(), [r.reason for r in prof.interpreted()]
    want = fn(x)
    for got, exp in zip(out, want):
        assert got.dtype == exp.dtype and torch.equal(got.nan_to_num(7.5), exp.nan_to_num(7.5)), (got, exp)


def _ties(*shape):
    return (torch.rand(*shape, generator=torch.Generator().manual_seed(0)) * 3).floor()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32])
def test_ties_give_the_first_index(dtype):
    x = _ties(4, 6, 33).to(dtype)
    _run(lambda t: (t.argmax(-1), t.argmin(-1), t.argmax(1), t.argmin(0, keepdim=True), t.argmax(), t.argmin()), x)


def test_nan_is_the_extreme():
    x = _ties(3, 9)
    x[0, 4] = x[0, 6] = NAN
    x[2, 0] = NAN
    _run(lambda t: (t.argmax(-1), t.argmin(-1), t.argmax(0), t.argmin(), t.argmax(), *t.max(-1), *t.min(0)), x)


def test_integers_beyond_f32():
    """i64 values 1 apart above 2^24 (equal in f32) compare exactly."""
    x = torch.tensor([[2**40 + 1, 2**40 + 3, 2**40 + 2], [-(2**40), -(2**40) - 1, 5]])
    _run(lambda t: (t.argmax(-1), t.argmin(-1)), x)


def test_zero_dim():
    _run(lambda t: (t.argmax(), t.argmin()), torch.tensor(2.5))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_max_min_dim_values_and_indices(dtype):
    x = _ties(4, 6, 33).to(dtype)
    _run(lambda t: (*t.max(-1), *t.min(1, keepdim=True), *t.max(0)), x)
