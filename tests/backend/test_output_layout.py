"""Outputs keep eager's layout: a returned transposed view or channels_last tensor has eager's strides (as
Inductor's outputs do), static and dynamic."""

from __future__ import annotations

import pytest
import torch


def _transposed(x):
    return (x * 2).t()


def _channels_last(x):
    return torch.relu(x).contiguous(memory_format=torch.channels_last)


def _heads(x):
    return x.transpose(1, 2) + 1


def _both(x):
    return x.transpose(0, 1) - 1, x * 3


CASES = [(_transposed, (8, 16)), (_channels_last, (2, 3, 4, 5)), (_heads, (2, 4, 6)), (_both, (4, 8))]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("fn,shape", CASES, ids=[c[0].__name__.strip("_") for c in CASES])
def test_output_strides_are_eagers(fn, shape, dynamic):
    torch.manual_seed(0)
    x = torch.randn(*shape)
    torch._dynamo.reset()
    out, exp = torch.compile(fn, backend="npu", dynamic=dynamic)(x), fn(x)
    for o, e in zip(out if isinstance(out, tuple) else (out,), exp if isinstance(exp, tuple) else (exp,)):
        assert o.stride() == e.stride()
        assert torch.equal(o, e)


def test_an_expanded_output_is_returned_dense():
    """An output eager returns as a broadcast view (stride 0) comes back materialised with the same values
    (writing it into an overlapping layout is impossible); BERT's expanded token-type ids in training."""
    x = torch.randn(1, 16)
    compiled = torch.compile(lambda x: (x * 2).expand(2, 16), backend="npu")
    out = compiled(x)
    torch.testing.assert_close(out, (x * 2).expand(2, 16))
