"""The op suite's cases: small functions that together reach every entry of the lowering table.

Each case builds its inputs for a dtype (``f`` is the float dtype under test); ``grad`` marks the inputs whose
gradients are checked. ``scale`` widens the tolerance for a stated reason (None otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.nn.functional as F

aten = torch.ops.aten
prims = torch.ops.prims


@dataclass(frozen=True)
class Case:
    name: str
    fn: Callable
    make: Callable  # make(dtype, gen) -> list of inputs
    backward: bool = True
    floats: bool = True  # parametrize over f32 and a low-precision dtype; False: the dtypes are fixed by ``make``
    scale: float = 1.0
    why_scale: str = ""
    extra: dict = field(default_factory=dict)


def _wide(op, *args):
    """``op(*args, out_dtype=torch.float32)`` when compiled. Eager has no CPU kernel for the ``.dtype`` overloads,
    so the eager reference is what the overload means: the same product of the operands widened to f32."""
    if torch.compiler.is_compiling():
        return op(*args, out_dtype=torch.float32)
    return op(*(x.float() for x in args))


def rand(*shape, dtype=torch.float32, gen=None, grad=True, lo=-2.0, hi=2.0):
    t = (torch.rand(*shape, generator=gen) * (hi - lo) + lo).to(dtype)
    return t.requires_grad_(grad and dtype.is_floating_point)


def pos(*shape, dtype=torch.float32, gen=None, grad=True):
    return rand(*shape, dtype=dtype, gen=gen, grad=grad, lo=0.5, hi=2.0)


def ints(*shape, hi=10, dtype=torch.int64, gen=None):
    return torch.randint(0, hi, shape, generator=gen).to(dtype)


def nonzero(*shape, dtype=torch.float32, gen=None, grad=True):
    """Divisors: magnitudes in [0.5, 2], either sign."""
    sign = torch.randint(0, 2, shape, generator=gen) * 2 - 1
    t = ((torch.rand(*shape, generator=gen) * 1.5 + 0.5) * sign).to(dtype)
    return t.requires_grad_(grad and dtype.is_floating_point)


def int_division_operands(dtype):
    """Dividends in [-100, 100), divisors in ±[1, 7] (eager raises on a zero divisor)."""
    def make(f, g):
        return [torch.randint(-100, 100, (3, 8), generator=g).to(dtype),
                (torch.randint(1, 8, (3, 8), generator=g) * (torch.randint(0, 2, (3, 8), generator=g) * 2 - 1)).to(dtype)]

    return make


def _shift_right(x, y):
    """T5's labels shifted right: a slice assigned from another tensor (a functionalized ``copy``), a rank-0
    constant tensor written into the first column."""
    z = x.clone()
    z[:, 1:] = y[:, :-1] * 2
    z[:, 0] = torch.tensor(0.5).to(x.dtype)
    return z


def _empties(x):
    """Every kind of uninitialised tensor, then written whole (copy_ / fill_)."""
    a = torch.empty_like(x)
    a.copy_(x * 2)
    b = x.new_empty(x.shape)
    b.fill_(3.0)
    c = torch.empty(x.shape, dtype=x.dtype)
    c.copy_(x)
    d = torch.empty_strided(x.shape, (x.shape[1], 1), dtype=x.dtype)
    d.copy_(x + 1)
    return a + b + c + d


def bools(*shape, gen=None):
    return torch.rand(*shape, generator=gen) > 0.5


def int32_bits(*shape, gen=None):
    """Random i32 values over the whole range, with the bit patterns a float lane would treat specially first: -1
    and 0x7FC00001 (f32 NaNs), 1 (a subnormal), -2^31 (-0.0), 0x7F800000 (inf)."""
    x = torch.randint(-(2**31), 2**31 - 1, shape, generator=gen, dtype=torch.int32)
    x.view(-1)[:5] = torch.tensor([-1, 0x7FC00001, 1, -(2**31), 0x7F800000], dtype=torch.int32)
    return x


def _x(f, g):
    return [rand(3, 8, dtype=f, gen=g)]


def _xy(f, g):
    return [rand(3, 8, dtype=f, gen=g), rand(3, 8, dtype=f, gen=g)]


def _unary_case(name, fn, make=_x, **kw):
    return Case(name, fn, make, **kw)


CASES: list[Case] = [
    # -- arithmetic, broadcasting, promotion -------------------------------------------------------------
    Case("add_broadcast", lambda x, y: x + y, lambda f, g: [rand(2, 3, 4, dtype=f, gen=g), rand(3, 1, dtype=f, gen=g)]),
    Case("add_alpha", lambda x, y: torch.add(x, y, alpha=2.5), _xy),
    Case("add_scalar", lambda x: aten.add.Scalar(x, 1.5) + 2, _x),
    Case("sub", lambda x, y: torch.sub(x, y, alpha=3) - 1.0, _xy),
    Case("sub_scalar", lambda x: aten.sub.Scalar(x, 0.5), _x),
    Case("mul", lambda x, y: x * y * 3, lambda f, g: [rand(4, 1, 5, dtype=f, gen=g), rand(6, 1, dtype=f, gen=g)]),
    Case("mul_scalar", lambda x: aten.mul.Scalar(x, -2.0), _x),
    Case("div", lambda x, y: x / y / 2, lambda f, g: [rand(3, 8, dtype=f, gen=g), pos(8, dtype=f, gen=g)]),
    Case("div_scalar", lambda x: aten.div.Scalar(x, 4.0), _x),
    Case("promote_int_float", lambda i, x: i + x, lambda f, g: [ints(3, 8, dtype=torch.int32, gen=g),
                                                                 rand(3, 8, dtype=f, gen=g)]),
    Case("promote_int_scalar", lambda i: (i * 2.5, i + 3, i / 4), lambda f, g: [ints(3, 8, gen=g)], backward=False,
         floats=False),
    Case("int_true_div", lambda a, b: a / b, lambda f, g: [ints(3, 8, gen=g), ints(3, 8, gen=g) + 1], backward=False,
         floats=False),
    Case("bool_add_int", lambda b, i: b + i, lambda f, g: [bools(3, 8, gen=g), ints(3, 8, dtype=torch.int32, gen=g)],
         backward=False, floats=False),
    Case("maximum_minimum", lambda x, y: torch.maximum(x, y) + torch.minimum(x, y) * 2, _xy),
    Case("pow_scalar", lambda x: x ** 2 + x.abs() ** 0.5, _x),
    Case("pow_tensor", lambda x, y: x ** y, lambda f, g: [pos(3, 8, dtype=f, gen=g), rand(3, 8, dtype=f, gen=g)]),
    Case("pow_scalar_base", lambda x: torch.pow(2.0, x) + 0.5 ** x, _x),  # MPT's alibi slopes
    Case("clamp", lambda x: torch.clamp(x, -0.5, 0.7) + x.clamp(min=0.1) + x.clamp(max=0.2), _x),
    # -- unary ----------------------------------------------------------------------------------------------
    _unary_case("neg_abs", lambda x: -x + x.abs()),
    _unary_case("exp_log", lambda x: torch.exp(x) + torch.log(x), lambda f, g: [pos(3, 8, dtype=f, gen=g)]),
    _unary_case("sqrt_rsqrt", lambda x: torch.sqrt(x) + torch.rsqrt(x), lambda f, g: [pos(3, 8, dtype=f, gen=g)]),
    _unary_case("reciprocal", lambda x: torch.reciprocal(x), lambda f, g: [pos(3, 8, dtype=f, gen=g)]),
    _unary_case("tanh_sigmoid", lambda x: torch.tanh(x) * torch.sigmoid(x)),
    _unary_case("relu", lambda x: torch.relu(x) * 2),
    _unary_case("gelu", lambda x: F.gelu(x) + F.gelu(x * 2, approximate="tanh")),
    _unary_case("silu", lambda x: F.silu(x)),
    _unary_case("erf", lambda x: torch.erf(x)),
    _unary_case("sin_cos", lambda x: torch.sin(x) * torch.cos(x)),
    # composed from exp/log/sqrt/div, compares and selects (lowerings/transcendental.py; edges: test_transcendental)
    _unary_case("log1p_expm1", lambda x: torch.log1p(x) + torch.expm1(x),
                lambda f, g: [rand(3, 8, dtype=f, gen=g, lo=-0.9, hi=2.0)]),
    Case("atan_atan2", lambda x, y: torch.atan(x * 3) + torch.atan2(x, y), _xy),
    _unary_case("asin_acos", lambda x: torch.asin(x) * torch.acos(x),
                lambda f, g: [rand(3, 8, dtype=f, gen=g, lo=-0.95, hi=0.95)]),
    _unary_case("sinh_cosh", lambda x: torch.sinh(x) + torch.cosh(x) * 2),
    _unary_case("asinh_acosh_atanh", lambda x: torch.asinh(x * 4) + torch.acosh(x.abs() + 1.1) + torch.atanh(x * 0.45)),
    _unary_case("log2_log10", lambda x: torch.log2(x) + torch.log10(x) * 2, lambda f, g: [pos(3, 8, dtype=f, gen=g)]),
    _unary_case("round", lambda x: torch.round(x * 3), backward=False),
    # lowerings/float_math.py (edges, f16 rounding: test_sweep_coverage)
    _unary_case("tan_exp2_erfc", lambda x: (torch.tan(x), torch.exp2(x * 3), torch.erfc(x * 2)), backward=False),
    Case("sign_ops_fmax_hypot", lambda x, y: (torch.signbit(x), torch.copysign(x, y), torch.copysign(x, -1.0),
                                              torch.fmax(x, y), torch.fmin(x, y), torch.hypot(x, y)),
         _xy, backward=False),
    _unary_case("round_decimals", lambda x: (torch.round(x * 10, decimals=2), torch.round(x * 1000, decimals=-2)),
                backward=False),
    _unary_case("gamma_family", lambda x: (torch.lgamma(x * 4), torch.digamma(x * 4), torch.polygamma(1, x * 4),
                                           torch.polygamma(3, x.abs() + 0.5)), backward=False),
    _unary_case("bessel_i", lambda x: (torch.i0(x * 8), torch.special.i0e(x * 10), torch.special.i1e(x * 10),
                                       torch.special.modified_bessel_i0(x.float() * 6),  # f32: no bf16 kernel
                                       torch.special.modified_bessel_i1(x.float() * 8)),
                lambda f, g: [rand(3, 8, dtype=f, gen=g, grad=False)], backward=False),  # no bf16 i1e_backward
    _unary_case("activations", lambda x: (F.hardtanh(x, -0.5, 1.0), F.relu6(x * 4), F.leaky_relu(x, 0.2), F.elu(x),
                                          F.selu(x))),
    Case("clamp_tensor", lambda x, lo, hi: torch.clamp(x, lo, hi) + torch.clamp(x, max=hi),
         lambda f, g: [rand(3, 8, dtype=f, gen=g), rand(3, 8, dtype=f, gen=g, lo=-2, hi=0), rand(8, dtype=f, gen=g, lo=0)]),
    Case("isnan_isinf_isfinite", lambda x: (torch.isnan(x), torch.isinf(x), torch.isfinite(x), torch.isneginf(x)),
         lambda f, g: [torch.tensor([[0.0, -1.5, float("inf"), float("-inf"), float("nan"), 3.0, -0.0, 1e-3]] * 3,
                                    dtype=f)], backward=False),
    _unary_case("floor_ceil_trunc", lambda x: torch.floor(x) + torch.ceil(x * 2) + torch.trunc(x * 3), backward=False),
    # -- rounding division ---------------------------------------------------------------------------------
    # floor_divide and a remainder of a scalar by a tensor have no derivative (torch): inputs without grad
    Case("rounding_division", lambda x, y: (x // y, torch.div(x, y, rounding_mode="trunc"), x // 0.3, 1.5 // y,
                                            aten.div.Scalar_mode(x, -0.7, rounding_mode="trunc"), 1.5 % y),
         lambda f, g: [rand(3, 8, dtype=f, gen=g, lo=-5, hi=5, grad=False), nonzero(3, 8, dtype=f, gen=g, grad=False)],
         backward=False),
    # the backward divides too: d(x % y)/dy = -(x // y), d fmod(x, y)/dy = -trunc(x / y)
    Case("remainder_fmod", lambda x, y: x % y + torch.fmod(x, y) * 2 + x % 0.7 + torch.fmod(x, -0.3),
         lambda f, g: [rand(3, 8, dtype=f, gen=g, lo=-5, hi=5), nonzero(3, 8, dtype=f, gen=g)]),
    *[Case(name, lambda a, b: (a // b, torch.div(a, b, rounding_mode="trunc"), a % b, torch.fmod(a, b), (a * 3) // 4,
                               a % -3, 7 // b, torch.fmod(a, 5)),
           int_division_operands(dtype), backward=False, floats=False)
      for name, dtype in (("int64_division", torch.int64), ("int32_division", torch.int32))],
    # -- comparisons, select, logic, bitwise ---------------------------------------------------------------
    Case("compare_tensor", lambda x, y: (x < y, x <= y, x > y, x >= y, x == y, x != y), _xy, backward=False),
    Case("compare_scalar", lambda x: (x < 0.5, x <= 0, x > 0.1, x >= -1, x == 1.0, x != 0), _x, backward=False),
    Case("compare_int", lambda i, j: (i == j) & (i != 3) | (j > 5), lambda f, g: [ints(3, 8, gen=g), ints(3, 8, gen=g)],
         backward=False, floats=False),
    Case("where", lambda c, x, y: torch.where(c, x, y), lambda f, g: [bools(3, 8, gen=g), rand(3, 8, dtype=f, gen=g),
                                                                      rand(8, dtype=f, gen=g)]),
    Case("where_scalar_other", lambda x: torch.where(x > 0, x, 0.5), _x),
    Case("where_int32", lambda c, i, j: (torch.where(c, i, j), torch.where(c, -1, j)),  # vsel moves f32 lanes' bits
         lambda f, g: [bools(3, 8, gen=g), int32_bits(3, 8, gen=g), int32_bits(3, 8, gen=g)], backward=False,
         floats=False),
    Case("logical", lambda a, b: (torch.logical_and(a, b), torch.logical_or(a, b), torch.logical_xor(a, b),
                                  torch.logical_not(a)),
         lambda f, g: [bools(3, 8, gen=g), ints(3, 8, hi=2, dtype=torch.int32, gen=g)], backward=False, floats=False),
    Case("bitwise", lambda a, b: (a & b, a | b, a ^ b, ~a, a & 6, a | 1, a ^ 3),
         lambda f, g: [ints(3, 8, dtype=torch.int32, gen=g), ints(3, 8, dtype=torch.int32, gen=g)], backward=False,
         floats=False),
    Case("bitwise_bool", lambda a, b: (a & b, ~a), lambda f, g: [bools(3, 8, gen=g), bools(3, 8, gen=g)],
         backward=False, floats=False),
    # -- casts -------------------------------------------------------------------------------------------------
    Case("to_dtype", lambda x: (x.to(torch.float32) * 2, x.to(torch.int32), x.to(torch.bool), x.to(torch.int64)),
         lambda f, g: [rand(3, 8, dtype=f, gen=g, lo=-5, hi=5)]),
    Case("to_float16", lambda x: x.to(torch.float16).to(torch.bfloat16), _x, backward=True),
    Case("convert_element_type", lambda x: prims.convert_element_type(x, torch.float32),
         lambda f, g: [rand(3, 8, dtype=f, gen=g, grad=False)], backward=False),
    # -- creation ---------------------------------------------------------------------------------------------
    Case("full", lambda x: x + torch.full((3, 8), 2.0, dtype=x.dtype) + torch.zeros(8, dtype=x.dtype)
         + torch.ones(3, 1, dtype=x.dtype), _x),
    Case("full_like", lambda x: torch.full_like(x, 3.0) * x + torch.ones_like(x), _x),
    Case("scalar_tensor", lambda x: x * aten.scalar_tensor(2.0, dtype=x.dtype), _x),
    Case("arange", lambda x: x * torch.arange(8, dtype=x.dtype) + torch.arange(1, 17, 2).to(x.dtype), _x),
    # -- shape ---------------------------------------------------------------------------------------------------
    Case("view_reshape", lambda x: x.view(4, 6).reshape(2, 12) * 2, lambda f, g: [rand(3, 8, dtype=f, gen=g)]),
    Case("unsqueeze_squeeze", lambda x: x.unsqueeze(1).squeeze(1).unsqueeze(0).squeeze() + x.unsqueeze(-1).squeeze(-1),
         _x),
    Case("squeeze_dims", lambda x: torch.squeeze(x * 2, (0, 2)), lambda f, g: [rand(1, 8, 1, dtype=f, gen=g)]),
    Case("squeeze_dim", lambda x: aten.squeeze.dim(x * 2, 1), lambda f, g: [rand(3, 1, 4, dtype=f, gen=g)]),
    Case("squeeze_all", lambda x: aten.squeeze.default(x * 2), lambda f, g: [rand(3, 1, 4, dtype=f, gen=g)]),
    Case("expand", lambda x: x.expand(4, 3, 8) * 2, lambda f, g: [rand(3, 1, dtype=f, gen=g)]),
    Case("permute_transpose_t", lambda x, y: x.permute(2, 0, 1) * 2 + y.t() + x.transpose(0, 2).transpose(1, 2),
         lambda f, g: [rand(2, 3, 4, dtype=f, gen=g), rand(3, 2, dtype=f, gen=g)]),
    Case("clone_detach", lambda x: x.clone() * 2 + x.detach(), _x),
    Case("alias", lambda x: aten.alias(x) * 2, _x),
    Case("tensor_constant", lambda x: x * torch.tensor([1.0, 2.0, 3.0]).to(x.dtype).unsqueeze(1), _x),
    Case("as_strided_prefix", lambda x: torch.as_strided(x * 2, (3, 8), (8, 1)),
         lambda f, g: [rand(6, 4, dtype=f, gen=g)], backward=False),
    Case("slice", lambda x: x[:, 1:7] * 2 + x[-2:, :3].sum() + x[1:, 4:][0, -1], lambda f, g: [rand(4, 8, dtype=f, gen=g)]),
    # a strided slice's backward is a strided slice_scatter, which has no lowering yet: forward only
    Case("slice_strided", lambda x: x[:, 1:7:2] * 2 + x[::3, -3:].sum(), lambda f, g: [rand(4, 8, dtype=f, gen=g)],
         backward=False),
    Case("slice_scatter_strided", lambda x, y: (aten.slice_scatter(x, y, 1, 0, None, 2) * 2,
                                                aten.slice_scatter(x, y, 1, 1, 8, 2)),
         lambda f, g: [rand(3, 8, dtype=f, gen=g, grad=False), rand(3, 4, dtype=f, gen=g, grad=False)],
         backward=False),
    Case("select", lambda x: x[:, 1] * 3 + x[-1, 2], _x),
    # repeat: torch's decomposition (expand, clone, permute, view) folds into one broadcast
    Case("repeat", lambda x: x.repeat(2, 1, 3) * 2, lambda f, g: [rand(3, 4, dtype=f, gen=g)]),
    Case("cat", lambda x, y: (torch.cat([x, y * 2, x], 1), torch.cat([x, x], 0).sum(0)),
         lambda f, g: [rand(3, 4, dtype=f, gen=g), rand(3, 4, dtype=f, gen=g)]),
    Case("cat_promote", lambda i, x: torch.cat([i, x], 0), lambda f, g: [ints(2, 4, dtype=torch.int32, gen=g),
                                                                       rand(3, 4, dtype=f, gen=g)]),
    Case("split", lambda x: [t * (k + 1) for k, t in enumerate(torch.split(x, [2, 5, 1], 1))] + list(x.split(3, 0)),
         lambda f, g: [rand(6, 8, dtype=f, gen=g)]),
    Case("slice_scatter", lambda x, y: aten.slice_scatter(x, y, 1, 2, 5), lambda f, g: [rand(3, 8, dtype=f, gen=g),
                                                                                      rand(3, 3, dtype=f, gen=g)]),
    # its backward pads by the negated amounts: slices
    Case("constant_pad_nd", lambda x: (F.pad(x, (1, 2), value=0.5) * 2, F.pad(x, (-1, 2, 0, -1)), F.pad(x, (0, 0, 2, 0))),
         lambda f, g: [rand(3, 8, dtype=f, gen=g)]),
    Case("constant_pad_nd_int", lambda t: F.pad(t, (0, 1), value=-100)[..., 1:] + 1,
         lambda f, g: [ints(2, 9, gen=g)], backward=False, floats=False),
    Case("copy_slice_assign", lambda x, y: _shift_right(x, y), lambda f, g: [rand(3, 8, dtype=f, gen=g),
                                                                           rand(3, 8, dtype=f, gen=g)]),
    Case("empty_then_written", _empties, _x),
    # a strided slice of the flattened matrices; the backward (diagonal_backward's decomposition) a diagonal_scatter
    Case("diagonal", lambda x: (torch.diagonal(x, 0, 1, 2) * 2, torch.diagonal(x, 1, 1, 2), torch.diagonal(x, -2, 2, 0)),
         lambda f, g: [rand(3, 4, 5, dtype=f, gen=g)]),
    Case("select_scatter", lambda x, y: aten.select_scatter(x, y, 0, 1), lambda f, g: [rand(3, 8, dtype=f, gen=g),
                                                                                     rand(8, dtype=f, gen=g)]),
    # -- reductions -----------------------------------------------------------------------------------------------
    Case("sum", lambda x: (x.sum(), x.sum(1), x.sum((0, 2), keepdim=True), x.sum(-1, dtype=torch.float32)),
         lambda f, g: [rand(2, 3, 4, dtype=f, gen=g)]),
    Case("cumsum", lambda x: (x.cumsum(1), x.cumsum(0) * 2), lambda f, g: [rand(5, 9, dtype=f, gen=g)]),
    Case("cumsum_int", lambda m: (m.cumsum(1) * m - 1, m.to(torch.bool).cumsum(-1)),  # OPT's positions from its mask
         lambda f, g: [ints(2, 16, hi=2, gen=g)], backward=False, floats=False),
    Case("sum_int", lambda i, b: (i.sum(1), b.sum(), i.to(torch.int32).sum(0)),
         lambda f, g: [ints(3, 8, gen=g), bools(3, 8, gen=g)], backward=False, floats=False),
    # prod's backward uses cumprod (no lowering yet): forward only
    Case("prod", lambda x: (x.prod(1), x.prod(), x.prod(0, keepdim=True)), lambda f, g: [pos(3, 4, dtype=f, gen=g)],
         backward=False, scale=4.0,
         why_scale="torch's CPU kernel multiplies half/bf16 one factor at a time, rounding each step; the compiled "
                   "product is formed in f32 and rounded once (hfusion-legalize-bf16): closer to the exact product, "
                   "up to ~3 roundings (2.6e-3 relative in f16) from eager's"),
    Case("amax_amin", lambda x: (x.amax(1), x.amin((0, 2), keepdim=True), x.amax()), lambda f, g: [rand(2, 3, 4, dtype=f, gen=g)]),
    # ties (values 0..3): the first index, as eager (lowerings/arg_reductions.py; NaN and dtypes: test_arg_reductions)
    Case("argmax_argmin", lambda x: (x.argmax(-1), x.argmin(1), x.argmax(0, keepdim=True), x.argmin()),
         lambda f, g: [(torch.rand(2, 5, 7, generator=g) * 4).floor().to(f)], backward=False),
    # values and first indices; the backward scatters the gradient to them (scatter.src, one index per slice)
    Case("max_min_dim", lambda x: (x.max(-1).values * 2, *x.max(1, keepdim=True), *x.min(0)),
         lambda f, g: [rand(2, 5, 7, dtype=f, gen=g)]),
    # scans of a static length (lowerings/scans.py; NaN, ties, ints: test_sweep_coverage)
    Case("cumprod_cummax_logcumsumexp", lambda x: (torch.cumprod(x, 1), *torch.cummax(x, 0), *torch.cummin(x, 1),
                                                   torch.logcumsumexp(x, 1)),
         lambda f, g: [rand(3, 5, dtype=f, gen=g)], backward=False),
    # sort of short rows (a rank sort), topk by rounds of argmax (test_sorting: ties, NaN, dtypes)
    Case("sort", lambda x: (*torch.sort(x, -1), torch.argsort(x, dim=0, descending=True, stable=True)),
         lambda f, g: [rand(3, 5, dtype=f, gen=g, grad=False)], backward=False),
    Case("topk", lambda x: (*torch.topk(x, 3), *torch.topk(x, 2, dim=-1, largest=False)),
         lambda f, g: [rand(5, 7, dtype=f, gen=g, grad=False)], backward=False),
    Case("any", lambda b: (b.any(1), b.any(), torch.any(b, dim=(0, 1), keepdim=True)),
         lambda f, g: [bools(2, 3, 4, gen=g)], backward=False, floats=False),
    Case("mean", lambda x: (x.mean(), x.mean(1), x.mean((0, 2), keepdim=True)), lambda f, g: [rand(2, 3, 4, dtype=f, gen=g)]),
    Case("var", lambda x: (x.var(1), x.var((0, 2), keepdim=True, correction=0), torch.var(x)),
         lambda f, g: [rand(2, 3, 4, dtype=f, gen=g)]),
    # torch's decomposition: sum(|x| ** p) ** (1 / p) (p = 2: x·x and vsqrt), amax(|x|) for inf
    # (a last-dim norm apart from norms over other dims: test_norms_diagonal's strict xfails)
    Case("vector_norm", lambda x: (x.norm(dim=-1), x.norm()), lambda f, g: [rand(2, 3, 4, dtype=f, gen=g)]),
    Case("vector_norm_dims", lambda x: (torch.linalg.vector_norm(x, 1, dim=(0, 2)), x.norm(dim=1, p=3)),
         lambda f, g: [rand(2, 3, 4, dtype=f, gen=g)]),
    Case("vector_norm_inf", lambda x: (torch.linalg.vector_norm(x, float("inf"), dim=-1),
                                       torch.linalg.vector_norm(x, float("-inf"), dim=-1),
                                       torch.linalg.vector_norm(x, 0, dim=-1)), lambda f, g: [rand(2, 3, 4, dtype=f, gen=g)]),
    # -- normalisations -------------------------------------------------------------------------------------------
    Case("softmax", lambda x: torch.softmax(x, -1) + torch.softmax(x, 0), _x),
    Case("log_softmax", lambda x: F.log_softmax(x, 1), _x),
    Case("layer_norm", lambda x, w, b: F.layer_norm(x, (8,), w, b) + F.layer_norm(x, (3, 8)),
         lambda f, g: [rand(2, 3, 8, dtype=f, gen=g), rand(8, dtype=f, gen=g), rand(8, dtype=f, gen=g)]),
    # batch norms (torch's decompositions: var_mean, the normalisation, the running statistics' in-place update)
    Case("batch_norm", lambda x, w, b, m, v: (F.batch_norm(x, m, v, w, b, training=True), m + 0, v + 0),
         lambda f, g: [rand(4, 3, 5, 5, dtype=f, gen=g), rand(3, dtype=f, gen=g), rand(3, dtype=f, gen=g),
                       rand(3, dtype=f, gen=g, grad=False), rand(3, dtype=f, gen=g, grad=False, lo=0.5)]),
    Case("batch_norm_1d_eval", lambda x, w, b, m, v: F.batch_norm(x, m, v, w, b, training=False),
         lambda f, g: [rand(6, 8, dtype=f, gen=g), rand(8, dtype=f, gen=g), rand(8, dtype=f, gen=g),
                       rand(8, dtype=f, gen=g, grad=False), rand(8, dtype=f, gen=g, grad=False, lo=0.5)]),
    # -- pooling (a sum of strided slices; avg_pool2d_backward has no lowering: forward only) ----------------------
    Case("avg_pool2d", lambda x: (F.avg_pool2d(x, 2), F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
                                  F.adaptive_avg_pool2d(x, (2, 3)), F.adaptive_avg_pool2d(x, 1)),
         lambda f, g: [rand(2, 3, 4, 6, dtype=f, gen=g, grad=False)], backward=False),
    Case("max_pool2d", lambda x: (*F.max_pool2d(x, 2, return_indices=True), F.max_pool2d(x, 3, 2, 1)),
         lambda f, g: [rand(2, 3, 4, 6, dtype=f, gen=g, grad=False)], backward=False),
    # -- matmul -----------------------------------------------------------------------------------------------------
    Case("mm", lambda a, b: a @ b, lambda f, g: [rand(4, 8, dtype=f, gen=g), rand(8, 5, dtype=f, gen=g)]),
    Case("matmul_3d", lambda x, w: x @ w, lambda f, g: [rand(2, 3, 8, dtype=f, gen=g), rand(8, 5, dtype=f, gen=g)]),
    Case("bmm", lambda a, b: torch.bmm(a, b), lambda f, g: [rand(2, 4, 8, dtype=f, gen=g), rand(2, 8, 5, dtype=f, gen=g)]),
    Case("linear", lambda x, w, b: F.linear(x, w, b), lambda f, g: [rand(4, 8, dtype=f, gen=g), rand(5, 8, dtype=f, gen=g),
                                                                   rand(5, dtype=f, gen=g)]),
    Case("addmm_scaled", lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0),
         lambda f, g: [rand(5, dtype=f, gen=g), rand(4, 8, dtype=f, gen=g), rand(8, 5, dtype=f, gen=g)]),
    Case("baddbmm", lambda c, a, b: torch.baddbmm(c, a, b, beta=0.5, alpha=2.0),
         lambda f, g: [rand(4, 5, dtype=f, gen=g), rand(2, 4, 8, dtype=f, gen=g), rand(2, 8, 5, dtype=f, gen=g)]),
    # the out_dtype overloads (f16/bf16 operands, an f32 product); forward only: they have no autograd formula
    Case("mm_out_dtype", lambda a, b: (_wide(torch.mm, a, b), _wide(torch.bmm, a[None], b[None])),
         lambda f, g: [rand(4, 8, dtype=f, gen=g, grad=False), rand(8, 5, dtype=f, gen=g, grad=False)],
         backward=False),
    Case("addmm_out_dtype", lambda c, a, b: _wide(torch.addmm, c, a, b),
         lambda f, g: [rand(5, gen=g, grad=False), rand(4, 8, dtype=f, gen=g, grad=False),
                       rand(8, 5, dtype=f, gen=g, grad=False)], backward=False),
    # -- indexing ---------------------------------------------------------------------------------------------------
    Case("gather", lambda x, i: torch.gather(x, 1, i), lambda f, g: [rand(3, 8, dtype=f, gen=g, grad=False),
                                                                    ints(3, 5, hi=8, gen=g)], backward=False),
    Case("index_select", lambda x, i: torch.index_select(x, 1, i) * 2,
         lambda f, g: [rand(3, 8, dtype=f, gen=g, grad=False), ints(5, hi=8, gen=g)], backward=False),
    # x[..., idx, ...]: a known index is slices (and a concat), a tensor one a gather of rows
    # (their backward: index_put accumulating — a one-hot sum over the index's elements)
    Case("index_constant", lambda x: (x[:, [0, 2, 3, -1]] * 2, x[[1, -1]] + 1),
         lambda f, g: [rand(3, 8, dtype=f, gen=g)]),
    Case("index_tensor", lambda x, i: x[i] * 2, lambda f, g: [rand(6, 4, dtype=f, gen=g), ints(2, 3, hi=6, gen=g)]),
    Case("index_one", lambda x: x[:, [-2]] * 3, lambda f, g: [rand(3, 8, dtype=f, gen=g)]),  # its backward: a select
    Case("index_put", lambda x, v: (aten.index_put(x, [None, torch.tensor([0, -1, 2])], v),
                                    aten.index_put(x, [None, torch.tensor([1, 1, -1])], v, True)),
         lambda f, g: [rand(2, 6, 4, dtype=f, gen=g, grad=False), rand(2, 3, 4, dtype=f, gen=g, grad=False)],
         backward=False),
    # a gather past a unit dim (GPT-J's rotary table by position): a gather of rows
    Case("gather_rows_past_unit_dim", lambda x, i: torch.gather(x, 1, i[None, :, None].expand(1, 5, 4)) * 2,
         lambda f, g: [rand(1, 8, 4, dtype=f, gen=g, grad=False), ints(5, hi=8, gen=g)], backward=False),
    Case("scatter_value", lambda x, i, j: (torch.scatter(x, 1, i, 2.0), torch.scatter(x, 0, j, -1.0)),
         lambda f, g: [rand(3, 8, dtype=f, gen=g, grad=False), ints(3, 2, hi=8, gen=g), ints(2, 8, hi=3, gen=g)],
         backward=False),
    Case("scatter_src", lambda x, i, y: torch.scatter(x, 1, i, y) * 2,
         lambda f, g: [rand(3, 8, dtype=f, gen=g, grad=False), ints(3, 1, hi=8, gen=g), rand(3, 1, dtype=f, gen=g, grad=False)],
         backward=False),
    # scatter_add / scatter_reduce: eager's order of accumulation, an index smaller than the input (test_scatter)
    Case("scatter_add_reduce", lambda x, i, y: (x.scatter_add(1, i, y), x.scatter_reduce(1, i, y, "amax", include_self=False),
                                                x.scatter_reduce(0, i[:, :2] % 3, y, "mean")),
         lambda f, g: [rand(3, 8, dtype=f, gen=g, grad=False), ints(3, 5, hi=8, gen=g), rand(3, 6, dtype=f, gen=g, grad=False)],
         backward=False),
    # x[i, j]: a linear index into the merged dims (test_multi_index)
    Case("index_several", lambda x, i, j: (x[i, j] * 2, x[:, i, j] + 1),
         lambda f, g: [rand(4, 5, 3, dtype=f, gen=g, grad=False), ints(2, 3, hi=4, gen=g), ints(3, hi=3, gen=g)],
         backward=False),
    Case("cross_entropy", lambda x, t: F.cross_entropy(x, t), lambda f, g: [rand(4, 8, dtype=f, gen=g), ints(4, hi=8, gen=g)]),
    Case("embedding", lambda w, i: F.embedding(i, w) * 2, lambda f, g: [rand(10, 4, dtype=f, gen=g), ints(2, 5, gen=g)]),
    Case("embedding_padding", lambda w, i: F.embedding(i, w, padding_idx=0),
         lambda f, g: [rand(10, 4, dtype=f, gen=g), ints(2, 5, gen=g)]),
]
