"""Bad IR gives one-line errors naming the op, its location and the problem (parser and verifier)."""

import pytest

import graph_passes  # noqa: F401
from graph_passes.ir import OP_REGISTRY, Builder, TensorType, VerifyError, verify
from graph_passes.ir.parser import ParseError, parse_module

HEAD = "module attributes {symbols = {s0 = [1, 64]}} {\n  func.func @main(%x: tensor<s0x16xf32>, %y: tensor<16xf32>) -> (tensor<s0x16xf32>) {\n"
TAIL = "    func.return %x : tensor<s0x16xf32>\n  }\n}\n"


def _verify_text(body: str):
    module = parse_module(HEAD + body + TAIL, filename="bad.mlir")
    verify(module)


@pytest.mark.parametrize(
    "body, op, problem",
    [
        # wrong arity
        ('    %0 = hfusion.elemwise_binary %x {fun = "add"} : (tensor<s0x16xf32>) -> tensor<s0x16xf32>\n',
         "hfusion.elemwise_binary", "expects 2 operand(s)"),
        # bad attribute value and missing attribute
        ('    %0 = hfusion.elemwise_unary %x {fun = "cube"} : (tensor<s0x16xf32>) -> tensor<s0x16xf32>\n',
         "hfusion.elemwise_unary", "attribute 'fun' must be one of"),
        ("    %0 = hfusion.reduce %x {dims = [1]} : (tensor<s0x16xf32>) -> tensor<s0xf32>\n",
         "hfusion.reduce", "requires attribute 'kind'"),
        ('    %0 = hfusion.elemwise_unary %x {fun = 3} : (tensor<s0x16xf32>) -> tensor<s0x16xf32>\n',
         "hfusion.elemwise_unary", "attribute 'fun' must be a string"),
        # shape mismatch
        ('    %0 = hfusion.elemwise_binary %x, %y {fun = "add"} : (tensor<s0x16xf32>, tensor<16xf32>) -> tensor<s0x16xf32>\n',
         "hfusion.elemwise_binary", "operand 1 shape [16] differs from result shape [s0, 16]"),
        ("    %0 = hfusion.broadcast %y {dims = [0]} : (tensor<16xf32>) -> tensor<s0x8xf32>\n",
         "hfusion.broadcast", "does not match result"),
        # a rounding division rounds in one dtype
        ('    %0 = hfusion.elemwise_binary %x, %x {fun = "floordiv"} : (tensor<s0x16xf32>, tensor<s0x16xf32>) -> tensor<s0x16xi32>\n',
         "hfusion.elemwise_binary", "'floordiv' operand 0 has type tensor<s0x16xf32>, the result i32"),
        # undeclared shape symbol
        ("    %0 = tensor.empty : () -> tensor<s9x16xf32>\n", "builtin.module", "undeclared shape symbol(s) s9"),
    ],
)  # fmt: skip
def test_verifier_errors_name_op_location_problem(body, op, problem):
    with pytest.raises(VerifyError) as info:
        _verify_text(body)
    msg = str(info.value)
    assert "\n" not in msg
    assert f"'{op}' op" in msg and problem in msg, msg
    if op != "builtin.module":
        assert msg.startswith("bad.mlir:3:5: "), msg  # the op's line in the input


def test_verifier_error_uses_explicit_loc():
    with pytest.raises(VerifyError, match=r"^my_add: 'hfusion.elemwise_binary' op operand 1 shape"):
        _verify_text(
            '    %0 = hfusion.elemwise_binary %x, %y {fun = "add"} : (tensor<s0x16xf32>, tensor<16xf32>) '
            '-> tensor<s0x16xf32> loc("my_add")\n'
        )


def test_use_before_def_in_built_ir():
    module = parse_module(
        HEAD + '    %0 = hfusion.elemwise_unary %x {fun = "exp"} : (tensor<s0x16xf32>) -> tensor<s0x16xf32>\n'
        '    %1 = hfusion.elemwise_unary %0 {fun = "neg"} : (tensor<s0x16xf32>) -> tensor<s0x16xf32>\n' + TAIL,
        filename="f.mlir",
    )
    body = module.body.ops[0].body
    first, second = body.ops[0], body.ops[1]
    body.ops[0], body.ops[1] = second, first  # %1's op now comes before %0's definition
    with pytest.raises(VerifyError, match=r"f.mlir:4:5: 'hfusion.elemwise_unary' op operand 0 .* does not dominate"):
        verify(module)


