"""The compile cache on disk: a second process (or a second compile) of the same graph skips the passes and codegen
and runs identically; other options, shapes, dtypes, chips or project sources miss; a corrupted, truncated or stale
entry is rejected (one log line), recompiled and rewritten; ``NPU_CACHE_DIR=0``/empty and ``cache=False`` turn it
off; ``debug_dir`` bypasses it; an unwritable directory is a warning.

The suite runs with the cache off (tests/conftest.py); every test here turns it on with a temporary directory.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
import subprocess
import sys
import textwrap

import pytest
import torch

import torch_npu_backend
from graph_passes.passes import PassManager
from torch_npu_backend import OptionsError, compile_cache
from torch_npu_backend.compile_cache import CACHE_DIR_ENV_VAR, SUFFIX

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def f(x):
    return torch.softmax(x, -1) * 2 + torch.relu(x).sum(-1, keepdim=True)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV_VAR, str(d))
    monkeypatch.setattr(compile_cache, "_reported", set())  # "logged once" starts afresh per test
    return d


def _run(x, **options):
    """A fresh dynamo compile of ``f`` and one run: (output, per-launch cycles, the counters)."""
    torch._dynamo.reset()
    torch_npu_backend.COUNTERS.clear()
    compiled = torch.compile(f, backend="npu", options=options or None)
    with torch_npu_backend.profile(trace=False) as prof:
        out = compiled(x)
    torch._dynamo.reset()
    return out, [r.cycles for r in prof.simulated()], dict(torch_npu_backend.COUNTERS)


def _entries(d):
    return sorted(d.glob(f"*{SUFFIX}")) if d.exists() else []


X = torch.randn(8, 64, generator=torch.Generator().manual_seed(0))

_CHILD = textwrap.dedent("""
    import json, sys, torch
    import codegen, torch_npu_backend
    from graph_passes.passes import PassManager
    calls = {"passes": 0, "codegen": 0}
    run, compile_kernel = PassManager.run, codegen.compile_kernel
    def counted_run(self, *a, **kw):
        calls["passes"] += 1
        return run(self, *a, **kw)
    def counted_compile_kernel(*a, **kw):
        calls["codegen"] += 1
        return compile_kernel(*a, **kw)
    PassManager.run, codegen.compile_kernel = counted_run, counted_compile_kernel
    def f(x):
        return torch.softmax(x, -1) * 2 + torch.relu(x).sum(-1, keepdim=True)
    x = torch.randn(8, 64, generator=torch.Generator().manual_seed(0))
    with torch_npu_backend.profile(trace=False) as prof:
        out = torch.compile(f, backend="npu")(x)
    c = torch_npu_backend.COUNTERS
    print(json.dumps({**calls, "hits": c["cache_hits"], "misses": c["cache_misses"], "writes": c["cache_writes"],
                      "out": out.flatten().tolist(), "cycles": [r.cycles for r in prof.simulated()]}))
""")


def test_second_process_skips_passes_and_codegen(cache_dir, tmp_path):
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    env = {**os.environ, CACHE_DIR_ENV_VAR: str(cache_dir), "PYTHONPATH": ROOT}
    runs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    assert cold["misses"] == 1 and cold["writes"] == 1 and cold["hits"] == 0, cold
    assert cold["passes"] > 0 and cold["codegen"] > 0, cold
    assert warm["hits"] == 1 and warm["misses"] == 0 and warm["writes"] == 0, warm
    assert warm["passes"] == 0 and warm["codegen"] == 0, warm
    assert warm["out"] == cold["out"] and warm["cycles"] == cold["cycles"] and cold["cycles"]
    assert len(_entries(cache_dir)) == 1


def test_hit_skips_the_passes_in_process(cache_dir, monkeypatch):
    out, cycles, c = _run(X)
    assert c["cache_misses"] == 1 and c["cache_writes"] == 1 and c["kernels_compiled"] > 0, c

    def no_passes(self, *a, **kw):
        raise AssertionError("a pass ran on a cache hit")

    monkeypatch.setattr(PassManager, "run", no_passes)
    out2, cycles2, c2 = _run(X)
    assert c2["cache_hits"] == 1 and c2.get("kernels_compiled", 0) == 0 and c2["kernels_simulated"] > 0, c2
    assert torch.equal(out, out2) and cycles == cycles2
    torch.testing.assert_close(out2, f(X))


def test_dynamic_shapes_hit(cache_dir):
    """A symbolic graph's entry serves every size: its shape symbols and size predicates come from the import."""
    runs = []
    for _ in range(2):
        torch._dynamo.reset()
        torch_npu_backend.COUNTERS.clear()
        compiled = torch.compile(f, backend="npu", dynamic=True)
        outs = [compiled(X[:n]) for n in (8, 5)]
        runs.append((outs, dict(torch_npu_backend.COUNTERS)))
    (cold, c), (warm, c2) = runs
    assert c["cache_writes"] == c["graphs_compiled"] and c2["cache_hits"] == c2["graphs_compiled"], (c, c2)
    for a, b, n in zip(cold, warm, (8, 5)):
        assert torch.equal(a, b)
        torch.testing.assert_close(b, f(X[:n]))
    torch._dynamo.reset()


