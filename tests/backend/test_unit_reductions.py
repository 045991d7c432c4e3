"""A reduction over dims of static size 1 is a reshape (canonicalize's ``reduce_over_unit_dims``): a norm over a
last dim of 1 runs on the simulator instead of leaving a reshape of a reduced value in a kernel (which the reference
interpreter ran), and a reduction over unit and other dims reduces only the others."""

from __future__ import annotations

import torch
import torch.nn.functional as F

import torch_npu_backend
from graph_passes.ir.parser import parse_module
from graph_passes.ir.printer import print_module
from graph_passes.passes.manager import PassManager


def _ops(text: str) -> list[str]:
    module = parse_module(text)
    PassManager.from_pipeline("canonicalize", verify=True).run(module)
    return [op.name for op in module.walk() if op.name.startswith("hfusion.")], print_module(module)


def test_reduction_over_only_unit_dims_becomes_a_reshape():
    names, text = _ops("""
module attributes {target = "ascend910b1"} {
  func.func @main(%x: tensor<4x1xf32>) -> (tensor<4xf32>) {
    %0 = hfusion.reduce %x {dims = [1], kind = "max"} : (tensor<4x1xf32>) -> tensor<4xf32>
    func.return %0 : tensor<4xf32>
  }
}""")
    assert names == ["hfusion.reshape"], text


def test_reduction_over_unit_and_other_dims_reduces_only_the_others():
    names, text = _ops("""
module attributes {target = "ascend910b1"} {
  func.func @main(%x: tensor<1x8x1x5xf32>) -> (tensor<8xf32>) {
    %0 = hfusion.reduce %x {dims = [0, 2, 3], kind = "sum"} : (tensor<1x8x1x5xf32>) -> tensor<8xf32>
    func.return %0 : tensor<8xf32>
  }
}""")
    assert names == ["hfusion.reshape", "hfusion.reduce"], text
    assert "dims = [1]" in text and "tensor<8x5xf32>" in text, text


def test_widening_sum_over_a_unit_dim_is_left_alone():
    """A sum whose result type differs from its input's is a cast, not a view: the rule does not apply."""
    names, _ = _ops("""
module attributes {target = "ascend910b1"} {
  func.func @main(%x: tensor<4x1xi32>) -> (tensor<4xi64>) {
    %0 = hfusion.reduce %x {dims = [1], kind = "sum"} : (tensor<4x1xi32>) -> tensor<4xi64>
    func.return %0 : tensor<4xi64>
  }
}""")
    assert names == ["hfusion.reduce"]


def test_rms_norm_over_a_dim_of_one_runs_on_the_simulator(fresh_dynamo):
    x = torch.randn(1)
    fn = torch.compile(lambda x: F.rms_norm(x, (1,)), backend="npu", options={"cache": False})
    with torch_npu_backend.profile(trace=False) as prof:
        got = fn(x)
    torch.testing.assert_close(got, F.rms_norm(x, (1,)), rtol=1.3e-6, atol=1e-5)
    assert prof.records and not prof.interpreted(), [r.reason for r in prof.interpreted()]
