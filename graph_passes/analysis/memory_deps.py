"""Memory dependences between HIVM pipe ops (for hivm-inject-sync).

An op's accesses are its buffer reads and writes (``op.pipe_accesses()``: the pipe of each, normally the op's own;
``hivm.embedding_gather`` reads its index on PIPE_S and moves rows on PIPE_MTE2), each resolved by
:mod:`.buffer_alias` to the copies it may touch. Dependences are between pipes of two ops (:func:`conflicts`). Two accesses conflict when at least one writes and their bytes may
overlap: with the plan's ``offsets`` (hivm-plan-memory ran) copies are byte ranges of their scope, so buffers that
share space conflict; without a plan, only the same copy conflicts. Kernel arguments (global memory) conflict with
themselves only (out-parameters are fresh tensors, never aliases of inputs).

Iterations matter for rotating copies: in iteration ``j`` of its loop an access touches ``copies[j % n]``.
:func:`conflict` asks about the same iteration of every common loop, or about iteration ``i`` of a source and
``i + d`` of a sink on one loop (``carried``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..ir.core import Operation
from ..ir.types import MemRefType
from .buffer_alias import BufferRef, Copy, resolve
from .loops import enclosing_loops

UNBOUNDED = float("inf")


@dataclass(frozen=True)
class Access:
    ref: BufferRef
    write: bool
    pipe: str
    regions: tuple  # the :func:`copy_region` of each of ``ref.copies``


def accesses(op: Operation, cache: dict | None = None) -> list[Access]:
    """The buffer accesses of a HIVM pipe op, with the pipe each runs on. ``cache`` (a dict the caller keeps while
    the IR does not change) remembers them per op: hivm-inject-sync asks about every pair of ops."""
    if cache is not None and id(op) in cache:
        return cache[id(op)]
    out = []
    for pipe, v, write in op.pipe_accesses():
        ref = resolve(v)
        out.append(Access(ref, write, pipe, tuple(copy_region(c) for c in ref.copies)))
    if cache is not None:
        cache[id(op)] = out
    return out


def copy_region(c: Copy) -> tuple[object, float, float]:
    """(space, first byte, end byte) of a copy: a scope range once planned, else the copy itself."""
    if c.alloc is None:
        return ("arg", id(c.arg)), 0, UNBOUNDED
    t = c.alloc.result.type
    size = int(t.nbytes) if isinstance(t, MemRefType) and t.is_static else UNBOUNDED
    offsets = c.alloc.attributes.get("offsets")
    if offsets is not None and isinstance(t, MemRefType) and t.scope:
        return ("scope", t.scope), offsets[c.index], offsets[c.index] + size
    return ("copy", id(c.alloc), c.index), 0, size


def _overlap(ra, rb) -> bool:
    return ra[0] == rb[0] and ra[1] < rb[2] and rb[1] < ra[2]


def _refs_overlap(a: Access, b: Access, shift: int | None) -> bool:
    """Whether ``a`` in iteration j and ``b`` in iteration j + shift may overlap (shift None: any iterations)."""
    ra, rb = a.regions, b.regions
    if shift is None or a.ref.loop is None or a.ref.loop is not b.ref.loop:
        return any(_overlap(x, y) for x in ra for y in rb)
    na, nb = len(ra), len(rb)
    period = na * nb // math.gcd(na, nb)
    return any(_overlap(ra[j % na], rb[(j + shift) % nb]) for j in range(period))


def _shift_for(ref_loop: Operation | None, src: Operation, dst: Operation, carried, distance: int) -> int | None:
    """How many iterations of ``ref_loop`` separate the two accesses, or None if unknown."""
    if ref_loop is None:
        return None
    common = [a for a, b in zip(enclosing_loops(src), enclosing_loops(dst)) if a is b]
    if not any(lp is ref_loop for lp in common):
        return None  # the loop holds only one of them: any iterations
    if carried is None:
        return 0
    if ref_loop is carried:
        return distance
    return 0 if ref_loop.is_ancestor_of(carried) else None


def conflicts(src: Operation, dst: Operation, carried: Operation | None = None, distance: int = 0,
              cache: dict | None = None) -> set:
    """The (pipe of ``src``, pipe of ``dst``) pairs on which ``dst`` must wait for ``src`` (RAW, WAR or WAW on
    overlapping bytes); empty when independent.

    ``carried`` None: both in the same iteration of every loop around both. Else ``src`` runs in iteration ``i``
    and ``dst`` in iteration ``i + distance`` of ``carried`` (same iteration of loops around ``carried``)."""
    out = set()
    for a in accesses(src, cache):
        for b in accesses(dst, cache):
            if not (a.write or b.write) or (a.pipe, b.pipe) in out:
                continue
            shift = _shift_for(a.ref.loop, src, dst, carried, distance)
            if a.ref.loop is not b.ref.loop:
                shift = None
            if _refs_overlap(a, b, shift):
                out.add((a.pipe, b.pipe))
    return out


def rotation_period(op: Operation, loop: Operation, cache: dict | None = None) -> int:
    """The least common multiple of the copy counts of ``op``'s buffers that rotate over ``loop`` (1 if none)."""
    period = 1
    for a in accesses(op, cache):
        if a.ref.loop is loop:
            n = len(a.ref.copies)
            period = period * n // math.gcd(period, n)
    return period


def carried_distances(src: Operation, dst: Operation, loop: Operation, limit: int, cache: dict | None = None) -> dict:
    """Per conflicting pipe pair, the least d in 1..limit such that ``dst`` in iteration i + d conflicts with ``src``
    in iteration i on that pair."""
    out: dict = {}
    for d in range(1, limit + 1):
        for pair in conflicts(src, dst, loop, d, cache):
            out.setdefault(pair, d)
    return out