def test_interpret_mode_is_cached(cache_dir):
    out, _, c = _run(X, execute="interpret")
    out2, _, c2 = _run(X, execute="interpret")
    assert (c["cache_writes"], c2["cache_hits"]) == (1, 1) and torch.equal(out, out2)


@pytest.mark.parametrize("change", ["multi_buffer", "chip", "shape", "dtype", "project"])
def test_a_change_that_matters_misses(cache_dir, monkeypatch, change):
    _run(X)
    x, options = X, {}
    if change == "multi_buffer":
        options = {"multi_buffer": 1}
    elif change == "chip":
        options = {"chip": "ascend910b4"}
    elif change == "shape":
        x = X[:, :32].contiguous()
    elif change == "dtype":
        x = X.to(torch.float16)
    else:  # an edited compiler never reads an old entry
        monkeypatch.setattr(compile_cache, "project_version", lambda: "an edited project")
    _, _, c = _run(x, **options)
    assert c.get("cache_hits", 0) == 0 and c["cache_misses"] == 1 and c["cache_writes"] == 1, c
    assert len(_entries(cache_dir)) == 2


def test_runtime_only_options_hit(cache_dir):
    """check_hazards and fixed_costs are read when a graph runs: the entry serves them, the run honours them (as a
    compile without the cache does)."""
    _, cycles, _ = _run(X)
    runtime = {"check_hazards": False, "fixed_costs": False}
    _, cycles2, c = _run(X, **runtime)
    assert c["cache_hits"] == 1, c
    _, uncached, _ = _run(X, cache=False, **runtime)
    assert cycles2 == uncached and cycles2 != cycles


