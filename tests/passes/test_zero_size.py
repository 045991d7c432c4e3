"""canonicalize's zero-size rules (graph_passes/passes/zero_size.py): no op computes a value of no elements, a
reduction over no elements is its kind's identity, a concat drops empty inputs; max/min of nothing is an error."""

from __future__ import annotations

import pytest

from graph_passes.ir.parser import parse_module
from graph_passes.ir.printer import print_module
from graph_passes.passes import PassManager
from graph_passes.passes.base import PassError

SUMS = """module {
  func.func @main(%x: tensor<0x4xf32>, %y: tensor<3x4xf32>) -> (tensor<0x4xf32>, tensor<4xf32>, tensor<3x4xf32>) {
    %e = hfusion.elemwise_unary %x {fun = "exp"} : (tensor<0x4xf32>) -> tensor<0x4xf32> loc("exp")
    %s = hfusion.reduce %x {dims = [0], kind = "sum"} : (tensor<0x4xf32>) -> tensor<4xf32> loc("sum")
    %c = hfusion.concat %x, %y {dim = 0} : (tensor<0x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32> loc("cat")
    func.return %e, %s, %c : tensor<0x4xf32>, tensor<4xf32>, tensor<3x4xf32>
  }
}
"""

MAX = """module {
  func.func @main(%x: tensor<0x4xf32>) -> (tensor<4xf32>) {
    %m = hfusion.reduce %x {dims = [0], kind = "max"} : (tensor<0x4xf32>) -> tensor<4xf32> loc("amax")
    func.return %m : tensor<4xf32>
  }
}
"""


def _canonicalize(text: str) -> str:
    module = parse_module(text)
    PassManager.from_pipeline("canonicalize", verify=True).run(module)
    return print_module(module)


def test_values_of_no_elements_are_not_computed():
    out = _canonicalize(SUMS)
    assert "tensor.empty" in out and "elemwise_unary" not in out
    assert "hfusion.fill {value = 0.0}" in out and "hfusion.reduce" not in out
    assert "hfusion.concat" not in out  # the one input left is the result


def test_max_of_no_elements_is_one_line():
    with pytest.raises(PassError, match=r"^canonicalize: amax: 'hfusion.reduce' op max over dims \[0\] of 0x4 "
                                        r"reduces no elements") as e:
        _canonicalize(MAX)
    assert "\n" not in str(e.value)
