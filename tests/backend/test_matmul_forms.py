"""The forms PyTorch and AOTAutograd give matmuls (mm, bmm, addmm, baddbmm, linear, matmul over 2/3/4-D, broadcast
batches, transposed operands, the out_dtype overloads) reach one cube kernel each, simulated, equal to eager; a
transpose of an operand or of the product, and a batch broadcast of a matrix, leave no kernel of their own
(``hfusion-fold-matmul-views``)."""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F

import torch_npu_backend
from torch_npu_backend.compile import compile_graph
from torch_npu_backend.errors import UnsupportedOpError

aten = torch.ops.aten
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
IDS = ["f32", "f16", "bf16"]
# f32: the cube's f32 sums run in another order than eager's; f16/bf16: the result's rounding (one ulp of bf16 is
# 2^-8 relative) after sums in another order
TOL = {torch.float32: (2e-5, 1e-4), torch.float16: (1e-2, 1e-2), torch.bfloat16: (1e-2, 2e-2)}
TRANSPOSE_SOURCE = re.compile(r"^(permute|transpose|t)(_\d+)?$")


def _rand(*shape, dtype=torch.float32, grad=False, seed=0):
    g = torch.Generator().manual_seed(seed + 31 * len(shape) + sum(shape))
    return (torch.rand(*shape, generator=g) * 2 - 1).to(dtype).requires_grad_(grad)


def _close(actual, expected, what):
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    rtol, atol = TOL[expected.dtype]
    torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol, msg=lambda m: f"{what}: {m}")


def run(fn, *inputs, backward=False, reference=None):
    """``fn`` compiled and eager (or ``reference``) on the inputs, outputs and (``backward``) the inputs' gradients
    compared; returns the profile of the compiled run."""
    torch._dynamo.reset()
    eager_in = [x.detach().clone().requires_grad_(x.requires_grad) for x in inputs]
    comp_in = [x.detach().clone().requires_grad_(x.requires_grad) for x in inputs]
    compiled = torch.compile(fn, backend="npu")
    with torch_npu_backend.profile(trace=False) as prof:
        out = compiled(*comp_in)
        if backward:
            cot = _rand(*out.shape, seed=7).to(out.dtype)
            grads = torch.autograd.grad(out, [x for x in comp_in if x.requires_grad], cot)
    expected = (reference or fn)(*eager_in)
    _close(out.detach(), expected.detach(), "output")
    if backward:
        want = torch.autograd.grad(expected, [x for x in eager_in if x.requires_grad], cot)
        for i, (a, e) in enumerate(zip(grads, want)):
            _close(a, e, f"grad {i}")
    torch._dynamo.reset()
    assert not prof.interpreted(), [(r.kernel, r.reason) for r in prof.interpreted()]
    return prof


CUBE_KINDS = ("SINGLE_CUBE", "MIX_CV")  # kernels running on the cube (a MIX_CV one with its fused epilogue)


def cube_kernels(prof, graph_kind: str | None = None):
    return [r for r in prof.records if r.fusion_kind in CUBE_KINDS and (graph_kind is None or graph_kind in r.graph)]


def transpose_kernels(prof, graph_kind: str | None = None):
    return [r for r in prof.records if r.fusion_kind not in CUBE_KINDS and (graph_kind is None or graph_kind in r.graph)
            and any(TRANSPOSE_SOURCE.match(s) for s in r.source)]


def only_cube(prof, n=1):
    """Exactly ``n`` kernels, every one a simulated cube kernel."""
    kinds = [(r.fusion_kind, r.executed, r.source) for r in prof.records]
    assert len(prof.records) == n and all(r.fusion_kind == "SINGLE_CUBE" and r.simulated for r in prof.records), kinds


def _op(x, flag):
    return x.transpose(-2, -1) if flag else x


def _stored(shape, flag):
    """The stored shape of an operand read transposed (``flag``): its last two dims swapped."""
    return (*shape[:-2], shape[-1], shape[-2]) if flag else shape


