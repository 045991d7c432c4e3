"""A cube kernel's corrupted memory plan: every L1 offset forced to 0 after hivm-plan-memory puts the A and B tiles
in the same bytes. hivm-verify-memory-plan names both buffers; with the verifier skipped, the simulator's buffer-tag
check (on with the hazard checker) stops the launch when MTE1 reads an A tile from bytes last written as a B tile.

Forcing the copies of one L0A/L0B/L0C buffer to one offset is not a wrong result: inject-sync runs after the plan
and orders the accesses it then sees sharing bytes, so the kernel runs single-buffered and still matches eager (the
static verifier reports it; the run-time check has nothing to catch, and the last test shows the same result)."""

from __future__ import annotations

import re

import pytest
import torch

from graph_passes.passes import PassContext, PassManager
from graph_passes.passes.hivm.plan_memory import PlanMemory
from graph_passes.passes.hivm.verify_memory_plan import MemoryPlanError, VerifyMemoryPlan
from graph_passes.pipelines import PipelineOptions, hfusion_pipeline, lowering_pipeline
from tests.helpers import aten_graph, buffer_tag_error_of
from torch_npu_backend.importer import import_graph


def _inputs():
    torch.manual_seed(0)
    return [torch.randn(256, 512, dtype=torch.float16), torch.randn(512, 512, dtype=torch.float16)]


def _matmul(a, b):
    return a @ b


def _force_zero(module, scope: str) -> int:
    forced = 0
    for op in module.walk():
        if op.name == "hivm.alloc" and op.result.type.scope == scope and "offsets" in op.attributes:
            op.attributes["offsets"] = [0] * len(op.attributes["offsets"])
            forced += 1
    return forced


@pytest.fixture
def corrupt(monkeypatch):
    def use(scope: str):
        plan = PlanMemory.run

        def plan_then_corrupt(self, module, ctx):
            plan(self, module, ctx)
            _force_zero(module, scope)

        monkeypatch.setattr(PlanMemory, "run", plan_then_corrupt)
        monkeypatch.setattr(VerifyMemoryPlan, "run", lambda self, module, ctx: None)  # the static check skipped

    return use


def test_the_verifier_names_the_l1_tiles_sharing_bytes():
    module = import_graph(aten_graph(_matmul, _inputs())).module
    ctx = PassContext()
    PassManager.from_pipeline(hfusion_pipeline(PipelineOptions())).run(module, ctx)
    PassManager.from_pipeline(lowering_pipeline(PipelineOptions()), stop_after="hivm-plan-memory").run(module, ctx)
    assert _force_zero(module, "l1") >= 2
    with pytest.raises(MemoryPlanError) as err:
        PassManager.from_pipeline("hivm-verify-memory-plan").run(module, PassContext())
    msg = str(err.value)
    assert "\n" not in msg
    assert re.match(r"hivm-verify-memory-plan: kernel \w+: L1 buffers %\S+ .*bytes \[0, \d+\) live \[\d+, \d+\] "
                    r"and %\S+ .*bytes \[0, \d+\) live \[\d+, \d+\] share bytes while both live", msg), msg


def test_a_corrupted_l1_plan_is_caught_at_run_time(corrupt):
    corrupt("l1")
    msg = buffer_tag_error_of(_matmul, *_inputs())
    assert re.match(r"buffer tag: load_l1_to_l0[ab] \(pc \d+\) reads L1\[0x[0-9a-f]+, 0x[0-9a-f]+\) of core aic\d+ "
                    r"as buffer '\S+', but they were last written as buffer '\S+' by copy_gm_to_l1 \(pc \d+\)", msg), msg


@pytest.mark.parametrize("scope", ["l0a", "l0b", "l0c"])
def test_copies_of_one_l0_buffer_at_one_offset_still_give_the_same_result(corrupt, scope):
    a, b = _inputs()
    torch._dynamo.reset()
    planned = torch.compile(_matmul, backend="npu")(a, b)
    corrupt(scope)
    torch._dynamo.reset()
    out = torch.compile(_matmul, backend="npu")(a, b)
    torch._dynamo.reset()
    assert torch.equal(out, planned)
    assert (out.float() - a.float() @ b.float()).abs().max() < 0.1
