"""Hazard checker: every access is checked against the happens-before order actually established.

Streams are (core, pipe). Each executed instruction gets a vector clock (numpy int32 over all streams):
its pipe's clock (program order in one pipe), joined with the setter's clock at a wait_flag / cross_wait,
all pipes' clocks at pipe_barrier(ALL), and the scalar-blocking item it was issued after. Earlier access
(stream s, seq q) happens-before a later one with clock V iff V[s] >= q.

Shadow state per 32-B granule (the DMA burst unit):
  local scopes (UB, L1, L0A/B/C of one core): last writer (pipe, seq, instruction) and, per pipe, the
      latest read since that write -> RAW, WAW and WAR are all checked exactly;
  GM: last writer and ONE read epoch (FastTrack without the read-shared vector clock): RAW and WAW are
      exact; WAR is checked against the latest read that is ordered after the previous ones, so a WAR
      race with an earlier concurrent reader can be missed (never falsely reported).
A conflict raises RaceError naming both instructions, their pipes and cores, and the region.
"""
from __future__ import annotations

import numpy as np

from .buffer_tags import BufferTags
from .errors import RaceError
from .granules import G, granule_set, granules, index, put, shadow_len, take

__all__ = ["G", "NP", "HazardChecker", "granules"]

NP = 7  # pipes per core in the stream numbering
_NEVER = np.iinfo(np.int64).max  # a clock entry that orders every access


class _Local:
    """One core's scope: last writer per granule, and per pipe that reads here the latest read since (a row per
    reading pipe, made at its first read). ``writers`` / ``readers``: the pipes that ever wrote / read here, so a
    check skips the pipes that cannot race."""

    def __init__(self, size):
        self.n = n = shadow_len(size)  # padded: strided accesses read and write it through views (granules.py)
        self.w_pipe = np.full(n, -1, np.int8)
        self.w_seq = np.zeros(n, np.int32)
        self.w_gid = np.zeros(n, np.int32)
        self.r_seq: dict[int, np.ndarray] = {}
        self.r_gid: dict[int, np.ndarray] = {}
        self.writers: list[int] = []
        self.readers: list[int] = []

    def add_reader(self, p: int) -> None:
        self.readers.append(p)
        self.r_seq[p] = np.zeros(self.n, np.int32)
        self.r_gid[p] = np.zeros(self.n, np.int32)


class _Shadows(dict):
    """(core index, scope) -> _Local, made at the scope's first access (a launch touches few of its cores' scopes)."""

    def __init__(self, cores):
        super().__init__()
        self.sizes = {(c.index, s): m.size for c in cores for s, m in c.mem.items()}

    def __missing__(self, key):
        sh = self[key] = _Local(self.sizes[key])
        return sh


class _Global:
    def __init__(self, size):
        n = size // G + 1
        self.w_st = np.full(n, -1, np.int32)
        self.w_seq = np.zeros(n, np.int32)
        self.w_gid = np.zeros(n, np.int32)
        self.r_st = np.full(n, -1, np.int32)
        self.r_seq = np.zeros(n, np.int32)
        self.r_gid = np.zeros(n, np.int32)


