"""A value a kernel needs in two layouts (one arange broadcast both along rows and along columns, as a causal mask
``ones(t, t).tril()`` lowers after CSE) has no single UB buffer. ``hfusion-rematerialize-layouts`` computes such a
cheap value once per layout, and a kernel argument gets a parameter per layout, so the kernel runs on the simulator
and equals eager; a value computed from GM inside the kernel keeps it in the interpreter with a reason naming the
value and both dims."""

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


@pytest.mark.parametrize("dynamic", [False, True])
def test_argument_needed_as_row_and_column_gets_a_parameter_per_layout(fresh_dynamo, dynamic):
    """``v[:, None] * v[None, :]``: the kernel argument ``v`` is read as a column and as a row; the kernel gets a
    second parameter (the host passes ``v`` again), each loaded into its own buffer, and runs on the simulator."""
    compiled = torch.compile(_outer, backend="npu", dynamic=dynamic)
    for n in (8, 12):
        v, y = torch.randn(n), torch.randn(n, n)
        with torch_npu_backend.profile(trace=False) as prof:
            got = compiled(v, y)
        assert torch.equal(got, _outer(v, y))
        (record,) = prof.records
        assert record.simulated, record.reason


def _outer_of_exp(v, y):
    u = v.exp()
    return u[:, None] * u[None, :] + y


def test_value_from_gm_needed_as_row_and_column_names_value_and_dims(fresh_dynamo):
    """``exp(v)`` computed in the kernel and read as a column and as a row: not cheap (it reads GM), not an
    argument — the kernel stays in the interpreter with a reason naming the value and both dims."""
    v, y = torch.randn(8), torch.randn(8, 8)
    with torch_npu_backend.profile(trace=False) as prof:
        got = torch.compile(_outer_of_exp, backend="npu")(v, y)
    assert torch.equal(got, _outer_of_exp(v, y))
    (record,) = prof.interpreted()
    assert "tensor<8xf32>" in record.reason and "domain dims [0] and [1] of the domain [8, 8]" in record.reason, \
        record.reason
