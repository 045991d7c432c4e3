"""Accumulating matmuls (``init + a @ b``, docs/cube.md): the importer gives addmm/baddbmm with ``alpha = 1`` that
form, ``hivm-normalize-matmul`` makes it the product into zero and an add; every stage agrees with eager, and the
kernels are a cube product and a vector add (the bias is not folded into the cube: no bias table is cited)."""

import pytest
import torch
import torch.nn.functional as F

import torch_npu_backend
from graph_passes.passes import PassContext, PassManager
from tests.helpers import aten_graph, check_model, check_stages
from torch_npu_backend.importer import import_graph


def _randn(*shape, dtype=torch.float32, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def _matmuls(module):
    return [op for f in module.functions for op in f.walk() if op.name in ("hfusion.matmul", "hfusion.batch_matmul")]


@pytest.mark.parametrize("fn, accumulates", [
    (lambda b, x, w: F.linear(x, w, b), True),
    (lambda b, x, w: torch.addmm(b, x, w.t(), beta=0.5), True),
    (lambda b, x, w: torch.addmm(b, x, w.t(), alpha=2.0), False),
], ids=["linear", "beta", "alpha"])
def test_import_gives_init_and_the_pass_splits_it(fn, accumulates):
    b, x, w = _randn(24), _randn(16, 32, seed=1), _randn(24, 32, seed=2)
    module = import_graph(aten_graph(fn, [b, x, w])).module
    (mm,) = _matmuls(module)
    assert (len(mm.operands) == 3) == accumulates
    ctx = PassContext()
    PassManager.from_pipeline("hivm-normalize-matmul", verify=True).run(module, ctx)
    (mm,) = _matmuls(module)
    assert len(mm.operands) == 2
    assert ctx.counter("hivm-normalize-matmul", "matmuls-normalized") == int(accumulates)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_every_stage_agrees_with_eager(fresh_dynamo, dtype):
    """The interpreter runs the accumulating form after import and every pass after it; the simulator the kernels."""
    x, w, b = _randn(16, 32, dtype=dtype, seed=1), _randn(24, 32, dtype=dtype, seed=2), _randn(24, dtype=dtype)
    stages = check_stages(F.linear, [x, w, b])
    assert "hivm-normalize-matmul" in stages


@pytest.mark.parametrize("cv_fusion", [False, True], ids=["unfused", "mix"])
def test_linear_is_a_cube_product_and_a_vector_add(fresh_dynamo, cv_fusion):
    """The product and the add: two kernels, or one MIX_CV launch whose vector cores add the bias (cv_fusion)."""
    b, x, w = _randn(24), _randn(16, 32, seed=1), _randn(24, 32, seed=2)
    with torch_npu_backend.profile() as prof:
        check_model(lambda b, x, w: F.linear(x, w, b), [b, x, w], options={"cv_fusion": cv_fusion})
    expected = ["MIX"] if cv_fusion else ["AIC", "AIV"]
    assert sorted(r.core_type for r in prof.simulated()) == expected, [r.fusion_kind for r in prof.simulated()]


def test_interpret_mode_runs_the_accumulating_form(fresh_dynamo):
    """execute="interpret" runs canonicalize and cse only: the interpreter evaluates init + a @ b itself."""
    b, x, w = _randn(24), _randn(16, 32, seed=1), _randn(24, 32, seed=2)
    check_model(lambda b, x, w: torch.addmm(b, x, w.t(), beta=0.5), [b, x, w], options={"execute": "interpret"})


def test_split_k_stages_agree_with_eager(fresh_dynamo):
    """Forced split-K: the partial products (batch_matmul with k_chunk) and their sum, interpreted after the split and
    every later pass, then simulated."""
    a, b = _randn(40, 1200, seed=1), _randn(1200, 24, seed=2)
    stages = check_stages(torch.mm, [a, b], options={"split_k": 3}, tol_scale=1200 ** 0.5)
    assert "hfusion-split-k{chunks=3}" in stages
