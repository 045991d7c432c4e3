"""``torch._check`` on sizes in compiled graphs: dynamo/AOTAutograd put the comparison (``operator.le`` …) feeding
``aten._assert_scalar`` into the forward and the backward graphs. The importer turns it into a host check run
before every launch, and the bounds it proves reach the symbol's range like ``mark_dynamic(max=…)`` bounds."""

from __future__ import annotations

import re

import pytest
import torch

import torch_npu_backend
from graph_passes.ir.size_predicates import SizePredicateError
from torch_npu_backend import compile_graph
from torch_npu_backend.importer import import_graph
from tests.backend.test_narrow_int_ranges import SCALAR_LOOP_MNEMONICS, _causal_masked, _mnemonics
from tests.helpers import aten_graph


def _bounded_rows(x):
    torch._check(x.shape[0] <= 64)
    torch._check(x.shape[0] >= 3)
    return (x * 2).sum(-1)


def test_checked_sizes_compile_once_and_equal_eager(fresh_dynamo):
    compiled = torch.compile(_bounded_rows, backend="npu", dynamic=True)
    for rows in (8, 9, 33):
        x = torch.randn(rows, 16)
        torch.testing.assert_close(compiled(x), _bounded_rows(x), rtol=1.3e-6, atol=1e-5)
    assert fresh_dynamo["graphs_inference"] == 1
    assert fresh_dynamo["kernels_simulated"] == 3


def test_training_step_checks_in_forward_and_backward(fresh_dynamo, tmp_path):
    """Both AOTAutograd graphs carry the predicates (their host plans list them); both compile once over three
    lengths, equal to eager."""

    def step(x, w):
        torch._check(x.shape[0] <= 64)
        torch._check(x.shape[0] != 5)
        return ((x * w).tanh() * 3).sum()

    compiled = torch.compile(step, backend="npu", dynamic=True, options={"debug_dir": str(tmp_path)})
    for rows in (8, 9, 33):
        x, w = torch.randn(rows, 16), torch.randn(16)
        xe, we = x.clone().requires_grad_(), w.clone().requires_grad_()
        xc, wc = x.clone().requires_grad_(), w.clone().requires_grad_()
        step(xe, we).backward()
        compiled(xc, wc).backward()
        torch.testing.assert_close(xc.grad, xe.grad, rtol=1.3e-6, atol=1e-5)
        torch.testing.assert_close(wc.grad, we.grad, rtol=1.3e-6, atol=1e-4)
    assert fresh_dynamo["graphs_forward"] == 1 and fresh_dynamo["graphs_backward"] == 1
    for kind in ("forward", "backward"):
        (plan,) = tmp_path.glob(f"graph_*_{kind}/host_plan.mlir")
        checked = re.findall(r"size predicate, checked before each run: (.*) \(FX node", plan.read_text())
        assert [re.sub(r"s\d+", "s", c) for c in checked] == ["s<=64", "Ne(s,5)"], (kind, checked)


def test_a_violated_predicate_fails_naming_it_its_node_and_the_sizes():
    x = torch.randn(8, 16)
    gm = aten_graph(_bounded_rows, [x], dynamic=True)
    graph = compile_graph(gm, [8, 16, x])
    assert [str(p) for p in graph.predicates] == ["s77<=64", "s77>=3"]  # symbol names are dynamo's
    torch.testing.assert_close(graph(40, 16, torch.ones(40, 16))[0], torch.full((40,), 32.0))
    with pytest.raises(SizePredicateError, match=r"size predicate s77<=64 asserted by node 'le' is false for "
                                                 r"s77 = 100 \(Runtime assertion failed"):  # fmt: skip
        graph(100, 16, torch.randn(100, 16))
    with pytest.raises(SizePredicateError, match=r"s77>=3 asserted by node 'ge' is false for s77 = 2"):
        graph(2, 16, torch.randn(2, 16))


def test_the_bounds_reach_the_symbols():
    """``s0 <= 64``/``s0 >= 3`` are also in dynamo's ranges; a product bound only the importer derives."""

    def product_bounded(x):
        torch._check(x.shape[0] * x.shape[1] <= 4096)
        return x.sum(-1)

    symbols = import_graph(aten_graph(_bounded_rows, [torch.randn(8, 16)], dynamic=True)).module.attributes["symbols"]
    assert symbols["s77"] == [3, 64], symbols
    symbols = import_graph(aten_graph(product_bounded, [torch.randn(8, 16)], dynamic=True)).module.attributes["symbols"]
    assert sorted(symbols.values()) == [[2, 2048], [2, 2048]], symbols


