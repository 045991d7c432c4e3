"""Fusion must never create a cycle between kernels, even one no op-level path shows.

The input is the backward graph of ``layer_norm(x, (8,), w) * x.var(0, keepdim=True)`` as imported with
``dynamic=True``: two groups formed separately could each feed the other (group A's ``mul_12`` feeds group B's
``mul_14`` while B's ``mul_11`` feeds A's ``mul_17``), which made the host's calls impossible to order.
"""

import torch

from graph_passes.ir import verify
from graph_passes.ir.parser import parse_module
from torch_npu_backend.interpreter import interpret

from .helpers import run

LAYER_NORM_BACKWARD = """
module attributes {symbols = {s77 = [2, 9223372036854775807]}, target = "ascend910b1"} {
  func.func @main(%primals_1: index, %primals_2: tensor<s77x8xf32>, %primals_3: tensor<8xf32>, %getitem: tensor<s77x8xf32>, %getitem_1: tensor<s77x1xf32>, %getitem_2: tensor<s77x1xf32>, %var: tensor<1x8xf32>, %tangents_1: tensor<s77x8xf32>) -> (tensor<s77x8xf32>, tensor<8xf32>) {
    %0 = hfusion.elemwise_binary %tangents_1, %getitem {fun = "mul"} : (tensor<s77x8xf32>, tensor<s77x8xf32>) -> tensor<s77x8xf32> loc("mul_7")
    %1 = hfusion.reshape %var : (tensor<1x8xf32>) -> tensor<8xf32> loc("mul_8")
    %2 = hfusion.broadcast %1 {dims = [0]} : (tensor<8xf32>) -> tensor<s77x8xf32> loc("mul_8")
    %3 = hfusion.elemwise_binary %tangents_1, %2 {fun = "mul"} : (tensor<s77x8xf32>, tensor<s77x8xf32>) -> tensor<s77x8xf32> loc("mul_8")
    %4 = hfusion.reduce %0 {dims = [0], kind = "sum"} : (tensor<s77x8xf32>) -> tensor<8xf32> loc("sum_1")
    %5 = hfusion.reshape %4 : (tensor<8xf32>) -> tensor<1x8xf32> loc("sum_1")
    %6 = hfusion.reduce %primals_2 {dims = [0], kind = "sum"} : (tensor<s77x8xf32>) -> tensor<8xf32> loc("mean")
    %7 = hfusion.reshape %6 : (tensor<8xf32>) -> tensor<1x8xf32> loc("mean")
    %8 = hfusion.elemwise_binary %7, %primals_1 {fun = "div"} : (tensor<1x8xf32>, index) -> tensor<1x8xf32> loc("mean")
    %9 = hfusion.reshape %8 : (tensor<1x8xf32>) -> tensor<8xf32> loc("sub_4")
    %10 = hfusion.broadcast %9 {dims = [0]} : (tensor<8xf32>) -> tensor<s77x8xf32> loc("sub_4")
    %11 = hfusion.elemwise_binary %primals_2, %10 {fun = "sub"} : (tensor<s77x8xf32>, tensor<s77x8xf32>) -> tensor<s77x8xf32> loc("sub_4")
    %12 = arith.constant {value = 2.0} : () -> f32 loc("mul_9")
    %13 = hfusion.elemwise_binary %5, %12 {fun = "mul"} : (tensor<1x8xf32>, f32) -> tensor<1x8xf32> loc("mul_9")
    %14 = arith.constant {value = -1} : () -> index loc("mul_9")
    %15 = arith.addi %primals_1, %14 : (index, index) -> index loc("mul_9")
    %16 = hfusion.elemwise_binary %13, %15 {fun = "div"} : (tensor<1x8xf32>, index) -> tensor<1x8xf32> loc("mul_9")
    %17 = hfusion.reshape %16 : (tensor<1x8xf32>) -> tensor<8xf32> loc("mul_10")
    %18 = hfusion.broadcast %17 {dims = [0]} : (tensor<8xf32>) -> tensor<s77x8xf32> loc("mul_10")
    %19 = hfusion.elemwise_binary %18, %11 {fun = "mul"} : (tensor<s77x8xf32>, tensor<s77x8xf32>) -> tensor<s77x8xf32> loc("mul_10")
    %20 = hfusion.reshape %getitem_1 : (tensor<s77x1xf32>) -> tensor<s77xf32> loc("sub_6")
    %21 = hfusion.broadcast %20 {dims = [1]} : (tensor<s77xf32>) -> tensor<s77x8xf32> loc("sub_6")
    %22 = hfusion.elemwise_binary %primals_2, %21 {fun = "sub"} : (tensor<s77x8xf32>, tensor<s77x8xf32>) -> tensor<s77x8xf32> loc("sub_6")
    %23 = hfusion.reshape %getitem_2 : (tensor<s77x1xf32>) -> tensor<s77xf32> loc("mul_11")
    %24 = hfusion.broadcast %23 {dims = [1]} : (tensor<s77xf32>) -> tensor<s77x8xf32> loc("mul_11")
    %25 = hfusion.elemwise_binary %22, %24 {fun = "mul"} : (tensor<s77x8xf32>, tensor<s77x8xf32>) -> tensor<s77x8xf32> loc("mul_11")
    %26 = hfusion.broadcast %primals_3 {dims = [0]} : (tensor<8xf32>) -> tensor<s77x8xf32> loc("mul_12")
    %27 = hfusion.elemwise_binary %3, %26 {fun = "mul"} : (tensor<s77x8xf32>, tensor<s77x8xf32>) -> tensor<s77x8xf32> loc("mul_12")
    %28 = arith.constant {value = 8.0} : () -> f32 loc("mul_13")
    %29 = hfusion.elemwise_binary %27, %28 {fun = "mul"} : (tensor<s77x8xf32>, f32) -> tensor<s77x8xf32> loc("mul_13")
    %30 = hfusion.reduce %27 {dims = [1], kind = "sum"} : (tensor<s77x8xf32>) -> tensor<s77xf32> loc("sum_2")
    %31 = hfusion.elemwise_binary %27, %25 {fun = "mul"} : (tensor<s77x8xf32>, tensor<s77x8xf32>) -> tensor<s77x8xf32> loc("mul_14")
    %32 = hfusion.reduce %31 {dims = [1], kind = "sum"} : (tensor<s77x8xf32>) -> tensor<s77xf32> loc("sum_3")
    %33 = hfusion.broadcast %32 {dims = [1]} : (tensor<s77xf32>) -> tensor<s77x8xf32> loc("mul_15")
    %34 = hfusion.elemwise_binary %25, %33 {fun = "mul"} : (tensor<s77x8xf32>, tensor<s77x8xf32>) -> tensor<s77x8xf32> loc("mul_15")
    %35 = hfusion.broadcast %30 {dims = [1]} : (tensor<s77xf32>) -> tensor<s77x8xf32> loc("sub_7")
    %36 = hfusion.elemwise_binary %29, %35 {fun = "sub"} : (tensor<s77x8xf32>, tensor<s77x8xf32>) -> tensor<s77x8xf32> loc("sub_7")
    %37 = hfusion.elemwise_binary %36, %34 {fun = "sub"} : (tensor<s77x8xf32>, tensor<s77x8xf32>) -> tensor<s77x8xf32> loc("sub_8")
    %38 = hfusion.elemwise_binary %getitem_2, %28 {fun = "div"} : (tensor<s77x1xf32>, f32) -> tensor<s77x1xf32> loc("div")
    %39 = hfusion.reshape %38 : (tensor<s77x1xf32>) -> tensor<s77xf32> loc("mul_16")
    %40 = hfusion.broadcast %39 {dims = [1]} : (tensor<s77xf32>) -> tensor<s77x8xf32> loc("mul_16")
    %41 = hfusion.elemwise_binary %40, %37 {fun = "mul"} : (tensor<s77x8xf32>, tensor<s77x8xf32>) -> tensor<s77x8xf32> loc("mul_16")
    %42 = hfusion.elemwise_binary %3, %25 {fun = "mul"} : (tensor<s77x8xf32>, tensor<s77x8xf32>) -> tensor<s77x8xf32> loc("mul_17")
    %43 = hfusion.reduce %42 {dims = [0], kind = "sum"} : (tensor<s77x8xf32>) -> tensor<8xf32> loc("sum_4")
    %44 = hfusion.elemwise_binary %19, %41 {fun = "add"} : (tensor<s77x8xf32>, tensor<s77x8xf32>) -> tensor<s77x8xf32> loc("add_12")
    func.return %44, %43 : tensor<s77x8xf32>, tensor<8xf32> loc("output")
  }
}
"""


def _args(n: int):
    gen = torch.Generator().manual_seed(0)
    shapes = [(n, 8), (8,), (n, 8), (n, 1), (n, 1), (1, 8), (n, 8)]
    return [n] + [torch.randn(s, generator=gen) for s in shapes]


def test_no_cycle_between_kernels():
    module, ctx = run(LAYER_NORM_BACKWARD, "hfusion-fuse-ops")
    verify(module)  # every call's operands dominate it: the kernels are in a valid order
    assert ctx.counter("hfusion-fuse-ops", "kernels-outlined") >= 2


def test_same_values_after_fusion():
    before = parse_module(LAYER_NORM_BACKWARD)
    after, _ = run(LAYER_NORM_BACKWARD, "hfusion-fuse-ops,hfusion-flatten-ops")
    args = _args(5)
    for e, g in zip(interpret(before, args), interpret(after, args)):
        torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-5)
