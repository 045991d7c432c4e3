"""Matmuls on the simulated Cube unit (SINGLE_CUBE kernels, docs/cube.md): against eager in f16, bf16 and f32,
odd sizes, GEMV, K below one fractal, batches, every transpose, a symbolic M compiled once, backward, and the
profile's cube lanes."""

import pytest
import torch

import torch_npu_backend
from tests.helpers import assert_close, check_model, check_stages

DTYPES = [torch.float16, torch.bfloat16, torch.float32]


def _run(fn, *inputs, **compile_kw):
    """Compile, run under the profiler; returns (output, simulated records, interpreted records)."""
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="npu", **compile_kw)
    with torch_npu_backend.profile() as prof:
        out = compiled(*inputs)
    return out, prof.simulated(), prof.interpreted()


def _cube(records):
    return [r for r in records if r.fusion_kind in ("SINGLE_CUBE", "MIX_CV")]  # MIX_CV: with its fused epilogue


def _scale(dtype, k: int) -> float:
    """Tolerance scale: an f32 sum of ``k`` products rounds differently from eager's (the cube rounds each L0 step's
    exact sum once, MKL accumulates in blocks): up to about sqrt(k) ulps apart."""
    return max(1.0, k ** 0.5) if dtype == torch.float32 else 1.0


