"""``kernel_key``: what :func:`~codegen.kernel.compile_kernel` reads of a kernel, as text, so that kernels that would
compile to the same program share one :class:`~codegen.kernel.CompiledKernel`.

A model's repeated layers outline identical kernels (GPT-2 small: twelve copies of each layer's kernels, named
``main_fused_4``, ``main_fused_22`` …). Their programs, tiling functions and argument layouts are equal, so one
compile serves them all, and with ``simulate="once"`` a later layer's launch with the same launch key replays the
first one's recorded simulation instead of simulating it again (the same cycles: a launch's timing depends on its
program and launch arguments, not on which layer it belongs to).

The key is the kernel's printed text (its AIV part's too, for the AIC part of a mix kernel) with the kernel's own
names replaced by placeholders, its values numbered in order of appearance instead of their name hints (the FX
placeholders' names: ``%arg2_1`` in one layer, ``%arg5_1`` in the next; codegen uses them only to name registers
and parameters, which the host passes by position) but for the tiling parameters (codegen binds those by name to
the ``tiling`` entries), the locations (the FX nodes it came from) left out, and the module's attributes (the target
chip and the shape symbols' ranges, which codegen reads): two kernels of one module with equal keys differ in
nothing codegen sees.
"""

from __future__ import annotations

import re

from graph_passes.ir.core import Operation
from graph_passes.ir.printer import format_attr_dict, print_op

_LOC = re.compile(r' loc\("(?:[^"\\]|\\.)*"\)')
_VALUE = re.compile(r"%([\w$.]+)")


def kernel_key(kernel: Operation, module: Operation) -> str:
    """The text of ``kernel`` (and of its ``mix_peer`` AIV part) without names and locations, after the module's
    attributes: equal keys compile to equal programs."""
    parts = [kernel]
    peer = module.lookup(kernel.attributes.get("mix_peer", "")) if kernel.attributes.get("mix_peer") else None
    if peer is not None:
        parts.append(peer)
    text = format_attr_dict(module.attributes, unit_true=True) + "\n" + "".join(_numbered(p) for p in parts)
    for i, p in sorted(enumerate(parts), key=lambda ip: -len(ip[1].sym_name)):  # longest first: a name's prefix
        text = re.sub(rf"(?<![\w$.]){re.escape(p.sym_name)}(?![\w$.])", f"<kernel {i}>", text)
    return _LOC.sub("", text)


def _numbered(func: Operation) -> str:
    """``func`` printed, its values ``%<0>``, ``%<1>`` … in order of appearance (definitions come first), its
    tiling parameters under their own names."""
    keep = set(func.attributes.get("tiling") or ())
    names: dict[str, str] = {}

    def number(m: re.Match) -> str:
        return m.group(0) if m.group(1) in keep else names.setdefault(m.group(1), f"%<{len(names)}>")

    return _VALUE.sub(number, print_op(func))
