"""sort / argsort / msort and topk on the vector unit (lowerings/sorting.py): every kernel simulated, ties in
position order (eager's ``stable=True`` order; a valid order where eager's is unspecified), NaN sorted as eager,
rows past the limits on the host with a reason naming the op and the numbers."""

from __future__ import annotations

import pytest
import torch

import torch_npu_backend

NAN = float("nan")


def _compiled(fn, *args):
    torch._dynamo.reset()
    with torch_npu_backend.profile(trace=False) as prof:
        out = torch.compile(fn, backend="npu")(*args)
    return out, prof


def _simulated(fn, *args):
    out, prof = _compiled(fn, *args)
    assert prof.records and not prof.interpreted() and not prof.fallbacks(), \
        [(r.kernel, r.reason) for r in prof.interpreted() + prof.fallbacks()]
    return out


def _same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    assert torch.equal(got.isnan(), want.isnan()) and torch.equal(got.nan_to_num(7.5), want.nan_to_num(7.5)), \
        (got, want)


def _ties(*shape, dtype=torch.float32, nan=True):
    x = (torch.rand(*shape, generator=torch.Generator().manual_seed(0)) * 4).floor() - 1
    if nan and dtype.is_floating_point:
        x.view(-1)[::5] = NAN
        x.view(-1)[3] = float("-inf")
    return x.to(dtype)


SORTS = [(0, True)]  # default run (compiling a sort is seconds); the op suite sorts the last dim
ALL_SORTS = [(-1, False), (-1, True), (0, False), (0, True)]


def _sorts(t, sorts=SORTS):
    return [r for d, desc in sorts for r in torch.sort(t, dim=d, descending=desc)]


def _check_sorts(x, got, sorts=SORTS):
    """Equal to eager's stable sort (ties in position order); so a valid answer of the unstable one."""
    for k, (d, desc) in enumerate(sorts):
        values, indices = got[2 * k], got[2 * k + 1]
        want = torch.sort(x, dim=d, descending=desc, stable=True)
        _same(values, want.values)
        assert torch.equal(indices, want.indices), (d, desc, indices, want.indices)
        eager = torch.sort(x, dim=d, descending=desc)  # stable=False: the same values, the indices a permutation
        _same(values, eager.values)
        _same(x.gather(d, indices), eager.values)


def test_sort_ties_and_nan_in_position_order():
    x = _ties(5, 4)
    _check_sorts(x, _simulated(lambda t: _sorts(t), x))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.int32, torch.int64])
def test_sort_dtypes(dtype):
    x = _ties(5, 16, dtype=dtype)
    _check_sorts(x, _simulated(lambda t: _sorts(t, ALL_SORTS), x), ALL_SORTS)


@pytest.mark.slow
def test_sort_ranks_and_wrappers():
    """rank 1, rank 3 over the last dim, argsort and msort (their CompositeImplicitAutograd kernels sort)."""
    v, c = _ties(11), _ties(2, 3, 5)
    got = _simulated(lambda a, b: (*torch.sort(a), *torch.sort(b, descending=True), torch.argsort(b, stable=True),
                                   torch.msort(b[0].T)), v, c)
    want = (*torch.sort(v, stable=True), *torch.sort(c, descending=True, stable=True), torch.argsort(c, stable=True),
            torch.msort(c[0].T))
    for g, w in zip(got, want):
        _same(g, w)


def _check_topk(x, k, dim, largest, values, indices):
    want = torch.topk(x, k, dim=dim, largest=largest)
    _same(values, want.values)  # sorted: the values are determined; ties may come from other positions
    _same(x.gather(dim, indices), want.values)
    picked = indices.movedim(dim, -1)
    assert torch.equal(picked.sort(-1).values.diff(dim=-1) > 0, torch.ones_like(picked[..., 1:], dtype=torch.bool))


TOPKS = [(3, -1, True), (2, 0, False)]
ALL_TOPKS = [(3, -1, True), (4, -1, False), (2, 0, True), (1, 0, False)]


def test_topk_ties_nan_and_dims():
    x = _ties(7, 12)
    got = _simulated(lambda t: [r for k, d, lg in TOPKS for r in torch.topk(t, k, dim=d, largest=lg)], x)
    for i, (k, d, largest) in enumerate(TOPKS):
        _check_topk(x, k, d, largest, got[2 * i], got[2 * i + 1])


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.int32, torch.int64])
def test_topk_dtypes_and_long_rows(dtype):
    x = _ties(6, 100, dtype=dtype)
    got = _simulated(lambda t: [r for k, d, lg in ALL_TOPKS for r in torch.topk(t, k, dim=d, largest=lg)], x)
    for i, (k, d, largest) in enumerate(ALL_TOPKS):
        _check_topk(x, k, d, largest, got[2 * i], got[2 * i + 1])


@pytest.mark.slow
def test_topk_router_dynamic_tokens(fresh_dynamo):
    """A mixture-of-experts router: the top 2 of 8 experts per token, tokens symbolic, one compile."""
    compiled = torch.compile(lambda t: torch.topk(t, 2), backend="npu", dynamic=False)
    with torch_npu_backend.profile(trace=False) as prof:
        for n in (12, 20):
            x = torch.randn(n, 8)
            torch._dynamo.mark_dynamic(x, 0)
            got = compiled(x)
            _check_topk(x, 2, -1, True, *got)
    assert not prof.interpreted() and not prof.fallbacks()
    assert fresh_dynamo["graphs_compiled"] == 1


@pytest.mark.filterwarnings("default:npu. ")  # the fallbacks are expected (setup.cfg makes them errors)
def test_past_the_limits_falls_back_naming_the_numbers():
    x = torch.randn(3, 17)
    (values, indices), prof = _compiled(lambda t: torch.sort(t), x)
    assert torch.equal(values, torch.sort(x).values) and torch.equal(indices, torch.sort(x).indices)
    (fb,) = prof.fallbacks()
    assert fb.kernel == "aten.sort.default" and "rows of 17 elements" in fb.reason and "at most 16" in fb.reason
    (values, _), prof = _compiled(lambda t: torch.topk(t, 17, dim=0), torch.randn(20, 3))
    (fb,) = prof.fallbacks()
    assert fb.kernel == "aten.topk.default" and "k=17" in fb.reason and "at most 16" in fb.reason
