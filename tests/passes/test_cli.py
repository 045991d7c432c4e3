"""npu-opt: prints the resulting module; errors are one line with a location and a non-zero exit, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent
NPU_OPT = ("-m", "graph_passes.opt")  # what the npu-opt console script runs

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
    return subprocess.run([sys.executable, *NPU_OPT, *args], input=stdin, capture_output=True, text=True, env=env,
                          cwd=REPO, timeout=120)  # fmt: skip


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


REDUCE = """module {
  func.func @f(%x: tensor<8x4xf32>) -> (tensor<8xf32>) {
    %0 = hfusion.reduce %x {dims = [1], kind = "sum"} : (tensor<8x4xf32>) -> tensor<8xf32>
    func.return %0 : tensor<8xf32>
  }
}
"""


@pytest.mark.parametrize(
    "data, expected",
    [
        (b"", "bad.mlir:1:1: error: expected 'module' or an op, found end of input (the input is empty)"),
        (b"// only a comment\n\n", "bad.mlir:3:1: error: expected 'module' or an op, found end of input"),
        (b"module {\n  // caf\xc3\xa9 \xff\n}\n", "bad.mlir:2:11: error: invalid UTF-8 byte 0xff"),
        (GOOD.replace("module {", 'module attributes {target = "ascend9999"} {').encode(),
         "bad.mlir:1:1: 'builtin.module' op attribute 'target': unknown target 'ascend9999'; known targets: "),
        (GOOD.replace('{fun = "mul"}', "{fun = 3}").encode(),
         "bad.mlir:4:5: 'hfusion.elemwise_binary' op attribute 'fun' must be a string, got 3"),
        (GOOD.replace(' {fun = "mul"}', "").encode(),
         "bad.mlir:4:5: 'hfusion.elemwise_binary' op requires attribute 'fun' (a string)"),
        (REDUCE.replace("dims = [1]", "dims = [5]").encode(),
         "bad.mlir:3:5: 'hfusion.reduce' op dims [5] must be sorted, unique and within input rank 2"),
    ],
    ids=["empty", "only-comments", "not-utf8", "unknown-target", "fun-not-a-string", "missing-fun",
         "dims-out-of-range"],
)
def test_bad_input_is_one_located_line(tmp_path, data, expected):
    """Every bad input, read from a file or from stdin, is one ``file:line:col`` line and exit status 1."""
    path = tmp_path / "bad.mlir"
    path.write_bytes(data)
    for proc, name in ((npu_opt(str(path), "-p", "cse"), str(path)), (_npu_opt_bytes(data), "<stdin>")):
        assert proc.returncode == 1
        assert proc.stderr.startswith(expected.replace("bad.mlir", name)), proc.stderr
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def _npu_opt_bytes(data: bytes) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, *NPU_OPT, "-", "-p", "cse"], input=data, capture_output=True, env=env,
                          cwd=REPO, timeout=120)  # fmt: skip
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def test_unknown_target_without_verification_is_the_pass_error(tmp_path):
    """With --no-verify-each a pass reading the target reports the module's location, as the verifier would."""
    path = tmp_path / "bad.mlir"
    path.write_text(REDUCE.replace("module {", 'module attributes {target = "ascend9999"} {'))
    proc = npu_opt(str(path), "--no-verify-each", "-p", "hfusion-fuse-ops,hfusion-auto-schedule")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"{path}:1:1: 'builtin.module' op attribute 'target': unknown target 'ascend9999'")


def test_unreadable_input_and_unwritable_output(good, tmp_path):
    proc = npu_opt(str(tmp_path))
    assert proc.returncode == 1 and proc.stderr == f"npu-opt: error: cannot read {tmp_path}: Is a directory\n"
    out = good / "out.mlir"  # under a file
    proc = npu_opt(str(good), "-o", str(out))
    assert proc.returncode == 1 and proc.stderr == f"npu-opt: error: cannot write {out}: Not a directory\n"


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
        "import sys; from graph_passes.opt import main; main(['--list-passes']); "
        "assert not [m for m in sys.modules if m.split('.')[0] in ('torch', 'torch_npu_backend', 'simulator')], "
        "'npu-opt imported torch, the backend or the simulator'"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
