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
    """Double buffering pays where each core's own DMA/add chain is the limit (8 cores draw less than the
    chip's DDR bandwidth). On 48 cores the add is DDR-bound either way: DDR bandwidth is shared by the
    cores that are transferring (gm_model), so a core's add gap is filled by other cores' transfers and
    both variants run at the DDR roofline (docs/simulator.md, Benchmark)."""
    n = 16384 * 96
    x, y = rng.standard_normal(n).astype(np.float16), rng.standard_normal(n).astype(np.float16)
    _, r2 = run_vector_add(x, y, buffers=2, block_dim=8)
    _, r1 = run_vector_add(x, y, buffers=1, block_dim=8)
    assert r2.stats.cycles < 0.9 * r1.stats.cycles
    _, r2 = run_vector_add(x, y, buffers=2, block_dim=48)
    _, r1 = run_vector_add(x, y, buffers=1, block_dim=48)
    assert r2.stats.efficiency > 0.85
    assert abs(r2.stats.cycles / r1.stats.cycles - 1) < 0.02


def test_gemm_small():
    A = rng.uniform(-1, 1, (256, 512)).astype(np.float16)
    B = rng.uniform(-1, 1, (512, 256)).astype(np.float16)
    C, res = run_gemm(A, B, block_dim=4, tiles=(128, 128, 256, 64))
    np.testing.assert_array_equal(C, gemm_ref(A, B, 64))
    s = res.stats
    assert s.flops_cube == 2 * 256 * 512 * 256
    assert s.bytes["L0C->GM"] == 256 * 256 * 2
    assert s.busy_ratio["M"] > 0 and s.busy_ratio["MTE1"] > 0 and s.busy_ratio["MTE2"] > 0


@pytest.mark.parametrize("block_dim", [4, 5, 7])
def test_gemm_tail_split(block_dim):
    """6 blocks of 128x128: the leftover blocks are cut into 32-column strips shared by all cores (with 7
    cores every core's share straddles two blocks; with 5 some cores get none); exact and hazard-free. With
    4 or 5 cores the busiest core does clearly less cube work than when whole blocks are dealt round-robin
    (with 7 it cannot: 24 strips / 7 cores rounds up to a whole block anyway)."""
    A = rng.uniform(-1, 1, (384, 256)).astype(np.float16)
    B = rng.uniform(-1, 1, (256, 256)).astype(np.float16)
    busiest = {}
    for balance in (True, False):
        C, res = run_gemm(A, B, block_dim=block_dim, tiles=(128, 128, 128, 64), balance=balance)
        np.testing.assert_array_equal(C, gemm_ref(A, B, 64))
        assert res.stats.flops_cube == 2 * 384 * 256 * 256
        assert res.stats.bytes["L0C->GM"] == 384 * 256 * 2
        busiest[balance] = max(p["M"] for p in res.stats.busy_per_core.values())
    if block_dim in (4, 5):   # 2 whole blocks on the busiest core vs 1 block + a share of the tail
        assert busiest[True] < 0.8 * busiest[False]


@pytest.mark.slow
def test_vector_add_full_16m():
    n = 16 * 1024 * 1024
    x, y = rng.standard_normal(n).astype(np.float16), rng.standard_normal(n).astype(np.float16)
    z2, r2 = run_vector_add(x, y, buffers=2, block_dim=48)
    np.testing.assert_array_equal(z2, x + y)
    _, r1 = run_vector_add(x, y, buffers=1, block_dim=48, check_hazards=False)
    assert r2.stats.efficiency >= 0.85
    assert abs(r2.stats.cycles / r1.stats.cycles - 1) < 0.02   # both at the DDR roofline (see above)


@pytest.mark.slow
def test_gemm_full_2048():
    A = rng.uniform(-1, 1, (2048, 2048)).astype(np.float16)
    B = rng.uniform(-1, 1, (2048, 2048)).astype(np.float16)
    C, res = run_gemm(A, B, block_dim=24)
    np.testing.assert_array_equal(C, gemm_ref(A, B, 128))
    assert res.stats.flops_cube == 2 * 2048 ** 3
    assert res.stats.efficiency >= 0.80   # the target on ascend910b1 (90.5% when written)
