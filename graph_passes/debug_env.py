"""The debug environment, read in one place: ``NPU_COMPILE_DEBUG=1`` or ``TORCH_COMPILE_DEBUG=1`` turn dumps on,
``$NPU_DEBUG_DIR`` (default ``./npu_debug``) is where they go.

Callers read it when they are configured (building a pass manager, validating compile options), never inside a pass.
"""

from __future__ import annotations

import os
from pathlib import Path

DEBUG_ENV_VARS = ("NPU_COMPILE_DEBUG", "TORCH_COMPILE_DEBUG")
DEBUG_DIR_ENV_VAR = "NPU_DEBUG_DIR"
DEFAULT_DEBUG_ROOT = "npu_debug"


def debug_root_from_env() -> Path | None:
    """``$NPU_DEBUG_DIR`` (default ``npu_debug``) when a debug variable is set to anything but empty or ``0``;
    None when dumps are off."""
    if not any(os.environ.get(v, "").strip() not in ("", "0") for v in DEBUG_ENV_VARS):
        return None
    return Path(os.environ.get(DEBUG_DIR_ENV_VAR) or DEFAULT_DEBUG_ROOT)
