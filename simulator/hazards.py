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

G = 32  # granule bytes
NP = 7  # pipes per core in the stream numbering
_NEVER = np.iinfo(np.int64).max  # a clock entry that orders every access


def granules(starts: np.ndarray, length: int) -> np.ndarray:
    lo = starts // G
    hi = (starts + (length - 1)) // G
    if len(starts) == 1:
        return slice(int(lo[0]), int(hi[0]) + 1)  # one burst: a view, much cheaper than fancy indexing
    span = int((hi - lo).max()) + 1
    if span == 1:
        return lo
    idx = lo[:, None] + np.arange(span)
    return idx[idx <= hi[:, None]]


def _arr(g):
    return np.arange(g.start, g.stop) if isinstance(g, slice) else g


class _Local:
    def __init__(self, size):
        n = size // G + 1
        self.w_pipe = np.full(n, -1, np.int8)
        self.w_seq = np.zeros(n, np.int32)
        self.w_gid = np.zeros(n, np.int32)
        self.r_seq = np.zeros((n, NP), np.int32)
        self.r_gid = np.zeros((n, NP), np.int32)


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
    def __init__(self, cores, gm_size: int, items: list):
        self.items = items  # gid -> resolved instruction
        self.local = {(c.index, s): _Local(m.size) for c in cores for s, m in c.mem.items()}
        self.gm = _Global(gm_size)
        self.cores = {c.index: c for c in cores}
        self.tags = BufferTags(cores, items)  # the buffer-tag check rides on the hazard checker (buffer_tags.py)

    def check(self, ins, stream: int, seq: int, vc: np.ndarray, accesses) -> None:
        core = ins.core
        # the core's clocks, then a sentinel no sequence number exceeds: a granule with no writer (pipe -1) reads it
        lvc = np.empty(NP + 1, np.int64)
        lvc[:NP] = vc[core.index * NP: core.index * NP + NP]
        lvc[NP] = _NEVER
        local = None
        for acc in accesses:
            g = granules(np.asarray(acc.starts), acc.length)
            if acc.scope == "GM":
                self._global(ins, stream, seq, vc, g, acc.write)
            else:
                self._local(ins, core, acc.scope, stream % NP, seq, lvc, g, acc.write)
                local = local or []
                local.append((g, acc))
        if local:
            self.tags.check(ins, core, local, self.local)

    # ---- local -------------------------------------------------------------------------------------
    def _local(self, ins, core, scope, lp, seq, lvc, g, write):
        sh = self.local[(core.index, scope)]
        bad = lvc[sh.w_pipe[g]] < sh.w_seq[g]  # lvc: the core's NP clocks and the no-writer sentinel (check)
        if bad.any():
            self._race(ins, scope, core, g, bad, sh.w_gid[g], "reads" if not write else "overwrites",
                       "writes")
        if write:
            r = sh.r_seq[g]
            badr = r > lvc[None, :NP]
            if badr.any():
                rows = badr.any(axis=1)
                col = int(np.argmax(badr[rows][0]))
                gids = sh.r_gid[g][:, col]
                self._race(ins, scope, core, g, rows & badr[:, col], gids, "overwrites", "reads")
            sh.w_pipe[g] = lp
            sh.w_seq[g] = seq
            sh.w_gid[g] = ins.gid
            sh.r_seq[g] = 0
        else:
            sh.r_seq[g, lp] = seq
            sh.r_gid[g, lp] = ins.gid

    # ---- global ------------------------------------------------------------------------------------
    def _global(self, ins, stream, seq, vc, g, write):
        sh = self.gm
        ws = sh.w_st[g]
        bad = (ws >= 0) & (vc[np.maximum(ws, 0)] < sh.w_seq[g]) & (ws != stream)
        if bad.any():
            self._race(ins, "GM", None, g, bad, sh.w_gid[g], "reads" if not write else "overwrites", "writes")
        rs = sh.r_st[g]
        if write:
            badr = (rs >= 0) & (vc[np.maximum(rs, 0)] < sh.r_seq[g]) & (rs != stream)
            if badr.any():
                self._race(ins, "GM", None, g, badr, sh.r_gid[g], "overwrites", "reads")
            sh.w_st[g] = stream
            sh.w_seq[g] = seq
            sh.w_gid[g] = ins.gid
            sh.r_st[g] = -1
        else:
            upd = (rs < 0) | (rs == stream) | (vc[np.maximum(rs, 0)] >= sh.r_seq[g])
            gu = _arr(g)[upd]
            sh.r_st[gu] = stream
            sh.r_seq[gu] = seq
            sh.r_gid[gu] = ins.gid

    def _race(self, ins, scope, core, g, bad, gids, verb, other_verb):
        g = _arr(g)
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
