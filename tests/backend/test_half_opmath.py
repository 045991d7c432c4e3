"""f16 ops that torch's CPU kernels compute in f32 and round once — sums, the composite unary funs (sigmoid, tanh,
silu, gelu's tanh form) — and f16 floor/ceil (no f16 -> f16 rounding vconv), on the simulator against eager.
``hfusion-legalize-bf16`` widens them to f32; computed in f16, every step of the vector sequence would round."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import torch_npu_backend
from tests.helpers import assert_close


def _simulated(fn, *inputs):
    torch._dynamo.reset()
    with torch_npu_backend.profile(trace=False) as prof:
        out = torch.compile(fn, backend="npu")(*inputs)
    torch._dynamo.reset()
    assert prof.records and not prof.interpreted(), [r.reason for r in prof.interpreted()]
    return out


def _half(*shape, seed=0, scale=3.0):
    return ((torch.rand(*shape, generator=torch.Generator().manual_seed(seed)) * 2 - 1) * scale).half()


def _max_ulps(actual, expected) -> int:
    """The largest distance in f16 ulps (the int16 bit patterns of same-signed values) between two f16 tensors."""
    assert actual.dtype == expected.dtype == torch.float16
    return int((actual.view(torch.int16).int() - expected.view(torch.int16).int()).abs().max())


@pytest.mark.parametrize("dims", [0, 1, (0, 1)])
def test_f16_sum_accumulates_in_f32(dims):
    """torch sums half in float and rounds once: so does the kernel (equal here). An f16 add tree rounds at every
    level: 128 of the 200 column sums differed, up to 0.0156."""
    x = _half(16, 200, seed=1)
    got, expected = _simulated(lambda t: t.sum(dims), x), x.sum(dims)
    assert torch.equal(got, expected), _max_ulps(got, expected)


def test_f16_mul_backward_reduce_accumulates_in_f32():
    """The gradient of a broadcast operand is a sum over the broadcast dims (``sum_to_size``) of f16 products."""
    x = _half(4, 1, 20, seed=2).requires_grad_()
    y = _half(6, 1, seed=3).requires_grad_()
    g = _half(4, 6, 20, seed=4)

    def fn(a, b):
        return a * b * 3

    xe, ye = x.detach().clone().requires_grad_(), y.detach().clone().requires_grad_()
    expected = torch.autograd.grad(fn(xe, ye), [xe, ye], g)
    torch._dynamo.reset()
    got = torch.autograd.grad(torch.compile(fn, backend="npu")(x, y), [x, y], g)
    torch._dynamo.reset()
    for i, (a, e) in enumerate(zip(got, expected)):
        assert_close(a, e, f"grad of input {i}")


@pytest.mark.parametrize("name, fn", [
    ("gelu_tanh", lambda t: F.gelu(t, approximate="tanh")),
    ("sigmoid", torch.sigmoid),
    ("tanh", torch.tanh),
    ("silu", F.silu),
])  # fmt: skip
def test_f16_composite_unary_rounds_once(name, fn):
    """Within one ulp of eager (one rounding of an f32 result that differs from torch's in the last f32 bits); each
    step rounded in f16 was up to 2 ulps off for sigmoid and silu, 641 for gelu's tanh form, 4090 for tanh near 0."""
    x = _half(64, 32, seed=5)
    got, expected = _simulated(fn, x), fn(x)
    assert _max_ulps(got, expected) <= 1, f"f16 {name}: {_max_ulps(got, expected)} ulps from eager"


def test_f16_floor_ceil_exact():
    """Through f32 (both casts exact): integral values, halves, huge values, ±0, ±inf and NaN as eager."""
    special = torch.tensor([2.5, -2.5, 0.5, -0.5, -0.0, 0.0, 65504.0, -65504.0, 1023.5, -1023.5, 6e-8, -6e-8,
                            float("inf"), float("-inf"), float("nan"), 7.0], dtype=torch.float16)
    x = torch.cat([special, _half(240, seed=6, scale=100.0)])
    got_f, got_c = _simulated(lambda t: (torch.floor(t), torch.ceil(t)), x)
    for got, expected in ((got_f, torch.floor(x)), (got_c, torch.ceil(x))):
        assert got.dtype == torch.float16
        assert torch.equal(got.view(torch.int16), expected.view(torch.int16))
