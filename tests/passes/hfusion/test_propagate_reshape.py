"""hfusion-propagate-reshape: the keepdim reshape pairs of RMS norm cancel, values are unchanged, and the fused
kernel has no reshape left in its body."""

from __future__ import annotations

import torch

from graph_passes.ir.parser import parse_module
from torch_npu_backend.interpreter import interpret

from .helpers import random_args, run

# RMS norm as the importer produces it: x * rsqrt(mean(x**2, -1, keepdim=True) + eps) * w.
RMS_NORM = """
module attributes {symbols = {s0 = [1, 64]}} {
  func.func @main(%x: tensor<s0x1024xf32>, %w: tensor<1024xf32>) -> (tensor<s0x1024xf32>) {
    %two = arith.constant {value = 2.0} : () -> f32
    %p = hfusion.elemwise_binary %x, %two {fun = "pow"} : (tensor<s0x1024xf32>, f32) -> tensor<s0x1024xf32>
    %s = hfusion.reduce %p {dims = [1], kind = "sum"} : (tensor<s0x1024xf32>) -> tensor<s0xf32>
    %k = hfusion.reshape %s : (tensor<s0xf32>) -> tensor<s0x1xf32>
    %n = arith.constant {value = 1024.0} : () -> f32
    %d = hfusion.elemwise_binary %k, %n {fun = "div"} : (tensor<s0x1xf32>, f32) -> tensor<s0x1xf32>
    %eps = arith.constant {value = 1e-06} : () -> f32
    %a = hfusion.elemwise_binary %d, %eps {fun = "add"} : (tensor<s0x1xf32>, f32) -> tensor<s0x1xf32>
    %r = hfusion.elemwise_unary %a {fun = "rsqrt"} : (tensor<s0x1xf32>) -> tensor<s0x1xf32>
    %u = hfusion.reshape %r : (tensor<s0x1xf32>) -> tensor<s0xf32>
    %b = hfusion.broadcast %u {dims = [1]} : (tensor<s0xf32>) -> tensor<s0x1024xf32>
    %m = hfusion.elemwise_binary %x, %b {fun = "mul"} : (tensor<s0x1024xf32>, tensor<s0x1024xf32>) -> tensor<s0x1024xf32>
    %bw = hfusion.broadcast %w {dims = [0]} : (tensor<1024xf32>) -> tensor<s0x1024xf32>
    %o = hfusion.elemwise_binary %m, %bw {fun = "mul"} : (tensor<s0x1024xf32>, tensor<s0x1024xf32>) -> tensor<s0x1024xf32>
    func.return %o : tensor<s0x1024xf32>
  }
}
"""


def test_rms_norm_values_unchanged():
    before = parse_module(RMS_NORM)
    after, ctx = run(RMS_NORM, "hfusion-propagate-reshape")
    assert ctx.counters["hfusion-propagate-reshape"]["reshapes-propagated"] == 3  # div, add, rsqrt
    args = random_args(before, {"s0": 37})
    for e, g in zip(interpret(before, args, {"s0": 37}), interpret(after, args, {"s0": 37}), strict=True):
        torch.testing.assert_close(g, e, rtol=0, atol=0)


def test_rms_norm_kernel_has_no_reshape():
    module, ctx = run(RMS_NORM, "hfusion-propagate-reshape,canonicalize,hfusion-fuse-ops")
    kernels = [f for f in module.functions if f.attributes.get("kernel")]
    assert len(kernels) == 1
    assert not [op for op in kernels[0].body.ops if op.name == "hfusion.reshape"]
