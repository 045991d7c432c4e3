"""Granule sets of the hazard checker (simulator/granules.py): strided bursts as views, the same granules as before."""
import numpy as np
import pytest

from simulator import GlobalMemory, ProgramBuilder, RaceError, launch
from simulator.granules import Grid, granule_set, granules, index, put, shadow_len, take


@pytest.mark.parametrize("starts, length, form", [
    ([0], 64, slice),                      # one burst
    ([0, 64, 128], 64, slice),             # bursts tiling a range
    ([0, 128, 256, 384], 64, Grid),        # strided, aligned
    ([40, 168, 296], 30, Grid),            # strided, unaligned: two granules per burst
    ([0, 96, 192], 64, Grid),              # stride of three granules, two used
    ([0, 48, 96], 64, np.ndarray),         # stride not a multiple of 32 B
    ([0, 32, 64], 64, np.ndarray),         # overlapping bursts
    ([0, 128, 320], 64, np.ndarray),       # irregular stride
    ([256, 128, 0], 64, np.ndarray),       # descending
])
def test_granule_set_lists_the_granules_of_granules(starts, length, form):
    starts = np.asarray(starts)
    g = granule_set(starts, length)
    assert isinstance(g, form)
    np.testing.assert_array_equal(index(g), index(granules(starts, length)))


def test_grid_take_and_put_match_fancy_indexing():
    rng = np.random.default_rng(0)
    size = 4096
    n = shadow_len(size)
    starts = np.arange(5) * 224 + 3840 - 4 * 224  # the last burst ends at the memory's last bytes
    g = granule_set(starts, 70)
    assert isinstance(g, Grid)
    flat = index(g)
    for shape in [(n,), (n, 7)]:
        a = rng.integers(0, 100, shape).astype(np.int32)
        b = a.copy()
        np.testing.assert_array_equal(take(a, g), b[flat])
        put(a, g, -5)
        b[flat] = -5
        np.testing.assert_array_equal(a, b)


def _strided_load_then(second):
    """A strided load into UB (4 bursts of 64 B, 128 B apart: a Grid) and an unsynchronised second access."""
    gm = GlobalMemory()
    x = gm.put(np.ones(512, np.float16))
    d = gm.alloc(1024)
    b = ProgramBuilder("t", "aiv", ["x", "d"])
    if second == "war":
        b.copy_ub_to_gm(b.reg("d"), 0, 448)                            # MTE3 reads, no MTE3->MTE2 flag
    b.copy_gm_to_ub(0, b.reg("x"), 64, n_burst=4, src_stride=64, dst_stride=128)
    if second == "raw":
        b.copy_ub_to_gm(b.reg("d"), 0, 448)                            # no MTE2->MTE3 flag
    launch(b.build(), block_dim=1, args=dict(x=x, d=d), gm=gm)


def test_race_through_a_strided_write_is_found():
    with pytest.raises(RaceError, match=r"race on UB\[0x0000, 0x01c0\) of core aiv0: copy_ub_to_gm \(MTE3, core aiv0, "
                                        r"pc 1\) reads what copy_gm_to_ub \(MTE2, core aiv0, pc 0\) writes"):
        _strided_load_then("raw")


def test_war_through_a_strided_write_is_found():
    with pytest.raises(RaceError, match=r"race on UB\[0x0000, 0x01c0\) of core aiv0: copy_gm_to_ub \(MTE2, core aiv0, "
                                        r"pc 1\) overwrites what copy_ub_to_gm \(MTE3, core aiv0, pc 0\) reads"):
        _strided_load_then("war")
