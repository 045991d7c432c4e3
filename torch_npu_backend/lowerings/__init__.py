"""The lowering table: one entry per aten op overload, ``LOWERINGS[aten.add.Tensor] = fn``.

A lowering is ``fn(ctx, *args, **kwargs)`` with the aten schema's parameters (defaults as in the schema); it emits
hfusion ops through ``ctx`` (:class:`torch_npu_backend.importer.ImportContext`) and returns the node's value(s).
Files group lowerings by family; importing this package fills the table. ``tests/backend/test_ops.py`` checks that
every entry is exercised.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable

LOWERINGS: dict[object, Callable] = {}
LOWERING_HITS: Counter = Counter()
"""How often each table entry was used by an import in this process (read by the op-suite completeness test)."""


def register_lowering(*ops):
    """Decorator: ``@register_lowering(aten.add.Tensor, aten.add.Scalar)`` puts ``fn`` in the table for each op."""

    def decorate(fn):
        for op in ops:
            if op in LOWERINGS:
                raise ValueError(f"aten op {op} has two lowerings: {LOWERINGS[op].__name__} and {fn.__name__}")
            LOWERINGS[op] = fn
        return fn

    return decorate


def record_lowering(op) -> None:
    LOWERING_HITS[op] += 1


from . import (arg_reductions, bessel, creation, diagonal, elementwise, float_math, gamma, indexing, matmul, norms,  # noqa: E402,F401
               pooling, reductions, scans, scatter, shape, sorting, transcendental)

__all__ = ["LOWERINGS", "LOWERING_HITS", "register_lowering", "record_lowering"]
