"""canonicalize's sum of a one-hot select (graph_passes/passes/one_hot_sums.py) keeps the sum's values: indices
in and out of range, a per-row value, a factor that is infinite or NaN (the sum's ``0 * w`` terms make NaN), an i64
index and a middle dim."""

from __future__ import annotations

import pytest
import torch

from graph_passes.ir.parser import parse_module
from graph_passes.ir.printer import print_module
from tests.passes.hfusion.helpers import run
from torch_npu_backend.interpreter import interpret

ROWS = """module {
  func.func @main(%i: tensor<6xi32>, %v: tensor<6xf32>, %w: tensor<6xf32>) -> (tensor<6xf32>, tensor<6xf32>) {
    %a = hfusion.arange {start = 0, step = 1} : () -> tensor<5xi32>
    %p = hfusion.broadcast %a {dims = [0]} : (tensor<5xi32>) -> tensor<6x5xi32>
    %ib = hfusion.broadcast %i {dims = [1]} : (tensor<6xi32>) -> tensor<6x5xi32>
    %h = hfusion.compare %p, %ib {predicate = "eq"} : (tensor<6x5xi32>, tensor<6x5xi32>) -> tensor<6x5xi1>
    %z = hfusion.fill {value = 0.0} : () -> tensor<6x5xf32>
    %vb = hfusion.broadcast %v {dims = [1]} : (tensor<6xf32>) -> tensor<6x5xf32>
    %s = hfusion.select %h, %vb, %z : (tensor<6x5xi1>, tensor<6x5xf32>, tensor<6x5xf32>) -> tensor<6x5xf32>
    %wb = hfusion.broadcast %w {dims = [1]} : (tensor<6xf32>) -> tensor<6x5xf32>
    %m = hfusion.elemwise_binary %wb, %s {fun = "mul"} : (tensor<6x5xf32>, tensor<6x5xf32>) -> tensor<6x5xf32>
    %r = hfusion.reduce %m {dims = [1], kind = "sum"} : (tensor<6x5xf32>) -> tensor<6xf32>
    %q = hfusion.reduce %s {dims = [1], kind = "sum"} : (tensor<6x5xf32>) -> tensor<6xf32>
    func.return %r, %q : tensor<6xf32>, tensor<6xf32>
  }
}
"""

MIDDLE = """module {
  func.func @main(%i: tensor<2x3xi64>, %w: tensor<2x3xf32>) -> (tensor<2x3xf32>) {
    %a = hfusion.arange {start = 0, step = 1} : () -> tensor<4xi64>
    %p = hfusion.broadcast %a {dims = [0, 2]} : (tensor<4xi64>) -> tensor<2x4x3xi64>
    %ib = hfusion.broadcast %i {dims = [1]} : (tensor<2x3xi64>) -> tensor<2x4x3xi64>
    %h = hfusion.compare %ib, %p {predicate = "eq"} : (tensor<2x4x3xi64>, tensor<2x4x3xi64>) -> tensor<2x4x3xi1>
    %c = arith.constant {value = 2.5} : () -> f32
    %z = arith.constant {value = 0.0} : () -> f32
    %s = hfusion.select %h, %c, %z : (tensor<2x4x3xi1>, f32, f32) -> tensor<2x4x3xf32>
    %wb = hfusion.broadcast %w {dims = [1]} : (tensor<2x3xf32>) -> tensor<2x4x3xf32>
    %m = hfusion.elemwise_binary %s, %wb {fun = "mul"} : (tensor<2x4x3xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
    %r = hfusion.reduce %m {dims = [1], kind = "sum"} : (tensor<2x4x3xf32>) -> tensor<2x3xf32>
    func.return %r : tensor<2x3xf32>
  }
}
"""

INF, NAN = float("inf"), float("nan")
CASES = {
    "rows": (ROWS, [torch.tensor([0, 4, -1, 5, 2, 3], dtype=torch.int32),
                    torch.tensor([1.5, -2.0, 3.0, 4.0, 0.0, 7.0]),
                    torch.tensor([2.0, INF, INF, 3.0, NAN, -INF])]),
    "middle dim, i64": (MIDDLE, [torch.tensor([[0, 3, 4], [-7, 1, 2]]), torch.tensor([[1.0, -INF, 2.0], [5.0, NAN, 0.5]])]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_one_hot_sum_keeps_values(name):
    text, args = CASES[name]
    module, ctx = run(text, "canonicalize")
    assert ctx.counters["canonicalize"]["reductions-folded"] == text.count("hfusion.reduce")
    assert "hfusion.reduce" not in print_module(module)
    expected = interpret(parse_module(text), args)
    got = interpret(module, args)
    for e, g in zip(expected, got):
        torch.testing.assert_close(g, e, equal_nan=True, rtol=0, atol=0)
