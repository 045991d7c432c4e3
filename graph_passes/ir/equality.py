"""Structural equality of IR: same ops, attributes, types, value wiring, regions and printed locations.

Name hints are ignored (they only affect printing); parser-recorded :class:`SourceLoc` positions count as no loc.
"""

from __future__ import annotations

import math

import sympy

from .core import Block, Operation, Value
from .printer import SourceLoc


def _norm_attr(v):
    if isinstance(v, (list, tuple)):
        return [_norm_attr(x) for x in v]
    if isinstance(v, dict):
        return {k: _norm_attr(x) for k, x in v.items()}
    if isinstance(v, sympy.Integer):
        return int(v)
    return v


def _attr_equal(a, b) -> bool:
    a, b = _norm_attr(a), _norm_attr(b)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_attr_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_attr_equal(a[k], b[k]) for k in a)
    if type(a) is bool or type(b) is bool or isinstance(a, float) != isinstance(b, float):
        return type(a) is type(b) and a == b
    return a == b


def _shown_loc(loc):
    return None if loc is None or isinstance(loc, SourceLoc) else str(loc)


def structural_diff(a: Operation, b: Operation) -> str | None:
    """None when ``a`` and ``b`` are structurally equal, else a one-line description of the first difference."""
    return _op_diff(a, b, {})


def structurally_equal(a: Operation, b: Operation) -> bool:
    return structural_diff(a, b) is None


def _op_diff(a: Operation, b: Operation, mapping: dict[int, Value]) -> str | None:
    where = f"{a.name} at {a.loc}"
    if a.name != b.name:
        return f"op {a.name} vs {b.name}"
    if a.attributes.keys() != b.attributes.keys():
        return f"{where}: attribute names {sorted(a.attributes)} vs {sorted(b.attributes)}"
    for k in a.attributes:
        if not _attr_equal(a.attributes[k], b.attributes[k]):
            return f"{where}: attribute {k} = {a.attributes[k]!r} vs {b.attributes[k]!r}"
    if _shown_loc(a.loc) != _shown_loc(b.loc):
        return f"{where}: loc {_shown_loc(a.loc)!r} vs {_shown_loc(b.loc)!r}"
    if len(a.operands) != len(b.operands):
        return f"{where}: {len(a.operands)} vs {len(b.operands)} operands"
    for i, (x, y) in enumerate(zip(a.operands, b.operands)):
        if mapping.get(id(x)) is not y:
            return f"{where}: operand {i} refers to a different value"
    if [r.type for r in a.results] != [r.type for r in b.results]:
        return f"{where}: result types {[str(r.type) for r in a.results]} vs {[str(r.type) for r in b.results]}"
    for x, y in zip(a.results, b.results):
        mapping[id(x)] = y
    if len(a.regions) != len(b.regions):
        return f"{where}: {len(a.regions)} vs {len(b.regions)} regions"
    for ra, rb in zip(a.regions, b.regions):
        if len(ra.blocks) != len(rb.blocks):
            return f"{where}: {len(ra.blocks)} vs {len(rb.blocks)} blocks"
        for ba, bb in zip(ra.blocks, rb.blocks):
            diff = _block_diff(ba, bb, mapping, where)
            if diff:
                return diff
    return None


def _block_diff(a: Block, b: Block, mapping: dict[int, Value], where: str) -> str | None:
    if [x.type for x in a.args] != [y.type for y in b.args]:
        return f"{where}: block argument types {[str(x.type) for x in a.args]} vs {[str(y.type) for y in b.args]}"
    for x, y in zip(a.args, b.args):
        mapping[id(x)] = y
    if len(a.ops) != len(b.ops):
        return f"{where}: block has {len(a.ops)} vs {len(b.ops)} ops"
    for x, y in zip(a.ops, b.ops):
        diff = _op_diff(x, y, mapping)
        if diff:
            return diff
    return None


__all__ = ["structural_diff", "structurally_equal"]
