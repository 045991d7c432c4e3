"""Vector kernels end to end on the simulator: semantic preservation stage by stage, fusion counters, the hazard
checker on a kernel with a sync removed, and multi-buffering's effect on simulated cycles."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import torch_npu_backend
from simulator.errors import RaceError
from tests.codegen.helpers import drop_one_sync, run_kernel
from tests.helpers import aten_graph, check_model, check_stages
from torch_npu_backend import NpuOptions, compile_graph
from torch_npu_backend.runtime import to_numpy


def _mlp_block(x, w, b, g):
    h = F.gelu(F.linear(x, w, b), approximate="tanh")
    return F.layer_norm(h + x, (x.shape[-1],), g)


_STAGE_CASES = {
    "elementwise": (lambda x, y, z: x * y + z, lambda: [torch.randn(48, 128) for _ in range(3)]),
    "softmax": (lambda x: torch.softmax(x, -1), lambda: [torch.randn(48, 200)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (96,), w, b), lambda: [torch.randn(40, 96), torch.randn(96),
                                                                         torch.randn(96)]),
    "mlp_block": (_mlp_block, lambda: [torch.randn(16, 64), torch.randn(64, 64) / 8, torch.randn(64), torch.randn(64)]),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(_STAGE_CASES))
def test_every_stage_preserves_semantics(name):
    fn, make = _STAGE_CASES[name]
    stages = check_stages(fn, make())
    assert stages[0] == "import" and "hfusion-fuse-ops" in stages and stages[-1] == "codegen (simulator)"
    assert any(s.startswith("hfusion-auto-schedule") for s in stages)


def test_check_stages_names_the_first_differing_stage(monkeypatch):
    """A broken interpreter rule for ``exp`` shows up at the first stage (import), by name."""
    from torch_npu_backend import interpreter

    monkeypatch.setitem(interpreter.UNARY, "exp", lambda x: torch.exp(x) + 1)
    with pytest.raises(AssertionError, match="stage 'import' changed the result"):
        check_stages(lambda x: torch.exp(x), [torch.randn(8, 32)])


_FUSION_CASES = {
    "fma": (lambda x, y, z: x * y + z, lambda: [torch.randn(32, 256) for _ in range(3)], "PURE_ELEMWISE"),
    "softmax": (lambda x: torch.softmax(x, -1), lambda: [torch.randn(32, 256)], "LAST_AXIS_PBR"),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (256,), w, b),
                   lambda: [torch.randn(32, 256), torch.randn(256), torch.randn(256)], "LAST_AXIS_PBR"),
    "bias_relu": (lambda x, b: torch.relu(x + b), lambda: [torch.randn(32, 256), torch.randn(256)], "ANY_PB"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(_FUSION_CASES))
def test_one_simulated_kernel(name, fresh_dynamo):
    fn, make, kind = _FUSION_CASES[name]
    with torch_npu_backend.profile() as prof:
        check_model(fn, make())
    assert len(prof.records) == 1, prof.table()
    (r,) = prof.records
    assert r.simulated and r.fusion_kind == kind and r.hazards_checked, prof.table()
    assert r.cycles > 0 and r.gm_bytes > 0 and 0 < r.efficiency <= 1 and r.source
    assert fresh_dynamo["kernels_simulated"] == 1 and fresh_dynamo["kernels_interpreted"] == 0


def test_pass_counters_of_one_compile():
    x, y, z = (torch.randn(32, 256) for _ in range(3))
    graph = compile_graph(aten_graph(lambda a, b, c: a * b + c, [x, y, z]), [x, y, z])
    ctx = graph.pass_context
    assert ctx.counter("hfusion-fuse-ops", "kernels-outlined") == 1
    assert ctx.counter("convert-to-hivm", "kernels-converted") == 1
    assert ctx.counter("hivm-inject-sync", "set-flags") > 0
    assert graph.simulated_kernels() == ["main_fused_0"] and not graph.interpreted_kernels()


def test_profile_api(tmp_path):
    fn = torch.compile(lambda x: torch.softmax(x * 2, -1), backend="npu")
    x = torch.randn(16, 128)
    with torch_npu_backend.profile() as prof:
        fn(x)
        fn(x)
    r = prof.records[0]
    assert len(prof.records) == 2 and r.launch_us == pytest.approx(10905 / 1850)  # presets.py launch_cycles
    assert prof.total_us(launch=False) == pytest.approx(2 * r.us)
    assert prof.total_us() == pytest.approx(2 * (r.us + r.launch_us))
    table = prof.table()
    assert "main_fused_0" in table and "LAST_AXIS_PBR" in table and "simulator" in table
    assert "launch us" in table and f"{r.launch_us:,.2f}" in table and "us launch overhead" in table
    prof.write_trace(tmp_path / "t.json")
    import json

    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    assert any(e.get("ph") == "X" for e in events)
    names = {e["args"]["name"] for e in events if e.get("name") == "process_name"}
    assert any(n.startswith("main_fused_0#0") for n in names) and any(n.startswith("main_fused_0#1") for n in names)
    launches = sorted(e["ts"] for e in events if e.get("ph") == "X" and e["name"] == "launch")
    assert launches == pytest.approx([0.0, r.launch_us + r.us])  # each launch's slice, back to back


def test_fixed_costs_off_reproduces_the_former_timing():
    x = torch.randn(16, 128)
    recs = {}
    for fixed in (True, False):
        torch._dynamo.reset()
        fn = torch.compile(lambda x: x * 2 + 1, backend="npu", options={"fixed_costs": fixed})
        with torch_npu_backend.profile() as prof:
            fn(x)
        (recs[fixed],) = prof.records
    assert recs[False].launch_us == 0 and recs[True].launch_us > 0
    assert recs[True].cycles != recs[False].cycles  # the per-DMA fixed costs changed the body too


def test_interpreted_kernels_are_reported(fresh_dynamo):
    """A gather along dim 0 is not lowered to HIVM: its kernel runs in the interpreter, counted and in the profile
    with why."""
    with torch_npu_backend.profile() as prof:
        check_model(lambda x, i: torch.gather(x, 0, i), [torch.randn(4, 8), torch.randint(0, 4, (3, 8))])
    (r,) = prof.interpreted()
    assert "hfusion.gather" in r.reason and fresh_dynamo["kernels_interpreted"] == 1
    assert "hfusion.gather" in prof.table()


def test_hazard_check_off_is_reported():
    with torch_npu_backend.profile() as prof:
        check_model(lambda x: x * 2 + 1, [torch.randn(8, 128)], options={"check_hazards": False})
    assert prof.records[0].hazards_checked is False and "hazard check OFF" in prof.table()


def test_dropped_sync_is_a_race():
    x = torch.randn(64, 1024)
    graph = compile_graph(aten_graph(lambda a: torch.exp(a) * 2, [x]), [x], NpuOptions(max_tile_elems=2048))
    ck = graph.kernels["main_fused_0"].compiled
    args = [to_numpy(x).reshape(-1)]
    run_kernel(ck, args, {})  # race-free as compiled
    broken = drop_one_sync(ck, graph.module)
    with pytest.raises(RaceError, match="race"):
        run_kernel(broken, args, {})


def _cycles(options, x):
    with torch_npu_backend.profile(trace=False) as prof:
        check_model(lambda a: a * 3 + 1, [x], options=options)
    (r,) = prof.records
    return r.cycles


def test_multi_buffering_hides_dma_latency():
    """A bandwidth-bound kernel with several tiles per core: double buffering overlaps MTE2/V/MTE3."""
    x = torch.randn(256 * 1024)
    double = _cycles({"max_tile_elems": 1024}, x)
    single = _cycles({"max_tile_elems": 1024, "multi_buffer": 1}, x)
    assert single > double * 1.1, (single, double)
