"""hfusion-fuse-ops: the required fusion results, legality (cycles, shapes, matmul), options and semantics."""

from __future__ import annotations

import pytest
import torch

from graph_passes.analysis.fusion_groups import FusionGraph
from graph_passes.ir.parser import parse_module

from . import cases
from torch_npu_backend.interpreter import interpret

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


# An embedding's rows as FX uses them: flat for the residual add, 3-d for the next layer, and the index's flat view
# for the loss — three views of two values.
EMBEDDING_VIEWS = """module {
  func.func @main(%i: tensor<2x8xf32>) -> (tensor<16xf32>, tensor<16x16xf32>, tensor<2x8x16xf32>) {
    %f = hfusion.reshape %i : (tensor<2x8xf32>) -> tensor<16xf32>
    %a = hfusion.elemwise_unary %f {fun = "abs"} : (tensor<16xf32>) -> tensor<16xf32>
    %b = hfusion.broadcast %a {dims = [1]} : (tensor<16xf32>) -> tensor<16x16xf32>
    %m = hfusion.elemwise_binary %b, %b {fun = "mul"} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    %r = hfusion.reshape %m : (tensor<16x16xf32>) -> tensor<2x8x16xf32>
    func.return %f, %m, %r : tensor<16xf32>, tensor<16x16xf32>, tensor<2x8x16xf32>
  }
}
"""


def test_views_of_inputs_and_results_stay_on_host():
    """A result that is a reshape of a kernel input or of another result is the host's view of it: the kernel
    stores its rows once (it stored them twice, and copied its input, before)."""
    module, _ = run(EMBEDDING_VIEWS, FUSE)
    (kernel,) = kernels(module)
    assert [str(t) for t in kernel.function_type.results] == ["tensor<16x16xf32>"]
    assert [op.name for op in kernel.body.ops].count("hfusion.reshape") == 1  # the input's view the kernel reads
    assert host_ops(module).count("hfusion.reshape") == 2
    assert_same_values(EMBEDDING_VIEWS, FUSE, {})


@pytest.mark.parametrize("case", ["ELEMWISE", "SOFTMAX", "LAYER_NORM", "BIAS_RELU", "MATMUL_CHAIN"])
def test_same_values(case):
    assert_same_values(getattr(cases, case), FUSE, {"s0": 3})


@pytest.mark.parametrize("case", ["CYCLE", "HORIZONTAL", "MISMATCHED_REDUCES"])
def test_same_values_legality_cases(case):
    assert_same_values(globals()[case], FUSE, {})


# cross_entropy after its log-softmax: per row the target's log-probability (a gather), the ignore_index masks; then
# two sums of every row, divided. A kernel holding those sums has one work item (one core).
LOSS = """module {
  func.func @main(%logp: tensor<NxCxf32>, %t: tensor<Nx1xi64>) -> (tensor<f32>) {
    %ignore = arith.constant {value = -100} : () -> i64
    %ne = hfusion.compare %t, %ignore {predicate = "ne"} : (tensor<Nx1xi64>, i64) -> tensor<Nx1xi1>
    %z = hfusion.fill {value = 0} : () -> tensor<i64>
    %zb = hfusion.broadcast %z {dims = [0, 1]} : (tensor<i64>) -> tensor<Nx1xi64>
    %w = hfusion.select %ne, %t, %zb : (tensor<Nx1xi1>, tensor<Nx1xi64>, tensor<Nx1xi64>) -> tensor<Nx1xi64>
    %g = hfusion.gather %logp, %w {dim = 1} : (tensor<NxCxf32>, tensor<Nx1xi64>) -> tensor<Nx1xf32>
    %n = hfusion.elemwise_unary %g {fun = "neg"} : (tensor<Nx1xf32>) -> tensor<Nx1xf32>
    %f = hfusion.fill {value = 0.0} : () -> tensor<f32>
    %fb = hfusion.broadcast %f {dims = [0, 1]} : (tensor<f32>) -> tensor<Nx1xf32>
    %loss = hfusion.select %ne, %n, %fb : (tensor<Nx1xi1>, tensor<Nx1xf32>, tensor<Nx1xf32>) -> tensor<Nx1xf32>
    %one = arith.constant {value = 1.0} : () -> f32
    %zero = arith.constant {value = 0.0} : () -> f32
    %cnt = hfusion.select %ne, %one, %zero : (tensor<Nx1xi1>, f32, f32) -> tensor<Nx1xf32>
    %sc = hfusion.reduce %cnt {dims = [0, 1], kind = "sum"} : (tensor<Nx1xf32>) -> tensor<f32>
    %sl = hfusion.reduce %loss {dims = [0, 1], kind = "sum"} : (tensor<Nx1xf32>) -> tensor<f32>
    %d = hfusion.elemwise_binary %sl, %sc {fun = "div"} : (tensor<f32>, tensor<f32>) -> tensor<f32>
    func.return %d : tensor<f32>
  }
}
"""