def test_value_from_another_function_is_rejected():
    module = parse_module(HEAD + TAIL + "", filename="f.mlir")
    fn = module.body.ops[0]
    t = TensorType(("s0", 16), "f32")
    from graph_passes.dialects.func import FuncOp

    other = FuncOp.build("other", [t], [t])
    module.body.append(other)
    b = Builder.at_end(other.body)
    b.create(OP_REGISTRY["func.return"], [fn.args[0]], [])  # uses @main's argument
    with pytest.raises(VerifyError, match=r"'func.return' op operand 0 \(block argument 0\) does not dominate"):
        verify(module)


@pytest.mark.parametrize(
    "body, expected",
    [
        ("    %0 = hfusion.frobnicate %x : (tensor<s0x16xf32>) -> tensor<s0x16xf32>\n",
         r"^bad.mlir:3:10: error: unknown op 'hfusion.frobnicate'$"),
        ('    %0 = hfusion.elemwise_unary %z {fun = "exp"} : (tensor<s0x16xf32>) -> tensor<s0x16xf32>\n',
         r"^bad.mlir:3:33: error: 'hfusion.elemwise_unary' op uses undefined value %z$"),
        ('    %x = hfusion.elemwise_unary %x {fun = "exp"} : (tensor<s0x16xf32>) -> tensor<s0x16xf32>\n',
         r"^bad.mlir:3:5: error: value %x is defined twice$"),
        ('    %0 = hfusion.elemwise_unary %x {fun = "exp"} (tensor<s0x16xf32>) -> tensor<s0x16xf32>\n',
         r"^bad.mlir:3:51: error: expected '\{' to start a region"),
        ('    %0 = hfusion.elemwise_unary %x {fun = "exp" : (tensor<s0x16xf32>) -> tensor<s0x16xf32>\n',
         r"^bad.mlir:3:49: error: expected ',' or '\}' in an attribute dictionary, found ':'$"),
        ('    %0 = hfusion.elemwise_unary %x {fun = "exp"} : (tensor<s0x16xf64>) -> tensor<s0x16xf32>\n',
         r"'hfusion.elemwise_unary' op operand 0 has type tensor<s0x16xf32> but the signature says tensor<s0x16xf64>"),
        ('    %0 = hfusion.elemwise_unary %x {fun = "exp"} : (tensor<s0x16xq8>) -> tensor<s0x16xf32>\n',
         r"^bad.mlir:3:66: error: unknown element type 'q8'$"),
        ("    %0 = tensor.empty : () -> tensor<s0x16xf32>, \n",
         r"^bad.mlir:3:48: error: expected an op name, found ','"),
        ('    %0:2 = hfusion.elemwise_unary %x {fun = "exp"} : (tensor<s0x16xf32>) -> tensor<s0x16xf32>\n',
         r"^bad.mlir:3:5: error: 'hfusion.elemwise_unary' op defines 2 result name\(s\) for 1 result\(s\)$"),
    ],
)  # fmt: skip
def test_parse_errors_are_one_line_with_location(body, expected):
    with pytest.raises(ParseError, match=expected) as info:
        _verify_text(body)
    assert "\n" not in str(info.value)


def test_parse_error_at_end_of_input():
    with pytest.raises(ParseError, match=r"^x.mlir:\d+:\d+: error: expected '\}' to end a region, found end of input"):
        parse_module(HEAD, filename="x.mlir")


def test_bare_ops_are_wrapped_in_a_module():
    module = parse_module("func.func @f() {\n  func.return\n}\n")
    verify(module)
    assert module.name == "builtin.module" and module.body.ops[0].attributes["sym_name"] == "f"


@pytest.mark.parametrize("index, problem", [
    ("memref<8x4xi64, ub>", "must have extent 1 in every dim but 0 (one index per row)"),
    ("memref<8x1xf32, ub>", "the element types must match and the index be i32 or i64"),
])  # fmt: skip
def test_embedding_gather_verifier(index, problem):
    text = f"""module {{
  func.func @k(%w: memref<100x4xf32, gm>, %n: index) attributes {{kernel}} {{
    %c0 = arith.constant {{value = 0}} : () -> index
    %i = hivm.alloc : () -> {index}
    %g = hivm.alloc : () -> memref<8x8xf32, ub>
    hivm.embedding_gather %w, %i, %g, %c0, %n, %n : memref<100x4xf32, gm>, {index}, memref<8x8xf32, ub>, index, index, index
    func.return
  }}
}}
"""
    with pytest.raises(VerifyError, match="'hivm.embedding_gather' op") as info:
        verify(parse_module(text, filename="bad.mlir"))
    assert problem in str(info.value)