FLAGS = [(False, False), (False, True), (True, False), (True, True)]
FLAG_IDS = ["nn", "nt", "tn", "tt"]


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("ta, tb", FLAGS, ids=FLAG_IDS)
def test_mm_transposes(ta, tb, dtype):
    M, K, N = 48, 64, 40
    a, b = _rand(*_stored((M, K), ta), dtype=dtype), _rand(*_stored((K, N), tb), dtype=dtype, seed=1)
    only_cube(run(lambda a, b: torch.mm(_op(a, ta), _op(b, tb)), a, b))


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("ta, tb", FLAGS, ids=FLAG_IDS)
def test_bmm_transposes(ta, tb, dtype):
    B, M, K, N = 3, 32, 48, 24
    a, b = _rand(*_stored((B, M, K), ta), dtype=dtype), _rand(*_stored((B, K, N), tb), dtype=dtype, seed=1)
    only_cube(run(lambda a, b: torch.bmm(_op(a, ta), _op(b, tb)), a, b))


@pytest.mark.parametrize("ta, tb", FLAGS, ids=FLAG_IDS)
def test_mm_transposes_backward(ta, tb):
    """Forward and backward (AOTAutograd's mm of transposed saved values): no transpose kernel in the backward."""
    M, K, N = 32, 48, 16
    a, b = _rand(*_stored((M, K), ta), grad=True), _rand(*_stored((K, N), tb), grad=True, seed=1)
    prof = run(lambda a, b: _op(a, ta) @ _op(b, tb), a, b, backward=True)
    assert len(cube_kernels(prof, "backward")) == 2
    assert not transpose_kernels(prof, "backward"), [r.source for r in transpose_kernels(prof)]


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, 2.0), (0, 1.5)], ids=["plain", "scaled", "beta0"])
@pytest.mark.parametrize("bias_shape", [(40,), (32, 40), (32, 1)], ids=["row", "full", "column"])
def test_addmm(beta, alpha, bias_shape, dtype):
    c = _rand(*bias_shape, dtype=dtype, seed=2)
    if beta == 0:
        c = c.masked_fill(c > 0.5, float("nan"))  # beta = 0 ignores the input, NaNs included
    a, b = _rand(32, 64, dtype=dtype), _rand(64, 40, dtype=dtype, seed=1)
    prof = run(lambda c, a, b: torch.addmm(c, a, b, beta=beta, alpha=alpha), c, a, b)
    assert len(cube_kernels(prof)) == 1 and all(r.simulated for r in prof.records)


def test_addmm_backward():
    c, a, b = _rand(40, grad=True, seed=2), _rand(32, 64, grad=True), _rand(64, 40, grad=True, seed=1)
    prof = run(lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0), c, a, b, backward=True)
    assert len(cube_kernels(prof, "backward")) == 2 and not transpose_kernels(prof, "backward")


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, 2.0)], ids=["plain", "scaled"])
def test_baddbmm(beta, alpha, dtype):
    c, a, b = _rand(2, 16, 24, dtype=dtype, seed=2), _rand(2, 16, 32, dtype=dtype), _rand(2, 32, 24, dtype=dtype, seed=1)
    prof = run(lambda c, a, b: torch.baddbmm(c, a, b, beta=beta, alpha=alpha), c, a, b)
    assert len(cube_kernels(prof)) == 1 and all(r.simulated for r in prof.records)


def test_baddbmm_backward():
    c, a, b = _rand(16, 24, grad=True, seed=2), _rand(2, 16, 32, grad=True), _rand(2, 32, 24, grad=True, seed=1)
    prof = run(lambda c, a, b: torch.baddbmm(c, a, b, beta=0.5, alpha=2.0), c, a, b, backward=True)
    assert len(cube_kernels(prof, "backward")) == 2 and not transpose_kernels(prof, "backward")


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("x_shape", [(32, 64), (2, 16, 64)], ids=["2d", "3d"])
def test_linear_forward_backward(x_shape, bias, dtype):
    """F.linear's forward and backward equal eager; the weight's transpose is no kernel of the backward (its
    gradient's transpose neither: the product is taken swapped)."""
    x, w = _rand(*x_shape, dtype=dtype, grad=True), _rand(48, 64, dtype=dtype, grad=True, seed=1)
    inputs = (x, w, _rand(48, dtype=dtype, grad=True, seed=2)) if bias else (x, w)
    prof = run(lambda *t: F.linear(*t), *inputs, backward=True)
    assert len(cube_kernels(prof, "forward")) == 1 and len(cube_kernels(prof, "backward")) == 2
    assert not transpose_kernels(prof, "backward"), [r.source for r in transpose_kernels(prof, "backward")]
    assert all(r.simulated for r in prof.records)