def test_source_hash_follows_the_sources(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    before = compile_cache.source_hash(tmp_path, ["pkg"])
    (tmp_path / "pkg" / "a.py").write_text("x = 2\n")
    assert compile_cache.source_hash(tmp_path, ["pkg"]) != before
    assert len(compile_cache.project_version()) == 64


def _flip(data):
    return data[:-100] + bytes([data[-100] ^ 0xFF]) + data[-99:]


def _stale(data):
    return data.replace(b'"format": 1', b'"format": 0', 1)


def _wrong_payload(data):
    key = json.loads(data.split(b"\n", 2)[1])["key"]
    return compile_cache.encode_entry({"not": "a compiled graph"}, key)


def _bad_pickle(data):
    """A whole entry (magic, header, size and checksum right) whose payload is not a pickle."""
    key = json.loads(data.split(b"\n", 2)[1])["key"]
    body = b"\x80\x05not a pickle"
    header = {"format": compile_cache.FORMAT_VERSION, "key": key, "size": len(body),
              "sha256": hashlib.sha256(body).hexdigest()}  # fmt: skip
    return compile_cache.MAGIC + json.dumps(header).encode() + b"\n" + body


@pytest.mark.parametrize("corrupt, reason", [
    (_flip, "checksum mismatch"),
    (lambda d: d[: len(d) // 2], "truncated"),
    (_stale, "stale: entry format 0"),
    (lambda d: b"", "empty file"),
    (lambda d: b"garbage" + d, "no magic line"),
    (lambda d: d[:30], "truncated header"),
    (_wrong_payload, "payload is not a compiled graph"),
    (_bad_pickle, "payload does not load"),
])  # fmt: skip
def test_corrupted_entry_is_rejected_and_rewritten(cache_dir, caplog, corrupt, reason):
    out, cycles, _ = _run(X)
    [entry] = _entries(cache_dir)
    entry.write_bytes(corrupt(entry.read_bytes()))
    with caplog.at_level(logging.WARNING, logger=compile_cache.__name__):
        out2, cycles2, c = _run(X)
        _, _, c3 = _run(X)  # the entry rewritten: a hit, no second line
    lines = [r.getMessage() for r in caplog.records if r.name == compile_cache.__name__]
    assert len(lines) == 1 and entry.name in lines[0] and reason in lines[0], lines
    assert c["cache_rejected"] == 1 and c.get("cache_hits", 0) == 0 and c["cache_writes"] == 1, c
    assert torch.equal(out, out2) and cycles == cycles2
    assert c3["cache_hits"] == 1, c3


def test_entry_under_another_key_is_stale(cache_dir, caplog):
    _run(X)
    [a] = _entries(cache_dir)
    _run(X, multi_buffer=1)
    [b] = [e for e in _entries(cache_dir) if e != a]
    b.write_bytes(a.read_bytes())  # an entry copied over another: its header names the other key
    with caplog.at_level(logging.WARNING, logger=compile_cache.__name__):
        _, _, c1 = _run(X, multi_buffer=1)
        _, _, c2 = _run(X)
    assert (c1.get("cache_hits", 0), c1.get("cache_rejected", 0), c1["cache_writes"]) == (0, 1, 1), c1
    assert (c2.get("cache_hits", 0), c2.get("cache_rejected", 0)) == (1, 0), c2
    assert any("stale: written under key" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("value", ["0", ""])
def test_off_by_env(tmp_path, monkeypatch, value):
    monkeypatch.setenv(CACHE_DIR_ENV_VAR, value)
    _, _, c = _run(X)
    assert not any(k.startswith("cache_") for k in c), c
    assert compile_cache.cache_dir_from_env() is None


def test_default_location(monkeypatch, tmp_path):
    monkeypatch.delenv(CACHE_DIR_ENV_VAR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert compile_cache.cache_dir_from_env() == tmp_path / "npu"


def test_off_by_option(cache_dir):
    _, _, c = _run(X, cache=False)
    assert not any(k.startswith("cache_") for k in c) and not _entries(cache_dir), c
    with pytest.raises(OptionsError, match="option cache must be a bool"):
        torch_npu_backend.NpuOptions.from_dict({"cache": "yes"})


def test_debug_dir_bypasses(cache_dir, tmp_path, caplog):
    _run(X)
    with caplog.at_level(logging.INFO, logger=compile_cache.__name__):
        _, _, c = _run(X, debug_dir=str(tmp_path / "dumps"))
    assert c["cache_bypassed"] == 1 and c.get("cache_hits", 0) == 0 and c["kernels_compiled"] > 0, c
    assert any("bypassed" in r.getMessage() for r in caplog.records)
    assert list((tmp_path / "dumps").rglob("*.mlir"))  # every pass dumped


def test_unwritable_dir_warns_and_compiles(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    monkeypatch.setenv(CACHE_DIR_ENV_VAR, str(blocker / "cache"))
    monkeypatch.setattr(compile_cache, "_reported", set())
    with pytest.warns(UserWarning, match="cannot write to .*a_file/cache"):
        out, _, c = _run(X)
    assert c["cache_write_errors"] == 1 and c["cache_misses"] == 1, c
    torch.testing.assert_close(out, f(X))


def test_a_rejected_entry_is_logged_once(cache_dir, caplog):
    """An entry read twice while still corrupt (its rewrite failed, say) is counted twice, logged once."""
    cache = compile_cache.CompileCache(cache_dir)
    key = "ab" * 32
    assert cache.store(key, {"x": 1}) and cache.load(key) == {"x": 1}
    cache.path(key).write_bytes(cache.path(key).read_bytes()[:-1])
    torch_npu_backend.COUNTERS.clear()
    with caplog.at_level(logging.WARNING, logger=compile_cache.__name__):
        assert cache.load(key) is None and cache.load(key) is None
    assert torch_npu_backend.COUNTERS["cache_rejected"] == 2
    assert [r.getMessage() for r in caplog.records] == [
        f"npu compile cache: entry {cache.path(key)} rejected: truncated: payload of "
        f"{len(pickle.dumps({'x': 1}, protocol=pickle.HIGHEST_PROTOCOL)) - 1} bytes, header says "
        f"{len(pickle.dumps({'x': 1}, protocol=pickle.HIGHEST_PROTOCOL))}; recompiling"]
    assert not list(cache_dir.glob("*.tmp"))  # the writes left no temporary file


def test_a_hit_restores_the_compiled_graph(cache_dir):
    """compile_graph twice: the hit's host module, tensor-level module, kernels (assembly), pass report and ladder are
    those the miss computed."""
    from torch.fx.experimental.proxy_tensor import make_fx

    from graph_passes.ir.printer import print_module

    gm = make_fx(lambda x: (f(x),), tracing_mode="fake")(X)
    miss = torch_npu_backend.compile_graph(gm, [X])
    hit = torch_npu_backend.compile_graph(gm, [X])
    assert (miss.stats["cache"], hit.stats["cache"]) == ("miss", "hit")
    assert print_module(hit.module) == print_module(miss.module)
    assert print_module(hit.tensor_module) == print_module(miss.tensor_module)
    assert hit.kernels.keys() == miss.kernels.keys() and hit.simulated_kernels() == miss.simulated_kernels()
    for name, info in miss.kernels.items():
        assert hit.kernels[name].compiled.assembly() == info.compiled.assembly()
    assert hit.pass_context.report() == miss.pass_context.report() and hit.ladder == miss.ladder
    assert torch.equal(hit(X)[0], miss(X)[0])
