"""Edge cases every model may hit: 0-d tensors in every op family, zero-size tensors, minimal repros of failures
found in the wild (each named by the error it used to give), and ``torch.compile``'s ``mode=``."""

from __future__ import annotations

import logging

import pytest
import torch
import torch._dynamo
import torch.nn.functional as F

from tests.helpers import check_model

S, T = torch.tensor(1.5), torch.tensor(-0.5)  # 0-d floats
I, J = torch.tensor(7), torch.tensor(-3)  # 0-d i64
B, C = torch.tensor(True), torch.tensor(False)  # 0-d bools

# -- 0-d tensors: a 0-d value is a one-element buffer ------------------------------------------------------------

ZERO_D = {
    "elementwise": (lambda a, b: (a + b * 2, torch.exp(a).sin(), a.clamp(0, 1), torch.sign(b)), [S, T]),
    "sum": (lambda a: (a.sum(), a.sum(0), a.sum(-1, keepdim=True)), [S]),
    "amax": (lambda a: (a.amax(), a.amax(0), a.amin(-1)), [S]),
    "any": (lambda a, b: (a.any(), (a > 0).any(0), (a > 0).all(), b.any(-1)), [S, B]),
    "prod": (lambda a: (a.prod(), a.prod(0)), [S]),
    "cumsum": (lambda a, i: (a.cumsum(0), a.cumsum(-1), i.cumsum(0)), [S, I]),  # the value itself
    "logsumexp": (lambda a: (torch.logsumexp(a, 0), torch.logsumexp(a, -1)), [S]),
    "mean_var": (lambda a: (a.mean(), a.mean(0), torch.var(a, correction=0)), [S]),
    "softmax": (lambda a: (a.softmax(0), a.log_softmax(-1)), [S]),
    "casts": (lambda a: (a.half(), a.to(torch.int32), a.bool(), a.bfloat16().float()), [S]),
    "where": (lambda a, b: (torch.where(a > b, a, b), torch.where(a > 0, a, 0.0)), [S, T]),
    "compare": (lambda a, b: (a > b, a == b, a != b, a <= b), [S, T]),
    "bool_ops": (lambda a, b: (a & b, a | b, ~a, a ^ b, torch.logical_and(a, b)), [B, C]),
    "int_ops": (lambda a, b: (a + b, a * b, a // b, a % b, torch.maximum(a, b), a > b, a.sum(), a.prod()), [I, J]),
    "with_tensor": (lambda a, x: (x * a, torch.where(a > 0, x, -x), x > a), [S, torch.randn(4, 8)]),
}


@pytest.mark.parametrize("name", list(ZERO_D))
def test_zero_dim_tensor(name):
    fn, inputs = ZERO_D[name]
    check_model(fn, inputs)


@pytest.mark.parametrize("name", ["int_ops", "where", "mean_var"])
def test_zero_dim_tensor_dynamic(name):
    fn, inputs = ZERO_D[name]
    check_model(fn, inputs, dynamic=True)


def test_zero_dim_softmax_and_logsumexp_backward():
    check_model(lambda a: (a.softmax(0) * 3, a.log_softmax(0) * 2, torch.logsumexp(a, 0) * a),
                [torch.tensor(0.7, requires_grad=True)], backward=True)


# -- zero-size tensors: nothing to compute, outputs allocated ----------------------------------------------------

E = torch.randn(0, 4)


def test_zero_size_elementwise():
    check_model(lambda a: (a * 2 + 1, (a > 0) & (a < 1), a.long() * 3), [E])


def test_var_with_no_degrees_of_freedom_is_nan_like_eager():
    # eager divides by max(N - correction, 0): an empty dim, or one element with correction 2, gives 0/0 = nan
    check_model(lambda a, b: (torch.var_mean(a), torch.std_mean(a, dim=0), torch.var(b, dim=1, correction=2)),
                [torch.randn(0), torch.randn(3, 1)])


def test_zero_size_reductions():
    """A sum over no elements is 0, a product 1, any false, all true, a mean NaN (eager's values)."""
    check_model(lambda a: (a.sum(0), a.sum(), a.sum(1), a.prod(0), (a > 0).any(0), (a > 0).all(0), a.mean(0),
                           a.softmax(0), a.amax(1)), [E])


def test_zero_size_amax_over_the_empty_dim_raises_like_eager():
    """Dynamo's fake tensors refuse it before the backend sees a graph (the IR-level error: tests/passes)."""
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        E.amax(0)
    torch._dynamo.reset()
    with pytest.raises(Exception, match="zero-size dimension for reduction operation without identity|non-zero size"):
        torch.compile(lambda a: a.amax(0), backend="npu")(E)


def test_zero_size_cat():
    x = torch.randn(3, 4)
    check_model(lambda a, b: (torch.cat([a, b, a], 0).exp(), torch.cat([b[:, :0], b], 1) + 1), [E, x])


def test_zero_size_mixed_outputs_and_backward():
    check_model(lambda a, b: (a * 2, b.sum(0) + a.sum(0), b + 1), [E, torch.randn(3, 4)], dynamic=True)
    check_model(lambda a, w: ((a * w).sum(0) * w).sum(), [torch.randn(0, 4, requires_grad=True),
                                                          torch.randn(4, requires_grad=True)], backward=True)


# -- minimal repros ----------------------------------------------------------------------------------------------


def test_amin_over_dims_around_a_unit_dim():
    """Was: VerifyError 'hfusion.reduce' op result shape [1, 33] must be input [128, 33] without dims [0]
    (hfusion-flatten-ops kept a unit dim in the result that the input had absorbed)."""
    check_model(lambda x: torch.amin(x, dim=[0, 2]), [torch.randn(2, 1, 64, 33)])


def test_mean_over_dims_around_a_unit_dim():
    check_model(lambda x: torch.mean(x, dim=[0, 2]), [torch.randn(33, 1, 33)])


def test_maximum_with_an_all_unit_operand():
    """Was: VerifyError 'hfusion.broadcast' op input shape [1, 1] does not match result [32, 1] (flatten-ops)."""
    check_model(lambda x, y: torch.maximum(x, y), [torch.randn(2, 1, 16, 1), torch.randn(1, 1, 1, 1)])


def test_dynamic_cat_then_minimum():
    """Was: 'hfusion.concat' op inputs sum to 2*s1 along dim 1, result has s2 (the verifier ignored the guard
    2*s1 == s2 the module records)."""
    check_model(lambda x, y: torch.minimum(y, torch.cat([x, x], dim=1)), [torch.randn(3, 5), torch.randn(3, 10)],
                dynamic=True)


@pytest.mark.parametrize("n", [12, 4, 16])
def test_dynamic_unflatten(n):
    """Was: 'hfusion.reshape' op element count changes (s -> 4 where the guards pin s to 4; s -> 8*(s//8) for a
    nested unflatten, whose divisibility guard was read without the first one's)."""
    check_model(lambda x: (x.unflatten(0, (4, -1)) * 2, x.unflatten(0, (4, -1)).unflatten(1, (1, -1)) + 1),
                [torch.randn(n)], dynamic=True)
    check_model(lambda x: x.unflatten(0, (4, -1)).unflatten(1, (2, -1)) + 1, [torch.randn(16)], dynamic=True)


def test_dynamic_mean_of_equal_dims():
    """Was: cannot compute size s40**2 as a value (dims of one size share a symbol)."""
    check_model(lambda x: torch.mean(x), [torch.randn(3, 5, 5, 3)], dynamic=True)
    check_model(lambda x: torch.mean(x), [torch.randn(2, 3, 4, 5)], dynamic=True)


def test_cat_minus_0d_then_rms_norm():
    def fn(x, c):
        y = torch.cat([x, x * 2], dim=3) - c
        return y / torch.sqrt(y.pow(2).mean(-1, keepdim=True) + 1e-6), F.rms_norm(y, (14,))

    check_model(fn, [torch.randn(64, 2, 33, 7), torch.tensor(0.3)])
    check_model(fn, [torch.randn(4, 2, 3, 7, requires_grad=True), torch.tensor(0.3, requires_grad=True)],
                backward=True)


def test_linear_interpolate_backward():
    """Was: UB address … is not 32-byte aligned (codegen stepped a packed 2x3x4x1 column buffer by its 48-B rows)."""
    check_model(lambda x: F.interpolate(x, scale_factor=2, mode="linear"), [torch.randn(2, 3, 4, requires_grad=True)],
                backward=True)


def test_dynamic_f16_softmax_over_dim_0_beside_a_mean_dropping_the_unit_dim():
    """The minimal form of the repro below (the softmax's sum and a mean over [0, 2] in one kernel)."""
    check_model(lambda x: torch.softmax(x, dim=0) * x.mean(dim=[0, 2]).unsqueeze(-1),
                [torch.randn(6, 40, 1, dtype=torch.float16)], dynamic=True)


@pytest.mark.slow
def test_dynamic_f16_softmax_over_dim_0_beside_a_mean_keeping_no_unit_dim():
    """Was: inf where eager gives 0.0096. Softmax over dim -3 of [s0, s1, 1] keeps the unit dim 2, the mean over
    [0, 2] drops it; the kernel reduces their union [0, 2]. convert-to-hivm reduced the softmax's partials over dim 2
    as well (a result laid out without the dim its buffer keeps) and counted its sum as spanning a looped reduced
    dim, so ``1/sum``, planned in place on the accumulator, ran once per reduced tile."""

    def fn(x, y, v):
        w = torch.where(x > 0, torch.softmax(x, dim=-3), x.mean(dim=[0, 2]).unsqueeze(0).unsqueeze(-1))
        return w * torch.pow(v.abs() + 1, torch.tanh(y)) * torch.sigmoid(y)

    inputs = [torch.randn(100, 128, 1, dtype=torch.float16) for _ in range(3)]
    check_model(fn, inputs, dynamic=True)


# -- torch.compile(mode=...) -------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"])
def test_compile_mode_is_accepted(mode, caplog):
    x = torch.randn(4, 8)
    torch._dynamo.reset()
    with caplog.at_level(logging.INFO, logger="torch_npu_backend.modes"):
        torch.testing.assert_close(torch.compile(lambda x: x.exp() + 1, backend="npu", mode=mode)(x), x.exp() + 1)
    lines = [r.getMessage() for r in caplog.records if r.name == "torch_npu_backend.modes"]
    assert len(lines) == (0 if mode == "default" else 1), lines
    torch._dynamo.reset()


def test_unknown_compile_mode_is_one_line():
    torch._dynamo.reset()
    with pytest.raises(Exception, match="unknown torch.compile mode 'fastest'"):
        torch.compile(lambda x: x + 1, backend="npu", mode="fastest")(torch.randn(3))
    torch._dynamo.reset()
