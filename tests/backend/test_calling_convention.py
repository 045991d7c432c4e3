"""Graph boundaries: outputs that alias inputs or views, input mutation, Python int arguments (SymInt `index`
parameters under dynamic=True), several outputs sharing a value, an output of rank 0 computed from constants."""

from __future__ import annotations

import pytest
import torch

from tests.helpers import check_model

CASES = {
    "identity": (lambda x: x, lambda: [torch.randn(3, 4)]),
    "transposed_view": (lambda x: x.t(), lambda: [torch.randn(3, 4)]),
    "view_of_result": (lambda x: (x * 2).view(12), lambda: [torch.randn(3, 4)]),
    "input_mutation": (lambda x: x.add_(1) * 2, lambda: [torch.randn(3, 4)]),
    "int_argument": (lambda x, n: x * n + n, lambda: [torch.randn(3, 4), 3]),
    "masked_fill_grad": (lambda x: x.masked_fill(x > 0, 0.0), lambda: [torch.randn(3, 4, requires_grad=True)]),
    "outputs_share_value": (lambda x: (x + 1, (x + 1).view(-1)), lambda: [torch.randn(3, 4, requires_grad=True)]),
    # a kernel of one rank-0 value computed from constants (its cost estimate had no rows: the compile failed)
    "rank0_output": (lambda x: (x * 2, torch.ops.aten.scalar_tensor(3.0) + 1), lambda: [torch.randn(3, 4)]),
}


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("name", sorted(CASES))
def test_boundary(name, dynamic):
    fn, make = CASES[name]
    torch.manual_seed(0)
    inputs = make()
    check_model(fn, inputs, backward=any(getattr(t, "requires_grad", False) for t in inputs), dynamic=dynamic)


def test_mutated_input_matches_eager():
    x = torch.randn(3, 4)
    x_eager, x_comp = x.clone(), x.clone()
    torch._dynamo.reset()
    torch.compile(lambda t: t.mul_(2), backend="npu")(x_comp)
    x_eager.mul_(2)
    torch.testing.assert_close(x_comp, x_eager)
