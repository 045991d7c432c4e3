"""The hand-written example kernels: results and the expected performance relations."""
import numpy as np
import pytest

from simulator.examples import run_gemm, run_vector_add

rng = np.random.default_rng(3)


def gemm_ref(A, B, bk0):
    """The kernel's arithmetic: each mmad's k-chunk summed exactly, rounded to f32, accumulated in f32."""
    C = None
    for k in range(0, A.shape[1], bk0):
        p = (A[:, k:k + bk0].astype(np.float64) @ B[k:k + bk0].astype(np.float64)).astype(np.float32)
        C = p if C is None else C + p
    return C.astype(np.float16)


@pytest.mark.parametrize("buffers", [1, 2])
def test_vector_add_small(buffers):
    n = 16384 * 20
    x, y = rng.standard_normal(n).astype(np.float16), rng.standard_normal(n).astype(np.float16)
    z, res = run_vector_add(x, y, buffers=buffers, block_dim=8)
    np.testing.assert_array_equal(z, x + y)
    assert res.stats.bytes == {"GM->UB": 2 * x.nbytes, "UB->GM": x.nbytes}
    assert res.stats.flops_vector == n


def test_double_buffering_is_faster():
    n = 16384 * 96
    x, y = rng.standard_normal(n).astype(np.float16), rng.standard_normal(n).astype(np.float16)
    _, r2 = run_vector_add(x, y, buffers=2, block_dim=48)
    _, r1 = run_vector_add(x, y, buffers=1, block_dim=48)
    assert r2.stats.cycles < r1.stats.cycles
    assert r2.stats.efficiency > 0.85


def test_gemm_small():
    A = rng.uniform(-1, 1, (256, 512)).astype(np.float16)
    B = rng.uniform(-1, 1, (512, 256)).astype(np.float16)
    C, res = run_gemm(A, B, block_dim=4, tiles=(128, 128, 256, 64))
    np.testing.assert_array_equal(C, gemm_ref(A, B, 64))
    s = res.stats
    assert s.flops_cube == 2 * 256 * 512 * 256
    assert s.bytes["L0C->GM"] == 256 * 256 * 2
    assert s.busy_ratio["M"] > 0 and s.busy_ratio["MTE1"] > 0 and s.busy_ratio["MTE2"] > 0


@pytest.mark.slow
def test_vector_add_full_16m():
    n = 16 * 1024 * 1024
    x, y = rng.standard_normal(n).astype(np.float16), rng.standard_normal(n).astype(np.float16)
    z2, r2 = run_vector_add(x, y, buffers=2, block_dim=48)
    np.testing.assert_array_equal(z2, x + y)
    _, r1 = run_vector_add(x, y, buffers=1, block_dim=48, check_hazards=False)
    assert r2.stats.efficiency >= 0.85
    assert r2.stats.cycles < r1.stats.cycles


@pytest.mark.slow
def test_gemm_full_2048():
    A = rng.uniform(-1, 1, (2048, 2048)).astype(np.float16)
    B = rng.uniform(-1, 1, (2048, 2048)).astype(np.float16)
    C, res = run_gemm(A, B, block_dim=24)
    np.testing.assert_array_equal(C, gemm_ref(A, B, 64))
    assert res.stats.flops_cube == 2 * 2048 ** 3
