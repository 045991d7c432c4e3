"""Index arithmetic that torch does in i64 runs in i32 on the vector unit when ``hfusion-narrow-int-ranges`` proves
every value fits: the causal mask of attention (``ones(T, T).tril()``: an arange, its broadcasts as a row and as a
column, their difference, a compare) no longer runs as i64 scalar loops per element of each tile. Results are bit
for bit those of eager, static and dynamic; a dynamic length without an upper bound stays i64."""

from __future__ import annotations

import pytest
import torch

import torch_npu_backend

SCALAR_LOOP_MNEMONICS = {"ld_ub", "st_ub"}  # GetValue / SetValue: the per-element body of an i64 scalar loop


def _causal_softmax(att):
    t = att.shape[-1]
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    return att.masked_fill(~causal, float("-inf")).softmax(-1)


def _causal_masked(att):
    t = att.shape[-1]
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    return att.masked_fill(~causal, float("-inf"))


def _relative_buckets(x):
    """Relative positions |j - i| capped at 16 (i64 out), as f32 scores, and a clamped i64 ramp."""
    i = torch.arange(x.shape[-1])
    d = (i[None, :] - i[:, None]).abs()
    bucket = torch.where(d <= 8, d, torch.full_like(d, 16))
    return x * bucket.float(), bucket, torch.clamp(i * 3 - 5, min=0)


def _mnemonics(debug_dir) -> set[str]:
    (kernel,) = debug_dir.rglob("kernel_*.s")
    words = [line.split()[0] for line in kernel.read_text().splitlines() if line.strip()]
    return {w for w in words if not w.startswith("#")}


def test_causal_mask_kernel_computes_its_mask_on_the_vector_unit(fresh_dynamo, tmp_path):
    x = torch.randn(2, 4, 128, 128)
    compiled = torch.compile(_causal_softmax, backend="npu", options={"debug_dir": str(tmp_path)})
    with torch_npu_backend.profile(trace=False) as prof:
        got = compiled(x)
    torch.testing.assert_close(got, _causal_softmax(x), rtol=1.3e-6, atol=1e-5)
    (record,) = prof.records
    assert record.simulated and record.hazards_checked, record
    # In i64, the arange, the sub and the compare of each tile ran as scalar loops: 29.96 us (61 s to simulate).
    # In i32: vci, vsub, vcmps on the vector unit: 1.77 us.
    assert record.us < 4.0, record
    ops = _mnemonics(tmp_path)
    assert not ops & SCALAR_LOOP_MNEMONICS, sorted(ops)
    assert {"vci", "vsub", "vcmps_le"} <= ops, sorted(ops)


@pytest.mark.parametrize("bound", [4096, None], ids=["bounded", "unbounded"])
def test_dynamic_mask_narrows_only_under_a_finite_upper_bound(fresh_dynamo, tmp_path, bound):
    """A symbolic length narrows at its upper bound (dynamo's ``mark_dynamic(max=…)``); without one nothing is
    assumed: the mask stays i64 (scalar loops) and is still exact."""
    compiled = torch.compile(_causal_masked, backend="npu", options={"debug_dir": str(tmp_path)})
    for t in (24, 40):  # one compile, the length a symbol
        x = torch.randn(2, t, t)
        for dim in (1, 2):
            torch._dynamo.mark_dynamic(x, dim, **({"min": 2, "max": bound} if bound else {}))
        with torch_npu_backend.profile(trace=False) as prof:
            got = compiled(x)
        assert torch.equal(got, _causal_masked(x))
        (record,) = prof.records
        assert record.simulated, record
    assert fresh_dynamo["graphs_inference"] == 1
    scalar_loops = bool(_mnemonics(tmp_path) & SCALAR_LOOP_MNEMONICS)
    assert scalar_loops == (bound is None)


def test_relative_positions_equal_eager_in_every_dtype(fresh_dynamo, tmp_path):
    """abs (max(x, -x) in i32), where, a fill, a clamp, an i64 result (an exact cast back) and an f32 cast, bit
    for bit; the kernel has no scalar loop left."""
    x = torch.randn(2, 48, 48)
    with torch_npu_backend.profile(trace=False) as prof:
        got = torch.compile(_relative_buckets, backend="npu", options={"debug_dir": str(tmp_path)})(x)
    for g, e in zip(got, _relative_buckets(x), strict=True):
        assert g.dtype == e.dtype and torch.equal(g, e), (g, e)
    (record,) = prof.records
    assert record.simulated, record
    assert not _mnemonics(tmp_path) & SCALAR_LOOP_MNEMONICS
