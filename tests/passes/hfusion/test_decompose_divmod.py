"""``hfusion-decompose-divmod`` keeps the meaning of floordiv/truncdiv/remainder/fmod: the reference interpreter
runs the decomposed ops (IEEE f32 steps, wrapping integers, as the simulator computes them) on the edges of each
dtype and on random operands, and gives the undecomposed op's values bit for bit — which are eager's wherever eager
defines them. One estimate round fewer than ``ESTIMATE_ROUNDS`` gives wrong integer quotients."""

from __future__ import annotations

import pytest
import torch

from graph_passes.passes.hfusion import decompose_divmod
from tests.passes.hfusion.helpers import run
from torch_npu_backend.interpreter import interpret

FUNS = ("floordiv", "truncdiv", "remainder", "fmod")
EAGER = {"floordiv": lambda a, b: torch.div(a, b, rounding_mode="floor"),
         "truncdiv": lambda a, b: torch.div(a, b, rounding_mode="trunc"), "remainder": torch.remainder,
         "fmod": torch.fmod}  # fmt: skip
IR_DTYPES = {torch.int32: "i32", torch.int64: "i64", torch.float32: "f32", torch.float16: "f16",
             torch.bfloat16: "bf16"}  # fmt: skip


def _module(fun: str, dtype: str, n: int) -> str:
    t = f"tensor<{n}x{dtype}>"
    return f"""module {{
  func.func @main(%a: {t}, %b: {t}) -> {t} {{
    %0 = hfusion.elemwise_binary %a, %b {{fun = "{fun}"}} : ({t}, {t}) -> {t}
    func.return %0 : {t}
  }}
}}"""


def integer_operands(dtype: torch.dtype, n: int = 4000, seed: int = 0):
    """Every pair of the dtype's edges, then random pairs over the whole range and over every magnitude."""
    info = torch.iinfo(dtype)
    edges = torch.tensor([info.min, info.max, info.min + 1, info.max - 1, -1, 0, 1, 2, -2, 3, -7, 2 ** (info.bits - 2),
                          -(2 ** (info.bits - 2)), 2**24 + 1, 12345], dtype=dtype)
    ea, eb = torch.meshgrid(edges, edges, indexing="ij")
    gen = torch.Generator().manual_seed(seed)
    ra, rb = (torch.randint(info.min, info.max, (n,), generator=gen, dtype=torch.int64).to(dtype) for _ in range(2))
    shifts = torch.randint(0, info.bits - 1, (n,), generator=gen).to(dtype)
    rb = torch.where(torch.arange(n) % 2 == 0, rb >> shifts, rb)  # divisors of every magnitude
    return torch.cat([ea.flatten(), ra]), torch.cat([eb.flatten(), rb])


def float_operands(dtype: torch.dtype, n: int = 4000, seed: int = 0):
    """Every pair of special values (±0, ±inf, NaN, subnormals, the largest finite), then random pairs and exact
    multiples k·b (±1 ulp), where the truncated f32 quotient lands on an integer."""
    fi = torch.finfo(dtype)
    special = torch.tensor([0.0, -0.0, 1.0, -1.0, float("inf"), -float("inf"), float("nan"), 3.5, -3.5, fi.tiny,
                            -fi.tiny, fi.tiny / 4, fi.max, -fi.max, 0.1, -0.1, 7.0, 2.5], dtype=dtype)
    sa, sb = torch.meshgrid(special, special, indexing="ij")
    gen = torch.Generator().manual_seed(seed)
    ra = (torch.randn(n, generator=gen) * 1000).to(dtype)
    rb = (torch.randn(n, generator=gen) * 0.37).to(dtype)
    k = torch.randint(-2000, 2000, (n,), generator=gen).to(dtype)
    multiple = (k * rb).to(dtype)
    near = torch.cat([multiple, torch.nextafter(multiple.float(), torch.tensor(float("inf"))).to(dtype)])
    return torch.cat([sa.flatten(), ra, near]), torch.cat([sb.flatten(), rb, rb, rb])


