"""avg_pool2d, max_pool2d with indices (lowerings/pooling.py) and adaptive_avg_pool2d (torch's decomposition into
avg_pool2d): bit for bit with eager for every padding, ceil_mode and divisor rule, max_pool2d's indices for ties,
NaN and windows of -inf; every kernel on the simulator."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import torch_npu_backend

CASES = {
    "kernel 2": lambda x: F.avg_pool2d(x, 2),
    "kernel 3 stride 2 pad 1": lambda x: F.avg_pool2d(x, 3, 2, 1),
    "pad not counted": lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
    "ceil_mode": lambda x: F.avg_pool2d(x, 3, 2, 0, ceil_mode=True),
    "ceil_mode, pad not counted": lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    "divisor_override, 2x3 kernel": lambda x: F.avg_pool2d(x, (2, 3), (1, 2), divisor_override=5),
    "adaptive 8x10 -> 4x5": lambda x: F.adaptive_avg_pool2d(x[..., :8, :], (4, 5)),
    "3-D input": lambda x: F.avg_pool2d(x[0], 2),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("name", list(CASES))
def test_avg_pool2d_is_eager_bit_for_bit(name, dtype):
    fn = CASES[name]
    x = torch.randn(2, 3, 9, 10, generator=torch.Generator().manual_seed(0)).to(dtype)
    torch._dynamo.reset()
    with torch_npu_backend.profile(trace=False) as prof:
        out = torch.compile(fn, backend="npu")(x)
    assert prof.records and not prof.interpreted(), [r.reason for r in prof.interpreted()]
    assert torch.equal(out, fn(x))


MAX_CASES = {
    "kernel 2": lambda x: F.max_pool2d(x, 2, return_indices=True),
    "kernel 3 stride 2 pad 1": lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True),
    "ceil_mode": lambda x: F.max_pool2d(x, 3, 2, 0, ceil_mode=True, return_indices=True),
    "2x3 kernel stride 1": lambda x: F.max_pool2d(x, (2, 3), 1, return_indices=True),
    "values only, 3-D input": lambda x: (F.max_pool2d(x[0], 3, 2, 1),),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("name", list(MAX_CASES))
def test_max_pool2d_values_and_indices_are_eager_bit_for_bit(name, dtype):
    """Values 0..3 (ties: the first position), two NaNs in one window (the last), a plane's first 3 columns -inf
    (a window of -inf only: its first position inside the input)."""
    fn = MAX_CASES[name]
    x = (torch.rand(2, 3, 9, 10, generator=torch.Generator().manual_seed(0)) * 4).floor()
    x[0, 0, 2, 3] = x[0, 0, 2, 4] = float("nan")
    x[1, 2, :, :3] = float("-inf")
    x = x.to(dtype)
    torch._dynamo.reset()
    with torch_npu_backend.profile(trace=False) as prof:
        out = torch.compile(fn, backend="npu")(x)
    assert prof.records and not prof.interpreted(), [r.reason for r in prof.interpreted()]
    for got, want in zip(out, fn(x)):
        assert got.dtype == want.dtype and torch.equal(got.nan_to_num(0.5), want.nan_to_num(0.5))


def test_max_pool2d_refuses_dilation():
    with pytest.raises(Exception, match="dilation=.*only 1 is lowered"):
        torch.compile(lambda t: F.max_pool2d(t, 2, dilation=2), backend="npu")(torch.randn(1, 2, 8, 8))


def test_global_average_pool():
    """adaptive_avg_pool2d(x, 1): eager sums in another order (a mean), within f32 rounding."""
    x = torch.randn(2, 3, 9, 10, generator=torch.Generator().manual_seed(0))
    out = torch.compile(lambda t: F.adaptive_avg_pool2d(t, 1), backend="npu")(x)
    torch.testing.assert_close(out, F.adaptive_avg_pool2d(x, 1), rtol=1.3e-6, atol=1e-7)


def test_refuses_symbolic_sizes():
    with pytest.raises(Exception, match="avg_pool2d.*symbolic sizes are not supported"):
        torch.compile(lambda t: F.avg_pool2d(t, 2), backend="npu", dynamic=True)(torch.randn(2, 3, 8, 8))
