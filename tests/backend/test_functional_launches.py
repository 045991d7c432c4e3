"""The functional executor on the op suite's kernels: every launch of a case runs the deferred path
(``CompiledKernel.run(..., jobs=TimingJobs(2))``: outputs from the functional executor, timing a job) beside a full
simulation of the same arguments (``simulate="every"``); outputs equal bit for bit, the job's cycles equal the full
simulation's, and the job's GM digest check passes (it raises when the two GMs differ).

Default tier: a representative set (elementwise with broadcast, rows, reductions split over cores, an int scan, a
matmul on the cube, gathers at register-computed addresses, a loss); ``slow``: every case of the op suite.
"""

from __future__ import annotations

import pytest
import torch

from codegen.kernel import CompiledKernel
from tests.backend.op_cases import CASES
from tests.backend.test_ops import NO_KERNEL
from tests.backend.test_replay import _call
from torch_npu_backend.workers import TimingJobs

_FAST = ("add_broadcast", "softmax", "sum", "mm", "cumsum_int", "embedding", "cross_entropy")


@pytest.fixture
def functional_beside_full(monkeypatch):
    """Wrap CompiledKernel.run: each launch deferred (functional outputs, timing job) and simulated in full."""
    checked = []
    run = CompiledKernel.run

    def both(self, gm_arrays, bindings, chip=None, check_hazards=True, trace=False, simulate="every", jobs=None):
        self.recorded.clear()  # never a replay: every launch goes through the functional executor
        deferred = TimingJobs(2)
        outs, pending = run(self, gm_arrays, bindings, chip, check_hazards, trace, "once", jobs=deferred)
        want, full = run(self, gm_arrays, bindings, chip, check_hazards, trace, "every")
        for k, (o, w) in enumerate(zip(outs, want)):
            assert o.dtype == w.dtype and o.shape == w.shape and o.tobytes() == w.tobytes(), (
                f"{self.name}: output {k} of the functional executor differs from the full simulation")
        if full is None:  # block_dim 0: nothing launched
            assert pending is None
            return want, full
        deferred.wait()
        res = pending.resolve()  # raises FunctionalMismatch if the job's GM differs from the functional one
        assert res.stats.cycles == full.stats.cycles and res.stats.us == full.stats.us, self.name
        checked.append(self.name)
        return want, full

    monkeypatch.setattr(CompiledKernel, "run", both)
    return checked


def _case(case, checked):
    torch._dynamo.reset()
    compiled = torch.compile(case.fn, backend="npu", options={"workers": 1})
    dtype = torch.float32 if case.floats else None
    _, prof = _call(compiled, case.make(dtype, torch.Generator().manual_seed(0)), case.backward)
    if case.name in NO_KERNEL:
        return
    assert len(checked) == len(prof.simulated()) > 0
    torch._dynamo.reset()


@pytest.mark.parametrize("case", [c for c in CASES if c.name in _FAST], ids=lambda c: c.name)
def test_functional_launches_equal_full_simulation(case, functional_beside_full):
    _case(case, functional_beside_full)


@pytest.mark.slow
@pytest.mark.parametrize("case", [c for c in CASES if c.name not in _FAST], ids=lambda c: c.name)
def test_every_op_functional_launches_equal_full_simulation(case, functional_beside_full):
    _case(case, functional_beside_full)
