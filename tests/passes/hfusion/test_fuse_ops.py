"""hfusion-fuse-ops: the required fusion results, legality (cycles, shapes, matmul), options and semantics."""

from __future__ import annotations

import pytest

from graph_passes.analysis.fusion_groups import FusionGraph
from graph_passes.ir.parser import parse_module

from . import cases
from .helpers import assert_same_values, run

FUSE = "hfusion-fuse-ops"


def kernels(module):
    return [f for f in module.functions if f.attributes.get("kernel")]


def host_ops(module):
    return [op.name for op in module.lookup("main").body.ops]


@pytest.mark.parametrize(
    "case, kind, ops",
    [
        ("ELEMWISE", "PURE_ELEMWISE", 2),
        ("SOFTMAX", "LAST_AXIS_PBR", 11),
        ("LAYER_NORM", "LAST_AXIS_PBR", 15),
        ("BIAS_RELU", "ANY_PB", 3),
    ],
)
def test_one_kernel(case, kind, ops):
    module, ctx = run(getattr(cases, case), FUSE)
    (kernel,) = kernels(module)
    assert kernel.attributes["fusion_kind"] == kind
    assert kernel.attributes["kernel"] is True
    assert host_ops(module) == ["tensor.empty", "func.call", "func.return"]
    counters = ctx.counters[FUSE]
    assert counters["kernels-outlined"] == 1
    assert counters["ops-fused"] == ops
    assert counters["gm-bytes-saved"] > 0


def test_kernel_convention():
    module, _ = run(cases.ELEMWISE, FUSE)
    (kernel,) = kernels(module)
    assert kernel.sym_name == "main_fused_0"
    ftype = kernel.function_type
    assert len(ftype.inputs) == 4 and len(ftype.results) == 1  # x, y, z, out0
    assert kernel.attributes["output_args"] == [3]
    assert ftype.inputs[3] == ftype.results[0]
    call = next(op for op in module.lookup("main").body.ops if op.name == "func.call")
    assert call.attributes["callee"] == "main_fused_0"
    assert call.operands[3].op.name == "tensor.empty"


def test_intermediates_stay_inside():
    module, _ = run(cases.SOFTMAX, FUSE)
    (kernel,) = kernels(module)
    assert len(kernel.function_type.results) == 1  # only the division leaves the kernel


def test_matmul_between_elementwise_chains():
    module, ctx = run(cases.MATMUL_CHAIN, FUSE)
    kinds = [k.attributes["fusion_kind"] for k in kernels(module)]
    assert kinds == ["PURE_ELEMWISE", "SINGLE_CUBE", "PURE_ELEMWISE"]
    assert ctx.counters[FUSE]["kernels-outlined"] == 3
    assert host_ops(module).count("func.call") == 3


CYCLE = """module {
  func.func @main(%x: tensor<8x32xf32>, %w: tensor<32x32xf32>) -> (tensor<8x32xf32>) {
    %a = hfusion.elemwise_unary %x {fun = "exp"} : (tensor<8x32xf32>) -> tensor<8x32xf32>
    %m = hfusion.matmul %a, %w : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32>
    %b = hfusion.elemwise_binary %a, %m {fun = "add"} : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    func.return %b : tensor<8x32xf32>
  }
}
"""


def test_no_fusion_through_an_outside_op():
    module = parse_module(CYCLE)
    main = module.lookup("main")
    graph = FusionGraph(list(main.body.ops), module.size_vars())
    exp, add = graph.group_of[main.body.ops[0]], graph.group_of[main.body.ops[2]]
    assert not graph.can_fuse(exp, add)  # exp → matmul → add: the merged kernel would need the matmul inside
    module, _ = run(CYCLE, FUSE)
    assert len(kernels(module)) == 3


