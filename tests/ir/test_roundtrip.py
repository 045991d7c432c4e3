"""Every registered op prints and parses back to itself: print(parse(print(m))) == print(m), structurally equal."""

import pytest

import graph_passes  # noqa: F401  (registers every op)
from graph_passes.ir import OP_REGISTRY, verify
from graph_passes.ir.equality import structural_diff
from graph_passes.ir.parser import parse_module
from graph_passes.ir.printer import print_module
from tests.ir.op_examples import OP_EXAMPLES


@pytest.mark.parametrize("op_name", sorted(OP_REGISTRY))
def test_roundtrip_every_registered_op(op_name):
    assert op_name in OP_EXAMPLES, f"op {op_name} has no example in tests/ir/op_examples.py: add one"
    module = parse_module(OP_EXAMPLES[op_name], filename=op_name)
    verify(module)
    assert any(op.name == op_name for op in module.walk()), f"the example for {op_name} does not use it"
    text = print_module(module)
    again = parse_module(text, filename="printed")
    verify(again)
    assert print_module(again) == text
    assert structural_diff(module, again) is None


def test_no_stale_examples():
    stale = sorted(set(OP_EXAMPLES) - set(OP_REGISTRY))
    assert not stale, f"examples for unregistered ops: {stale}"


def test_printed_form_of_a_function():
    text = """
module attributes {symbols = {s0 = [2, 9223372036854775807]}, target = "ascend910b1"} {
  func.func @main(%arg0: tensor<s0x128xf32>, %arg1: tensor<128xf32>) -> (tensor<s0x128xf32>) attributes {kernel} {
    %0 = hfusion.broadcast %arg1 {dims = [0]} : (tensor<128xf32>) -> tensor<s0x128xf32> loc("expand")
    %1 = hfusion.elemwise_binary %arg0, %0 {fun = "add"} : (tensor<s0x128xf32>, tensor<s0x128xf32>) -> tensor<s0x128xf32> loc("add")
    func.return %1 : tensor<s0x128xf32>
  }
}
"""
    assert print_module(parse_module(text)) == text.lstrip()


def test_unnamed_values_are_numbered_and_hints_deduplicated():
    from graph_passes.dialects.builtin import ModuleOp
    from graph_passes.dialects.func import FuncOp
    from graph_passes.ir import Builder, TensorType

    t = TensorType((4,), "f32")
    module = ModuleOp.build()
    fn = FuncOp.build("f", [t, t], [t])  # no arg names: %arg0, %arg1
    module.body.append(fn)
    b = Builder.at_end(fn.body)
    a = b.create(OP_REGISTRY["hfusion.elemwise_binary"], fn.args, [t], fun="add").result
    a.name_hint = "x-y"  # sanitised to x_y
    c = b.create(OP_REGISTRY["hfusion.elemwise_binary"], [a, a], [t], fun="mul").result
    c.name_hint = "x-y"  # taken: x_y_1
    d = b.create(OP_REGISTRY["hfusion.elemwise_unary"], [c], [t], fun="exp").result
    b.create(OP_REGISTRY["func.return"], [d], [])
    text = print_module(module)
    assert "%x_y = hfusion.elemwise_binary %arg0, %arg1" in text
    assert "%x_y_1 = hfusion.elemwise_binary %x_y, %x_y" in text
    assert "%0 = hfusion.elemwise_unary %x_y_1" in text
    assert print_module(parse_module(text)) == text


@pytest.mark.parametrize(
    "value",
    [True, False, 0, -3, 2**63 - 1, 1.0, -2.5, 1e-05, 1e300, float("inf"), float("-inf"), "a\"b\\c\nd", "ünï",
     [], [1, [2.0, "x"]], {"a": 1, "b c": [True]}],
)  # fmt: skip
def test_attribute_values_roundtrip(value):
    from graph_passes.ir.parser import parse_attr
    from graph_passes.ir.printer import format_attr

    text = format_attr(value)
    back = parse_attr(text)
    assert back == value and type(back) is type(value), text


def test_float_attributes_stay_floats():
    from graph_passes.ir.parser import parse_attr
    from graph_passes.ir.printer import format_attr

    assert format_attr(1.0) == "1.0"
    assert isinstance(parse_attr(format_attr(3.0)), float)
    nan = parse_attr(format_attr(float("nan")))
    assert nan != nan


def test_size_and_type_attributes_roundtrip():
    from graph_passes.ir import FunctionType, TensorType, parse_expr
    from graph_passes.ir.parser import parse_attr, parse_type
    from graph_passes.ir.printer import format_attr

    e = parse_expr("floor(s1/2) + s0*128")
    assert parse_attr(format_attr(e)) == e
    assert format_attr(parse_expr("s0")) == "s0"
    ft = FunctionType((TensorType(("s0", 4), "f16"),), (TensorType((parse_expr("s0*4"),), "f16"),))
    assert parse_attr(format_attr(ft)) == ft
    for text in ["tensor<f32>", "tensor<x0x128xs1xbf16>", "memref<64x16xf16, ub>", "memref<8xi1>", "index", "i64"]:
        assert str(parse_type(text)) == text
