"""``x[i, j]`` with several index tensors (lowerings/multi_index.py): a linear index into the merged dims, gathered
on the simulator; negative indices count from the end and the index tensors broadcast, as eager. Index tensors
separated by a taken dim fall back to the host naming the dims; an index out of range stops the kernel."""

from __future__ import annotations

import pytest
import torch

import torch_npu_backend


def _compiled(fn, *args):
    torch._dynamo.reset()
    with torch_npu_backend.profile(trace=False) as prof:
        out = torch.compile(fn, backend="npu")(*args)
    return out, prof


def test_several_index_tensors_broadcast_and_negative():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(5, 7, 3, generator=gen)
    i, j = torch.tensor([[0, 4], [-1, 2], [3, -5]]), torch.tensor([1, -7])  # [3, 2] with [2]: broadcast to [3, 2]
    y = x.permute(2, 0, 1).contiguous()  # (a gather along a middle dim of a permuted view is interpreted today)
    fn = lambda t, u, a, b: (t[a, b], u[:, a, b], t[a, b, a[:, :1] % 3])  # noqa: E731
    got, prof = _compiled(fn, x, y, i, j)
    assert prof.records and not prof.interpreted() and not prof.fallbacks(), \
        [(r.kernel, r.reason) for r in prof.interpreted() + prof.fallbacks()]
    for g, w in zip(got, fn(x, y, i, j)):
        assert torch.equal(g, w)


@pytest.mark.filterwarnings("default:npu. ")  # the fallback is expected (setup.cfg makes it an error)
def test_index_tensors_apart_fall_back_naming_the_dims():
    x, i = torch.randn(4, 5, 6), torch.tensor([0, 3])
    got, prof = _compiled(lambda t, a: t[a, :, a], x, i)
    assert torch.equal(got, x[i, :, i])
    (fb,) = prof.fallbacks()
    assert fb.kernel == "aten.index.Tensor" and "dims [0, 2] are not adjacent" in fb.reason


def test_index_out_of_range_is_an_error():
    x = torch.randn(4, 5)
    with pytest.raises(Exception, match="outside"):
        _compiled(lambda t, a, b: t[a, b], x, torch.tensor([1, 4]), torch.tensor([0, 2]))