def _randn(*shape, dtype, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,k,n", [(33, 40, 50), (1, 512, 256), (20, 5, 24)], ids=["odd", "gemv", "k-below-fractal"])
def test_mm_runs_on_the_cube(fresh_dynamo, dtype, m, k, n):
    a, b = _randn(m, k, dtype=dtype), _randn(k, n, dtype=dtype, seed=1)
    out, sim, interp = _run(torch.mm, a, b)
    assert_close(out, torch.mm(a, b), f"mm {m}x{k}x{n}", _scale(dtype, k))
    assert not interp, [r.reason for r in interp]
    (rec,) = _cube(sim)
    assert rec.core_type == "AIC" and rec.hazards_checked
    assert rec.busy["M"] > 0 and rec.busy["MTE1"] > 0 and rec.busy["FIX"] > 0, rec.busy


def test_odd_shape_with_bands_of_rows(fresh_dynamo):
    """77 x 1000 f16 output rows are 2000 B, not whole 32-B blocks: a core takes bands of rows (no two cores write
    one block, which the hazard checker would report as a race)."""
    a, b = _randn(77, 333, dtype=torch.float16), _randn(333, 1000, dtype=torch.float16, seed=1)
    out, sim, interp = _run(torch.mm, a, b)
    assert_close(out, torch.mm(a, b), "mm 77x333x1000")
    (rec,) = _cube(sim)
    assert rec.schedule.work_item == "band" and not interp


def test_last_wave_cut_into_column_strips(fresh_dynamo):
    """26 tiles of 128 x 256 on 24 cube cores: 24 whole tiles, then the last 2 cut into 12 column strips each
    (uneven: 16 fractals over 12 strips), so the last wave uses every core."""
    a, b = _randn(1664, 64, dtype=torch.float16), _randn(64, 512, dtype=torch.float16, seed=1)
    out, sim, interp = _run(torch.mm, a, b)
    assert_close(out, torch.mm(a, b), "mm 1664x64x512")
    (rec,) = _cube(sim)
    assert rec.schedule.tail_strips == 12 and rec.block_dim == 24 and not interp


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_every_transpose_combination(fresh_dynamo, ta, tb):
    a = _randn(*((24, 17) if ta else (17, 24)), dtype=torch.float16)
    b = _randn(*((40, 24) if tb else (24, 40)), dtype=torch.float16, seed=1)

    def fn(a, b):
        return (a.t() if ta else a) @ (b.t() if tb else b)

    out, sim, interp = _run(fn, a, b)
    assert_close(out, fn(a, b), f"transpose_a={ta} transpose_b={tb}")
    assert len(_cube(sim)) == 1 and not interp


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_bmm_with_batches_that_share_output_blocks(fresh_dynamo, dtype):
    """Batches of 4 x 5 outputs (40 B in bf16, 80 B in f32) are not whole blocks: a work item is a group of batches
    that is."""
    a, b = _randn(6, 4, 8, dtype=dtype), _randn(6, 8, 5, dtype=dtype, seed=1)
    out, sim, interp = _run(torch.bmm, a, b)
    assert_close(out, torch.bmm(a, b), "bmm")
    (rec,) = _cube(sim)
    assert rec.schedule.work_item == "batch" and not interp


def test_attention_scores_are_batched_cube_kernels(fresh_dynamo):
    q, k = _randn(2, 3, 16, 32, dtype=torch.float16), _randn(2, 3, 16, 32, dtype=torch.float16, seed=1)
    out, sim, interp = _run(lambda q, k: q @ k.transpose(-1, -2), q, k)
    assert_close(out, q @ k.transpose(-1, -2), "q @ k^T")
    assert len(_cube(sim)) == 1 and not interp


def test_symbolic_m_compiles_once_for_three_sizes(fresh_dynamo):
    w = _randn(64, 48, dtype=torch.float16, seed=1)
    compiled = torch.compile(lambda x, w: x @ w, backend="npu", dynamic=True)
    for rows in (3, 40, 130):
        x = _randn(rows, 64, dtype=torch.float16)
        with torch_npu_backend.profile() as prof:
            out = compiled(x, w)
        assert_close(out, x @ w, f"{rows} rows")
        assert len(_cube(prof.simulated())) == 1 and not prof.interpreted()
    assert fresh_dynamo["backend_calls"] == 1


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_linear_forward_and_backward_on_the_cube(fresh_dynamo, dtype):
    x = _randn(12, 32, dtype=dtype).requires_grad_()
    w = _randn(24, 32, dtype=dtype, seed=1).requires_grad_()
    b = _randn(24, dtype=dtype, seed=2).requires_grad_()
    with torch_npu_backend.profile() as prof:
        check_model(torch.nn.functional.linear, [x, w, b], backward=True)
    assert not prof.interpreted(), [r.reason for r in prof.interpreted()]
    assert len(_cube(prof.simulated())) >= 3  # the forward product and the two gradient products


def test_stages_preserve_a_matmul():
    a, b = _randn(33, 40, dtype=torch.float32), _randn(40, 50, dtype=torch.float32, seed=1)
    stages = check_stages(torch.mm, [a, b])
    assert stages[-1] == "codegen (simulator)", stages


def test_profile_table_shows_the_cube_lanes(fresh_dynamo):
    a, b = _randn(64, 64, dtype=torch.float16), _randn(64, 64, dtype=torch.float16, seed=1)
    torch._dynamo.reset()
    compiled = torch.compile(torch.mm, backend="npu")
    with torch_npu_backend.profile() as prof:
        compiled(a, b)
    table = prof.table()
    assert "SINGLE_CUBE" in table and "CUBE" in table and "MTE1" in table and "FIXP" in table, table
    lanes = {e.get("args", {}).get("name") for e in prof.trace_events() if e.get("ph") == "M"}
    assert any("MTE1" in str(n) for n in lanes) and any("FIX" in str(n) for n in lanes), lanes


@pytest.mark.slow
@pytest.mark.parametrize("m,k,n", [(1, 4096, 4096), (77, 1000, 333), (2048, 2048, 2048)])
def test_full_size_products(fresh_dynamo, m, k, n):
    """The issue's full-size shapes: a GEMV over a 4096 x 4096 weight, an odd 77 x 1000 x 333 and a 2048^3 GEMM
    (6 waves of 128 x 256 tiles), f16, against eager."""
    a, b = _randn(m, k, dtype=torch.float16), _randn(k, n, dtype=torch.float16, seed=1)
    out, sim, interp = _run(torch.mm, a, b)
    assert_close(out, torch.mm(a, b), f"mm {m}x{k}x{n}")
    (rec,) = _cube(sim)
    assert not interp and rec.hazards_checked
