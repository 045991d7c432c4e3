"""Padded products (``hfusion-pad-matmul-output``, docs/cube.md): a matmul whose result rows are not whole 32-B blocks
runs as a product with zero columns that make them so — split by column tiles over the cube cores instead of bands
of 16 rows — and a slice kernel. Against eager in f16 and bf16, the weight transposed or not, and against the same
product with ``pad_matmul=False``."""

import pytest
import torch

from tests.helpers import assert_close, check_model, profiled as _run, seeded_randn as _randn


def _cube(prof):
    (cube,) = [r for r in prof.simulated() if r.fusion_kind == "SINGLE_CUBE"]
    return cube


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("transposed", [True, False])
def test_padded_product_matches_eager(fresh_dynamo, dtype, transposed):
    """128 x 768 x 1000: rows of 2,000 B. Padded to 1,008 columns: column tiles on more cores than the 8 bands of 16
    rows, and a slice kernel; the weight read in place (no transpose kernel)."""
    fn = (lambda x, w: x @ w.t()) if transposed else (lambda x, w: x @ w)
    x = _randn(128, 768, dtype=dtype)
    w = _randn(*((1000, 768) if transposed else (768, 1000)), dtype=dtype, seed=1)
    out, prof = _run(fn, x, w)
    assert_close(out, fn(x, w), f"padded {dtype} transposed={transposed}")
    cube = _cube(prof)
    assert cube.schedule.work_item == "tile" and cube.block_dim > 8 and cube.hazards_checked
    assert sorted(r.fusion_kind for r in prof.simulated()) == ["ANY_PB", "SINGLE_CUBE"], "the product and the slice"


def test_padding_beats_bands(fresh_dynamo):
    """The same product with ``pad_matmul=False``: one kernel over 8 bands of 16 rows, each reading all of the weight;
    padded, the two kernels' bodies take less than half of its time."""
    x, w = _randn(128, 768, dtype=torch.float16), _randn(1000, 768, dtype=torch.float16, seed=1)
    padded, prof = _run(lambda x, w: x @ w.t(), x, w)
    bands, ref = _run(lambda x, w: x @ w.t(), x, w, pad_matmul=False)
    ref_out = x @ w.t()
    assert_close(padded, ref_out, "padded")  # other tiles sum K in another order: equal to eager, not to each other
    assert_close(bands, ref_out, "bands")
    cube = _cube(ref)
    assert len(ref.simulated()) == 1 and cube.schedule.work_item == "band" and cube.block_dim == 8
    assert prof.total_us(launch=False) < 0.5 * ref.total_us(launch=False)


def test_lm_head_like_backward(fresh_dynamo):
    """A linear layer of 1,000 outputs in training: the forward product is padded, the gradients (rows of 768 and of
    the weight's 768 columns: whole blocks) are plain products; all against eager."""
    import torch_npu_backend

    x = _randn(128, 768, dtype=torch.float16).requires_grad_()
    w = _randn(1000, 768, dtype=torch.float16, seed=1).requires_grad_()
    with torch_npu_backend.profile() as prof:
        check_model(lambda x, w: torch.nn.functional.linear(x, w), [x, w], backward=True)
    cubes = [r for r in prof.simulated() if r.fusion_kind == "SINGLE_CUBE"]
    assert len(cubes) == 3 and not prof.interpreted()
    assert all(r.schedule.work_item == "tile" for r in cubes), "the forward's 1,000 columns padded: no bands"
