"""hivm.varange (vci) kernels from the real pipeline on the simulator, hazard checker on, against numpy."""

import numpy as np
import pytest

from .helpers import lower, only_kernel, run_kernel


def _arange_rows(dt: str, start: int, step: int) -> str:
    t, r = f"tensor<s0x40x{dt}>", f"tensor<s0x{dt}>"
    return f"""module attributes {{symbols = {{s0 = [1, 2000]}}}} {{
  func.func @main(%x: {t}) -> ({t}, {r}) {{
    %a = hfusion.arange {{start = {start}, step = {step}}} : () -> {r}
    %b = hfusion.broadcast %a {{dims = [1]}} : ({r}) -> {t}
    %m = hfusion.elemwise_binary %x, %b {{fun = "add"}} : ({t}, {t}) -> {t}
    func.return %m, %a : {t}, {r}
  }}
}}"""


@pytest.mark.parametrize("dt, start, step", [("f32", 0, 1), ("f32", 7, -3), ("f16", -5, 1), ("i32", 100, 2)])
def test_arange_along_tiled_rows(dt, start, step):
    """One value per row, counted from each work item's row offset; dynamic rows over several tiles and cores."""
    ck = only_kernel(lower(_arange_rows(dt, start, step)))
    npd = {"f32": np.float32, "f16": np.float16, "i32": np.int32}[dt]
    for s0 in (5, 1999):
        x = (np.arange(s0 * 40).reshape(s0, 40) % 7).astype(npd)
        outs, res = run_kernel(ck, [x], {"s0": s0})
        out, rows = sorted(outs, key=lambda a: -a.size)  # the fused kernel orders its outputs
        col = (start + step * np.arange(s0)).astype(npd)
        np.testing.assert_array_equal(rows.reshape(-1), col)
        np.testing.assert_array_equal(out.reshape(x.shape), x + col[:, None])
        assert res.stats.hazards_checked
        assert "vci" in ck.assembly()


def test_arange_row_returned_once():
    """A row returned beside the rows it scaled: only the first row tile stores it (no two cores write it)."""
    text = """module attributes {symbols = {s0 = [1, 5000]}} {
  func.func @main(%x: tensor<s0x8xf32>) -> (tensor<8xf32>, tensor<s0x8xf32>) {
    %a = hfusion.arange {start = 1, step = 2} : () -> tensor<8xf32>
    %b = hfusion.broadcast %a {dims = [0]} : (tensor<8xf32>) -> tensor<s0x8xf32>
    %m = hfusion.elemwise_binary %x, %b {fun = "mul"} : (tensor<s0x8xf32>, tensor<s0x8xf32>) -> tensor<s0x8xf32>
    func.return %a, %m : tensor<8xf32>, tensor<s0x8xf32>
  }
}"""
    ck = only_kernel(lower(text, max_tile_elems=256))
    s0 = 4000
    x = np.ones((s0, 8), np.float32)
    outs, res = run_kernel(ck, [x], {"s0": s0})
    out, row = sorted(outs, key=lambda a: -a.size)
    assert ck.tiling.block_dim({"s0": s0}) > 1
    np.testing.assert_array_equal(row.reshape(-1), 1 + 2 * np.arange(8, dtype=np.float32))
    np.testing.assert_array_equal(out.reshape(x.shape), np.broadcast_to(1 + 2 * np.arange(8, dtype=np.float32), x.shape))
