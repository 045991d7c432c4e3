"""A row kernel's last round of work items spread over every core (graph_passes/schedule/tail.py): the deal, the
lowering's row arithmetic on the simulator, and the cycles it saves."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings, strategies as st

from graph_passes.schedule import cost, tiling
from graph_passes.schedule.tail import balanced_tail

from .helpers import lower, only_kernel, run_kernel
from .test_pipeline import softmax
from .test_row_schedules import _layer_norm_f16


def _deal(tail, cores):
    """Rows per core when work item t runs on core t % cores (the cyclic loop over work items)."""
    rows = [0] * cores
    for t in range(tail.n_tiles):
        rows[t % cores] += tail.rows_of(t)[1]
    return rows


def test_layer_norm_rows_deal():
    """256 rows in tiles of 2 over 48 cores: two full rounds (192 rows), then 64 rows — 2 for the first 16 cores, 1
    for the other 32 (cyclic: 32 cores with a third tile of 2). The busiest cores are the first 16."""
    tail = balanced_tail(0, 256, 2, 48, 1)
    assert (tail.full_items, tail.per_item, tail.extra, tail.tail_items, tail.n_tiles) == (96, 1, 16, 48, 144)
    assert (tail.heavy_cores, tail.heavy_rows) == (16, 2)
    assert [tail.rows_of(t) for t in (95, 96, 111, 112, 143)] == [(190, 2), (192, 2), (222, 2), (224, 1), (255, 1)]
    assert _deal(tail, 48) == [6] * 16 + [5] * 32


@pytest.mark.parametrize("args", [(0, 96, 2, 48, 1), (0, 40, 2, 48, 1), (0, 200, 4, 48, 4), (0, 3, 2, 1, 1)])
def test_no_balanced_tail_when_it_gains_nothing(args):
    """No partial round (96 = 48 × 2), no full round (40 rows), units as large as the tile, one core."""
    assert balanced_tail(*args) is None


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 3000), units_per_tile=st.integers(1, 8), unit=st.sampled_from([1, 2, 4, 8]),
       cores=st.integers(1, 48))
def test_work_items_partition_the_rows(n, units_per_tile, unit, cores):
    """Work items cover [0, n) in order without overlap; every one but the last is whole units; no core gets more
    rows, and no more cores get the most rows, than in the cyclic deal of whole tiles."""
    tile = unit * units_per_tile
    tail = balanced_tail(0, n, tile, cores, unit)
    if tail is None:
        return
    pos = 0
    for t in range(tail.n_tiles):
        start, rows = tail.rows_of(t)
        assert start == pos and 0 < rows <= tile
        assert rows % unit == 0 or start + rows == n
        pos += rows
    assert pos == n
    cyclic = [0] * cores
    for t in range(-(-n // tile)):
        cyclic[t % cores] += min(tile, n - t * tile)
    balanced = _deal(tail, cores)
    assert max(balanced) <= max(cyclic)
    assert max(balanced) < max(cyclic) or balanced.count(max(balanced)) < cyclic.count(max(cyclic))
    assert balanced.count(max(balanced)) == tail.heavy_cores


def _layer_norm_run(x, w, b):
    module = lower(_layer_norm_f16(x.shape[0]))
    ck = only_kernel(module)
    (out,), res = run_kernel(ck, [x, w, b], {})
    assert res.stats.hazards_checked
    return module.lookup(ck.name).attributes, out.reshape(x.shape), res.stats.cycles


def test_layer_norm_last_round_over_every_core_is_faster(monkeypatch):
    """Layer norm over 256 rows of 4096 f16 (2-row work items): with the last round spread, 16 cores end with a
    third 2-row item and 32 with a 1-row one; the first 16 also load first. Same values as the cyclic deal (32 cores
    with three 2-row items), in under 97% of its cycles (9,791 against 10,175)."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((256, 4096)).astype(np.float16)
    w, b = rng.standard_normal(4096).astype(np.float16), rng.standard_normal(4096).astype(np.float16)
    attrs, out, cycles = _layer_norm_run(x, w, b)
    assert attrs["schedule"].distribution == "cyclic-balanced-tail" and list(attrs["schedule"].tile) == [2, 4096]
    t = attrs["tiling"]
    assert (t["n_tiles"], t["tail_full"], t["tail_units"], t["tail_extra"]) == (144, 96, 1, 16)
    ref = F.layer_norm(torch.from_numpy(x).float(), (4096,), torch.from_numpy(w).float(), torch.from_numpy(b).float())
    np.testing.assert_allclose(out.astype(np.float32), ref.numpy(), atol=2e-2, rtol=1e-2)

    monkeypatch.setattr(tiling, "row_tail", lambda *a: None)
    monkeypatch.setattr(cost, "row_tail", lambda *a: None)
    attrs_c, out_c, cycles_c = _layer_norm_run(x, w, b)
    assert attrs_c["schedule"].distribution == "cyclic" and attrs_c["tiling"]["n_tiles"] == 128
    np.testing.assert_array_equal(out, out_c)
    assert cycles < 0.97 * cycles_c, (cycles, cycles_c)


def test_softmax_last_round_in_units_of_two_rows():
    """softmax over 251 rows of 2052 f32 (8,208-B rows: two rows make whole 32-B blocks, so the last round deals
    2-row units and the last work item is the one row left): equal to numpy on the simulator."""
    module = lower(softmax("f32", 2052).replace("s0x", "251x"))
    ck = only_kernel(module)
    t = module.lookup(ck.name).attributes["tiling"]
    assert t["tail_unit"] == 2 and t["n_tiles"] > t["tail_full"], t
    x = np.random.default_rng(3).standard_normal((251, 2052)).astype(np.float32)
    (out,), res = run_kernel(ck, [x], {})
    assert res.stats.hazards_checked
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    np.testing.assert_allclose(out.reshape(x.shape), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
