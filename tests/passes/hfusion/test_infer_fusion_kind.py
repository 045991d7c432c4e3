"""hfusion-infer-fusion-kind and the pattern tables behind it."""

from __future__ import annotations

from graph_passes.analysis.fusion_kind import FusionKind, OpPattern, is_fusible

from . import cases
from .helpers import run


def test_enum_matches_ascendnpu_ir():
    assert [k.name for k in FusionKind] == [
        "PURE_ELEMWISE", "ANY_PB", "LAST_AXIS_PBR", "ANY_PBR", "SINGLE_CUBE", "SHALLOW_CV", "SHALLOW_VV",
        "MIX_CV", "MIX_C2", "UNKNOWN",
    ]  # fmt: skip
    assert FusionKind.PURE_ELEMWISE == 1 and FusionKind.UNKNOWN == 10


def test_tables():
    P = OpPattern
    assert is_fusible(FusionKind.LAST_AXIS_PBR, P.ELEMENTWISE, P.LAST_AXIS_REDUCE)
    assert not is_fusible(FusionKind.LAST_AXIS_PBR, P.LAST_AXIS_REDUCE, P.LAST_AXIS_REDUCE)
    assert not is_fusible(FusionKind.PURE_ELEMWISE, P.ELEMENTWISE, P.OTHER_BROADCAST)
    assert is_fusible(FusionKind.ANY_PB, P.OTHER_BROADCAST, P.ELEMENTWISE)
    assert not any(is_fusible(k, P.MATMUL, P.ELEMENTWISE) for k in FusionKind if k <= FusionKind.ANY_PBR)


def test_whole_functions_and_counters():
    for case, kind in [("ELEMWISE", "PURE_ELEMWISE"), ("SOFTMAX", "LAST_AXIS_PBR"), ("LAYER_NORM", "LAST_AXIS_PBR"),
                       ("BIAS_RELU", "ANY_PB"), ("MATMUL_CHAIN", "UNKNOWN")]:  # fmt: skip
        module, ctx = run(getattr(cases, case), "hfusion-infer-fusion-kind")
        assert module.lookup("main").attributes["fusion_kind"] == kind, case
        assert ctx.counters["hfusion-infer-fusion-kind"] == {kind.lower().replace("_", "-"): 1}


def test_kernels_after_fusion_keep_their_kind():
    module, ctx = run(cases.MATMUL_CHAIN, "hfusion-fuse-ops,hfusion-infer-fusion-kind")
    counters = ctx.counters["hfusion-infer-fusion-kind"]
    assert counters == {"pure-elemwise": 2, "single-cube": 1}
    assert "fusion_kind" not in module.lookup("main").attributes
