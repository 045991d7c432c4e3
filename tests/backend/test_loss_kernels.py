"""A loss that ends in a sum of everything: its per-row work runs on every core, only the final sums on one.

``F.cross_entropy`` is a log-softmax over the logits, then per row the target's log-probability (a gather), the
``ignore_index`` masks, and two sums over all rows divided. A kernel that reduces every element has one work item
(one core); hfusion-fuse-ops keeps the per-row part out of it when that is faster (docs/fusion.md), so the gather
kernel is spread over the cores and writes an ``[N]`` vector, and the one-core kernel only sums it.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import torch_npu_backend
from tests.helpers import assert_close


def _profile(fn, inputs, **compile_kw):
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="npu", **compile_kw)
    with torch.no_grad(), torch_npu_backend.profile(trace=False) as prof:
        out = compiled(*inputs)
    return out, prof.records


def _cross_entropy(x, t):
    return F.cross_entropy(x, t)


@pytest.mark.parametrize("n, c", [(512, 1000), (4096, 512)])
def test_cross_entropy_per_row_work_runs_on_every_core(n, c, fresh_dynamo):
    gen = torch.Generator().manual_seed(0)
    x, t = torch.randn(n, c, generator=gen), torch.randint(0, c, (n,), generator=gen)
    t[::7] = -100  # ignore_index rows
    out, records = _profile(_cross_entropy, [x, t])
    assert_close(out, _cross_entropy(x, t), f"cross_entropy {n}x{c}")
    assert all(r.executed == "simulator" for r in records), [(r.kernel, r.executed) for r in records]
    softmax, *loss = records
    assert softmax.source == ("_log_softmax",)
    gather = [r for r in loss if "gather" in r.source]
    final = [r for r in loss if "div" in r.source]
    assert len(loss) == 2 and len(gather) == 1 and len(final) == 1, [(r.kernel, r.source) for r in loss]
    # Before: one kernel held the gather, the masks and the sums, at block_dim 1 (512x1000: 53,503 cycles;
    # 4096x512: 327,334 cycles, 15x the log-softmax over the whole logits).
    assert gather[0].block_dim >= 16, gather[0].block_dim
    assert final[0].block_dim == 1
    assert not {"gather", "neg"} & set(final[0].source), final[0].source
    # The count of non-ignored rows is an f32 sum (hfusion-legalize-int-sums), not an i64 scalar loop over every
    # row (3,065 / 18,198 cycles for the one-core kernel with it).
    assert final[0].cycles < 3000, final[0].cycles
    assert sum(r.cycles for r in loss) < 1.25 * softmax.cycles, [(r.kernel, r.cycles) for r in records]


def test_cross_entropy_gather_converts_its_index_while_the_rows_load(fresh_dynamo):
    """The GPT block's loss (256 rows of 512): the per-row kernel's index → byte offsets conversion
    (hivm.vgather_offsets) runs before the wait for the loaded rows, beside their load, so only the data vgathers,
    the negation and the store follow the last core's rows (2,284 cycles with the conversion after the wait and
    13 vector levels; 2,164 with 9; now 1,832)."""
    gen = torch.Generator().manual_seed(4)
    x, t = torch.randn(256, 512, generator=gen), torch.randint(0, 512, (256,), generator=gen)
    out, records = _profile(lambda lp, t: F.nll_loss(lp, t), [x.log_softmax(-1), t])
    assert_close(out, F.nll_loss(x.log_softmax(-1), t), "nll_loss 256x512")
    (gather,) = [r for r in records if "gather" in r.source]
    assert gather.hazards_checked and gather.cycles < 1900, gather.cycles


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_cross_entropy_low_precision(dtype, fresh_dynamo):
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(256, 300, generator=gen).to(dtype)
    t = torch.randint(0, 300, (256,), generator=gen)
    t[3::5] = -100
    out, records = _profile(_cross_entropy, [x, t])
    assert_close(out, _cross_entropy(x, t), f"cross_entropy {dtype}")
    assert all(r.executed == "simulator" for r in records)
    assert max(r.block_dim for r in records if "gather" in r.source) > 1


def test_cross_entropy_every_row_ignored_is_nan(fresh_dynamo):
    x, t = torch.randn(64, 40), torch.full((64,), -100)
    out, _ = _profile(_cross_entropy, [x, t])
    assert torch.isnan(out) and torch.isnan(_cross_entropy(x, t))


def test_cross_entropy_dynamic_compiles_once(fresh_dynamo):
    compiled = torch.compile(_cross_entropy, backend="npu", dynamic=True)
    gen = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for n in (40, 96, 130):
            x, t = torch.randn(n, 50, generator=gen), torch.randint(0, 50, (n,), generator=gen)
            t[1::4] = -100
            assert_close(compiled(x, t), _cross_entropy(x, t), f"cross_entropy dynamic n={n}")
    assert fresh_dynamo["graphs_compiled"] == 1


def test_cross_entropy_dynamic_batch_keeps_the_gather_on_every_core(fresh_dynamo):
    """A dynamic batch dim (dynamo marks one after a second batch size) has the range [2, inf): fuse-ops weighs
    the one-core merge at the large end, so the gather kernel is multi-core at every batch."""
    gen = torch.Generator().manual_seed(3)
    compiled = torch.compile(_cross_entropy, backend="npu")
    for n in (1024, 96):
        x, t = torch.randn(n, 256, generator=gen), torch.randint(0, 256, (n,), generator=gen)
        torch._dynamo.mark_dynamic(x, 0)
        torch._dynamo.mark_dynamic(t, 0)
        with torch.no_grad(), torch_npu_backend.profile(trace=False) as prof:
            out = compiled(x, t)
        assert_close(out, _cross_entropy(x, t), f"cross_entropy dynamic batch n={n}")
        gather = [r for r in prof.records if "gather" in r.source]
        assert len(prof.records) == 3 and gather[0].block_dim > 1, [(r.kernel, r.block_dim) for r in prof.records]
        assert "div" not in gather[0].source
    assert fresh_dynamo["graphs_compiled"] == 1


def _training_step_matches_eager(n, c, seed, ignored=()):
    """Loss and gradient of the compiled cross-entropy over ``n x c`` logits equal eager's; the profile records."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, c, generator=gen, requires_grad=True)
    t = torch.randint(0, c, (n,), generator=gen)
    t[list(ignored)] = -100
    want = F.cross_entropy(x, t)
    want.backward()
    grad, x.grad = x.grad.clone(), None
    with torch_npu_backend.profile(trace=False) as prof:
        got = torch.compile(_cross_entropy, backend="npu")(x, t)
        got.backward()
    assert_close(got, want, "loss")
    assert_close(x.grad, grad, "grad")
    return prof.records


