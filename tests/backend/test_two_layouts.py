"""A value a kernel needs in two layouts (one arange broadcast both along rows and along columns, as a causal mask
``ones(t, t).tril()`` lowers) has no single UB buffer: the kernel is not vector-scheduled and says why, and the
result equals eager."""

from __future__ import annotations

import torch

import torch_npu_backend


def _masked(a):
    t = a.shape[-1]
    return a * torch.ones(t, t, dtype=torch.bool).tril()


def test_row_and_column_broadcast_of_one_value_equals_eager(fresh_dynamo):
    a = torch.randn(2, 4, 8, 8)
    with torch_npu_backend.profile(trace=False) as prof:
        got = torch.compile(_masked, backend="npu")(a)
    assert torch.equal(got, _masked(a))
    reasons = [r.reason for r in prof.interpreted()]
    assert any("hfusion.arange" in r for r in reasons), reasons  # named by the op that has no one layout
