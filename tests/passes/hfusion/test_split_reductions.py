"""``hfusion-split-reductions`` keeps every function's meaning: the reference interpreter gives the same values
before and after, on rows and column blocks of several dims, sums, maxima and minima (a product is summed in
another order too, so its rounding differs: tests/backend/test_split_reductions.py), and both broadcast kinds it
rebuilds; and a graph shared by many paths is walked once per value."""

from __future__ import annotations

import pytest

from tests.passes.hfusion.helpers import assert_same_values, run

PASS = "hfusion-split-reductions"
HEADER = 'module attributes {target = "ascend910b1"} {\n'

CASES = {
    # dims [2, 3] of 2x3x128x256 (6 rows of 32768), the row max broadcast back, a bias row over the rows
    "rows of two dims": """
  func.func @main(%x: tensor<2x3x128x256xf32>, %m: tensor<2x3xf32>, %w: tensor<128x256xf32>) -> (tensor<2x3xf32>) {
    %0 = hfusion.broadcast %m {dims = [2, 3]} : (tensor<2x3xf32>) -> tensor<2x3x128x256xf32>
    %1 = hfusion.broadcast %w {dims = [0, 1]} : (tensor<128x256xf32>) -> tensor<2x3x128x256xf32>
    %2 = hfusion.elemwise_binary %x, %0 {fun = "sub"} : (tensor<2x3x128x256xf32>, tensor<2x3x128x256xf32>) -> tensor<2x3x128x256xf32>
    %3 = hfusion.elemwise_binary %2, %1 {fun = "mul"} : (tensor<2x3x128x256xf32>, tensor<2x3x128x256xf32>) -> tensor<2x3x128x256xf32>
    %4 = hfusion.reduce %3 {dims = [2, 3], kind = "sum"} : (tensor<2x3x128x256xf32>) -> tensor<2x3xf32>
    func.return %4 : tensor<2x3xf32>
  }""",
    # dims [0, 1] of 256x64x2x4 (a column block of two dims), a per-row value along the kept dims, a scalar operand
    "columns of two dims": """
  func.func @main(%x: tensor<256x64x2x4xf32>, %r: tensor<256x64xf32>) -> (tensor<2x4xf32>) {
    %c = arith.constant {value = 0.5} : () -> f32
    %0 = hfusion.broadcast %r {dims = [2, 3]} : (tensor<256x64xf32>) -> tensor<256x64x2x4xf32>
    %1 = hfusion.elemwise_binary %x, %0 {fun = "mul"} : (tensor<256x64x2x4xf32>, tensor<256x64x2x4xf32>) -> tensor<256x64x2x4xf32>
    %2 = hfusion.elemwise_binary %1, %c {fun = "add"} : (tensor<256x64x2x4xf32>, f32) -> tensor<256x64x2x4xf32>
    %3 = hfusion.reduce %2 {dims = [0, 1], kind = "max"} : (tensor<256x64x2x4xf32>) -> tensor<2x4xf32>
    func.return %3 : tensor<2x4xf32>
  }""",
    # min and max over long rows; the abs has another user (the result), so it is rebuilt, not moved
    "min, max and a shared value": """
  func.func @main(%x: tensor<2x65536xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2x65536xf32>) {
    %c = arith.constant {value = 3.0} : () -> f32
    %0 = hfusion.elemwise_unary %x {fun = "abs"} : (tensor<2x65536xf32>) -> tensor<2x65536xf32>
    %1 = hfusion.reduce %0 {dims = [1], kind = "min"} : (tensor<2x65536xf32>) -> tensor<2xf32>
    %2 = hfusion.elemwise_binary %0, %c {fun = "mul"} : (tensor<2x65536xf32>, f32) -> tensor<2x65536xf32>
    %3 = hfusion.reduce %2 {dims = [1], kind = "max"} : (tensor<2x65536xf32>) -> tensor<2xf32>
    func.return %1, %3, %0 : tensor<2xf32>, tensor<2xf32>, tensor<2x65536xf32>
  }""",
}


@pytest.mark.parametrize("name", list(CASES))
def test_split_keeps_values(name):
    text = HEADER + CASES[name] + "\n}\n"
    module, ctx = run(text, PASS)
    assert ctx.counters[PASS]["reductions-split"] >= 1
    assert_same_values(text, PASS, {})


def test_shared_graph_is_walked_once_per_value():
    """x = max(x, x) forty times, then a sum: 2^40 paths to the argument, 40 values."""
    ops = [f'    %v{i + 1} = hfusion.elemwise_binary %v{i}, %v{i} {{fun = "max"}} : '
           "(tensor<4x65536xf32>, tensor<4x65536xf32>) -> tensor<4x65536xf32>" for i in range(40)]
    text = (HEADER + "  func.func @main(%v0: tensor<4x65536xf32>) -> (tensor<4xf32>) {\n" + "\n".join(ops)
            + '\n    %s = hfusion.reduce %v40 {dims = [1], kind = "sum"} : (tensor<4x65536xf32>) -> tensor<4xf32>\n'
            "    func.return %s : tensor<4xf32>\n  }\n}\n")
    _, ctx = run(text, PASS)
    assert ctx.counters[PASS]["reductions-split"] == 1
