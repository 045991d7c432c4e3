"""``torch.compile(..., mode=...)`` for the npu backends.

torch 2.13 (``torch._TorchCompileWrapper``) hands a custom backend ``mode=<name>`` as a keyword only when it is set
and not ``"default"``, and ``options=`` only when it is non-empty; ``torch.compile`` itself refuses both at once. A
mode names Inductor's tuning presets (CUDA graphs, kernel autotuning). Where a preset has a meaning here it maps to
npu options (:data:`MODE_OPTIONS`); none does yet: the npu compiler has no CUDA graphs and no autotuning (tile sizes
are chosen by a cost model, ``hfusion-auto-schedule``), so every mode compiles with the default options, saying so
in one log line.
"""

from __future__ import annotations

import logging

from .options import OptionsError

log = logging.getLogger(__name__)

MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
"""torch.compile's modes (``torch._inductor.list_mode_options``)."""

MODE_OPTIONS: dict[str, dict] = {}
"""npu options a mode stands for, where it means something here (none does yet)."""

_IGNORED_WHY = {
    "reduce-overhead": "CUDA graphs: the npu backend has none",
    "max-autotune": "kernel autotuning: tiles come from hfusion-auto-schedule's cost model",
    "max-autotune-no-cudagraphs": "kernel autotuning: tiles come from hfusion-auto-schedule's cost model",
}


def options_for_mode(mode: str | None) -> dict:
    """The npu options ``mode`` maps to (an empty dict: the defaults); an unknown mode is an OptionsError."""
    if mode is None or mode == "default":
        return {}
    if not isinstance(mode, str) or mode not in MODES:
        raise OptionsError(f"unknown torch.compile mode {mode!r} (valid: {', '.join(MODES)})")
    if mode in MODE_OPTIONS:
        log.info("torch.compile mode=%r: npu options %s", mode, MODE_OPTIONS[mode])
        return dict(MODE_OPTIONS[mode])
    log.info("torch.compile mode=%r ignored by the npu backend (%s)", mode, _IGNORED_WHY[mode])
    return {}
