"""``torch.compile(model, backend="npu")``: compile like AscendNPU-IR, run the kernels on the simulator.

Public API: :func:`compile_graph`, :class:`NpuOptions`, :data:`COUNTERS` (compile and run statistics),
:func:`profile` (per-launch records), :func:`coverage_report` (aten ops → where they run, CSV),
:func:`interpret` (the reference interpreter), :func:`register_backends`.
"""

from __future__ import annotations

from .backend import npu_backend, npu_sim_backend, register_backends
from .options import NpuOptions, OptionsError
from .profiling import KernelRecord, Profile, profile
from .stats import COUNTERS


def __getattr__(name):
    # Note: the compiler (importer, lowerings, passes) loads on first use, keeping ``import torch_npu_backend`` light.
    if name == "compile_graph":
        from .compile import compile_graph

        return compile_graph
    if name == "interpret":
        from .interpreter import interpret

        return interpret
    if name == "coverage_report":
        from .op_coverage import coverage_report

        return coverage_report
    raise AttributeError(f"module 'torch_npu_backend' has no attribute {name!r}")


AVAILABLE_BACKENDS = register_backends()

__all__ = ["compile_graph", "interpret", "coverage_report", "NpuOptions", "OptionsError", "COUNTERS", "npu_backend", "npu_sim_backend",
           "register_backends", "AVAILABLE_BACKENDS", "profile", "Profile", "KernelRecord"]  # fmt: skip
