"""hivm-verify-memory-plan on compiled workloads: their plans pass; with every UB offset forced to 0 after
hivm-plan-memory (a corrupted plan), the verifier names the kernel and two buffers sharing bytes while live."""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F

from graph_passes.passes import PassContext, PassManager
from graph_passes.passes.hivm.verify_memory_plan import MemoryPlanError
from graph_passes.pipelines import PipelineOptions, hfusion_pipeline, lowering_pipeline
from tests.helpers import aten_graph
from torch_npu_backend.importer import import_graph


def _elementwise(x, y, z):
    return torch.sigmoid(x * y + z) * 2.0


def _softmax(x, y, z):
    return torch.softmax(x + y, dim=-1) * z


def _layer_norm(x, y, z):
    return F.layer_norm(x, (x.shape[-1],), y[0], z[0])


def _rows_and_columns(x, y, z):
    return x.sum(-1, keepdim=True) * y + z.mean(0)


WORKLOADS = {"elementwise": _elementwise, "softmax": _softmax, "layer_norm": _layer_norm,
             "reductions": _rows_and_columns}  # fmt: skip


def _planned(fn):
    torch.manual_seed(0)
    inputs = [torch.randn(64, 256) for _ in range(3)]
    module = import_graph(aten_graph(fn, inputs)).module
    opts = PipelineOptions()
    ctx = PassContext()
    PassManager.from_pipeline(hfusion_pipeline(opts)).run(module, ctx)
    PassManager.from_pipeline(lowering_pipeline(opts), stop_after="hivm-plan-memory").run(module, ctx)
    return module


def _verify(module) -> PassContext:
    return PassManager.from_pipeline("hivm-verify-memory-plan").run(module, PassContext())


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_plan_of_a_workload_passes_and_its_corruption_is_caught(name):
    module = _planned(WORKLOADS[name])
    ctx = _verify(module.clone())
    assert ctx.counters["hivm-verify-memory-plan"]["kernels-verified"] >= 1
    forced = 0
    for op in module.walk():
        if op.name == "hivm.alloc" and op.result.type.scope == "ub":
            op.attributes["offsets"] = [0] * len(op.attributes["offsets"])
            forced += 1
    assert forced >= 2, f"{name}: fewer than two UB buffers to corrupt"
    with pytest.raises(MemoryPlanError) as err:
        _verify(module)
    msg = str(err.value)
    assert "\n" not in msg
    assert re.match(r"hivm-verify-memory-plan: kernel \w+: UB buffers %\S+ .*bytes \[0, \d+\) live \[\d+, \d+\] "
                    r"and %\S+ .*bytes \[0, \d+\) live \[\d+, \d+\] share bytes while both live", msg), msg


def test_default_pipeline_runs_the_verifier_right_after_plan_memory():
    stages = lowering_pipeline(PipelineOptions()).split(",")
    assert stages[stages.index("hivm-plan-memory") + 1] == "hivm-verify-memory-plan"
