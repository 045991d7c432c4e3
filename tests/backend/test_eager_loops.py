"""``torch_npu_backend.eager_loops``: the model of which elements eager's CPU loop computes with an op's scalar
function, checked against eager's own f16/bf16 rsqrt on this host, and the compiled rsqrt on each side of it."""

from __future__ import annotations

import pytest
import torch

from torch_npu_backend import eager_loops

STEP = eager_loops.step_elements(2)
needs_model = pytest.mark.skipif(STEP is None, reason="eager's loop width is not modelled for this CPU capability")


def _scalar_rsqrt(x):  # eager's scalar function: 1 / std::sqrt(x) on the dtype (sqrt rounded, then the quotient)
    return (1 / x.double().sqrt().to(x.dtype).float()).to(x.dtype)


def _vector_rsqrt(x):  # eager's vectorized function: 1/sqrt(x) in f32, rounded once
    return (1 / x.float().sqrt()).to(x.dtype)


def _inputs(n, dtype):
    return (torch.rand(n, generator=torch.Generator().manual_seed(0)) * 4 + 0.01).to(dtype)


def test_all_scalar_below_one_step():
    if STEP is None:
        assert not eager_loops.all_scalar(1, 2)
        return
    assert eager_loops.all_scalar(STEP - 1, 2) and not eager_loops.all_scalar(STEP, 2)
    assert eager_loops.step_elements(4) == STEP // 2  # f32 elements are twice as wide: half as many a step
    assert not eager_loops.all_scalar(None, 2)


@needs_model
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_model_matches_eager(dtype):
    """Below one step every element is the scalar function's; a whole number of steps is all vectorized. The two
    functions differ on these inputs, so a wrong width fails here."""
    short, full = _inputs(STEP - 1, dtype), _inputs(4 * STEP, dtype)
    assert torch.equal(torch.rsqrt(short), _scalar_rsqrt(short))
    assert torch.equal(torch.rsqrt(full), _vector_rsqrt(full))
    assert not torch.equal(_scalar_rsqrt(full), _vector_rsqrt(full))


@needs_model
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("n", ["short", "full"])
def test_compiled_rsqrt_as_eager(dtype, n):
    x = _inputs(STEP - 1 if n == "short" else 4 * STEP, dtype)
    torch._dynamo.reset()
    out = torch.compile(torch.rsqrt, backend="npu")(x)
    torch._dynamo.reset()
    assert torch.equal(out, torch.rsqrt(x)), f"{int((out != torch.rsqrt(x)).sum())} of {x.numel()} differ"


@needs_model
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_compiled_rsqrt_tail_of_a_longer_tensor_is_known_to_differ(dtype):
    """Known: a tensor longer than one step but not a whole number of steps keeps the vector form for all its
    elements, so its last ``n mod step`` elements may be one ulp from eager's scalar function (selecting them by
    index is exact, but an index over a 3-D statistic splits an RMS norm into 4 kernels). The day it matches, move
    docs/numerics.md's rsqrt row."""
    x = _inputs(STEP + STEP // 4, dtype)
    torch._dynamo.reset()
    out = torch.compile(torch.rsqrt, backend="npu")(x)
    torch._dynamo.reset()
    exp = torch.rsqrt(x)
    assert torch.equal(out[:STEP], exp[:STEP]) and torch.equal(out, _vector_rsqrt(x))
    assert not torch.equal(out[STEP:], exp[STEP:])
