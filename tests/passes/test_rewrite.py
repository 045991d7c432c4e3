"""The greedy driver: reaches a fixed point, keeps the worklist up to date, and reports non-convergence."""

import pytest

from graph_passes.ir import verify
from graph_passes.ir.parser import parse_module
from graph_passes.ir.printer import print_module
from graph_passes.rewrite import Pattern, RewriteError, apply_patterns_greedily, pattern

TEXT = """
module {
  func.func @f(%x: tensor<8xf32>) -> (tensor<8xf32>) {
    %0 = hfusion.elemwise_unary %x {fun = "neg"} : (tensor<8xf32>) -> tensor<8xf32>
    %1 = hfusion.elemwise_unary %0 {fun = "neg"} : (tensor<8xf32>) -> tensor<8xf32>
    %2 = hfusion.elemwise_unary %1 {fun = "neg"} : (tensor<8xf32>) -> tensor<8xf32>
    %3 = hfusion.elemwise_unary %2 {fun = "neg"} : (tensor<8xf32>) -> tensor<8xf32>
    func.return %3 : tensor<8xf32>
  }
}
"""


@pattern("hfusion.elemwise_unary", counter="ops-folded")
def double_neg(op, rw):
    """neg(neg(x)) -> x"""
    inner = getattr(op.operands[0], "op", None)
    if op.attributes["fun"] != "neg" or inner is None or inner.name != op.name or inner.attributes["fun"] != "neg":
        return False
    rw.replace_op(op, [inner.operands[0]])
    return True


@pattern(None, counter="ops-erased")
def dead(op, rw):
    if op.name == "hfusion.elemwise_unary" and not op.result.uses:
        rw.erase_op(op)
        return True
    return False


def test_reaches_fixed_point_and_counts():
    module = parse_module(TEXT)
    stats = apply_patterns_greedily(module, [double_neg, dead])
    verify(module)
    assert "hfusion.elemwise_unary" not in print_module(module)
    assert stats.by_pattern["double_neg"] == 2 and stats.by_counter["ops-erased"] == 2
    assert stats.sweeps == 2  # one that changes, one that confirms


def test_ping_pong_patterns_raise_naming_them():
    def to_exp(op, rw):
        if op.attributes["fun"] != "neg":
            return False
        op.attributes["fun"] = "exp"
        rw.modified(op)
        return True

    def to_neg(op, rw):
        if op.attributes["fun"] != "exp":
            return False
        op.attributes["fun"] = "neg"
        rw.modified(op)
        return True

    patterns = [Pattern("hfusion.elemwise_unary", to_exp), Pattern("hfusion.elemwise_unary", to_neg)]
    with pytest.raises(RewriteError, match=r"did not converge .*patterns still firing: to_(exp|neg) .*to_(exp|neg)"):
        apply_patterns_greedily(parse_module(TEXT), patterns, max_rewrites=100)


def test_sweep_cap_raises():
    # one sweep is not enough to confirm the fixed point: the cap is an error naming what still fired
    with pytest.raises(RewriteError, match=r"after 1 sweeps; patterns still firing: double_neg \(2x\), dead \(2x\)"):
        apply_patterns_greedily(parse_module(TEXT), [double_neg, dead], max_sweeps=1)


def test_rewriter_create_inserts_before_current_op_with_its_loc():
    module = parse_module(TEXT, filename="t.mlir")

    def add_zero(op, rw):
        if op.attributes["fun"] != "neg" or op.attributes.get("done"):
            return False
        z = rw.create("hfusion.fill", [], [op.result.type], {"value": 0.0})
        new = rw.create("hfusion.elemwise_binary", [z.result, op.operands[0]], [op.result.type], {"fun": "sub"})
        assert z.loc == op.loc and new.parent is op.parent
        rw.replace_op(op, new.results)
        return True

    apply_patterns_greedily(module, [Pattern("hfusion.elemwise_unary", add_zero)])
    verify(module)
    assert print_module(module).count('fun = "sub"') == 4
