"""Compile options: ``torch.compile(model, backend="npu", options={...})`` → a validated, frozen :class:`NpuOptions`.

Environment variables: ``NPU_COMPILE_DEBUG=1`` or ``TORCH_COMPILE_DEBUG=1`` turn on debug dumps when no
``debug_dir`` option is given; dumps then go under ``$NPU_DEBUG_DIR`` (default ``./npu_debug``), the same root the
pass manager uses.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, fields

EXECUTE_MODES = ("interpret",)
"""How compiled graphs run. Only the reference interpreter exists so far; "simulate" comes with codegen."""

CHIPS = ("ascend910b1",)
DEFAULT_PIPELINE = "canonicalize,cse"
DEBUG_ENV_VARS = ("NPU_COMPILE_DEBUG", "TORCH_COMPILE_DEBUG")
DEFAULT_DEBUG_ROOT = "npu_debug"


class OptionsError(ValueError):
    """An unknown option or an invalid option value."""


@dataclass(frozen=True)
class NpuOptions:
    """Options of one ``torch.compile(..., backend="npu")`` call."""

    execute: str = "interpret"
    """"interpret": run the HFusion IR with the reference interpreter (the only mode for now)."""
    pipeline: str = DEFAULT_PIPELINE
    """The pass pipeline run on the imported module (PassManager syntax)."""
    debug_dir: str | None = None
    """Write per-graph dumps (FX graph, IR after every pass) under this directory."""
    verify: bool = True
    """Run the IR verifier after import and after every pass."""
    chip: str = "ascend910b1"
    """Target chip preset; recorded on the module as its ``target`` (not used by any pass yet)."""

    def __post_init__(self):
        if self.execute not in EXECUTE_MODES:
            raise OptionsError(f"option execute={self.execute!r} is not supported; valid: {', '.join(EXECUTE_MODES)}")
        if not isinstance(self.pipeline, str):
            raise OptionsError(f"option pipeline must be a string, got {self.pipeline!r}")
        if self.debug_dir is not None and not isinstance(self.debug_dir, (str, os.PathLike)):
            raise OptionsError(f"option debug_dir must be a path, got {self.debug_dir!r}")
        if not isinstance(self.verify, bool):
            raise OptionsError(f"option verify must be a bool, got {self.verify!r}")
        if self.chip not in CHIPS:
            raise OptionsError(f"option chip={self.chip!r} is not known; valid: {', '.join(CHIPS)}")

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    @classmethod
    def from_dict(cls, options: dict | None) -> "NpuOptions":
        """Validate ``options`` (unknown keys are an error listing the valid ones) and apply the environment."""
        options = dict(options or {})
        unknown = sorted(set(options) - set(cls.names()))
        if unknown:
            raise OptionsError(f"unknown npu option(s) {', '.join(unknown)}; valid options: {', '.join(cls.names())}")
        if options.get("debug_dir") is None and debug_env_enabled():
            options["debug_dir"] = os.path.abspath(os.environ.get("NPU_DEBUG_DIR", DEFAULT_DEBUG_ROOT))
        if options.get("debug_dir") is not None:
            options["debug_dir"] = os.fspath(options["debug_dir"])
        return cls(**options)

    def replace(self, **changes) -> "NpuOptions":
        return dataclasses.replace(self, **changes)


def debug_env_enabled() -> bool:
    return any(os.environ.get(v, "").strip() not in ("", "0") for v in DEBUG_ENV_VARS)
