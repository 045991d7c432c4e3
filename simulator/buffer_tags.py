"""Buffer-tag check: a read must find the logical buffer it names in the local bytes it reads.

An instruction may tag its local operands (UB, L1, L0A, L0B, L0C) with the logical buffer each means
(``ProgramBuilder`` ``tags=``; the code generator tags the HIVM alloc or the kernel's scratch). Per core and scope,
every 32-B granule (the granule of the hazard checker; local buffers are at least 32-B aligned, so two buffers never
share one) holds the tag of its last write:

- a tagged write sets it; an untagged write clears it to *unknown*, which any read accepts;
- a tagged read of a granule carrying another tag, or never written since the launch, raises BufferTagError naming
  both instructions and both tags. An untagged read is not checked. A vector instruction reads whole repeats and
  blocks, a partial tile's padding included (``READS_PADDING``; code generators compute padding lanes nothing
  stores), so it may read bytes never written, but not bytes of another buffer; reads of exact extents (DMA, the
  cube's loads, mmad and fixpipe, the scalar unit's ld_ub) must find bytes written as their buffer.

Tags ``a|b`` (a buffer chosen at run time among copies) match any tag they share a member with. Reuse the memory
plan declares (buffers at the same bytes at different times, in-place results, the shared scratch) is legal: the
later buffer's write re-tags the bytes before it is read.
"""
from __future__ import annotations

import numpy as np

from .errors import BufferTagError
from .granules import G, index, put, shadow_len, take

_NEVER, _UNKNOWN = -1, 0


class BufferTags:
    def __init__(self, cores, items: list):
        self.items = items  # gid -> resolved instruction
        self.sizes = {(c.index, s): m.size for c in cores for s, m in c.mem.items()}
        self.tags: dict = {}  # (core, scope) -> tag per granule, made at the first tagged access (_shadow)
        self.tagged: set = set()  # cores that issued a tagged access (before that, untagged programs cost nothing)
        self.untagged_writes: set = set()  # cores that wrote local memory untagged before their first tagged access
        self.ids: dict[str, int] = {}
        self.names = ["<unknown>"]
        self.members: list[frozenset] = [frozenset()]
        self.ok: dict[tuple[int, int], bool] = {}

    def _shadow(self, ci: int, scope: str) -> np.ndarray:
        """The tags of core ``ci``'s ``scope``, made at its first use (only once the core is tagged): never written,
        or unknown on a core whose untagged instructions wrote local memory before its first tagged access."""
        t = self.tags.get((ci, scope))
        if t is None:
            fill = _UNKNOWN if ci in self.untagged_writes else _NEVER
            t = self.tags[(ci, scope)] = np.full(shadow_len(self.sizes[(ci, scope)]), fill, np.int32)
        return t

    def _id(self, tag: str) -> int:
        i = self.ids.get(tag)
        if i is None:
            i = self.ids[tag] = len(self.names)
            self.names.append(tag)
            self.members.append(frozenset(tag.split("|")))
        return i

    def _compatible(self, a: int, b: int) -> bool:
        r = self.ok.get((a, b))
        if r is None:
            r = self.ok[(a, b)] = bool(self.members[a] & self.members[b])
        return r

    def check(self, ins, core, local_accesses, shadow) -> None:
        """``local_accesses``: (granules, access) of one instruction's local accesses, reads checked before writes
        (the writes are already in ``shadow[(core, scope)].w_gid``, the hazard checker's last writer per granule,
        which names the other writer)."""
        if core.index not in self.tagged:
            if all(acc.tag is None for _, acc in local_accesses):
                if any(acc.write for _, acc in local_accesses):
                    self.untagged_writes.add(core.index)
                return
            self.tagged.add(core.index)
        for g, acc in local_accesses:
            if acc.write or acc.tag is None:
                continue
            me = self._id(acc.tag)
            have = take(self._shadow(core.index, acc.scope), g)
            bad = (have != me) & (have != _UNKNOWN)
            if ins.READS_PADDING:  # whole repeats, a partial tile's padding included: unwritten bytes are fine
                bad &= have != _NEVER
            if bad.any():
                self._bad(ins, core, acc.scope, g, have, bad, me, shadow[(core.index, acc.scope)].w_gid)
        for g, acc in local_accesses:
            if acc.write:
                put(self._shadow(core.index, acc.scope), g, _UNKNOWN if acc.tag is None else self._id(acc.tag))

    def _bad(self, ins, core, scope, g, have, bad, me, gid):
        """Raise for the first granule whose tag does not match (``gid``: the previous writers, before this one)."""
        g = index(g)
        for k in np.flatnonzero(bad):
            t = int(have[k])
            if t != _NEVER and self._compatible(t, me):
                continue
            sel = g[have == t]
            lo, hi = int(sel.min()) * G, (int(sel.max()) + 1) * G
            where = f"{scope}[{lo:#06x}, {hi:#06x}) of core {core.name}"
            mine = f"{ins.mnemonic} (pc {ins.pc}) reads {where} as buffer '{self.names[me]}'"
            if t == _NEVER:
                raise BufferTagError(f"buffer tag: {mine}, but nothing wrote those bytes since the launch")
            w = self.items[int(gid[int(g[k])])]
            raise BufferTagError(f"buffer tag: {mine}, but they were last written as buffer '{self.names[t]}' by "
                                 f"{w.mnemonic} (pc {w.pc}): two buffers share these bytes while both are live")