def _loss(n: int, c: int) -> str:
    return LOSS.replace("NxC", f"{n}x{c}").replace("Nx1", f"{n}x1")


def test_per_row_work_stays_out_of_a_one_core_reduction():
    """4096 rows of 512: merged, one core would read the whole 8 MB of log-probabilities (the gather loads whole
    rows); apart, every core gathers its rows and the one-core kernel sums two [N] vectors."""
    module, _ = run(_loss(4096, 512), FUSE)
    per_row, sums = kernels(module)
    ops = lambda k: {op.name for op in k.body.ops}  # noqa: E731
    assert "hfusion.gather" in ops(per_row) and "hfusion.reduce" not in ops(per_row)
    assert "hfusion.reduce" in ops(sums) and "hfusion.gather" not in ops(sums)
    gen = torch.Generator().manual_seed(0)
    args = [torch.randn(4096, 512, generator=gen), torch.randint(0, 512, (4096, 1), generator=gen)]
    args[1][::3] = -100
    torch.testing.assert_close(interpret(module, args), interpret(parse_module(_loss(4096, 512)), args))


def test_small_loss_stays_one_kernel():
    """8 rows of 8: the second kernel's fixed transfer latency costs more than one core moving 300 bytes."""
    module, _ = run(_loss(8, 8), FUSE)
    assert len(kernels(module)) == 1


def test_one_core_saving_weighs_bytes_through_one_port():
    module = parse_module(_loss(4096, 512))
    main = module.lookup("main")
    graph = FusionGraph(list(main.body.ops), module.size_vars())
    by_name = {op.name: graph.group_of[op] for op in main.body.ops if op in graph.group_of}
    gather, neg = by_name["hfusion.gather"], by_name["hfusion.elemwise_unary"]
    graph.merge(gather, neg)
    reduce_loss = graph.group_of[[op for op in main.body.ops if op.name == "hfusion.reduce"][1]]
    select = graph.group_of[reduce_loss.ops[0].operands[0].op]
    assert graph.score(select, reduce_loss) > 0  # a select of an [N] vector: cheaper merged
    graph.merge(select, reduce_loss)
    assert graph.score(gather, select) < 0  # the gather's 8 MB would move through one core's port


def test_dynamic_rows_are_weighed_at_their_upper_bound():
    """With rows s0 in [2, inf) the per-row part stays apart (at 2 rows a merge would be cheaper, but a dynamic
    kernel must not be slow at the sizes it may see)."""
    text = _loss(4096, 512).replace("4096x", "s0x").replace("module {",
                                                           "module attributes {symbols = {s0 = [2, 9223372036854775807]}} {")
    module, _ = run(text, FUSE)
    assert len(kernels(module)) == 2
    bounded = text.replace("9223372036854775807", "4")
    module, _ = run(bounded, FUSE)
    assert len(kernels(module)) == 1
