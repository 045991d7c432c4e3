"""The matmul verifier: f16/bf16 products may give f32 (the cube accumulates in f32), a batch_matmul operand may
be one rank-2 matrix shared by every batch; anything else is a one-line error naming the op and the problem."""

import pytest

import graph_passes  # noqa: F401
from graph_passes.ir import VerifyError, verify
from graph_passes.ir.parser import parse_module


def _verify(args: str, op: str, result: str) -> None:
    text = (f"module {{\n  func.func @main({args}) -> ({result}) {{\n"
            f"    %0 = {op} -> {result}\n    func.return %0 : {result}\n  }}\n}}\n")
    verify(parse_module(text, filename="mm.mlir"))


@pytest.mark.parametrize("args, op, result", [
    ("%a: tensor<16x32xf16>, %b: tensor<32x8xf16>",
     "hfusion.matmul %a, %b : (tensor<16x32xf16>, tensor<32x8xf16>)", "tensor<16x8xf32>"),
    ("%a: tensor<16x32xbf16>, %b: tensor<8x32xbf16>",
     "hfusion.matmul %a, %b {transpose_b} : (tensor<16x32xbf16>, tensor<8x32xbf16>)", "tensor<16x8xbf16>"),
    ("%a: tensor<4x16x32xf32>, %b: tensor<32x8xf32>",
     "hfusion.batch_matmul %a, %b : (tensor<4x16x32xf32>, tensor<32x8xf32>)", "tensor<4x16x8xf32>"),
    ("%a: tensor<32x16xf16>, %b: tensor<4x8x32xf16>",
     "hfusion.batch_matmul %a, %b {transpose_a, transpose_b} : (tensor<32x16xf16>, tensor<4x8x32xf16>)",
     "tensor<4x16x8xf32>"),
    ("%a: tensor<16x32xf16>, %b: tensor<9x32xf16>",  # 9 columns of b and 7 of zeros (hfusion-pad-matmul-output)
     "hfusion.matmul %a, %b {transpose_b, pad_n = 7} : (tensor<16x32xf16>, tensor<9x32xf16>)", "tensor<16x16xf16>"),
])  # fmt: skip
def test_accepted(args, op, result):
    _verify(args, op, result)


@pytest.mark.parametrize("args, op, result, problem", [
    ("%a: tensor<16x32xf16>, %b: tensor<32x8xf32>",
     "hfusion.matmul %a, %b : (tensor<16x32xf16>, tensor<32x8xf32>)", "tensor<16x8xf32>",
     "operands have two dtypes: f16 @ f32"),
    ("%a: tensor<16x32xf32>, %b: tensor<32x8xf32>",
     "hfusion.matmul %a, %b : (tensor<16x32xf32>, tensor<32x8xf32>)", "tensor<16x8xf16>",
     "a product of f32 operands cannot give f16"),
    ("%a: tensor<16x32xf16>, %b: tensor<32x8xf16>",
     "hfusion.matmul %a, %b : (tensor<16x32xf16>, tensor<32x8xf16>)", "tensor<16x8xbf16>",
     "a product of f16 operands cannot give bf16"),
    ("%a: tensor<16x32xf32>, %b: tensor<32x8xf32>",
     "hfusion.batch_matmul %a, %b : (tensor<16x32xf32>, tensor<32x8xf32>)", "tensor<4x16x8xf32>",
     "operands and result must have rank 3 (an operand may be rank 2"),
    ("%a: tensor<4x16x32xf32>, %b: tensor<2x32x8xf32>",
     "hfusion.batch_matmul %a, %b : (tensor<4x16x32xf32>, tensor<2x32x8xf32>)", "tensor<4x16x8xf32>",
     "batch sizes differ: [4] vs [2]"),
    ("%a: tensor<4x16x32xf32>, %b: tensor<16x8xf32>",
     "hfusion.batch_matmul %a, %b : (tensor<4x16x32xf32>, tensor<16x8xf32>)", "tensor<4x16x8xf32>",
     "contraction sizes differ: 32 vs 16"),
    ("%a: tensor<4x16x32xf32>, %b: tensor<32x8xf32>",
     "hfusion.matmul %a, %b : (tensor<4x16x32xf32>, tensor<32x8xf32>)", "tensor<4x16x8xf32>",
     "operands and result must have rank 2, got 3, 2, 3"),
    ("%a: tensor<16x32xf16>, %b: tensor<32x9xf16>",
     "hfusion.matmul %a, %b {pad_n = 7} : (tensor<16x32xf16>, tensor<32x9xf16>)", "tensor<16x9xf16>",
     "result shape [16, 9] must be [16, 16]"),
    ("%a: tensor<16x32xf16>, %b: tensor<32x9xf16>",
     "hfusion.matmul %a, %b {pad_n = 0} : (tensor<16x32xf16>, tensor<32x9xf16>)", "tensor<16x9xf16>",
     "pad_n = 0 must be >= 1"),
])  # fmt: skip
def test_rejected(args, op, result, problem):
    with pytest.raises(VerifyError) as info:
        _verify(args, op, result)
    msg = str(info.value)
    assert "\n" not in msg and problem in msg and f"'{op.split()[0]}' op" in msg, msg
