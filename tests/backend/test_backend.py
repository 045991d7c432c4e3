"""The backend's plumbing: registration, options reaching the pipeline, debug dumps, counters, compile_graph."""

from __future__ import annotations

import warnings

import torch
from torch._dynamo.backends import registry

import torch_npu_backend
from tests.helpers import check_model
from torch_npu_backend import NpuOptions, register_backends
from torch_npu_backend.backend import npu_backend, npu_sim_backend


def _fn(x, y):
    return torch.relu(x * y + 1).sum(0)


def test_both_names_are_registered():
    names = torch._dynamo.list_backends()
    assert "npu" in names and "npu_sim" in names
    assert registry.lookup_backend("npu_sim") is npu_sim_backend


def test_npu_sim_compiles():
    check_model(_fn, [torch.randn(3, 4, requires_grad=True), torch.randn(4)], backward=True, backend="npu_sim")


def test_taken_npu_name_warns_and_keeps_npu_sim(monkeypatch):
    def other_backend(gm, example_inputs):
        return gm

    monkeypatch.setitem(registry._COMPILER_FNS, "npu", other_backend)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        available = register_backends()
    assert available == ["npu_sim"]
    assert any("'npu' is already taken" in str(w.message) and "npu_sim" in str(w.message) for w in caught)


def test_counters_forward_and_backward(fresh_dynamo):
    check_model(_fn, [torch.randn(3, 4, requires_grad=True), torch.randn(4)], backward=True)
    assert fresh_dynamo["backend_calls"] == 1
    assert fresh_dynamo["graphs_forward"] == 1 and fresh_dynamo["graphs_backward"] == 1
    assert fresh_dynamo["graphs_compiled"] == 2


def test_debug_dir_option_writes_dumps(fresh_dynamo, tmp_path):
    check_model(_fn, [torch.randn(3, 4, requires_grad=True), torch.randn(4)], backward=True,
                options={"debug_dir": str(tmp_path)})  # fmt: skip
    for graph in ("graph_000_forward", "graph_001_backward"):
        d = tmp_path / graph
        assert "relu" in (d / "000_fx_graph.txt").read_text() or graph.endswith("backward")
        assert (d / "000_input.mlir").read_text().startswith("// -----// IR Dump Before Pipeline")
        assert "IR Dump After" in (d / "001_hivm-normalize-matmul.mlir").read_text()
        assert "IR Dump After" in (d / "003_cse.mlir").read_text()
        assert "IR Dump After" in (d / "lowering" / "001_hfusion-auto-schedule.mlir").read_text()
        assert "// @main_fused_0" in (d / "host_plan.mlir").read_text()
        assert (d / "report.txt").exists() and '"traceEvents"' in (d / "trace.json").read_text()
    d = tmp_path / "graph_000_forward"
    kernels = sorted(d.glob("kernel_*.s"))
    assert kernels and kernels[0].read_text().startswith("# kernel @")
    assert "hivm.launch" in (d / "host_plan.mlir").read_text()
    assert "simulator" in (d / "report.txt").read_text()


def test_debug_env_var_writes_dumps(fresh_dynamo, tmp_path, monkeypatch):
    monkeypatch.setenv("NPU_COMPILE_DEBUG", "1")
    monkeypatch.setenv("NPU_DEBUG_DIR", str(tmp_path))
    check_model(_fn, [torch.randn(3, 4), torch.randn(4)])
    assert (tmp_path / "graph_000_inference" / "000_fx_graph.txt").exists()
    assert (tmp_path / "graph_000_inference" / "002_canonicalize.mlir").exists()


def test_pipeline_option_reaches_the_pass_manager(fresh_dynamo, tmp_path):
    """execute="interpret" runs ``options.pipeline`` (only) on the imported module."""
    check_model(_fn, [torch.randn(3, 4), torch.randn(4)],
                options={"execute": "interpret", "pipeline": "cse", "debug_dir": str(tmp_path)})  # fmt: skip
    dumps = sorted(p.name for p in (tmp_path / "graph_000_inference").iterdir())
    assert dumps == ["000_fx_graph.txt", "000_input.mlir", "001_cse.mlir"]


def test_compile_graph_directly():
    """compile_graph on an aten graph from make_fx: import + pipeline, then run with the interpreter."""
    from torch.fx.experimental.proxy_tensor import make_fx

    x, y = torch.randn(3, 4), torch.randn(4)
    gm = make_fx(lambda a, b: (torch.relu(a * b + 1).sum(0),), tracing_mode="fake")(x, y)
    compiled = torch_npu_backend.compile_graph(gm, [x, y], NpuOptions())
    (out,) = compiled(x, y)
    torch.testing.assert_close(out, _fn(x, y))
    assert compiled.module.lookup("main") is not None


def test_backend_callable_takes_options():
    assert npu_backend.__name__ == "npu_backend"


def test_source_checkout_registers_through_dynamo(monkeypatch):
    """Without entry points, register_backends calls torch._dynamo.register_backend for both names."""
    from torch_npu_backend import backend

    monkeypatch.setattr(backend, "_entry_points", lambda name: [])
    for name in ("npu", "npu_sim"):
        monkeypatch.setitem(registry._BACKENDS, name, registry._BACKENDS.get(name))  # restored after the test
        monkeypatch.delitem(registry._COMPILER_FNS, name, raising=False)
    assert register_backends() == ["npu_sim", "npu"]
    assert registry._COMPILER_FNS["npu"] is npu_backend and registry._COMPILER_FNS["npu_sim"] is npu_sim_backend


def test_entry_point_in_a_fresh_process():
    """backend="npu" before any import of torch_npu_backend: dynamo loads our entry point (no duplicate assert)."""
    import subprocess
    import sys

    code = "import torch; print(torch.compile(lambda x: x * 2, backend='npu')(torch.ones(2)).tolist())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("[2.0, 2.0]")
