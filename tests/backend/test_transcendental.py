"""log1p, expm1, the inverse trig and hyperbolic functions, log2/log10, round, hardtanh/leaky_relu/elu,
isnan/isinf/isfinite (lowerings/transcendental.py), clamp with tensor bounds:
IEEE edge values as eager gives them (signed zeros included), f32 accuracy in ulps against float64 over a sample of
every magnitude, and every kernel on the simulator."""

from __future__ import annotations

import pytest
import torch

import torch_npu_backend

INF, NAN = float("inf"), float("nan")
EDGES = [0.0, -0.0, 1.0, -1.0, INF, -INF, NAN, 0.5, -0.5, 1e-30, -1e-30, 1e-7, -1e-7, 0.99999, -0.99999, 1.00001,
         2.0, -2.0, 4095.0, 4097.0, 88.5, 89.0, 89.5, -20.5, -100.0, 1e20, -1e20, 3e38, 1e-45, 0.41421356,
         0.41421357, 2.4142135]  # fmt: skip
UNARY = ["log1p", "expm1", "atan", "asin", "acos", "sinh", "cosh", "asinh", "acosh", "atanh", "log2", "log10"]
MAX_ULP = 4.0  # measured: 3.84 (expm1), 3.3 (asinh), 3.0 (asin), 2.6 (log10); eager's libm: ≤ 1.3


def _run(fn, *args):
    torch._dynamo.reset()
    with torch_npu_backend.profile(trace=False) as prof:
        out = torch.compile(fn, backend="npu")(*args)
    assert prof.records, "no kernel launched"
    assert not prof.interpreted(), [r.reason for r in prof.interpreted()]
    return out


def _same(out, want, what):
    """Equal to eager within f32's op-suite tolerance, NaN where eager is NaN, and zeros with eager's sign.
    (atol: a subnormal result may be 0 in eager, whose vectorized log1p flushes log1p(1e-45) to 0.)"""
    torch.testing.assert_close(out, want, rtol=1.3e-6, atol=torch.finfo(torch.float32).tiny, equal_nan=True,
                               msg=lambda m: f"{what}: {m}")
    zeros = want == 0
    assert torch.equal(out[zeros].signbit(), want[zeros].signbit()), f"{what}: signs of zeros differ"


def _eager(f, x):
    """Eager's result, where it overflows and float64's does not, float64's rounded: eager's vectorized sinh and
    cosh overflow from 88.7 (they form exp(x)), its scalar loop (a short tensor's elements) gives sinh(89) = 2.2e38."""
    want, ref = f(x), f(x.double()).to(x.dtype)
    return torch.where(want.isinf() & ref.isfinite(), ref, want)


def _sample():
    g = torch.Generator().manual_seed(0)
    return torch.cat([torch.tensor(EDGES), torch.rand(512, generator=g) * 2 - 1, torch.randn(512, generator=g) * 10,
                      torch.exp(torch.randn(512, generator=g) * 8) * torch.randn(512, generator=g).sign()])


def _ulps(out, x64):
    """|out - x64| in ulps of x64 rounded to f32 (0 where both are NaN or out equals that rounding)."""
    r = x64.float()
    ulp = (torch.nextafter(r.abs(), torch.tensor(INF)) - r.abs()).double()
    err = (out.double() - x64).abs() / ulp
    err[(out == r) | (out.isnan() & x64.isnan())] = 0
    return err.nan_to_num(INF)


@pytest.mark.parametrize("name", UNARY)
def test_f32_edges_and_ulps(name):
    f = getattr(torch, name)
    x = _sample()
    out = _run(f, x)
    _same(out[: len(EDGES)], _eager(f, x[: len(EDGES)]), f"{name} at the edge values")
    err = _ulps(out, f(x.double()))
    i = int(err.argmax())
    assert err[i] <= MAX_ULP, f"{name}({x[i].item()!r}) = {out[i].item()!r}: {err[i].item():.2f} ulp from float64"


