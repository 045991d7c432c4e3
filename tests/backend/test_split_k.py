"""Split-K (``hfusion-split-k``, docs/cube.md): a matmul with too few output tiles for the cube cores and a long K
runs as f32 partial products over chunks of K (one cube kernel) and their sum (a vector kernel). Against eager in
f16, bf16 and f32, ragged last chunks, transposed operands, backward (a weight gradient over many tokens), the
estimate's choice (split for 64x64x16384, not for a GEMM that fills the cores) and the measured gain."""

import pytest
import torch

import torch_npu_backend
from tests.helpers import assert_close, check_model
from tests.helpers import profiled as _run, seeded_randn as _randn

DTYPES = [torch.float16, torch.bfloat16, torch.float32]


def _kinds(prof):
    return [r.fusion_kind for r in prof.simulated()]


def _scale(dtype, k: int) -> float:
    """f32 sums of ``k`` products in another order than eager's: about sqrt(k) ulps apart (test_cube_kernels)."""
    return max(1.0, k ** 0.5) if dtype == torch.float32 else 1.0


@pytest.mark.parametrize("dtype", DTYPES)
def test_forced_split_matches_eager(fresh_dynamo, dtype):
    """Three chunks of 1,344 (the last 1,312): partial products in f32, one rounding at the end."""
    a, b = _randn(48, 4000, dtype=dtype), _randn(4000, 40, dtype=dtype, seed=1)
    out, prof = _run(torch.mm, a, b, split_k=3)
    assert_close(out, torch.mm(a, b), f"split mm {dtype}", _scale(dtype, 4000))
    assert sorted(_kinds(prof)) != ["SINGLE_CUBE"], "split: a sum kernel follows the partial products"
    (cube,) = [r for r in prof.simulated() if r.fusion_kind == "SINGLE_CUBE"]
    assert cube.schedule.k_chunk == 1344 and cube.hazards_checked


@pytest.mark.parametrize("form", ["x @ w.t()", "x.t() @ g", "a.t() @ b.t()"])
def test_transposed_operands_are_read_in_place(fresh_dynamo, form):
    """Each chunk reads its K range of a transposed operand in place: no transpose kernel, one cube kernel."""
    dtype = torch.float16
    fns = {"x @ w.t()": lambda x, w: x @ w.t(), "x.t() @ g": lambda x, g: x.t() @ g,
           "a.t() @ b.t()": lambda a, b: a.t() @ b.t()}
    shapes = {"x @ w.t()": ((24, 2048), (40, 2048)), "x.t() @ g": ((2048, 24), (2048, 40)),
              "a.t() @ b.t()": ((2048, 24), (40, 2048))}
    (sa, sb) = shapes[form]
    a, b = _randn(*sa, dtype=dtype), _randn(*sb, dtype=dtype, seed=1)
    out, prof = _run(fns[form], a, b, split_k=4)
    assert_close(out, fns[form](a, b), form)
    cubes = [r for r in prof.simulated() if r.fusion_kind == "SINGLE_CUBE"]
    assert len(cubes) == 1 and cubes[0].schedule.k_chunk == 512 and len(prof.simulated()) == 2, _kinds(prof)


def test_weight_gradient_splits_in_backward(fresh_dynamo):
    """linear over 2048 tokens: the weight gradient g.t() @ x (24 x 32, K = 2048) is split; the input's gradient and
    the forward product (K = 32, 24) are not."""
    x = _randn(2048, 32, dtype=torch.float32).requires_grad_()
    w = _randn(24, 32, dtype=torch.float32, seed=1).requires_grad_()
    with torch_npu_backend.profile() as prof:
        check_model(torch.nn.functional.linear, [x, w], backward=True, options={"split_k": 4}, tol_scale=2048 ** 0.5)
    chunks = [r.schedule.k_chunk for r in prof.simulated() if r.fusion_kind == "SINGLE_CUBE"]
    assert sorted(chunks) == [0, 0, 512], chunks


def test_estimate_splits_small_output_long_k_and_wins(fresh_dynamo):
    """64 x 64 x 16384 f16: the estimate splits it (8 chunks; the cube kernel and a sum kernel) and the simulated
    kernels, launches included, are faster than the unsplit kernel's (measured: docs/cube.md)."""
    a, b = _randn(64, 16384, dtype=torch.float16), _randn(16384, 64, dtype=torch.float16, seed=1)
    out, split = _run(torch.mm, a, b)
    assert_close(out, torch.mm(a, b), "split 64x64x16384", 2.0)
    assert len(split.simulated()) == 2, _kinds(split)
    (cube,) = [r for r in split.simulated() if r.fusion_kind == "SINGLE_CUBE"]
    assert cube.schedule.k_chunk == 2048
    out1, whole = _run(torch.mm, a, b, split_k=False)
    assert len(whole.simulated()) == 1
    assert split.total_us() < 0.9 * whole.total_us(), (split.total_us(), whole.total_us())
    assert split.total_us(launch=False) < 0.5 * whole.total_us(launch=False)


def test_gemm_that_fills_the_cores_is_not_split(fresh_dynamo):
    """256 x 512 x 1024: enough tiles of 32 x 192 for the cores; no split (1024^3: tests/passes/hfusion/split-k.mlir)."""
    a, b = _randn(256, 1024, dtype=torch.float16), _randn(1024, 512, dtype=torch.float16, seed=1)
    out, prof = _run(torch.mm, a, b)
    assert_close(out, torch.mm(a, b), "mm 256x1024x512")
    assert _kinds(prof) == ["SINGLE_CUBE"]
    assert prof.simulated()[0].schedule.k_chunk == 0


def test_split_k_option_is_checked():
    with pytest.raises(torch_npu_backend.OptionsError, match="option split_k must be a bool or an int >= 2"):
        torch_npu_backend.NpuOptions.from_dict({"split_k": 1})
