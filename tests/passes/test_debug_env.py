"""The debug environment has one reader, which the pass manager and the compile options share."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph_passes.debug_env import debug_root_from_env
from graph_passes.passes.dumps import resolve_debug_dir


@pytest.mark.parametrize("npu, torch_debug, root, expected", [
    (None, None, "/x", None),
    ("0", " 0 ", "/x", None),
    ("", None, "/x", None),
    ("1", None, "/x", Path("/x")),
    (None, "1", None, Path("npu_debug")),
    ("yes", None, "", Path("npu_debug")),
])  # fmt: skip
def test_debug_root_from_env(monkeypatch, npu, torch_debug, root, expected):
    for name, value in (("NPU_COMPILE_DEBUG", npu), ("TORCH_COMPILE_DEBUG", torch_debug), ("NPU_DEBUG_DIR", root)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    assert debug_root_from_env() == expected
    dumps = resolve_debug_dir(None)
    assert (dumps is None) if expected is None else dumps.parent == expected
