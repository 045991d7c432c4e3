"""npu-opt: prints the resulting module; errors are one line with a location and a non-zero exit, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent
CLI = REPO / "torch_npu_backend" / "cli.py"

GOOD = """module {
  func.func @f(%x: tensor<8xf32>) -> (tensor<8xf32>) {
    %one = arith.constant {value = 1.0} : () -> f32
    %0 = hfusion.elemwise_binary %x, %one {fun = "mul"} : (tensor<8xf32>, f32) -> tensor<8xf32>
    func.return %0 : tensor<8xf32>
  }
}
"""


def npu_opt(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, str(CLI), *args], input=stdin, capture_output=True, text=True, env=env,
                          timeout=120)  # fmt: skip


@pytest.fixture
def good(tmp_path) -> Path:
    path = tmp_path / "good.mlir"
    path.write_text(GOOD)
    return path


def test_runs_pipeline_and_prints_module(good):
    proc = npu_opt(str(good), "-p", "canonicalize")
    assert proc.returncode == 0, proc.stderr
    assert "func.return %x : tensor<8xf32>" in proc.stdout and "arith.constant" not in proc.stdout


def test_stdin_and_pass_pipeline_alias():
    proc = npu_opt("-", "--pass-pipeline", "cse", stdin=GOOD)
    assert proc.returncode == 0, proc.stderr
    assert 'hfusion.elemwise_binary %x, %one {fun = "mul"}' in proc.stdout


def test_empty_pipeline_round_trips(good):
    proc = npu_opt(str(good))
    assert proc.returncode == 0 and proc.stdout == GOOD


def test_list_passes():
    proc = npu_opt("--list-passes")
    assert proc.returncode == 0
    assert "canonicalize" in proc.stdout and "cse" in proc.stdout


@pytest.mark.parametrize(
    "text, args, expected",
    [
        (GOOD.replace('"mul"', '"times"'), ["-p", "cse"], "bad.mlir:4:5: 'hfusion.elemwise_binary' op attribute 'fun'"),
        (GOOD.replace("%one {", "%two {"), [], "bad.mlir:4:38: error: 'hfusion.elemwise_binary' op uses undefined"),
        (GOOD, ["-p", "cse,nope"], "npu-opt: error: unknown pass 'nope'"),
        (GOOD, ["-p", "canonicalize{bogus=1}"], "npu-opt: error: pass 'canonicalize' has no option 'bogus'"),
    ],
)
def test_errors_are_one_line_nonzero_exit(tmp_path, text, args, expected):
    path = tmp_path / "bad.mlir"
    path.write_text(text)
    proc = npu_opt(str(path), *args)
    assert proc.returncode == 1
    assert proc.stderr.startswith(str(path).replace("bad.mlir", "") + expected) or proc.stderr.startswith(expected), proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_print_ir_after_all_and_debug_dir(good, tmp_path):
    proc = npu_opt(str(good), "-p", "canonicalize,cse", "--mlir-print-ir-after-all", "--debug-dir", str(tmp_path / "d"))
    assert proc.returncode == 0
    assert "// -----// IR Dump After Canonicalize (canonicalize) //----- //" in proc.stderr
    assert "// -----// IR Dump After CSE (cse) //----- //" in proc.stderr
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["000_input.mlir", "001_canonicalize.mlir", "002_cse.mlir"]


def test_no_verify_each_lets_invalid_ir_through(tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text(GOOD.replace('"mul"', '"times"'))
    assert npu_opt(str(path), "--no-verify-each").returncode == 0


def test_split_input_file_keeps_line_numbers(tmp_path):
    path = tmp_path / "split.mlir"
    path.write_text(GOOD + "// -----\n" + GOOD.replace('"mul"', '"times"'))
    proc = npu_opt(str(path), "--split-input-file")
    assert proc.returncode == 1
    assert f"{path}:12:5: 'hfusion.elemwise_binary' op" in proc.stderr  # line 4 of the second chunk (line 12 of the file)
    assert proc.stdout == GOOD


def test_cli_module_does_not_import_torch():
    code = (
        f"import sys, importlib.util; spec = importlib.util.spec_from_file_location('cli', {str(CLI)!r}); "
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); m.main(['--list-passes']); "
        "assert 'torch' not in sys.modules, 'npu-opt imported torch'"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
