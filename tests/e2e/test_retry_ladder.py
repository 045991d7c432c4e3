"""The memory-plan retry ladder end to end: a requested tile (``tile_elems``) too big for UB overflows
``hivm-plan-memory`` and the ladder walks (fewer multi-buffers, then halved tiles) until it fits; a kernel that can
never fit fails with the one-line overflow summary."""

from __future__ import annotations

import os

import pytest
import torch

import torch_npu_backend
from graph_passes.ir.parser import parse_module
from graph_passes.pipelines import PipelineOptions, lower_with_retry, retry_ladder
from graph_passes.passes.hivm.plan_memory import MemoryPlanOverflow
from torch_npu_backend import COUNTERS
from torch_npu_backend.options import NpuOptions, OptionsError


def _chain(x, y, z):
    return torch.relu(x * y + z) - 1.0


def test_too_big_tile_request_succeeds_through_the_ladder(fresh_dynamo, tmp_path):
    """32768 f32 elements per tile: 4 buffers × 2 copies × 128 KiB overflow UB (192 KiB); multi-buffer 1 still
    overflows; the halved request (16384) fits."""
    xs = [torch.randn(256, 256) for _ in range(3)]
    before = COUNTERS["ladder_retries"]
    compiled = torch.compile(_chain, backend="npu", options={"tile_elems": 32768, "debug_dir": str(tmp_path)})
    torch.testing.assert_close(compiled(*xs), _chain(*xs))
    assert COUNTERS["ladder_retries"] - before == 2
    (graph_dir,) = [d for d in os.listdir(tmp_path) if d.startswith("graph_")]
    lines = (tmp_path / graph_dir / "retry_ladder.txt").read_text().splitlines()
    assert lines[0].startswith("failed: multi-buffer=2 max-tile-elems=0 tile-elems=32768: hivm-plan-memory: UB overflow")
    assert lines[1].startswith("failed: multi-buffer=1 max-tile-elems=0 tile-elems=32768: hivm-plan-memory: UB overflow")
    assert lines[2:] == ["ok"]
    lowered = (tmp_path / graph_dir / "lowering").iterdir()
    assert any("tile = [16384]" in p.read_text() for p in lowered if "auto-schedule" in p.name)


def test_tile_request_that_fits_needs_no_retry(fresh_dynamo):
    xs = [torch.randn(64, 256) for _ in range(3)]
    before = COUNTERS["ladder_retries"]
    compiled = torch.compile(_chain, backend="npu", options={"tile_elems": 1024})
    torch.testing.assert_close(compiled(*xs), _chain(*xs))
    assert COUNTERS["ladder_retries"] == before


def test_tile_elems_option_is_validated():
    assert NpuOptions.from_dict({}).tile_elems == 0
    assert NpuOptions.from_dict({"tile_elems": 4096}).pipeline_options().tile_elems == 4096
    for bad in (-1, 1.5, True, "4096"):
        with pytest.raises(OptionsError, match="tile_elems"):
            NpuOptions.from_dict({"tile_elems": bad})


# A hand-written HIVM kernel (auto-schedule and convert-to-hivm leave it alone) with one 256 KiB UB buffer: no rung
# of the ladder changes it, so every attempt overflows.
_NEVER_FITS = """module attributes {symbols = {s0 = [1, 1000000]}, target = "ascend910b1"} {
  func.func @big_fused_0(%x: memref<(131072*s0)xf16, gm>, %out: memref<(131072*s0)xf16, gm>, %n: index, %n_tiles: index, %block_dim: index) attributes {core_type = "AIV", kernel, output_args = [1]} {
    %c131072 = arith.constant {value = 131072} : () -> index
    %bid = hivm.get_block_idx : () -> index
    %ubx = hivm.alloc : () -> memref<131072xf16, ub>
    scf.for %bid, %n_tiles, %block_dim ({
    ^bb0(%t: index):
      %off = arith.muli %t, %c131072 : (index, index) -> index
      %rem = arith.subi %n, %off : (index, index) -> index
      %len = arith.minsi %rem, %c131072 : (index, index) -> index
      hivm.load %x, %ubx, %off, %len : memref<(131072*s0)xf16, gm>, memref<131072xf16, ub>, index, index
      hivm.store %ubx, %out, %off, %len : memref<131072xf16, ub>, memref<(131072*s0)xf16, gm>, index, index
      scf.yield
    }) : (index, index, index) -> ()
    func.return
  }
}
"""


def test_never_fits_fails_with_the_one_line_summary():
    module = parse_module(_NEVER_FITS)
    opts = PipelineOptions(tile_elems=4096)
    with pytest.raises(MemoryPlanOverflow) as info:
        lower_with_retry(module, opts)
    e = info.value
    assert (e.kernel, e.scope, e.needed, e.available) == ("big_fused_0", "ub", 262144, 196608)
    msg = str(e)
    assert "\n" not in msg
    assert msg == ("hivm-plan-memory: UB overflow in kernel big_fused_0: needs 262144 B, 196608 B available; "
                   "largest buffers: %ubx (262144 B)")


def test_retry_ladder_order():
    asked = PipelineOptions(multi_buffer=2, tile_elems=4096)
    rungs = [(o.multi_buffer, o.tile_elems) for o in retry_ladder(asked)]
    assert rungs == [(2, 4096), (1, 4096), (1, 2048), (1, 1024), (1, 512), (1, 256)]
    assert retry_ladder(asked)[0] == asked
    assert [(o.multi_buffer, o.tile_elems) for o in retry_ladder(PipelineOptions(multi_buffer=1, tile_elems=1000))] \
        == [(1, 1000), (1, 500), (1, 256)]
    automatic = [(o.multi_buffer, o.max_tile_elems) for o in retry_ladder(PipelineOptions(multi_buffer=3))]
    assert automatic[:3] == [(3, 0), (1, 0), (1, 16384)] and automatic[-1] == (1, 256)
