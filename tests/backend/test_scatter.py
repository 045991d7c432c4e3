"""scatter_add and scatter_reduce on the vector unit (lowerings/scatter.py): bit for bit eager's results (each
output accumulates its sources in eager's order), an index smaller than the input, repeated indices, every kernel
simulated; more index elements along the dim than the unrolled steps allow fall back naming the numbers."""

from __future__ import annotations

import pytest
import torch

import torch_npu_backend
from tests.helpers import simulated

REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def _exact(got, want):
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, i
        assert torch.equal(g.isnan(), w.isnan()) and torch.equal(g.nan_to_num(7.5), w.nan_to_num(7.5)), (i, g, w)


def _inputs(dtype, gen):
    x = (torch.randn(4, 6, generator=gen) * 3).to(dtype)
    index = torch.randint(0, 4, (3, 5), generator=gen)  # repeats; smaller than x along dim 1
    src = (torch.randn(5, 6, generator=gen) * 3).to(dtype)  # larger than the index along dim 0
    return x, index, src


def _every_reduce(x, index, src):
    return [x.scatter_reduce(0, index, src, r, include_self=inc) for r in REDUCES for inc in (True, False)]


def _some_reduces(x, index, src):  # the default run's share (compiling every kind takes seconds)
    return [x.scatter_reduce(0, index, src, r, include_self=inc) for r, inc in (("mean", True), ("amin", False))]


def test_scatter_reduce_exact():
    x, index, src = _inputs(torch.float32, torch.Generator().manual_seed(0))
    _exact(simulated(_some_reduces, x, index, src), _some_reduces(x, index, src))


@pytest.mark.slow
def test_scatter_reduce_every_kind_exact():
    x, index, src = _inputs(torch.float32, torch.Generator().manual_seed(0))
    _exact(simulated(_every_reduce, x, index, src), _every_reduce(x, index, src))


def test_scatter_add_along_the_last_dim():
    gen = torch.Generator().manual_seed(1)
    x, index, src = torch.randn(3, 8, generator=gen), torch.randint(0, 8, (2, 6), generator=gen), torch.randn(3, 7)
    fn = lambda a, i, s: (a.scatter_add(1, i, s), a.scatter_add(-1, i[:, :1], s))  # noqa: E731
    _exact(simulated(fn, x, index, src), fn(x, index, src))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.int64, torch.int32])
def test_scatter_reduce_dtypes(dtype):
    """Low-precision floats round each step as eager does; integer means are floor divisions, as eager's."""
    x, index, src = _inputs(dtype, torch.Generator().manual_seed(2))
    _exact(simulated(_every_reduce, x, index, src), _every_reduce(x, index, src))


@pytest.mark.slow
def test_scatter_reduce_nan_wins_amax_amin():
    x, index, src = _inputs(torch.float32, torch.Generator().manual_seed(3))
    x[1, 2], src[0, 0], src[2, 3] = float("nan"), float("nan"), float("nan")
    fn = lambda a, i, s: [a.scatter_reduce(0, i, s, r, include_self=inc) for r in ("amax", "amin")  # noqa: E731
                          for inc in (True, False)]
    _exact(simulated(fn, x, index, src), fn(x, index, src))


@pytest.mark.filterwarnings("default:npu. ")  # the fallback is expected (setup.cfg makes it an error)
def test_too_many_steps_fall_back_naming_the_numbers():
    x, index, src = torch.zeros(4, 3), torch.randint(0, 4, (33, 3)), torch.randn(33, 3)
    torch._dynamo.reset()
    with torch_npu_backend.profile(trace=False) as prof:
        got = torch.compile(lambda a, i, s: a.scatter_add(0, i, s), backend="npu")(x, index, src)
    assert torch.equal(got, x.scatter_add(0, index, src))
    (fb,) = prof.fallbacks()
    assert fb.kernel == "aten.scatter_add.default" and "33 index elements along dim 0" in fb.reason \
        and "at most 32" in fb.reason