@pytest.mark.parametrize("fn", [lambda x, w, b: x @ w.t() + b, lambda x, w, b: F.linear(x, w, b)],
                         ids=["x_wt_plus_b", "linear"])
def test_weight_transpose_is_no_kernel(fn):
    """Inference ``x @ w.t() + b`` / ``F.linear``: the cube kernel reads ``w`` transposed, on the simulator; the bias
    add is its fused epilogue (one MIX_CV launch), no transpose kernel is launched."""
    x, w, b = _rand(32, 64), _rand(48, 64, seed=1), _rand(48, seed=2)
    prof = run(fn, x, w, b)
    assert not transpose_kernels(prof), [r.source for r in transpose_kernels(prof)]
    cubes = cube_kernels(prof)
    assert len(cubes) == 1 and cubes[0].executed == "simulator"
    assert cubes[0] in prof.simulated() and not prof.interpreted()
    assert len(prof.records) == 1 and cubes[0].fusion_kind == "MIX_CV", [(r.fusion_kind, r.source) for r in prof.records]


def test_linear_training_forward_keeps_the_saved_transpose_only():
    """In training AOTAutograd's forward returns ``w.t()`` for the backward: that output is one transpose kernel, but
    the cube kernel reads ``w`` itself (the transpose is not on the matmul's path)."""
    x, w, b = _rand(32, 64, grad=True), _rand(48, 64, grad=True, seed=1), _rand(48, grad=True, seed=2)
    prof = run(lambda x, w, b: F.linear(x, w, b), x, w, b, backward=True)
    assert len(transpose_kernels(prof, "forward")) == 1 and not transpose_kernels(prof, "backward")


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("form", ["3d@2d", "3d@3d", "4d@4d", "attention"])
def test_matmul_ranks(form, dtype):
    """torch.matmul over ranks: 3-D @ 2-D folds into one mm, 3-D/4-D @ 3-D/4-D one bmm, the attention's
    ``q @ k.transpose(-2, -1)`` one bmm reading k transposed."""
    shapes = {"3d@2d": ((2, 16, 32), (32, 24)), "3d@3d": ((2, 16, 32), (2, 32, 24)),
              "4d@4d": ((2, 3, 16, 32), (2, 3, 32, 24)), "attention": ((2, 3, 16, 32), (2, 3, 24, 32))}[form]
    fn = (lambda q, k: q @ k.transpose(-2, -1)) if form == "attention" else (lambda a, b: a @ b)
    a, b = _rand(*shapes[0], dtype=dtype), _rand(*shapes[1], dtype=dtype, seed=1)
    only_cube(run(fn, a, b))


@pytest.mark.parametrize("form", ["3d@2d", "4d@4d", "attention"])
def test_matmul_ranks_backward(form):
    shapes = {"3d@2d": ((2, 16, 32), (32, 24)), "4d@4d": ((2, 3, 16, 32), (2, 3, 32, 24)),
              "attention": ((2, 3, 16, 32), (2, 3, 24, 32))}[form]
    fn = (lambda q, k: q @ k.transpose(-2, -1)) if form == "attention" else (lambda a, b: a @ b)
    prof = run(fn, _rand(*shapes[0], grad=True), _rand(*shapes[1], grad=True, seed=1), backward=True)
    assert len(cube_kernels(prof, "backward")) == 2
    assert not transpose_kernels(prof, "backward"), [r.source for r in transpose_kernels(prof, "backward")]