MISMATCHED_REDUCES = """module {
  func.func @main(%x: tensor<8x32xf32>, %y: tensor<4x16xf32>) -> (tensor<8xf32>, tensor<4xf32>) {
    %a = hfusion.reduce %x {dims = [1], kind = "sum"} : (tensor<8x32xf32>) -> tensor<8xf32>
    %b = hfusion.reduce %y {dims = [1], kind = "sum"} : (tensor<4x16xf32>) -> tensor<4xf32>
    func.return %a, %b : tensor<8xf32>, tensor<4xf32>
  }
}
"""

HORIZONTAL = """module {
  func.func @main(%x: tensor<8x32xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>) {
    %a = hfusion.elemwise_unary %x {fun = "exp"} : (tensor<8x32xf32>) -> tensor<8x32xf32>
    %b = hfusion.elemwise_unary %x {fun = "tanh"} : (tensor<8x32xf32>) -> tensor<8x32xf32>
    %c = hfusion.elemwise_unary %x {fun = "abs"} : (tensor<8x32xf32>) -> tensor<8x32xf32>
    func.return %a, %b, %c : tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>
  }
}
"""


def test_shapes_must_share_one_iteration_space():
    module, _ = run(MISMATCHED_REDUCES, FUSE)
    assert len(kernels(module)) == 2


def test_horizontal_fusion_limit():
    module, _ = run(HORIZONTAL, FUSE)
    (kernel,) = kernels(module)
    assert kernel.attributes["output_args"] == [1, 2, 3]
    module, _ = run(HORIZONTAL, FUSE + "{max-horizontal-fusion-size=1}")
    assert len(kernels(module)) == 2
    module, _ = run(HORIZONTAL, FUSE + "{max-horizontal-fusion-size=0}")
    assert len(kernels(module)) == 3


def test_single_output_mode_duplicates_producers():
    text = """module {
  func.func @main(%x: tensor<8x32xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>) {
    %a = hfusion.elemwise_unary %x {fun = "exp"} : (tensor<8x32xf32>) -> tensor<8x32xf32>
    %b = hfusion.elemwise_unary %a {fun = "tanh"} : (tensor<8x32xf32>) -> tensor<8x32xf32>
    %c = hfusion.elemwise_unary %a {fun = "abs"} : (tensor<8x32xf32>) -> tensor<8x32xf32>
    func.return %b, %c : tensor<8x32xf32>, tensor<8x32xf32>
  }
}
"""
    module, _ = run(text, FUSE)
    assert len(kernels(module)) == 1
    module, _ = run(text, FUSE + "{output-mode=single}")
    ks = kernels(module)
    assert len(ks) == 2 and all(len(k.function_type.results) == 1 for k in ks)
    assert_same_values(text, FUSE + "{output-mode=single}", {})


def test_outline_single_op_option():
    module, _ = run(cases.MATMUL_CHAIN, FUSE + "{outline-single-op=false}")
    assert [k.attributes["fusion_kind"] for k in kernels(module)] == ["PURE_ELEMWISE", "PURE_ELEMWISE"]
    assert "hfusion.matmul" in host_ops(module)


def test_lone_reshape_stays_on_host():
    text = """module {
  func.func @main(%x: tensor<8x32xf32>) -> (tensor<256xf32>) {
    %r = hfusion.reshape %x : (tensor<8x32xf32>) -> tensor<256xf32>
    func.return %r : tensor<256xf32>
  }
}
"""
    module, ctx = run(text, FUSE)
    assert not kernels(module) and ctx.counters[FUSE]["kernels-outlined"] == 0


@pytest.mark.parametrize("case", ["ELEMWISE", "SOFTMAX", "LAYER_NORM", "BIAS_RELU", "MATMUL_CHAIN"])
def test_same_values(case):
    assert_same_values(getattr(cases, case), FUSE, {"s0": 3})


@pytest.mark.parametrize("case", ["CYCLE", "HORIZONTAL", "MISMATCHED_REDUCES"])
def test_same_values_legality_cases(case):
    assert_same_values(globals()[case], FUSE, {})