def _checked_mask(att):
    torch._check(att.shape[-1] <= 128)
    return _causal_masked(att)


def _product_checked_mask(att):
    torch._check(att.shape[0] * att.shape[-1] <= 4096)
    return _causal_masked(att)


def _mask_cycles(fn, lengths, mark_max=None, debug_dir=None) -> list[float]:
    """Simulated cycles of ``fn``'s one kernel per length, compiled once (``dynamic=True``, or dims 1 and 2 marked
    dynamic up to ``mark_max``); each result equal to eager."""
    options = {"debug_dir": str(debug_dir)} if debug_dir else None
    compiled = torch.compile(fn, backend="npu", dynamic=None if mark_max else True, options=options)
    cycles = []
    for t in lengths:
        x = torch.randn(2, t, t)
        for dim in (1, 2) if mark_max else ():
            torch._dynamo.mark_dynamic(x, dim, min=2, max=mark_max)
        with torch_npu_backend.profile(trace=False) as prof:
            got = compiled(x)
        assert torch.equal(got, _causal_masked(x))
        (record,) = prof.records
        assert record.simulated and record.hazards_checked, record
        cycles.append(record.cycles)
    return cycles


@pytest.mark.parametrize("fn", [_checked_mask, _product_checked_mask, _causal_masked],
                         ids=["T<=128", "B*T<=4096", "unchecked"])  # fmt: skip
def test_a_checked_length_narrows_the_causal_mask_to_i32(fresh_dynamo, tmp_path, fn):
    """A checked length bounds the mask's index arithmetic: i32 on the vector unit, no i64 scalar loops; unchecked
    it stays i64 (scalar loops per element: 114k cycles at T=72 against 10-12k)."""
    cycles = _mask_cycles(fn, (24, 40, 72), debug_dir=tmp_path)
    assert fresh_dynamo["graphs_inference"] == 1
    narrowed = fn is not _causal_masked
    assert bool(_mnemonics(tmp_path) & SCALAR_LOOP_MNEMONICS) == (not narrowed)
    assert (cycles[-1] < 15_000) == narrowed, cycles


def test_a_checked_length_costs_no_more_than_a_marked_bound(fresh_dynamo):
    """``torch._check(T <= 128)`` narrows the mask's arithmetic as ``mark_dynamic(max=128)`` does. The batch is a
    symbol under ``dynamic=True`` only, so there its rows step per launch over the cores (``step0``): the checked
    kernel is faster (1,319 against 1,761 cycles at T = 24), never slower."""
    checked = _mask_cycles(_checked_mask, (24, 72))
    torch._dynamo.reset()
    marked = _mask_cycles(_causal_masked, (24, 72), mark_max=128)
    assert all(c <= 1.01 * m for c, m in zip(checked, marked)), (checked, marked)


def test_a_range_constraint_node_is_a_checked_predicate():
    """``sym_constrain_range(s, min, max)`` (dynamo folds it into its ranges; an exported graph keeps the node)."""
    x = torch.randn(8, 16)
    gm = aten_graph(lambda t: (t * 2).sum(-1), [x], dynamic=True)
    size = next(n for n in gm.graph.nodes if n.op == "placeholder")
    with gm.graph.inserting_after(size):
        gm.graph.call_function(torch.ops.aten.sym_constrain_range.default, (size,), {"min": 4, "max": 40})
    gm.recompile()
    result = import_graph(gm)
    (pred,) = result.predicates
    (symbol,) = pred.expr.free_symbols
    assert result.module.attributes["symbols"][symbol.name] == [4, 40]
    graph = compile_graph(gm, [8, 16, x])
    torch.testing.assert_close(graph(40, 16, torch.ones(40, 16))[0], torch.full((40,), 32.0))
    message = f"{pred} asserted by node 'sym_constrain_range_default' is false for {symbol} = 41"
    with pytest.raises(SizePredicateError, match=re.escape(message)):
        graph(41, 16, torch.ones(41, 16))
