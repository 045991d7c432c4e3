"""Repeated layers share their compiled kernels (codegen/kernel_key.py): a kernel whose text differs from an earlier
one's only in names and locations reuses its CompiledKernel, so with ``simulate="once"`` its launch in the first call
replays the earlier layer's recorded simulation — outputs bit for bit and cycles equal to a full simulation (checked
by ``verify_replays``) and equal, launch by launch, to a compile without sharing. A layer whose constants differ
keeps a kernel of its own."""

from __future__ import annotations

import torch

import codegen.kernel_key
import torch_npu_backend
from tests.backend.test_replay import verify_replays  # noqa: F401  (the fixture)
from tests.helpers import assert_close


class _Block(torch.nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.lin, self.norm, self.scale = torch.nn.Linear(64, 64), torch.nn.LayerNorm(64), scale

    def forward(self, x):
        return self.norm(x + torch.nn.functional.gelu(self.lin(x)) * self.scale)


def _run(model, x):
    torch._dynamo.reset()
    torch_npu_backend.COUNTERS.clear()
    with torch.no_grad(), torch_npu_backend.profile(trace=False) as prof:
        y = torch.compile(model, backend="npu")(x)
    return y, prof.records, torch_npu_backend.COUNTERS["kernels_shared"]


def test_repeated_layers_share_kernels(verify_replays, fresh_dynamo, monkeypatch):  # noqa: F811
    torch.manual_seed(0)
    model = torch.nn.Sequential(_Block(0.5), _Block(0.5), _Block(0.25)).eval()  # the third scales by another constant
    x = torch.randn(32, 64)
    y, records, shared = _run(model, x)
    assert_close(y, model(x), "three blocks")
    replayed = [r for r in records if r.replayed]
    assert shared == len(replayed) >= 2 and len(verify_replays) == len(replayed), (shared, len(replayed))
    assert {r.fusion_kind for r in replayed} >= {"SINGLE_CUBE"}  # the second block's matmul: the first's replayed
    scaled = [r for r in records if "gelu_2" in r.source]  # the third block's epilogue: its own kernel
    assert scaled and not any(r.replayed for r in scaled), [(r.kernel, r.replayed) for r in scaled]

    monkeypatch.setattr(codegen.kernel_key, "kernel_key", lambda f, module: id(f))  # every kernel its own
    y_alone, alone, shared_alone = _run(model, x)
    assert shared_alone == 0 and not any(r.replayed for r in alone)
    assert torch.equal(y, y_alone)
    assert [(r.kernel, r.cycles) for r in records] == [(r.kernel, r.cycles) for r in alone]
