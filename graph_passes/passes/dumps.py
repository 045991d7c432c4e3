"""IR dumps between passes: numbered files with MLIR's ``IR Dump After`` header.

Note: the environment is read here, when a PassManager is built (the compile entry), never inside a pass.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..ir.core import Operation
from ..ir.printer import print_module
from .base import ModulePass

DEBUG_ENV_VARS = ("NPU_COMPILE_DEBUG", "TORCH_COMPILE_DEBUG")


def debug_enabled_by_env() -> bool:
    return any(os.environ.get(v, "") not in ("", "0") for v in DEBUG_ENV_VARS)


def resolve_debug_dir(debug_dir: str | os.PathLike | None) -> Path | None:
    """The dump directory: ``debug_dir`` if given, else a fresh one under $NPU_DEBUG_DIR (default ./npu_debug)
    when NPU_COMPILE_DEBUG=1 or TORCH_COMPILE_DEBUG=1, else None (no dumps)."""
    if debug_dir is not None:
        return Path(debug_dir)
    if not debug_enabled_by_env():
        return None
    base = Path(os.environ.get("NPU_DEBUG_DIR", "npu_debug"))
    return base / f"passes_{time.strftime('%Y%m%d_%H%M%S')}_{os.getpid()}_{time.monotonic_ns() % 10**6}"


def dump_header(p: ModulePass | None) -> str:
    if p is None:
        return "// -----// IR Dump Before Pipeline (input) //----- //"
    return f"// -----// IR Dump After {type(p).__name__} ({p.name}) //----- //"


def dump_text(p: ModulePass | None, module: Operation) -> str:
    return dump_header(p) + "\n" + print_module(module)


def write_dump(directory: Path, index: int, p: ModulePass | None, module: Operation) -> Path:
    """Write ``NNN_<pass-name>.mlir`` (``000_input.mlir`` for the input) and return its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{index:03d}_{p.name if p else 'input'}.mlir"
    path.write_text(dump_text(p, module))
    return path
