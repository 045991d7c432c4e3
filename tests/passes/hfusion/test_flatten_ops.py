"""hfusion-flatten-ops after hfusion-fuse-ops: collapsed ranks, counters, verified IR and unchanged values."""

from __future__ import annotations

import pytest

from . import cases
from .helpers import assert_same_values, run

PIPELINE = "hfusion-fuse-ops,hfusion-flatten-ops"


def kernel_ranks(module) -> dict[str, int]:
    """The loop rank of each kernel: the largest rank among results of its compute (non-reshape) ops."""
    return {
        f.sym_name: max(r.type.rank for op in f.body.ops if op.name.startswith("hfusion.") and op.name != "hfusion.reshape"
                        for r in op.results)
        for f in module.functions
        if f.attributes.get("kernel")
    }  # fmt: skip


@pytest.mark.parametrize(
    "case, ranks, collapsed",
    [
        ("ELEMWISE", {"main_fused_0": 1}, 2),  # s0x4x128 → (512*s0)
        ("SOFTMAX", {"main_fused_0": 2}, 1),  # s0x8x32 → (8*s0)x32
        ("LAYER_NORM", {"main_fused_0": 2}, 1),  # s0x16x64 → (16*s0)x64
        ("BIAS_RELU", {"main_fused_0": 2}, 0),  # s0x96 with a dim-0 broadcast: nothing to collapse
    ],
)
def test_collapsed(case, ranks, collapsed):
    module, ctx = run(getattr(cases, case), PIPELINE)
    assert ctx.counters["hfusion-flatten-ops"]["dims-collapsed"] == collapsed
    got = kernel_ranks(module)
    for name, rank in ranks.items():
        assert got[name] == rank, got


def test_interface_unchanged():
    before, _ = run(cases.LAYER_NORM, "hfusion-fuse-ops")
    after, _ = run(cases.LAYER_NORM, PIPELINE)
    sig = lambda m: [(f.sym_name, str(f.function_type)) for f in m.functions]  # noqa: E731
    assert sig(before) == sig(after)


@pytest.mark.parametrize("case", ["ELEMWISE", "SOFTMAX", "LAYER_NORM", "BIAS_RELU", "MATMUL_CHAIN"])
def test_same_values(case):
    assert_same_values(getattr(cases, case), PIPELINE, {"s0": 5})
