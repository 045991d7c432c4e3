"""The reference interpreter: a rule for every op of the dialects it executes, each run on its OP_EXAMPLES module,
and the semantics of the ops whose meaning is easy to get wrong (casts, broadcast, slices, calls, loops)."""

from __future__ import annotations

import pytest
import torch

import graph_passes.dialects  # noqa: F401  (registers every op)
from graph_passes.ir.core import OP_REGISTRY
from graph_passes.ir.parser import parse_module
from graph_passes.ir.types import IndexType, ScalarType, TensorType
from tests.ir.op_examples import OP_EXAMPLES
from torch_npu_backend.dtypes import torch_dtype
from torch_npu_backend.interpreter import RULES, InterpreterError, interpret

INTERPRETED_DIALECTS = ("builtin", "func", "arith", "scf", "tensor", "hfusion", "annotation", "host")
"""hivm (buffers, pipes, flags) is executed by the simulator, not by this interpreter. ``host.fallback`` runs the
aten op it names."""

INTERPRETED_OPS = sorted(n for n in OP_REGISTRY if n.split(".")[0] in INTERPRETED_DIALECTS)


def test_every_op_has_a_rule():
    missing = [n for n in INTERPRETED_OPS if n not in RULES]
    assert not missing, f"ops without an interpreter rule: {', '.join(missing)}"


def _example_args(func, gen):
    args, index_seen = [], 0
    for a in func.body.args:
        t = a.type
        if isinstance(t, TensorType):
            shape = [int(d.subs({s: 3 for s in d.free_symbols})) for d in t.shape]
            if t.dtype == "i1":
                args.append(torch.rand(shape, generator=gen) > 0.5)
            elif t.dtype.startswith("i") or t.dtype == "ui8":
                args.append(torch.randint(0, 2, shape, generator=gen).to(torch_dtype(t.dtype)))
            else:
                args.append(torch.randn(shape, generator=gen).to(torch_dtype(t.dtype)))
        elif isinstance(t, IndexType):
            args.append(1 if index_seen == 0 else 3)
            index_seen += 1
        elif isinstance(t, ScalarType):
            args.append(True if t.dtype == "i1" else (1.5 if t.is_float else 2))
        else:
            raise AssertionError(f"no example value for argument type {t}")
    return args


@pytest.mark.parametrize("name", INTERPRETED_OPS)
def test_rule_runs_on_op_example(name):
    """Each op's example module runs; the interpreter checks every result against its IR type."""
    assert name in OP_EXAMPLES, f"no OP_EXAMPLES entry for {name}"
    module = parse_module(OP_EXAMPLES[name])
    main = module.lookup("main")
    if main is None:
        assert RULES[name](None, module) is None  # a module without functions: nothing to run
        return
    results = interpret(module, _example_args(main, torch.Generator().manual_seed(0)), {"s0": 3})
    assert len(results) == len(main.attributes["function_type"].results)


def _run(text, *args, **bindings):
    return interpret(parse_module(text), list(args), bindings or None)


def test_cast_rounding_modes():
    text = """module {{
  func.func @main(%x: tensor<4xf32>) -> (tensor<4xi32>) {{
    %0 = hfusion.cast %x {{round_mode = "{mode}"}} : (tensor<4xf32>) -> tensor<4xi32>
    func.return %0 : tensor<4xi32>
  }}
}}"""
    x = torch.tensor([-1.5, -0.5, 0.5, 2.5])
    expect = {"rint": [-2, 0, 0, 2], "round": [-2, -1, 1, 3], "floor": [-2, -1, 0, 2], "ceil": [-1, 0, 1, 3],
              "trunc": [-1, 0, 0, 2]}  # fmt: skip
    for mode, want in expect.items():
        (out,) = _run(text.format(mode=mode), x)
        assert out.tolist() == want, mode


def test_broadcast_slice_and_symbol_binding():
    text = """module attributes {symbols = {s0 = [2, 100]}} {
  func.func @main(%x: tensor<s0xf32>) -> (tensor<3xs0xf32>, tensor<(s0-1)xf32>) {
    %0 = hfusion.broadcast %x {dims = [0]} : (tensor<s0xf32>) -> tensor<3xs0xf32>
    %1 = hfusion.slice %x {offsets = [1], sizes = [(s0-1)], strides = [1]} : (tensor<s0xf32>) -> tensor<(s0-1)xf32>
    func.return %0, %1 : tensor<3xs0xf32>, tensor<(s0-1)xf32>
  }
}"""
    x = torch.arange(5.0)
    b, s = _run(text, x)
    assert torch.equal(b, x.expand(3, 5)) and torch.equal(s, x[1:])


def test_wrong_argument_shape_is_an_error():
    text = """module {
  func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>) {
    func.return %x : tensor<4xf32>
  }
}"""
    with pytest.raises(InterpreterError, match=r"argument 0 is torch.float32 \(5,\), expected tensor<4xf32>"):
        _run(text, torch.zeros(5))


def test_result_type_mismatch_names_the_op():
    text = """module {
  func.func @main(%x: tensor<4xi32>) -> (tensor<4xi32>) {
    %0 = hfusion.elemwise_unary %x {fun = "exp"} : (tensor<4xi32>) -> tensor<4xi32> loc("exp_1")
    func.return %0 : tensor<4xi32>
  }
}"""
    with pytest.raises(InterpreterError, match=r"exp_1: 'hfusion.elemwise_unary' produced torch.float32"):
        _run(text, torch.ones(4, dtype=torch.int32))


def test_loop_and_call():
    text = """module {
  func.func @twice(%x: tensor<4xf32>) -> (tensor<4xf32>) {
    %0 = hfusion.elemwise_binary %x, %x {fun = "add"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    func.return %0 : tensor<4xf32>
  }
  func.func @main(%x: tensor<4xf32>, %n: index) -> (tensor<4xf32>) {
    %lb = arith.constant {value = 0} : () -> index
    %step = arith.constant {value = 1} : () -> index
    %r = scf.for %lb, %n, %step, %x ({
    ^bb0(%iv: index, %acc: tensor<4xf32>):
      %1 = func.call %acc {callee = "twice"} : (tensor<4xf32>) -> tensor<4xf32>
      scf.yield %1 : tensor<4xf32>
    }) : (index, index, index, tensor<4xf32>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }
}"""
    (out,) = _run(text, torch.ones(4), 3)
    assert out.tolist() == [8.0] * 4
