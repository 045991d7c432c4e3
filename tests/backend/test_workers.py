"""Timing jobs fanned out (torch_npu_backend/workers.py): a pool of 2 gives the serial run's profile (cycles, µs,
per-launch records) and outputs; an error a timing job raises is raised for the call that made the launch, and its
key is not replayed; the options and NPU_WORKERS are validated."""

from __future__ import annotations

import importlib.util

import pytest
import torch

import torch_npu_backend
from simulator import RaceError
from torch_npu_backend import workers
from torch_npu_backend.options import NpuOptions, OptionsError

_FIELDS = ("kernel", "fusion_kind", "executed", "block_dim", "cycles", "us", "launch_us", "roofline_us",
           "efficiency", "bound", "busy", "gm_bytes", "hazards_checked", "replayed", "reason")


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 32),
                               torch.nn.LayerNorm(32))


def _run(n_workers, train):
    """Two calls (the second replays) of a small MLP, forward or training step; per call: outputs, records, totals."""
    torch._dynamo.reset()
    model = _model()
    compiled = torch.compile(model, backend="npu", options={"workers": n_workers})
    out = []
    for seed in range(2):
        x = torch.randn(16, 32, generator=torch.Generator().manual_seed(seed))
        with torch_npu_backend.profile() as prof, torch.set_grad_enabled(train):
            y = compiled(x)
            if train:
                y.square().sum().backward()
        grads = [p.grad.clone() for p in model.parameters()] if train else []
        model.zero_grad()
        recs = [tuple(getattr(r, f) for f in _FIELDS) for r in prof.records]
        out.append((y.detach().clone(), grads, recs, prof.total_us(), prof.total_us(launch=False),
                    [len(r.result.events) for r in prof.simulated()]))
    torch._dynamo.reset()
    return out


@pytest.mark.parametrize("train", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["forward", "train"])
def test_pool_of_two_gives_the_serial_profile(monkeypatch, train):
    monkeypatch.setattr(workers, "MIN_POOL_JOB", 0)  # every job counts: the pool starts on the first graph
    submitted = []
    defer = workers.TimingJobs.defer

    def counted(self, *a):
        pending = defer(self, *a)
        submitted.append(pending.handle.future is not None)
        return pending

    monkeypatch.setattr(workers.TimingJobs, "defer", counted)
    pooled = _run(2, train)
    assert ("local", 2) in workers.pools_started()
    assert sum(submitted) >= len(submitted) - 1 > 0  # all but a graph's first job ran in the pool
    serial = _run(1, train)
    for (y, g, recs, total, body, events), (y1, g1, recs1, total1, body1, events1) in zip(pooled, serial):
        assert torch.equal(y, y1) and all(torch.equal(a, b) for a, b in zip(g, g1))
        assert recs == recs1
        assert total == total1 and body == body1 and events == events1
    assert any(r[13] for r in pooled[1][2])  # the second call replayed (from the functional run's recording)
    assert not any(r[13] for r in pooled[0][2])


def test_timing_job_error_is_raised_for_the_call(monkeypatch):
    def racy(job):
        raise RaceError(f"race on UB[0x0000, 0x0100) of core aiv0 in {job.name} (from the timing job)")

    monkeypatch.setattr(workers, "run", racy)  # jobs run in this process: no pool yet, and it never starts (small jobs)
    monkeypatch.setattr(workers, "_POOLS", {})
    torch._dynamo.reset()
    compiled = torch.compile(lambda x: (x * 2).exp(), backend="npu", options={"workers": 2})
    x = torch.randn(8, 32)
    for _ in range(2):  # the failed key is not replayed: the second call runs its timing job again, and fails
        with pytest.raises(RaceError, match=r"race on UB.*from the timing job"):
            compiled(x)
    monkeypatch.undo()
    torch.testing.assert_close(compiled(x), (x * 2).exp())
    torch._dynamo.reset()


def test_worker_options_are_validated(monkeypatch):
    with pytest.raises(OptionsError, match=r"option workers must be an int >= 1"):
        NpuOptions.from_dict({"workers": 0})
    with pytest.raises(OptionsError, match=r"executor='spark' is not supported; valid: local, dask, ray"):
        NpuOptions.from_dict({"executor": "spark"})
    for executor, module in (("dask", "distributed"), ("ray", "ray")):
        if importlib.util.find_spec(module) is None:
            with pytest.raises(OptionsError, match=rf"executor='{executor}' needs the '{module}' package.*"
                                                   rf"pip install 'npu\[{executor}\]'"):
                NpuOptions.from_dict({"executor": executor})
    monkeypatch.setenv("NPU_WORKERS", "3")
    assert workers.default_workers() == 3
    assert workers.jobs_for(NpuOptions()).workers == 3
    assert workers.jobs_for(NpuOptions(simulate="every")) is None
    assert workers.jobs_for(NpuOptions(workers=1)) is None
    monkeypatch.setenv("NPU_WORKERS", "none")
    with pytest.raises(ValueError, match=r"NPU_WORKERS='none' must be an int >= 1"):
        workers.default_workers()
