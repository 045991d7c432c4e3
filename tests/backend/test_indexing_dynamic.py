"""arange and index_select with a dynamic row count: one compile serves several sizes, every kernel on the simulator
(none interpreted), results equal to eager. (The op suite's dynamic test skips them: their inputs have different
shapes.) The gathered dim itself stays static: the source's rows are loaded whole into UB, so their length needs
a bound (docs/schedule.md)."""

from __future__ import annotations

import pytest
import torch

import torch_npu_backend
from tests.helpers import assert_close

CASES = {
    "index_select": (lambda x, i: torch.index_select(x, 1, i) + 1,
                     lambda n, g: [torch.randn(n, 8, generator=g), torch.randint(0, 8, (5,), generator=g)]),
    "arange_dynamic_length": (lambda x: x * torch.arange(x.shape[0], dtype=x.dtype)[:, None],
                              lambda n, g: [torch.randn(n, 8, generator=g)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_compile_every_kernel_simulated(name, fresh_dynamo):
    fn, make = CASES[name]
    compiled = torch.compile(fn, backend="npu")
    g = torch.Generator().manual_seed(0)
    with torch_npu_backend.profile(trace=False) as prof:
        for n in (3, 70, 301):
            xs = make(n, g)
            torch._dynamo.mark_dynamic(xs[0], 0)  # the rows are a shape symbol; the gathered dim stays static
            assert_close(compiled(*xs), fn(*xs), f"{name} rows {n}")
    assert fresh_dynamo["graphs_compiled"] == 1
    assert prof.records and not prof.interpreted(), [r.reason for r in prof.interpreted()]
