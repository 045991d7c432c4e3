"""Casts, pow (bf16 as torch's CPU kernel forms it, a tensor exponent) and products on the simulator, at the values where a lowering could go wrong:
integers above 2^24 rounded to bf16, i64 beyond i32, torch's pow special cases, products of rows longer than one
vector repeat. Each must equal eager (exactly for casts) and run on the simulator."""

from __future__ import annotations

import pytest
import torch

import torch_npu_backend
from tests.helpers import assert_close

# 2^24 + 2^16 + 1 rounds to the bf16 tie 2^24 + 2^16 in f32, then to 2^24 (ties to even); one rounding would give
# 2^24 + 2^17. torch converts integers to bf16 through float (c10::BFloat16 is built from a float), so eager gives
# 2^24 and so must the kernel.
HARD_INTS = [(1 << 24) + (1 << 16) + 1, -((1 << 24) + (1 << 16) + 1), (1 << 24) + 1, (1 << 25) + (1 << 17) + 3,
             (1 << 30) + (1 << 22) + 1, -(1 << 31), (1 << 31) - 1, 0, 1, -1, 255, 257, 65521, 3, -7, 12345678]


def _simulated(fn, *inputs):
    torch._dynamo.reset()
    with torch_npu_backend.profile(trace=False) as prof:
        out = torch.compile(fn, backend="npu")(*inputs)
    assert prof.records and not prof.interpreted(), [r.reason for r in prof.interpreted()]
    return out


@pytest.mark.parametrize("src", [torch.int32, torch.int64])
def test_int_to_bf16_as_eager(src):
    vals = HARD_INTS + ([(1 << 40) + (1 << 32) + 1, -(1 << 62) - (1 << 54) - 1] if src == torch.int64 else [])
    x = torch.tensor(vals * 4, dtype=src)
    got = _simulated(lambda t: t.to(torch.bfloat16), x)
    assert torch.equal(got.view(torch.int16), x.to(torch.bfloat16).view(torch.int16))
    assert x.to(torch.bfloat16)[0].item() == 2.0**24  # eager double-rounds (see HARD_INTS)


def test_i64_casts_exact():
    big = torch.tensor([(1 << 40) + 3, -(1 << 40) - 5, (1 << 31), -(1 << 31) - 1, 7, -7, (1 << 53) + 1, -(1 << 62)] * 4)
    f = torch.tensor([2.5, -2.5, 3.7, -3.7, 1e10, -1e10, 0.0, 123456.9] * 4)
    h = torch.tensor([1.5, -2.5, 65504.0, -65504.0, 0.0, 3.0, -0.75, 1000.0] * 4, dtype=torch.float16)

    def fn(i, x, y):
        return i.to(torch.float32), i.to(torch.int32), i.to(torch.float16), x.to(torch.int64), y.to(torch.int64), \
            y.to(torch.bfloat16), y.to(torch.bfloat16).to(torch.float16)

    got = _simulated(fn, big, f, h)
    for k, (a, e) in enumerate(zip(got, fn(big, f, h))):
        assert a.dtype == e.dtype and torch.equal(a, e), (k, a, e)


@pytest.mark.parametrize("exponent", [3, -2, 2, 4, 0.5])
def test_pow_scalar_bf16_bit_exact(exponent):
    """torch's CPU pow for bf16 is x*x*x and 1/(x*x), each product rounded to bf16 (pow_tensor_scalar_optimized_kernel);
    other exponents round once. A pow computed in f32 and rounded once differs from x*x*x in about a quarter of
    these values."""
    x = (torch.rand(512, generator=torch.Generator().manual_seed(0)) * 3 - 1.5).to(torch.bfloat16)
    got = _simulated(lambda t: t**exponent, x)
    expected = x**exponent
    assert torch.equal(got.isnan(), expected.isnan())
    assert torch.equal(got.nan_to_num(), expected.nan_to_num()), int((got != expected).sum())


def test_pow_tensor_special_cases():
    x = torch.tensor([2.0, 0.5, -2.0, -2.0, -2.0, 0.0, 0.0, 0.0, 1.0, -1.0, -1.0, 1.0, float("inf"), -float("inf"),
                      float("nan"), 3.0, -0.5, 7.3, -3.0, 1e-3, -0.0, 5.0, 2.0, -8.0] * 2)
    y = torch.tensor([3.0, -1.5, 3.0, 2.0, 0.5, 2.0, -1.0, 0.0, float("nan"), float("inf"), 3.0, float("inf"), 0.0,
                      3.0, 0.0, 0.0, -3.0, 1.7, -2.0, 2.5, 3.0, float("-inf"), float("inf"), 1.0 / 3.0] * 2)
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        a, b = x.to(dtype), y.to(dtype)
        assert_close(_simulated(lambda p, q: p**q, a, b), a**b, f"pow {dtype}")


@pytest.mark.parametrize("shape, dim", [((5, 300), 1), ((40, 7), 1), ((1000,), 0), ((20, 70), 0)])
def test_prod_long_rows(shape, dim):
    x = torch.rand(*shape, generator=torch.Generator().manual_seed(0)) * 0.2 + 0.9
    got = _simulated(lambda t: t.prod(dim), x)
    exact = x.double().prod(dim)
    assert ((got.double() - exact).abs() / exact).max() < 2e-6  # within a few f32 ulps of the exact product