def test_cross_entropy_over_a_vocabulary_longer_than_ub(fresh_dynamo):
    """A vocabulary of 65536 f32 logits (256 KiB a row, UB holds 192 KiB), forward and backward: eager's loss and
    gradient, every kernel on the simulator. The target gather moves one element of each row (one DMA at an address
    the scalar unit computes from the target: hivm.embedding_gather along the last dim), not the rows: it read them
    whole for vgather, which fit no tile, and ran at tensor level."""
    records = _training_step_matches_eager(4, 65536, seed=4)
    assert all(r.simulated for r in records), [(r.kernel, r.reason) for r in records if not r.simulated]
    (gather,) = [r for r in records if "gather" in r.source]
    assert gather.gm_bytes < 1024, gather.gm_bytes  # 4 elements, the targets, the outputs: not 1 MiB of rows


def test_gather_of_several_elements_from_rows_longer_than_ub_is_interpreted(fresh_dynamo):
    """Two elements of each 65536-f32 row: vgather would load the rows whole and no tile fits UB, so that kernel
    stays at tensor level with the reason named (the compile does not fail), and gives eager's values."""
    gen = torch.Generator().manual_seed(6)
    x, idx = torch.randn(4, 65536, generator=gen), torch.randint(0, 65536, (4, 2), generator=gen)
    out, records = _profile(lambda x, i: torch.gather(x, 1, i) * 2, [x, idx])
    assert_close(out, torch.gather(x, 1, idx) * 2, "gather")
    (fallback,) = [r for r in records if not r.simulated]
    assert "hfusion.gather" in fallback.reason and "loaded whole into UB" in fallback.reason, fallback.reason


