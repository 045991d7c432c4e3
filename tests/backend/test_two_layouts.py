"""A value a kernel needs in two layouts (one arange broadcast both along rows and along columns, as a causal mask
``ones(t, t).tril()`` lowers after CSE) has no single UB buffer. ``hfusion-rematerialize-layouts`` computes such a
cheap value once per layout, so the kernel runs on the simulator and equals eager; a value that is not cheap (a
kernel argument) keeps the kernel in the interpreter with a reason naming the value and both dims."""

from __future__ import annotations

import pytest
import torch

import torch_npu_backend


def _masked(a):
    t = a.shape[-1]
    return a * torch.ones(t, t, dtype=torch.bool).tril()


def _outer(v, y):
    return v[:, None] * v[None, :] + y


@pytest.mark.parametrize("dynamic", [False, True])
def test_row_and_column_broadcast_of_one_arange_is_simulated(fresh_dynamo, dynamic):
    compiled = torch.compile(_masked, backend="npu", dynamic=dynamic)
    for shape in [(2, 4, 8, 8), (3, 2, 5, 5)]:  # dynamic: one compile, the mask's length a symbol
        a = torch.randn(shape)
        with torch_npu_backend.profile(trace=False) as prof:
            got = compiled(a)
        assert torch.equal(got, _masked(a))
        assert prof.records and not prof.interpreted(), [r.reason for r in prof.interpreted()]
        (record,) = prof.records  # the mask and its use: one simulated kernel
        assert "arange" in record.source and any(s.startswith("mul") for s in record.source), record.source
    assert fresh_dynamo["graphs_inference"] == (1 if dynamic else 2)


def test_argument_needed_as_row_and_column_names_value_and_dims(fresh_dynamo):
    v, y = torch.randn(8), torch.randn(8, 8)
    with torch_npu_backend.profile(trace=False) as prof:
        got = torch.compile(_outer, backend="npu")(v, y)
    assert torch.equal(got, _outer(v, y))
    (record,) = prof.interpreted()
    assert "kernel argument 0" in record.reason and "tensor<8xf32>" in record.reason, record.reason
    assert "domain dims [0] and [1] of the domain [8, 8]" in record.reason, record.reason
