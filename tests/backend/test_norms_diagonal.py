"""``linalg_vector_norm`` (torch's decomposition) and ``diagonal``/``diagonal_scatter`` (lowerings/diagonal.py):
every offset sign and dim order against eager, forward and backward, every kernel on the simulator; and the fused
norm backwards that codegen cannot emit yet (strict xfail: a fix shows up)."""

from __future__ import annotations

import pytest
import torch

import torch_npu_backend
from tests.helpers import check_model


def _simulated(fn, inputs, backward=True):
    with torch_npu_backend.profile(trace=False) as prof:
        check_model(fn, inputs, backward=backward)
    assert prof.records, "no kernel launched"
    bad = prof.interpreted()
    assert not bad, [(r.source, r.reason) for r in bad]


@pytest.mark.parametrize("offset, dim1, dim2", [(0, 0, 1), (2, 0, 1), (-1, 0, 1), (-3, 1, 0), (1, 2, 0), (0, -1, -2),
                                               (2, 2, 1), (-2, 1, 2)])
def test_diagonal(offset, dim1, dim2):
    x = torch.randn(4, 6, 5, requires_grad=True)
    _simulated(lambda t: torch.diagonal(t, offset, dim1, dim2) * 3, [x])


def test_diagonal_of_a_matrix_and_trace_like_sum():
    x = torch.randn(7, 7, requires_grad=True)
    _simulated(lambda t: (torch.diagonal(t).sum(), t.diagonal(1) + 1), [x])


def test_diagonal_scatter():
    x, d = torch.randn(3, 5, 6), torch.randn(3, 5)
    _simulated(lambda a, b: (torch.diagonal_scatter(a, b, 1, 1, 2), torch.diagonal_scatter(a, b[:, :4], -2, 2, 1)),
               [x, d], backward=False)


def test_diagonal_refuses_an_empty_diagonal():
    with pytest.raises(Exception, match="offset 9 leaves no diagonal"):
        torch.compile(lambda t: torch.diagonal(t, 9) * 2, backend="npu")(torch.randn(4, 5))


def test_diagonal_refuses_symbolic_sizes():
    """The lowering refuses; the host cannot take it either (its result's length min(s0, s1) is a size the IR cannot
    express): one error naming the op, the FX node and both reasons."""
    torch._dynamo.reset()
    with pytest.raises(Exception, match=r"aten op aten.diagonal.default \(FX node 'diagonal'\).*symbolic sizes are not "
                                        r"supported.*cannot run on the host either: shape expression Min"):
        torch.compile(lambda t: torch.diagonal(t) * 2, backend="npu", dynamic=True)(torch.randn(4, 5))


@pytest.mark.parametrize("p", [2, 1, 3, 0.5, float("inf"), float("-inf"), 0])
def test_vector_norm_last_dim(p):
    x = torch.randn(4, 40, requires_grad=p != 0)
    _simulated(lambda t: torch.linalg.vector_norm(t, p, dim=-1), [x], backward=p != 0)


def test_vector_norm_keepdim_and_half_computes_in_f32():
    x = torch.randn(8, 64).half()
    out = torch.compile(lambda t: torch.linalg.vector_norm(t, dim=-1, keepdim=True), backend="npu")(x)
    assert out.dtype == torch.float16 and out.shape == (8, 1)
    torch.testing.assert_close(out, torch.linalg.vector_norm(x, dim=-1, keepdim=True), rtol=1e-3, atol=0)


@pytest.mark.parametrize("other", ["l1 over (0, 2)", "l3 over 1", pytest.param("inf over (0, 2)", marks=pytest.mark.xfail(
    strict=True, reason="codegen: a last-dim norm's backward fused with that of an inf norm over other dims: an i1 mask "
                        "(or its cast) with rows of 3 B is not 32-B aligned in UB; the kernel runs interpreted"))])
def test_last_dim_norm_fused_with_another_norm_backward(other):
    x = torch.randn(2, 3, 4, requires_grad=True)
    second = {"l1 over (0, 2)": lambda t: torch.linalg.vector_norm(t, 1, dim=(0, 2)),
              "l3 over 1": lambda t: t.norm(dim=1, p=3),
              "inf over (0, 2)": lambda t: torch.linalg.vector_norm(t, float("inf"), dim=(0, 2))}[other]
    first = (lambda t: torch.linalg.vector_norm(t, float("inf"), dim=-1)) if other != "inf over (0, 2)" else \
        (lambda t: t.norm(dim=-1))
    _simulated(lambda t: (first(t), second(t)), [x])
