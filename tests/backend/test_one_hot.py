"""One-hot masks from integer indices (scatter of a value, as nll_loss's backward builds it; the embedding backward's
one-hot): the index is narrowed to i32 on its own few elements, so the compare over index × positions runs on the
vector unit, and the index column keeps its rows contiguous in UB."""

from __future__ import annotations

import torch
import torch.nn.functional as F

import torch_npu_backend


def test_cross_entropy_backward_builds_its_one_hot_on_the_vector_unit(fresh_dynamo):
    torch.manual_seed(0)
    n, c = 256, 512
    x = torch.randn(n, c, requires_grad=True)
    target = torch.randint(0, c, (n,))
    target[::7] = -100  # ignore_index rows
    compiled = torch.compile(lambda x, t: F.cross_entropy(x, t), backend="npu")
    with torch_npu_backend.profile(trace=False) as prof:
        compiled(x, target).backward()
    got = x.grad.clone()
    x.grad = None
    F.cross_entropy(x, target).backward()
    torch.testing.assert_close(got, x.grad, rtol=1e-5, atol=1e-7)
    one_hot = [r for r in prof.records if "scatter" in r.source and "ne_3" in r.source]
    assert len(one_hot) == 1 and one_hot[0].executed == "simulator", [(r.kernel, r.source) for r in prof.records]
    # an i64 compare over the 256 x 512 domain ran as a scalar loop per element: 64 us; narrowed, the column's
    # 256 elements are scalar work and the compare is vector work: under 3 us
    assert one_hot[0].us < 3.0, one_hot[0]


def test_scatter_value_with_an_int64_index_matches_eager(fresh_dynamo):
    x = torch.randn(6, 40)
    index = torch.tensor([[3], [0], [39], [7], [7], [12]])
    fn = torch.compile(lambda x, i: x.scatter(1, i, 2.5), backend="npu")
    with torch_npu_backend.profile(trace=False) as prof:
        got = fn(x, index)
    assert torch.equal(got, x.scatter(1, index, 2.5))
    assert all(r.executed == "simulator" for r in prof.records)
