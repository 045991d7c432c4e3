"""Per-op host fallback, run side: the interpreter rule of ``host.fallback``.

The rule decodes the op's arguments (tensor operands, sizes under the run's bindings, dtypes …), calls the real aten
op on the host tensors — exactly what eager runs, so a random op draws what eager draws — and records one profile
record (``executed="host"``): the op, its FX node, the reason, the bytes its operands move device → host and its
results host → device. Note: no transfer time is charged: the sources the chip presets cite give no host-link (PCIe)
bandwidth, so the bytes are counted and reported, never converted to time.
"""

from __future__ import annotations

import functools
import time

import sympy
import torch

from graph_passes.ir.sizes import evaluate

from . import profiling as _profile
from .interpreter import InterpreterError, rule
from .stats import COUNTERS


@functools.lru_cache(maxsize=None)
def resolve(target: str):
    """``"aten.kthvalue.default"`` → ``torch.ops.aten.kthvalue.default`` (any namespace, ``ns.op.overload``)."""
    parts = target.split(".")
    if len(parts) != 3:
        raise InterpreterError(f"host.fallback: target {target!r} is not 'namespace.op.overload'")
    ns, name, overload = parts
    try:
        return getattr(getattr(getattr(torch.ops, ns), name), overload)
    except AttributeError:
        raise InterpreterError(f"host.fallback: no torch op {target}") from None


def decode(value, operands, bindings):
    """An attribute-encoded argument back to the Python value the aten op takes."""
    if isinstance(value, dict):
        if "operand" in value:
            return operands[value["operand"]]
        if "none" in value:
            return None
        if "dtype" in value or "layout" in value or "memory_format" in value:
            return getattr(torch, next(iter(value.values())))
        if "device" in value:
            return torch.device(value["device"])
        raise InterpreterError(f"host.fallback: unknown encoded argument {value!r}")
    if isinstance(value, list):
        return [decode(v, operands, bindings) for v in value]
    if isinstance(value, sympy.Basic):
        return int(evaluate(value, bindings))
    return value


def _nbytes(t) -> int:
    return t.numel() * t.element_size() if isinstance(t, torch.Tensor) else 0


@rule("host.fallback")
def _fallback(interp, op, *values):
    fn = resolve(op.attributes["target"])
    args = decode(op.attributes["args"], values, interp.bindings)
    kwargs = {k: decode(v, values, interp.bindings) for k, v in op.attributes["kwargs"].items()}
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    wall = time.perf_counter() - start
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if "outputs" in op.attributes:  # only the positions the graph reads (host.fallback's ``outputs``)
        outs = [outs[i] for i in op.attributes["outputs"]]
    outs = [t for t in outs if t is not None]
    d2h, h2d = sum(map(_nbytes, values)), sum(map(_nbytes, outs))
    COUNTERS["host_fallbacks"] += 1
    COUNTERS["host_transfer_bytes"] += d2h + h2d
    graph = interp.launcher.graph.name if interp.launcher is not None else ""
    rec = _profile.KernelRecord(graph, op.attributes["target"], _profile.HOST_FALLBACK, None, "host",
                                (op.attributes["node"],), {k: int(v) for k, v in interp.bindings.items()},
                                reason=op.attributes["reason"],
                                wall_s=wall, d2h_bytes=d2h, h2d_bytes=h2d)  # fmt: skip
    if interp.launcher is not None:
        interp.launcher.add(rec)
    else:
        _profile.record(rec)
    return outs