BROADCASTS = {
    "batch1": (lambda a, b: a @ b, (1, 32, 24)),  # b[1, K, N]: matmul folds it into one mm
    "expand2d": (lambda a, b: torch.bmm(a, b.expand(3, 32, 24)), (32, 24)),
    "expand_batch1": (lambda a, b: torch.bmm(a, b.expand(3, 32, 24)), (1, 32, 24)),
    "expand_t": (lambda a, b: torch.bmm(a, b.t().expand(3, 32, 24)), (24, 32)),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("form", list(BROADCASTS))
def test_broadcast_batch_is_not_materialised(form, dtype):
    """a[B, M, K] @ an expanded matrix: one cube kernel reading the matrix for every batch, no broadcast kernel."""
    fn, b_shape = BROADCASTS[form]
    only_cube(run(fn, _rand(3, 16, 32, dtype=dtype), _rand(*b_shape, dtype=dtype, seed=1)))


def test_broadcast_batch_4d():
    only_cube(run(lambda a, b: a @ b, _rand(2, 3, 16, 32), _rand(1, 1, 32, 24, seed=1)))


@pytest.mark.parametrize("form", list(BROADCASTS))
def test_broadcast_batch_backward(form):
    fn, b_shape = BROADCASTS[form]
    run(fn, _rand(3, 16, 32, grad=True), _rand(*b_shape, grad=True, seed=1), backward=True)


def _widened(op):
    return lambda *t: op(*(x.float() for x in t))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("op, shapes", [(torch.mm, ((32, 64), (64, 40))), (torch.bmm, ((2, 32, 64), (2, 64, 40)))],
                         ids=["mm", "bmm"])
def test_out_dtype_f32(op, shapes, dtype):
    """``torch.mm(a, b, out_dtype=torch.float32)`` of f16/bf16 operands: one cube kernel accumulating in f32, its
    fixpipe writing f32 (eager has no CPU kernel for the overload: the reference is the widened product)."""
    a, b = _rand(*shapes[0], dtype=dtype), _rand(*shapes[1], dtype=dtype, seed=1)
    prof = run(lambda a, b: op(a, b, out_dtype=torch.float32), a, b, reference=_widened(op))
    only_cube(prof)


def test_addmm_out_dtype_f32():
    c, a, b = _rand(40, seed=2), _rand(32, 64, dtype=torch.float16), _rand(64, 40, dtype=torch.float16, seed=1)
    run(lambda c, a, b: torch.addmm(c, a, b, out_dtype=torch.float32), c, a, b,
        reference=lambda c, a, b: torch.addmm(c, a.float(), b.float()))


def _mm_graph(op, args, a_dtype, b_dtype, out_dtype):
    """A hand-built aten graph ``op(a, b, *args)`` with the given dtypes (torch's own checks refuse them before a
    backend sees them, so dynamo cannot make it)."""
    g = torch.fx.Graph()
    a, b = g.placeholder("a"), g.placeholder("b")
    a.meta["val"] = torch.empty(4, 8, dtype=a_dtype, device="meta")
    b.meta["val"] = torch.empty(8, 4, dtype=b_dtype, device="meta")
    node = g.call_function(op, (a, b, *args))
    node.meta["val"] = torch.empty(4, 4, dtype=out_dtype, device="meta")
    g.output((node,))
    return torch.fx.GraphModule(torch.nn.Module(), g)


@pytest.mark.parametrize("op, args, dtypes, reason", [
    (aten.mm.default, (), (torch.float16, torch.float32, torch.float32), "operands of two dtypes: f16 @ f32"),
    (aten.mm.dtype, (torch.float16,), (torch.float32, torch.float32, torch.float16),
     "a product of f32 operands gives f32, not f16"),
    (aten.mm.dtype, (torch.bfloat16,), (torch.float16, torch.float16, torch.bfloat16),
     "a product of f16 operands gives f16 or f32, not bf16"),
])  # fmt: skip
def test_dtype_errors_name_the_op(op, args, dtypes, reason):
    gm = _mm_graph(op, args, *dtypes)
    with pytest.raises(UnsupportedOpError) as info:
        compile_graph(gm, None, {"execute": "interpret", "fallback": "error"})
    assert info.value.op == str(op) and reason in str(info.value), str(info.value)
