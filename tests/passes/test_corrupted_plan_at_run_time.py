"""A corrupted memory plan (every UB offset forced to 0 after hivm-plan-memory) that skips hivm-verify-memory-plan is
caught at run time by the simulator's buffer-tag check (on with the hazard checker): the same workloads as
test_verify_memory_plan.py, compiled through torch.compile."""

from __future__ import annotations

import re

import pytest
import torch

from graph_passes.passes.hivm.plan_memory import PlanMemory
from graph_passes.passes.hivm.verify_memory_plan import VerifyMemoryPlan
from tests.helpers import buffer_tag_error_of
from tests.passes.test_verify_memory_plan import WORKLOADS


@pytest.fixture
def corrupted_plans(monkeypatch):
    plan = PlanMemory.run

    def plan_then_corrupt(self, module, ctx):
        plan(self, module, ctx)
        for op in module.walk():
            if op.name == "hivm.alloc" and op.result.type.scope == "ub" and "offsets" in op.attributes:
                op.attributes["offsets"] = [0] * len(op.attributes["offsets"])

    monkeypatch.setattr(PlanMemory, "run", plan_then_corrupt)
    monkeypatch.setattr(VerifyMemoryPlan, "run", lambda self, module, ctx: None)  # the static check skipped


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_a_corrupted_plan_is_caught_at_run_time(corrupted_plans, name):
    torch.manual_seed(0)
    inputs = [torch.randn(64, 256) for _ in range(3)]
    msg = buffer_tag_error_of(WORKLOADS[name], *inputs)
    assert re.match(r"buffer tag: \w+ \(pc \d+\) reads UB\[0x[0-9a-f]+, 0x[0-9a-f]+\) of core aiv\d+ as buffer '\S+', "
                    r"but (they were last written as buffer '\S+' by \w+ \(pc \d+\)|nothing wrote)", msg), msg
