"""IR dumps between passes: numbered files with MLIR's ``IR Dump After`` header.

Without a ``debug_dir``, the debug environment (:mod:`graph_passes.debug_env`) decides, when a PassManager is built.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..debug_env import debug_root_from_env
from ..ir.core import Operation
from ..ir.printer import print_module
from .base import ModulePass


def resolve_debug_dir(debug_dir: str | os.PathLike | None) -> Path | None:
    """The dump directory: ``debug_dir`` if given, else a fresh one under $NPU_DEBUG_DIR (default ./npu_debug)
    when NPU_COMPILE_DEBUG=1 or TORCH_COMPILE_DEBUG=1, else None (no dumps)."""
    if debug_dir is not None:
        return Path(debug_dir)
    base = debug_root_from_env()
    if base is None:
        return None
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
