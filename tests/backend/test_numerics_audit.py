"""docs/numerics.md's audit table, one test per row: f16 and bf16 ops compiled for the simulator against eager.

``exact``: bit for bit with eager (the op computes where eager computes — in f32 with one rounding where eager's CPU
kernel widens — and with the operands eager uses: a 0-d f32 tensor or a number kept in f32 by mul and div).
``ulp``: within one ulp of the dtype (the vector unit's sequences for tanh, erf, GELU differ from libm's in f32,
so a result near a rounding boundary of the dtype may round the other way). ``known``: differs from eager, the
reason in the table (strict xfail).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

S = torch.tensor(0.3)

ROWS = {  # name: (fn of x, y (positive), kind)
    "add": (lambda x, y: x + y, "exact"),
    "mul": (lambda x, y: x * y, "exact"),
    "div": (lambda x, y: x / y, "exact"),
    "mul by 0-d f32": (lambda x, y: x * S, "exact"),
    "div by 0-d f32": (lambda x, y: x / S, "exact"),
    "mul by number": (lambda x, y: x * 0.3, "exact"),
    "add number": (lambda x, y: x + 0.3, "exact"),
    "0-d f32 times tensor": (lambda x, y: S * x, "exact"),
    "add with alpha": (lambda x, y: torch.add(x, y, alpha=3), "exact"),
    "exp": (lambda x, y: torch.exp(x), "exact"),
    "log": (lambda x, y: torch.log(y), "exact"),
    "sqrt": (lambda x, y: torch.sqrt(y), "exact"),
    "rsqrt": (lambda x, y: torch.rsqrt(y), "exact"),
    "reciprocal": (lambda x, y: torch.reciprocal(y), "exact"),
    "sigmoid": (lambda x, y: torch.sigmoid(x), "exact"),
    "silu": (lambda x, y: F.silu(x), "exact"),
    "sin": (lambda x, y: torch.sin(x), "exact"),
    "cos": (lambda x, y: torch.cos(x), "exact"),
    "pow 2": (lambda x, y: x**2, "exact"),
    "pow 3": (lambda x, y: x**3, "exact"),
    "tanh": (lambda x, y: torch.tanh(x), "ulp"),
    "gelu": (lambda x, y: F.gelu(x), "ulp"),
    "gelu tanh": (lambda x, y: F.gelu(x, approximate="tanh"), "ulp"),
    "erf": (lambda x, y: torch.erf(x), "ulp"),
    "log1p": (lambda x, y: torch.log1p(y), "ulp"),
    "expm1": (lambda x, y: torch.expm1(x), "ulp"),
    "atan": (lambda x, y: torch.atan(x), "ulp"),
    "atan2": (lambda x, y: torch.atan2(x, y - 1), "ulp"),
    "asin": (lambda x, y: torch.asin(x.clamp(-0.99, 0.99)), "ulp"),
    "acos": (lambda x, y: torch.acos(x.clamp(-0.99, 0.99)), "ulp"),
    "sinh": (lambda x, y: torch.sinh(x), "ulp"),
    "cosh": (lambda x, y: torch.cosh(x), "ulp"),
    "asinh": (lambda x, y: torch.asinh(x), "ulp"),
    "acosh": (lambda x, y: torch.acosh(y + 0.5), "ulp"),
    "atanh": (lambda x, y: torch.atanh(x.clamp(-0.99, 0.99)), "ulp"),
    "log2": (lambda x, y: torch.log2(y), "ulp"),
    "log10": (lambda x, y: torch.log10(y), "ulp"),
    "round": (lambda x, y: torch.round(x * 4), "exact"),
    "sum": (lambda x, y: x.sum(-1), "exact"),
    "mean": (lambda x, y: x.mean(-1), "exact"),
    "amax": (lambda x, y: x.amax(-1), "exact"),
    "var": (lambda x, y: x.var(-1), "exact"),
    "softmax": (lambda x, y: torch.softmax(x, -1), "exact"),
    "layer norm": (lambda x, y: F.layer_norm(x, (x.shape[-1],)), "ulp"),
    "log_softmax": (lambda x, y: torch.log_softmax(x, -1), "exact"),
    "log_softmax over dim 0": (lambda x, y: torch.log_softmax(x, 0), "exact"),
    "rms norm (composite)": (lambda x, y: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6), "exact"),
    "rsqrt of 16 elements": (lambda x, y: torch.rsqrt(y[:, 0]), "exact"),
}


def _check(fn, kind):
    torch.manual_seed(0)
    for dt, ulp in ((torch.float16, 2.0**-10), (torch.bfloat16, 2.0**-7)):
        x = torch.randn(16, 256).to(dt)
        y = (torch.randn(16, 256).abs() + 0.5).to(dt)
        torch._dynamo.reset()
        out = torch.compile(fn, backend="npu")(x, y)
        exp = fn(x, y)
        assert out.dtype == exp.dtype
        if kind == "exact":
            assert torch.equal(out, exp), f"{dt}: {int((out != exp).sum())} of {exp.numel()} elements differ"
        else:
            err = ((out.float() - exp.float()).abs() / (exp.float().abs() * ulp).clamp(min=1e-6)).max().item()
            assert err <= 1.0, f"{dt}: {err:.2f} ulp from eager"


@pytest.mark.parametrize("row", list(ROWS))
def test_row(row):
    fn, kind = ROWS[row]
    if kind == "known":  # still differs from eager: the day it matches, move the row (and its table line)
        with pytest.raises(AssertionError):
            _check(fn, "exact")
        return
    _check(fn, kind)


def test_gelu_of_infinities_as_eager():
    """gelu(+inf) is NaN in f32 and bf16 (eager's vectorized GELU), +inf in f16; gelu(-inf) NaN in all three."""
    t = torch.tensor([float("inf"), -float("inf"), 3e38, 1.0] * 4)
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        torch._dynamo.reset()
        out, exp = torch.compile(F.gelu, backend="npu")(t.to(dt)), F.gelu(t.to(dt))
        assert torch.equal(out.isnan(), exp.isnan()), dt
        assert torch.equal(out.nan_to_num(0.0), exp.nan_to_num(0.0)), dt


def test_gelu_tanh_of_infinities_and_large_values_as_eager():
    """The tanh form: gelu(+inf) = +inf, gelu(-inf) NaN, and gelu(3e38) = 3e38 (eager halves x before the factor
    1 + tanh = 2; doubling it first would overflow to inf)."""
    t = torch.tensor([float("inf"), -float("inf"), 3e38, -3e38, 1.0] * 4)
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        fn = lambda x: F.gelu(x, approximate="tanh")  # noqa: E731
        torch._dynamo.reset()
        out, exp = torch.compile(fn, backend="npu")(t.to(dt)), fn(t.to(dt))
        assert torch.equal(out.isnan(), exp.isnan()), dt
        assert torch.equal(out.nan_to_num(0.0), exp.nan_to_num(0.0)), (dt, out[:5], exp[:5])
