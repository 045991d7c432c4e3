"""The simulator's fast path (simulator/symmetry.py) on compiled kernels: every launch of a small model — vector
kernels (layer norm, softmax, a mean), a cube kernel and a MIX_CV matmul with its epilogue, forward and backward — is
launched by the fast path and again by the exact path on a copy of its GM; cycles, per-pipe busy per core, trace,
flows and the GM bytes must be equal."""
import numpy as np
import pytest
import torch

import codegen.kernel
from simulator import MixProgram, symmetry
from simulator.timing_job import digest, snapshot


@pytest.fixture
def both_paths(monkeypatch):
    real = codegen.kernel.launch
    seen = []
    real_reps = symmetry.representatives
    shared = []
    monkeypatch.setattr(symmetry, "representatives",
                        lambda cores: (lambda r: shared.append(r is not None and len(r) < len(cores)) or r)(
                            real_reps(cores)))

    def launch(program, **kw):
        gm2 = snapshot(kw["gm"])
        fast = real(program, **kw, exact=False)
        exact = real(program, **{**kw, "gm": gm2, "record": False}, exact=True)
        a, b = fast.stats, exact.stats
        assert (a.cycles, a.busy_per_core, a.bytes, a.ddr_bytes) == (b.cycles, b.busy_per_core, b.bytes, b.ddr_bytes)
        assert fast.events == exact.events and fast.flows == exact.flows
        assert digest(kw["gm"]) == digest(gm2)
        kind = "mix" if isinstance(program, MixProgram) else program.core_type
        seen.append((kind, kw.get("block_dim")))
        return fast

    monkeypatch.setattr(codegen.kernel, "launch", launch)
    return seen, shared


@pytest.mark.parametrize("backward", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["forward", "step"])
def test_compiled_kernels_same_on_both_paths(both_paths, fresh_dynamo, backward):
    seen, shared = both_paths
    torch.manual_seed(0)

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin, self.norm = torch.nn.Linear(64, 96), torch.nn.LayerNorm(96)
            self.w = torch.nn.Parameter(torch.randn(96, 64) * 0.1)

        def forward(self, x):
            h = torch.relu(self.lin(x))
            return torch.softmax(self.norm(h) @ self.w, -1).square().mean()

    compiled = torch.compile(Model(), backend="npu", options={"simulate": "every", "cache": False, "workers": 1})
    x = torch.randn(256, 64)
    loss = compiled(x)
    if backward:
        loss.backward()
    mix = torch.compile(lambda x, w, b: torch.nn.functional.gelu(torch.nn.functional.linear(x, w, b)),
                        backend="npu", options={"simulate": "every", "cache": False, "workers": 1})
    mix(torch.randn(64, 96), torch.randn(128, 96), torch.randn(128))  # one MIX_CV launch: matmul + bias + gelu
    kinds = {k for k, _ in seen}
    assert {"aiv", "aic", "mix"} <= kinds, seen
    assert any(shared), "no launch shared a class of cores"
    assert np.isfinite(loss.item())
