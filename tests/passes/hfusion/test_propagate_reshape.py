"""hfusion-propagate-reshape: the keepdim reshape pairs of RMS norm cancel, values are unchanged, and the fused
kernel has no reshape left in its body."""

from __future__ import annotations

import pytest
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


# cross_entropy's mean of picked log-probabilities as the importer produces it: the gather's index is an unsqueeze of
# computed targets, the gathered column is squeezed back before the masked sum.
CROSS_ENTROPY = """
module attributes {symbols = {s0 = [1, 64]}} {
  func.func @main(%logp: tensor<s0x8xf32>, %t: tensor<s0xi64>) -> (tensor<f32>) {
    %ignore = arith.constant {value = -100} : () -> i64
    %ne = hfusion.compare %t, %ignore {predicate = "ne"} : (tensor<s0xi64>, i64) -> tensor<s0xi1>
    %z = hfusion.fill {value = 0} : () -> tensor<i64>
    %zb = hfusion.broadcast %z {dims = [0]} : (tensor<i64>) -> tensor<s0xi64>
    %w = hfusion.select %ne, %t, %zb : (tensor<s0xi1>, tensor<s0xi64>, tensor<s0xi64>) -> tensor<s0xi64>
    %idx = hfusion.reshape %w : (tensor<s0xi64>) -> tensor<s0x1xi64>
    %g = hfusion.gather %logp, %idx {dim = 1} : (tensor<s0x8xf32>, tensor<s0x1xi64>) -> tensor<s0x1xf32>
    %n = hfusion.elemwise_unary %g {fun = "neg"} : (tensor<s0x1xf32>) -> tensor<s0x1xf32>
    %nq = hfusion.reshape %n : (tensor<s0x1xf32>) -> tensor<s0xf32>
    %f = hfusion.fill {value = 0.0} : () -> tensor<f32>
    %fb = hfusion.broadcast %f {dims = [0]} : (tensor<f32>) -> tensor<s0xf32>
    %loss = hfusion.select %ne, %nq, %fb : (tensor<s0xi1>, tensor<s0xf32>, tensor<s0xf32>) -> tensor<s0xf32>
    %one = arith.constant {value = 1.0} : () -> f32
    %zero = arith.constant {value = 0.0} : () -> f32
    %cnt = hfusion.select %ne, %one, %zero : (tensor<s0xi1>, f32, f32) -> tensor<s0xf32>
    %sc = hfusion.reduce %cnt {dims = [0], kind = "sum"} : (tensor<s0xf32>) -> tensor<f32>
    %sl = hfusion.reduce %loss {dims = [0], kind = "sum"} : (tensor<s0xf32>) -> tensor<f32>
    %d = hfusion.elemwise_binary %sl, %sc {fun = "div"} : (tensor<f32>, tensor<f32>) -> tensor<f32>
    func.return %d : tensor<f32>
  }
}
"""
FUSED = "canonicalize,hfusion-propagate-reshape,canonicalize,hfusion-fuse-ops"


def _boundary(op) -> bool:
    """A reshape of a kernel argument (a load) or read only by the return (a store)."""
    return getattr(op.operands[0], "op", None) is None or all(u.name == "func.return" for u in op.result.users)


def test_outlined_cross_entropy_kernel_is_schedulable_and_unchanged():
    from graph_passes.schedule.kernel_info import Unsupported, analyze_kernel
    from graph_passes.target import target_spec

    fused, _ = run(CROSS_ENTROPY, FUSED)
    after, ctx = run(CROSS_ENTROPY, FUSED + ",hfusion-propagate-reshape{outlined=true}")
    assert ctx.counters["hfusion-propagate-reshape"]["reshapes-propagated"] >= 4
    (before_kernel,) = [f for f in fused.functions if f.attributes.get("kernel")]
    (kernel,) = [f for f in after.functions if f.attributes.get("kernel")]
    with pytest.raises(Unsupported, match="hfusion.reshape"):  # the reshapes inside the body, before
        analyze_kernel(before_kernel, fused.size_vars(), target_spec(None))
    assert all(_boundary(op) for op in kernel.body.ops if op.name == "hfusion.reshape")
    info = analyze_kernel(kernel, after.size_vars(), target_spec(None))
    assert info.reduce_dims == (0, 1)  # both reductions also reduce the index column's unit dim
    gen = torch.Generator().manual_seed(3)
    logp = torch.randn(37, 8, generator=gen)
    t = torch.randint(0, 8, (37,), generator=gen)
    t[::5] = -100
    for e, g in zip(interpret(fused, [logp, t], {"s0": 37}), interpret(after, [logp, t], {"s0": 37}), strict=True):
        torch.testing.assert_close(g, e, rtol=0, atol=0)