def test_atan2_quadrants_zeros_and_infinities():
    signed = [0.0, -0.0, 1.0, -1.0, INF, -INF, NAN, 1e-30, 3e38]
    y = torch.tensor([a for a in signed for _ in signed])
    x = torch.tensor([b for _ in signed for b in signed])
    g = torch.Generator().manual_seed(1)
    y = torch.cat([y, torch.randn(1024, generator=g) * torch.exp(torch.randn(1024, generator=g) * 4)])
    x = torch.cat([x, torch.randn(1024, generator=g) * torch.exp(torch.randn(1024, generator=g) * 4)])
    out = _run(torch.atan2, y, x)
    n = len(signed) ** 2
    _same(out[:n], torch.atan2(y[:n], x[:n]), "atan2 at the edge values")  # atan2(±0, -0) = ±π, (inf, inf) = π/4 …
    assert out[1].item() == torch.atan2(torch.tensor(0.0), torch.tensor(-0.0)).item() == pytest.approx(3.14159265)
    err = _ulps(out, torch.atan2(y.double(), x.double()))
    assert err.max() <= MAX_ULP, f"atan2: {err.max().item():.2f} ulp from float64"


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_computes_in_f32_and_rounds_once(dtype):
    """f16/bf16: the f32 result rounded once; eager rounds libm's — at most one ulp apart, almost always equal."""
    x = torch.cat([torch.tensor(EDGES), torch.linspace(-0.999, 0.999, 999), torch.linspace(-12, 12, 999)]).to(dtype)
    fns = [getattr(torch, n) for n in UNARY]
    outs = _run(lambda v: [f(v) for f in fns], x)
    for name, f, out in zip(UNARY, fns, outs):
        want = _eager(f, x)
        assert out.dtype == dtype
        torch.testing.assert_close(out, want, rtol=torch.finfo(dtype).eps, atol=0, equal_nan=True,
                                   msg=lambda m, name=name: f"{name} in {dtype}: {m}")
        assert (out == want).logical_or(out.isnan() & want.isnan()).float().mean() > 0.99, name


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_float_class_tests(dtype):
    x = torch.tensor(EDGES).to(dtype)
    out = _run(lambda v: (torch.isnan(v), torch.isinf(v), torch.isfinite(v), torch.isposinf(v), torch.isneginf(v)), x)
    for got, want in zip(out, (x.isnan(), x.isinf(), x.isfinite(), x.isposinf(), x.isneginf())):
        assert torch.equal(got, want)


def test_float_class_tests_of_integers():
    """An integer is never NaN or infinite: the results are constants (the input is not read)."""
    i = torch.arange(-3, 5, dtype=torch.int32)
    out = _run(lambda v: (torch.isnan(v), torch.isinf(v), torch.isfinite(v), v + 1), i)
    assert not out[0].any() and not out[1].any() and out[2].all() and out[2].dtype == torch.bool


def test_integer_input_promotes_to_float():
    i = torch.arange(-3, 5, dtype=torch.int64)
    j = i.flip(0).contiguous()
    out = _run(lambda v, w: (torch.atan(v), torch.log1p(v.abs()), torch.atan2(v, w)), i, j)
    for got, want in zip(out, (torch.atan(i), torch.log1p(i.abs()), torch.atan2(i, j))):
        _same(got, want, "integer input")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_round_half_to_even_bit_for_bit(dtype):
    x = torch.tensor([0.5, 1.5, 2.5, -0.5, -2.5, -0.4, 0.4, 1e10, -3.7, NAN, INF, -INF, 8388607.5, 4.5, 0.49999997,
                      -0.0, 1e-40, 2.0**23 + 1, -(2.0**24) + 1]).to(dtype)
    out = _run(torch.round, x)
    want = torch.round(x)
    assert torch.equal(out.nan_to_num(0.25), want.nan_to_num(0.25))
    assert torch.equal(out[~want.isnan()].signbit(), want[~want.isnan()].signbit())


def test_round_of_integers_is_the_identity():
    i = torch.tensor([2**40 + 1, -3, 7])
    out = torch.compile(lambda v: torch.round(v) * 1, backend="npu")(i)
    assert torch.equal(out, i)


def test_activations_and_tensor_clamp():
    import torch.nn.functional as F

    x = torch.cat([torch.tensor(EDGES), torch.linspace(-8, 8, 97)])
    lo, hi = -torch.rand(len(x), generator=torch.Generator().manual_seed(2)), torch.full((len(x),), 0.75)
    fns = (lambda v, a, b: (F.hardtanh(v), F.relu6(v), F.leaky_relu(v, 0.2), F.elu(v), F.selu(v), torch.clamp(v, a, b),
                            torch.clamp(v, min=a)))  # fmt: skip
    for got, want in zip(_run(fns, x, lo, hi), fns(x, lo, hi)):
        _same(got, want, "activation")
