"""GELU's elementwise kernels of a training step (the MLP of examples/gpt_block.py) end to end: eager's results,
and cycle bounds that hold what shortened them — erf's two polynomials side by side (codegen/math_ops.py), a work
item's first vector op waiting only for its own loads (hivm-inject-sync, the load stage in first-use order), and
a tile split that gives every core one work item (graph_passes/schedule/balance.py)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

import torch_npu_backend
from tests.helpers import assert_close


def _one_kernel(fn, *args):
    compiled = torch.compile(fn, backend="npu")
    with torch_npu_backend.profile(trace=False) as prof:
        got = compiled(*args)
    (rec,) = prof.records
    assert rec.simulated and rec.hazards_checked
    return got, rec


def test_gelu_backward_starts_on_its_first_load(fresh_dynamo):
    """gelu_backward over 256x512 f32, one tile of 2,736 elements per core: x (the first ops' operand) is loaded
    first and the vector pipe starts on it while the gradient (read by the last op only) still loads. 4,981 cycles
    before (both loads, gradient first, behind one flag; erf's 25 dependent steps), 4,159 now."""
    g, x = (torch.randn(256, 512, generator=torch.Generator().manual_seed(s)) for s in (0, 1))
    got, rec = _one_kernel(torch.ops.aten.gelu_backward, g, x)
    assert_close(got, torch.ops.aten.gelu_backward(g, x), "gelu_backward")
    assert rec.fusion_kind == "PURE_ELEMWISE" and rec.block_dim == 48
    assert rec.cycles < 4_400, rec.cycles


def test_gelu_of_a_bias_add_one_work_item_per_core(fresh_dynamo):
    """gelu(x + b) over 256x512 f32 (a linear layer's bias and GELU): tiles of 11x256, one per core, where rows of
    6 (ceil(256 / 48)) cut in two columns gave 38 cores two work items of ~21 dependent vector steps each (4,735
    cycles, 4,295 with erf's shorter chain); 3,971 now."""
    x = torch.randn(256, 512, generator=torch.Generator().manual_seed(0))
    b = torch.randn(512, generator=torch.Generator().manual_seed(1))
    got, rec = _one_kernel(lambda x, b: F.gelu(x + b), x, b)
    assert_close(got, F.gelu(x + b), "gelu(x + b)")
    assert rec.fusion_kind == "ANY_PB" and rec.block_dim == 48
    assert rec.cycles < 4_100, rec.cycles


def test_gelu_backward_of_the_mlp_one_work_item_per_core(fresh_dynamo):
    """The GPT block's GELU backward: the gradient a matmul's [256, 512] viewed as [2, 128, 512], x the saved
    [2, 128, 512] activation. UB holds 8 rows of 512 with erf's temporaries; the split estimate counts the fill as
    the load the first op waits for (x), so tiles of 6 rows, one per core (44 cores), beat 86 tiles of 3 rows,
    two per core, each paying the ~26 dependent vector steps: 4,679 → 4,367 cycles."""
    g = torch.randn(256, 512, generator=torch.Generator().manual_seed(0))
    x = torch.randn(2, 128, 512, generator=torch.Generator().manual_seed(1))

    def fn(g, x):
        return torch.ops.aten.gelu_backward(g.view(2, 128, 512), x)

    got, rec = _one_kernel(fn, g, x)
    assert_close(got, fn(g, x), "gelu_backward")
    assert rec.fusion_kind == "PURE_ELEMWISE" and rec.block_dim == 44
    assert rec.cycles < 4_500, rec.cycles