def test_cross_entropy_backward_has_no_row_sum(fresh_dynamo):
    """The backward sums the scattered one-hot gradient over each row (``_log_softmax_backward_data``): one term per
    row, so canonicalize computes it per row and the kernel over the logits has no reduction — elementwise on every
    core instead of a row kernel on one core per row (4x65536 f32: 33,301 cycles on 4 cores before, 3,842 after).
    An ignored row, and eager's gradient."""
    records = _training_step_matches_eager(4, 65536, seed=5, ignored=[1])
    backward = [r for r in records if "backward" in r.graph]
    assert all(r.fusion_kind in ("ANY_PB", "PURE_ELEMWISE") for r in backward), [(r.kernel, r.fusion_kind)
                                                                                  for r in backward]
    logits = max(backward, key=lambda r: r.gm_bytes)
    assert logits.block_dim == 48 and logits.cycles < 6000, (logits.block_dim, logits.cycles)


def test_gather_over_rows_just_under_a_dma_half_is_race_free(fresh_dynamo):
    """x.gather(1, t) * 2 over 64 rows of 7000 f32 (28,000 B, under a DMA's half size: vgather over rows loaded
    whole, by an i64 index): each row's vgather reads a whole repeat of byte offsets from the scratch, which now has
    that repeat's room past the last row; it ran into the next buffer, which the next work item's index load was
    writing (a race the hazard checker stopped)."""
    gen = torch.Generator().manual_seed(7)
    x, t = torch.randn(64, 7000, generator=gen), torch.randint(0, 7000, (64, 1), generator=gen)
    out, records = _profile(lambda x, t: x.gather(1, t) * 2, [x, t])
    assert_close(out, x.gather(1, t) * 2, "gather")
    assert all(r.simulated for r in records)


def test_last_dim_gather_of_rank_3_runs_on_the_simulator(fresh_dynamo):
    """x.gather(-1, t) over [2, 16, 512]: vgather walks the rows above the last dim over their valid extents (it
    was interpreted while vgather's rows and index conversion were lowered for rank 1 and 2 only)."""
    gen = torch.Generator().manual_seed(8)
    x, t = torch.randn(2, 16, 512, generator=gen), torch.randint(0, 512, (2, 16, 1), generator=gen)
    out, records = _profile(lambda x, t: x.gather(-1, t) * 2, [x, t])
    assert_close(out, x.gather(-1, t) * 2, "gather")
    assert all(r.simulated for r in records), [r.reason for r in records if not r.simulated]


def _shifted_lm_loss(logits, labels):
    """A causal LM's loss as transformers computes it: the labels padded with the ignore index and shifted by one."""
    shifted = F.pad(labels, (0, 1), value=-100)[..., 1:].reshape(-1)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), shifted, ignore_index=-100)


def test_shifted_lm_loss_runs_on_the_simulator(fresh_dynamo):
    """The count of valid labels (a sum over [N]) and the loss sum (over the picked [N, 1] values) share a kernel:
    they reduce the same dims but for a unit dim, which the kernel's reductions may differ by (it ran in the
    interpreter: "reduces dims (0, 1), another reduction of the kernel reduces (0,)")."""
    gen = torch.Generator().manual_seed(3)
    logits, labels = torch.randn(2, 16, 256, generator=gen), torch.randint(0, 256, (2, 16), generator=gen)
    out, records = _profile(_shifted_lm_loss, [logits, labels])
    assert_close(out, _shifted_lm_loss(logits, labels), "shifted LM loss")
    assert all(r.executed == "simulator" for r in records), [(r.kernel, r.source, r.reason) for r in records]