class HazardChecker:
    def __init__(self, cores, gm_size: int, items: list, local_cores: set | None = None):
        self.items = items  # gid -> resolved instruction
        # the cores whose local accesses (and buffer tags) are checked; None: all. The fast path (symmetry.py) checks
        # one core per class of identical streams: the others reach the same local verdict.
        self.local_cores = local_cores
        self.local = _Shadows(cores)
        self.gm = _Global(gm_size)
        self.cores = {c.index: c for c in cores}
        self.tags = BufferTags(cores, items)  # the buffer-tag check rides on the hazard checker (buffer_tags.py)
        self._cache: dict = {}  # static key -> the instruction's accesses (_accesses)
        self._gm_cache: dict = {}  # static key -> its GM accesses (_gm_accesses)

    def check(self, ins, stream: int, seq: int, vc: np.ndarray) -> None:
        core = ins.core
        if self.local_cores is not None and core.index not in self.local_cores:
            for write, g in self._gm_accesses(ins, core):
                self._global(ins, stream, seq, vc, g, write)
            return
        accs, local = self._accesses(ins, core)
        if not accs:  # a sync item: nothing to look at
            return
        # the core's clocks, then a sentinel no sequence number exceeds: a granule with no writer (pipe -1) reads it
        lvc = np.empty(NP + 1, np.int64)
        lvc[:NP] = vc[core.index * NP: core.index * NP + NP]
        lvc[NP] = _NEVER
        lp = stream % NP
        for scope, write, g in accs:
            if scope == "GM":
                self._global(ins, stream, seq, vc, g, write)
            else:
                self._local(ins, core, scope, lp, seq, lvc, g, write)
        if local:
            self.tags.check(ins, core, local, self.local)

    def _accesses(self, ins, core):
        """``(scope, write, granules)`` of each access, and ``(granules, Access)`` of the local ones (the buffer-tag
        check), cached by the instruction's static key (``skey``: its program node and resolved operands, core.py;
        None for one whose operands a bind may change)."""
        key = ins.skey
        if key is not None:
            got = self._cache.get(key)
            if got is not None:
                return got
        accs, local = [], []
        for acc in ins.accesses(core):
            g = granule_set(np.asarray(acc.starts), acc.length)
            accs.append((acc.scope, acc.write, g))
            if acc.scope != "GM":
                local.append((g, acc))
        got = (accs, local)
        if key is not None:
            self._cache[key] = got
        return got

    def _gm_accesses(self, ins, core):
        """``(write, granules)`` of the GM accesses alone (a core whose local accesses are not checked), cached by
        static key as :meth:`_accesses`."""
        key = ins.skey
        if key is not None:
            got = self._gm_cache.get(key)
            if got is not None:
                return got
        got = [(acc.write, granule_set(np.asarray(acc.starts), acc.length)) for acc in ins.accesses(core)
               if acc.scope == "GM"]
        if key is not None:
            self._gm_cache[key] = got
        return got

    # ---- local -------------------------------------------------------------------------------------
    def _local(self, ins, core, scope, lp, seq, lvc, g, write):
        sh = self.local[(core.index, scope)]
        # RAW / WAW against the last writer. A pipe never races with itself (its earlier accesses are before seq),
        # so a scope written by this pipe alone needs no look, and one written by one other pipe w only a compare
        # with the clock of w (a granule never written has seq 0).
        ws = sh.writers
        if ws and (len(ws) > 1 or ws[0] != lp):
            if len(ws) == 1:
                racy = (take(sh.w_seq, g) > lvc[ws[0]]).any()
            else:
                racy = (lvc[take(sh.w_pipe, g)] < take(sh.w_seq, g)).any()
            if racy:
                bad = lvc[take(sh.w_pipe, g)] < take(sh.w_seq, g)
                self._race(ins, scope, core, g, bad, take(sh.w_gid, g), "reads" if not write else "overwrites",
                           "writes")
        if write:
            for p in sh.readers:  # WAR against the latest reads of the other pipes
                if p != lp and (take(sh.r_seq[p], g) > lvc[p]).any():
                    self._war(ins, scope, core, g, sh, lvc)
            put(sh.w_pipe, g, lp)
            put(sh.w_seq, g, seq)
            put(sh.w_gid, g, ins.gid)
            for p in sh.readers:
                put(sh.r_seq[p], g, 0)
            if lp not in ws:
                ws.append(lp)
        else:
            if lp not in sh.readers:
                sh.add_reader(lp)
            put(sh.r_seq[lp], g, seq)
            put(sh.r_gid[lp], g, ins.gid)

    def _war(self, ins, scope, core, g, sh, lvc):
        """Raise for a write over reads it is not ordered after: the first such granule and its lowest pipe."""
        r = np.zeros((len(index(g)), NP), np.int64)
        for p in sh.readers:
            r[:, p] = take(sh.r_seq[p], g)
        badr = r > lvc[None, :NP]
        rows = badr.any(axis=1)
        col = int(np.argmax(badr[rows][0]))
        gids = take(sh.r_gid[col], g)
        self._race(ins, scope, core, g, rows & badr[:, col], gids, "overwrites", "reads")

    # ---- global ------------------------------------------------------------------------------------
    def _global(self, ins, stream, seq, vc, g, write):
        sh = self.gm
        if type(g) is not slice:
            g = index(g)  # the GM shadow is not padded for views: fancy indexing
        ws = sh.w_st[g]
        if ws.max() >= 0:  # some granule has a writer (else: data the launch has not written, nothing to order)
            bad = (ws >= 0) & (vc[np.maximum(ws, 0)] < sh.w_seq[g]) & (ws != stream)
            if bad.any():
                self._race(ins, "GM", None, g, bad, sh.w_gid[g], "reads" if not write else "overwrites", "writes")
        rs = sh.r_st[g]
        read = rs.max() >= 0  # some granule has a read epoch
        if write:
            if read:
                badr = (rs >= 0) & (vc[np.maximum(rs, 0)] < sh.r_seq[g]) & (rs != stream)
                if badr.any():
                    self._race(ins, "GM", None, g, badr, sh.r_gid[g], "overwrites", "reads")
            sh.w_st[g] = stream
            sh.w_seq[g] = seq
            sh.w_gid[g] = ins.gid
            sh.r_st[g] = -1
        else:
            gu = g
            if read:  # the epoch moves to this read where it is ordered after the recorded one
                gu = index(g)[(rs < 0) | (rs == stream) | (vc[np.maximum(rs, 0)] >= sh.r_seq[g])]
            sh.r_st[gu] = stream
            sh.r_seq[gu] = seq
            sh.r_gid[gu] = ins.gid

    def _race(self, ins, scope, core, g, bad, gids, verb, other_verb):
        g = index(g)
        idx = np.flatnonzero(bad)
        first = int(idx[0])
        other = self.items[int(gids[first])]
        sel = g[idx][gids[idx] == gids[first]]
        lo, hi = int(sel.min()) * G, (int(sel.max()) + 1) * G
        where = f"{scope}[{lo:#06x}, {hi:#06x})" + (f" of core {core.name}" if core is not None else "")
        raise RaceError(
            f"race on {where}: {ins.mnemonic} ({ins.pipe}, core {ins.core.name}, pc {ins.pc}) {verb} what "
            f"{other.mnemonic} ({other.pipe}, core {other.core.name}, pc {other.pc}) {other_verb}, with no "
            f"set_flag/wait_flag (or barrier / cross-core flag) between them")
