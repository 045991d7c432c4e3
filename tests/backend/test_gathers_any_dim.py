"""Gathers along any dim run on the simulator: along a middle dim by an index spanning that dim only (``flip``,
``roll``, ``index_select`` along dim 1 of a rank-3 tensor) as ``hivm.embedding_gather {dim}`` — one DMA of the
tile's box of the other dims per index —, and along the last dim of a rank ≥ 3 tensor as ``hivm.vgather``, its rows
above the last dim walked over their valid extents."""

from __future__ import annotations

import re

import pytest
import torch

import torch_npu_backend

CASES = {
    "flip_middle_dim": (lambda x: torch.flip(x, [1]), lambda: [torch.randn(5, 6, 3)]),
    "index_select_middle_dim": (lambda x, i: torch.index_select(x, 1, i),
                                lambda: [torch.randn(4, 7, 9), torch.tensor([6, 0, 3, 3])]),
    "flip_every_dim_of_rank_3": (lambda x: torch.flip(x, [0, 1, 2]), lambda: [torch.randn(5, 10, 5)]),
    "gather_last_dim_of_rank_3": (lambda x, i: torch.gather(x, 2, i),
                                  lambda: [torch.randn(2, 16, 48), torch.randint(0, 48, (2, 16, 5))]),
    "roll_last_dim_of_rank_4": (lambda x: torch.roll(x, 3, 3), lambda: [torch.randn(3, 4, 5, 70)]),
}
SLOW = {"flip_every_dim_of_rank_3", "roll_last_dim_of_rank_4"}


def _run(fn, args):
    compiled = torch.compile(fn, backend="npu", options={"cache": False})
    with torch_npu_backend.profile(trace=False) as prof:
        got = compiled(*args)
    return got, prof


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in CASES])
def test_gather_runs_on_the_simulator_and_matches_eager(fresh_dynamo, name):
    fn, make = CASES[name]
    torch.manual_seed(0)
    args = make()
    got, prof = _run(fn, args)
    assert torch.equal(got, fn(*args))  # a gather moves values: bit for bit
    assert prof.records and not prof.interpreted(), [r.reason for r in prof.interpreted()]


def test_middle_dim_gather_moves_one_box_per_index(fresh_dynamo, tmp_path):
    """index_select(x, 1, i) of [4, 7, 9] by 4 indices: the scalar loop over the 4 indices issues one GM→UB copy
    each (the tile's box of dims 0 and 2 at the register's slab: its rows as bursts of 9 elements), not one per
    element."""
    fn = torch.compile(lambda x, i: torch.index_select(x, 1, i), backend="npu",
                       options={"cache": False, "debug_dir": str(tmp_path)})
    x, i = torch.randn(4, 7, 9), torch.tensor([6, 0, 3, 3])
    assert torch.equal(fn(x, i), torch.index_select(x, 1, i))
    asm = "\n".join(p.read_text() for p in tmp_path.rglob("kernel_*.s"))
    copies = [ln for ln in asm.splitlines() if ln.split()[:1] == ["copy_gm_to_ub"] and "gm_reg=g_i" in ln]
    assert len(copies) == 1, copies  # one copy in the loop body over the indices
    assert "burst_len=36" in copies[0], copies[0]
    assert re.search(r"loop r\w* = 0, 4, 1", asm), asm


def test_out_of_range_middle_dim_index_stops_the_kernel(fresh_dynamo):
    """The register offset of a slab is bounds-checked as a row's is: an index past dim 1 is an error naming it."""
    fn = torch.compile(lambda x, i: x[:, i], backend="npu", options={"cache": False})
    with pytest.raises(Exception, match="outside|out of"):
        fn(torch.randn(4, 7, 9), torch.tensor([1, 9]))
