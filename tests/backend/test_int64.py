"""int64 arithmetic, compares, selects, fills and reductions as scalar loops over UB (codegen.scalar_loops): bit for
bit with eager at the edges of int64 (wrapping add/sub/mul/neg/abs), on the simulator with the hazard checker on,
static and dynamic shapes."""

from __future__ import annotations

import pytest
import torch

import torch_npu_backend

I64_MIN, I64_MAX = -(2**63), 2**63 - 1
EDGES = [I64_MIN, I64_MAX, -1, 0, 1, I64_MIN + 1, I64_MAX - 1, 2**32, -(2**32) - 1, 2**31, 3, -7, 12345678901234]


def _ints(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(I64_MIN, I64_MAX, shape, generator=g, dtype=torch.int64)
    flat = x.view(-1)
    flat[: len(EDGES)] = torch.tensor(EDGES[: flat.numel()])
    return x


def _simulated(fn, *inputs, dynamic=False):
    torch._dynamo.reset()
    with torch_npu_backend.profile(trace=False) as prof:
        out = torch.compile(fn, backend="npu", dynamic=dynamic)(*inputs)
    assert prof.records and not prof.interpreted(), [r.reason for r in prof.interpreted()]
    return out, prof


def _equal(got, ref):
    got = got if isinstance(got, tuple) else (got,)
    ref = ref if isinstance(ref, tuple) else (ref,)
    for k, (a, e) in enumerate(zip(got, ref)):
        assert a.dtype == e.dtype and a.shape == e.shape and torch.equal(a, e), (k, a, e)


@pytest.mark.parametrize("dynamic", [False, True])
def test_wrapping_arithmetic_as_eager(dynamic):
    x, y = _ints(5, 40, seed=1), _ints(5, 40, seed=2)

    def fn(a, b):
        return a + b, a - b, a * b, torch.maximum(a, b), torch.minimum(a, b), -a, a.abs(), a * 3 - 7, a ^ b, ~a + b, \
            a.sign() * b

    got, prof = _simulated(fn, x, y, dynamic=dynamic)
    _equal(got, fn(x, y))


@pytest.mark.parametrize("fn", [lambda a: (a.sum(1), a.amax(1), a.amin(1)), lambda a: (a.sum(0), a.amin(0)),
                                lambda a: a.sum(), lambda a: a.amax()], ids=["last", "first", "all_sum", "all_max"])
def test_reductions_as_eager(fn):
    x = _ints(6, 37, seed=3)
    got, _ = _simulated(fn, x)
    _equal(got, fn(x))


def test_compares_and_where_as_eager():
    x, y = _ints(3, 45, seed=4), _ints(3, 45, seed=5)
    y[:, ::3] = x[:, ::3]

    def fn(a, b):
        return torch.where(a > b, a, b - 1), torch.where(a == b, a, 5), torch.where(a <= 0, torch.full_like(a, 9), a)

    got, _ = _simulated(fn, x, y)
    _equal(got, fn(x, y))


def test_scalar_loops_are_synced_against_vector_and_dma():
    """An i64 op between f32 vector work: flags between S and V/MTE (the hazard checker is on) and the S pipe busy."""
    x, f = _ints(4, 64, seed=6), torch.randn(4, 64)

    def fn(a, b):
        return (a + 1).to(torch.float32) * b, a * 2

    got, prof = _simulated(fn, x, f)
    _equal(got, fn(x, f))
    assert all(r.hazards_checked for r in prof.records)
    assert all(r.busy.get("S", 0) > 0 for r in prof.records), [r.busy for r in prof.records]


def test_i64_arange_as_eager():
    x = _ints(4, 40, seed=7)

    def fn(a):
        return a + torch.arange(40) * 3 - 5, torch.arange(7, 87, 2) - a

    got, _ = _simulated(fn, x)
    _equal(got, fn(x))


def test_integer_row_sum_is_not_software_pipelined():
    """An i32 row sum over 256 rows of 1000 accumulates in i64 (scalar loops synchronised with the vector pipe by
    flags): a software-pipelined row loop would give its two stages the same flag ids, which codegen refuses (the
    kernel ran in the interpreter); the schedule keeps such kernels in lockstep, on the simulator."""
    x = torch.randint(-100, 100, (256, 1000), dtype=torch.int32, generator=torch.Generator().manual_seed(9))
    torch._dynamo.reset()
    with torch_npu_backend.profile(trace=False) as prof:
        got = torch.compile(lambda x: x.sum(-1), backend="npu")(x)
    assert torch.equal(got, x.sum(-1))
    assert all(r.simulated for r in prof.records), [r.reason for r in prof.records]


def test_gather_of_int64_values_on_the_vector_unit():
    """gather / index_select of int64 values along the last dim: a b32 vgather of each element's two words (the A2
    vector unit gathers b16 and b32), bit for bit at the edges of int64 — BERT's token-type ids by position."""
    x = _ints(3, 40)
    index = torch.randint(0, 40, (3, 25), generator=torch.Generator().manual_seed(1))
    got, prof = _simulated(lambda a, i: torch.gather(a, 1, i), x, index)
    _equal(got, torch.gather(x, 1, index))
    assert any("gather" in r.source for r in prof.records)
    cols = torch.tensor([39, 0, 7, 7, 12])
    got, _ = _simulated(lambda a, i: a.index_select(1, i) - 1, x, cols)
    _equal(got, x.index_select(1, cols) - 1)