def _same_bits(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    if not x.is_floating_point():
        return x == y
    return ((x == y) & (torch.signbit(x) == torch.signbit(y))) | (x.isnan() & y.isnan())


def _decomposed(fun: str, a: torch.Tensor, b: torch.Tensor):
    text = _module(fun, IR_DTYPES[a.dtype], a.numel())
    before, _ = run(text, "canonicalize")
    after, ctx = run(text, "hfusion-decompose-divmod,canonicalize,cse")
    assert ctx.counter("hfusion-decompose-divmod", "divisions-decomposed") == 1
    return interpret(before, [a, b])[0], interpret(after, [a, b])[0]


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=["i32", "i64"])
@pytest.mark.parametrize("fun", FUNS)
def test_integers_exact(fun, dtype):
    a, b = integer_operands(dtype)
    meaning, got = _decomposed(fun, a, b)
    bad = (~_same_bits(got, meaning)).nonzero().flatten()
    assert not len(bad), [(a[i].item(), b[i].item(), got[i].item(), meaning[i].item()) for i in bad[:5]]
    # the op's meaning is eager's where eager has one (no division by zero; trunc of INT_MIN / -1 traps in C++)
    defined = (b != 0) & ~((a == torch.iinfo(dtype).min) & (b == -1))
    assert torch.equal(meaning[defined], EAGER[fun](a[defined], b[defined]))
    zero = b == 0  # eager raises ZeroDivisionError: quotient 0, remainder a
    assert torch.equal(meaning[zero], torch.zeros_like(a[zero]) if fun in ("floordiv", "truncdiv") else a[zero])


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=["i32", "i64"])
def test_one_round_fewer_is_not_enough(dtype, monkeypatch):
    ir = IR_DTYPES[dtype]
    monkeypatch.setitem(decompose_divmod.ESTIMATE_ROUNDS, ir, decompose_divmod.ESTIMATE_ROUNDS[ir] - 1)
    a, b = integer_operands(dtype)
    meaning, got = _decomposed("floordiv", a, b)
    assert (got != meaning).sum() > 0


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=["f32", "f16", "bf16"])
@pytest.mark.parametrize("fun", FUNS)
def test_floats_exact_below_two_to_the_24(fun, dtype):
    a, b = float_operands(dtype)
    meaning, got = _decomposed(fun, a, b)
    assert _same_bits(meaning, EAGER[fun](a, b)).all()  # tensor divisors: eager's per-step rounding
    in_range = ~((a.double() / b.double()).abs() >= 2**24)
    bad = (~_same_bits(got, meaning) & in_range).nonzero().flatten()
    assert not len(bad), [(a[i].item(), b[i].item(), got[i].item(), meaning[i].item()) for i in bad[:5]]


def test_float_quotients_past_two_to_the_24():
    """The documented deviation: floor division within one ulp of the quotient, fmod/remainder ±0 (eager: the exact
    remainder, smaller than |b|)."""
    gen = torch.Generator().manual_seed(1)
    sign = lambda: torch.randint(0, 2, (4000,), generator=gen) * 2 - 1  # noqa: E731
    a = sign() * (1 + torch.rand(4000, generator=gen)) * 1e30
    b = sign() * (1 + torch.rand(4000, generator=gen)) * 1e20
    assert ((a / b).abs() >= 2**24).all()
    meaning, got = _decomposed("floordiv", a, b)
    assert ((got.double() - meaning.double()).abs() <= meaning.double().abs() * 2**-23).all()
    a1, b1 = torch.tensor([-1.3461031933078814e34]), torch.tensor([6.044283775024086e26])  # a/b = -22270681.58
    meaning, got = _decomposed("floordiv", a1, b1)
    assert meaning.item() == -22270684.0 and got.item() == -22270682.0  # RN(a/b) = the exact floor; eager's
    #                                                                     (a - fmod)/b rounds one ulp (2) below
    meaning, got = _decomposed("remainder", a, b)
    assert (got == 0).all() and (meaning.abs() < b.abs()).all()
