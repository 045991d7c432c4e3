"""``F.interpolate`` (nearest, bilinear, trilinear) forward and backward on the simulator: torch decomposes it into
``_unsafe_index`` with several index tensors (a gather by the linear index of the merged spatial dims,
``lowerings/multi_index.py``) and its backward into ``index_put(..., accumulate=True)`` with the same index tensors
(a one-hot sum over the merged dims). No kernel is interpreted and nothing falls back to the host.

Nearest is bit for bit with eager. Bilinear is bit for bit with torch's own decomposition run eagerly, which
differs from eager's CPU kernel by a few ulps (the kernel computes its weights and lerps in another order); a
gradient summed from several output pixels differs by its summation order. Those compare with eager within 1e-6."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch._decomp import get_decompositions

import torch_npu_backend
from tests.helpers import simulated

aten = torch.ops.aten


def _forward_backward(fn, x):
    """Compiled output and input gradient (checked simulated), and eager's, under the same output gradient."""
    torch._dynamo.reset()
    with torch_npu_backend.profile(trace=False) as prof:
        xc = x.clone().requires_grad_()
        out = torch.compile(fn, backend="npu")(xc)
        g = torch.randn(out.shape, generator=torch.Generator().manual_seed(1))
        out.backward(g)
    assert len(prof.records) >= 2 and not prof.interpreted() and not prof.fallbacks(), \
        [(r.kernel, r.reason) for r in prof.interpreted() + prof.fallbacks()]
    xe = x.clone().requires_grad_()
    ref = fn(xe)
    ref.backward(g)
    return out.detach(), xc.grad, ref.detach(), xe.grad


def _input(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(0))


def test_nearest_forward_backward():
    fn = lambda t: F.interpolate(t, scale_factor=2, mode="nearest")  # noqa: E731
    out, grad, ref, ref_grad = _forward_backward(fn, _input(2, 3, 8, 8))
    assert torch.equal(out, ref)
    torch.testing.assert_close(grad, ref_grad, rtol=0, atol=1e-6)  # four output pixels per input: summation order


@pytest.mark.parametrize("i", [[[0], [-1], [4], [0]],  # [4, 1] with [3]: one dim each, summed a dim at a time
                               [[0, -1, 4], [4, 0, 0], [1, 1, -5], [0, 2, 3]]])  # [4, 3]: by the linear index
def test_index_put_several_accumulates_repeats_and_negatives(i):
    """``x[:, i, j] += v`` (several index tensors, broadcast, negative and repeated positions): integer values, so
    every summation order is exact and the result bit for bit with eager."""
    gen = torch.Generator().manual_seed(0)
    x = torch.randint(-8, 8, (2, 5, 6), generator=gen).float()
    i, j = torch.tensor(i), torch.tensor([1, -6, 1])
    v = torch.randint(-8, 8, (2, 4, 3), generator=gen).float()
    fn = lambda t, a, b, u: aten.index_put(t, [None, a, b], u, True)  # noqa: E731
    assert torch.equal(simulated(fn, x, i, j, v), fn(x, i, j, v))


@pytest.mark.filterwarnings("default:npu. ")  # the fallback is expected (setup.cfg makes it an error)
def test_index_put_several_without_accumulate_falls_back_with_the_reason():
    x, i, j = torch.zeros(4, 5), torch.tensor([1, 3]), torch.tensor([0, 2])
    torch._dynamo.reset()
    with torch_npu_backend.profile(trace=False) as prof:
        got = torch.compile(lambda t, a, b: aten.index_put(t, [a, b], torch.ones(2)), backend="npu")(x, i, j)
    assert torch.equal(got, aten.index_put(x, [i, j], torch.ones(2)))
    (fb,) = prof.fallbacks()
    assert fb.kernel == "aten.index_put.default" and "2 index tensors without accumulate" in fb.reason


@pytest.mark.parametrize("align_corners", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_bilinear_forward_is_torchs_decomposition_bit_for_bit(align_corners):
    x = _input(2, 3, 8, 8)
    decomposed = get_decompositions([aten.upsample_bilinear2d.vec])[aten.upsample_bilinear2d.vec]
    out = simulated(lambda t: F.interpolate(t, size=(13, 11), mode="bilinear", align_corners=align_corners), x)
    assert torch.equal(out, decomposed(x, (13, 11), align_corners, None))


@pytest.mark.slow
@pytest.mark.parametrize("align_corners", [False, True])
def test_bilinear_forward_backward(align_corners):
    fn = lambda t: F.interpolate(t, scale_factor=2, mode="bilinear", align_corners=align_corners)  # noqa: E731
    out, grad, ref, ref_grad = _forward_backward(fn, _input(2, 3, 8, 8))
    torch.testing.assert_close(out, ref, rtol=0, atol=1e-6)
    torch.testing.assert_close(grad, ref_grad, rtol=0, atol=1e-6)


@pytest.mark.slow
def test_trilinear_and_nearest_3d_forward_backward():
    for mode in ("nearest", "trilinear"):
        fn = lambda t: F.interpolate(t, size=(6, 5, 7), mode=mode)  # noqa: E731
        out, grad, ref, ref_grad = _forward_backward(fn, _input(2, 3, 4, 3, 5))
        torch.testing.assert_close(out, ref, rtol=0, atol=1e-6)
        torch.testing.assert_close(grad, ref_grad, rtol=0, atol=1e-6)
