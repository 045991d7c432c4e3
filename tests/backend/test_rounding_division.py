"""Floor/trunc division, remainder and fmod compiled end to end, every kernel on the simulator: bit for bit with
eager for integers (every pair of int32/int64 edges), for floats wherever |a/b| < 2^24 (special values, f16/bf16
rounding each step as eager does, scalar divisors computed in f32 as eager does), and with the documented
deviation past that (hfusion-decompose-divmod's docstring)."""

from __future__ import annotations

import pytest
import torch

import torch_npu_backend
from tests.passes.hfusion.test_decompose_divmod import EAGER, FUNS, float_operands, integer_operands
from torch_npu_backend.interpreter import division


def _simulated(fn, *inputs):
    torch._dynamo.reset()
    with torch_npu_backend.profile(trace=False) as prof:
        out = torch.compile(fn, backend="npu")(*inputs)
    assert prof.records and all(r.executed == "simulator" for r in prof.records), \
        [(r.kernel, r.executed, r.reason) for r in prof.records]
    return out


def _bits(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return ((x == y) & (torch.signbit(x) == torch.signbit(y))) | (x.isnan() & y.isnan())


def test_reproduction():
    """``a // b``, trunc division, ``a % b`` and ``(a*3)//4`` on int64 (torch's default integer dtype)."""
    a, b = torch.randint(-100, 100, (64,)), torch.randint(1, 7, (64,))
    for f in [lambda a, b: a // b, lambda a, b: torch.div(a, b, rounding_mode="trunc"), lambda a, b: a % b,
              lambda a, b: (a * 3) // 4]:
        assert torch.equal(_simulated(f, a, b), f(a, b))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=["i32", "i64"])
def test_integer_edges(dtype):
    """Every pair of the dtype's edges (INT_MIN, INT_MAX, ±1, 0 …) and random operands of every magnitude, all
    four funs in one kernel; a zero divisor gives quotient 0 and remainder a (eager raises ZeroDivisionError)."""
    a, b = integer_operands(dtype, n=64 if dtype == torch.int64 else 512)
    got = _simulated(lambda a, b: tuple(EAGER[f](a, b) for f in FUNS), a, b)
    defined = (b != 0) & ~((a == torch.iinfo(dtype).min) & (b == -1))  # eager's trunc of INT_MIN / -1 traps
    for fun, g in zip(FUNS, got):
        assert torch.equal(g, division(fun, a, b)), fun
        assert torch.equal(g[defined], EAGER[fun](a[defined], b[defined])), fun


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
def test_float_special_values(dtype):
    """±0, ±inf, NaN, subnormals, the largest finite value, exact multiples k·b ± 1 ulp: bit for bit (the sign of
    zero too) where |a/b| < 2^24."""
    a, b = float_operands(dtype, n=256)
    got = _simulated(lambda a, b: tuple(EAGER[f](a, b) for f in FUNS), a, b)
    in_range = ~((a.double() / b.double()).abs() >= 2**24)
    for fun, g in zip(FUNS, got):
        bad = (~_bits(g, EAGER[fun](a, b)) & in_range).nonzero().flatten()
        assert not len(bad), (fun, [(a[i].item(), b[i].item(), g[i].item()) for i in bad[:5]])


def test_half_rounding_follows_eager():
    """Large f16 quotients, where rounding matters: with a tensor divisor eager rounds every step of its formula
    to half, with a scalar, one-element or expanded divisor it computes in f32 and rounds once; the compiled kernels
    do the same."""
    gen = torch.Generator().manual_seed(0)
    a = (torch.randn(4, 96, generator=gen) * 1000).half()
    b = (torch.randn(96, generator=gen) * 0.37).half()
    one = (torch.randn(1, generator=gen) * 0.37).half()

    def fn(a, b, one):
        return a // b, a // 0.37, a // one, torch.div(a, one, rounding_mode="trunc"), 7 // b, a % 0.37, a % b, \
            a // one.expand(4, 96)  # an expanded divisor has stride 0 everywhere: eager's scalar path too

    got, expected = _simulated(fn, a, b, one), fn(a, b, one)
    per_step = torch.div(a.float(), b.float(), rounding_mode="floor").half()
    assert not torch.equal(per_step, expected[0])  # the data tells the two roundings apart
    for i, (g, e) in enumerate(zip(got, expected)):
        assert _bits(g, e).all(), i


def test_float_quotient_past_two_to_the_24():
    """The documented deviation: floor division is the f32 quotient a/b (an integer there), within one ulp of
    eager's; remainder/fmod give ±0 where eager's exact remainder is smaller than |b|."""
    a, b = torch.tensor([-1.3461031933078814e34, 3.0e20, -5.5e12]), torch.tensor([6.044283775024086e26, 7.0, 0.3])
    floor, rem = _simulated(lambda a, b: (a // b, a % b), a, b)
    eager = a // b
    assert ((floor.double() - eager.double()).abs() <= eager.double().abs() * 2**-23).all()
    assert floor[0].item() == -22270682.0 and eager[0].item() == -22270684.0  # the exact floor is -22270682
    assert (rem == 0).all() and ((a % b).abs() < b.abs()).all()


def test_divisor_is_a_dynamic_size():
    """``x // x.shape[0]`` with dynamic shapes: the divisor is an index value at run time; one compile, two sizes."""
    def fn(x):
        return x // x.shape[0], torch.fmod(x, x.shape[1]), x.long() % x.shape[0]

    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="npu", dynamic=True)
    for n in (3, 5):
        x = torch.randn(n, 7) * 100
        with torch_npu_backend.profile(trace=False) as prof:
            got = compiled(x)
        assert all(r.executed == "simulator" for r in prof.records)
        assert all(torch.equal(g, e) for g, e in zip(got, fn(x)))
