"""Runs the ``// RUN:`` lines of every ``tests/passes/**/*.mlir`` (npu-opt | filecheck) and fails with the output.

``%s`` is the test file. ``npu-opt`` runs as ``python -m graph_passes.opt`` with the repository on PYTHONPATH: the
same ``main`` as the console script, found without installing it.
``not <command>`` succeeds when the command fails (an error test), and ``2>&1`` merges its stderr into the pipe.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
REPO = HERE.parent.parent
MLIR_FILES = sorted(HERE.rglob("*.mlir"))


def _filecheck() -> str:
    found = shutil.which("filecheck") or str(Path(sys.executable).parent / "filecheck")
    if not Path(found).exists():
        pytest.fail("filecheck is not installed (pip install filecheck); it is a test dependency")
    return found


def run_lines(path: Path) -> list[str]:
    """The RUN commands of a file (a trailing backslash continues a RUN line)."""
    commands, current = [], ""
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if not stripped.startswith("// RUN:"):
            continue
        part = stripped[len("// RUN:") :].strip()
        if part.endswith("\\"):
            current += part[:-1] + " "
            continue
        commands.append(current + part)
        current = ""
    return commands


def substitute(command: str, path: Path) -> str:
    tools = {
        "npu-opt": f"{shlex.quote(sys.executable)} -m graph_passes.opt",
        "filecheck": shlex.quote(_filecheck()),
    }
    negate = f"{shlex.quote(sys.executable)} -c 'import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]) == 0)'"
    words = []
    for stage in command.split("|"):
        argv = shlex.split(stage.replace("%s", shlex.quote(str(path))))
        prefix = ""
        if argv and argv[0] == "not":
            prefix, argv = negate + " ", argv[1:]
        if argv and argv[0] in tools:
            argv[0] = tools[argv[0]]
        else:
            argv[0:1] = [shlex.quote(argv[0])] if argv else []
        rest = [a if a == "2>&1" else shlex.quote(a) for a in argv[1:]]
        words.append(prefix + " ".join([argv[0]] + rest))
    return " | ".join(words)


@pytest.mark.parametrize("path", MLIR_FILES, ids=[str(p.relative_to(HERE)) for p in MLIR_FILES])
def test_mlir_file(path: Path):
    commands = run_lines(path)
    assert commands, f"{path} has no '// RUN:' line"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    for command in commands:
        shell = "set -o pipefail; " + substitute(command, path)
        proc = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
        if proc.returncode != 0:
            pytest.fail(f"RUN: {command}\nexit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}")


def test_runner_finds_the_pass_tests():
    names = {p.name for p in MLIR_FILES}
    assert {"canonicalize.mlir", "cse.mlir"} <= names
