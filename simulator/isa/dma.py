"""MTE2 / MTE3 data movement between GM and UB / L1: `n_burst` bursts of `burst_len` bytes.

    for i in range(n_burst):
        dst[dst + i*dst_stride : + burst_len] = src[src + i*src_stride : + burst_len]

Strides are byte distances between burst starts (0 means contiguous, = burst_len), so a 2-D tile of a
larger row-major tensor moves in one instruction. Local-side bursts must start at the scope's alignment
(32 B for UB/L1, as DataCopy requires); GM addresses may be any byte address but run slower when not
512-B aligned (see gm_model). Timing is computed by the GM model from `gm_access()`.

A register-computed GM address (Ascend C: ``GetValue`` of an index, then ``DataCopy`` from ``gm[index * row]``, the
A2 gather idiom): ``gm_reg`` names a data register (isa/scalar_mem.py) whose value, in bytes, is added to the GM-side
address (``src`` of an MTE2 copy, ``dst`` of an MTE3 one). The register is read when the scalar unit issues the
copy: after the S data instruction just before it in program order has run (phase 2), so a ``ld_ub`` of an index
followed by arithmetic on it steers the copy. The value must lie in ``[0, gm_bound)`` (the table's bytes): any other
value is an error naming the instruction and the numbers (an index out of range; the hardware would read whatever
lies there). The GM-side bounds check then runs on the final address. Timing is the same GM model.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache, partial

import numpy as np

from .base import Access, Instr
from .scalar_mem import check_dreg_name, read_dreg
from ..errors import ProgramError
from ..memory import byte_rows


@lru_cache(maxsize=4096)
def burst_starts(base: int, n: int, stride: int) -> np.ndarray:
    a = base + np.arange(n, dtype=np.int64) * stride
    a.flags.writeable = False
    return a


def _gm_rows(data, addrs, nb, write):
    """The GM bytes [a, a + nb) for a in addrs as an (n, nb) array: a strided view when the addresses step evenly
    (:func:`byte_rows`), else (reads) a gathered copy or (writes) None."""
    n = len(addrs)
    step = int(addrs[1] - addrs[0]) if n > 1 else nb
    if n == 1 or (np.diff(addrs) == step).all():
        rows = byte_rows(data, int(addrs[0]), n, step, nb, write=write)
        if rows is not None:
            return rows
    return None if write else data[addrs[:, None] + np.arange(nb)]


def _rows_col(rows):
    """Row selector that combines with a flat column index array: a slice as is, an index array as a column."""
    return rows if isinstance(rows, slice) else rows[:, None]


@dataclass
class _Copy(Instr):
    dst: object
    src: object
    burst_len: object
    n_burst: object = 1
    src_stride: object = 0
    dst_stride: object = 0
    gm_reg: str = "-"
    gm_bound: object = 0
    EXPRS = ("dst", "src", "burst_len", "n_burst", "src_stride", "dst_stride", "gm_bound")
    OPTIONAL = {"gm_reg": "-", "gm_bound": "0"}
    KIND = "dma"
    SRC = DST = ""
    PATH = ""

    def validate(self):
        if self.gm_reg != "-":
            check_dreg_name(self.gm_reg, self.MNEMONIC)

    @property
    def reads_dregs(self) -> bool:
        return self.gm_reg != "-"

    def bind(self, core, check_gm: bool = True) -> None:
        """Add the GM offset register's value (read now, as the scalar unit issues the copy) to the GM address.
        ``check_gm=False``: the caller checks the address (launch replay compares it with the recorded one, which
        this check passed on the same GM layout)."""
        v = read_dreg(core, self, self.gm_reg)
        if not 0 <= v < self.gm_bound:
            raise ProgramError(f"{self.describe()} on core {core.name}: GM offset register {self.gm_reg} = {v} B is "
                               f"outside [0, {self.gm_bound}) B: index out of range")
        if self.SRC == "GM":
            self.src += v
        else:
            self.dst += v
        if check_gm:
            n, L, s, d = self._geometry()
            core.gm.check(self.describe(), s if self.SRC == "GM" else d, L)

    def bound_addresses(self):
        return (self.src, self.dst)

    def _geometry(self):
        n, L = self.n_burst, self.burst_len
        if not (isinstance(n, int) and n >= 1 and isinstance(L, int) and L >= 1):
            raise ProgramError(f"{self.describe()}: n_burst={n} and burst_len={L} must be positive ints")
        ss = self.src_stride or L
        ds = self.dst_stride or L
        return n, L, burst_starts(self.src, n, ss), burst_starts(self.dst, n, ds)

    def check(self, core) -> None:
        n, L, s, d = self._geometry()
        if self.reads_dregs and not (isinstance(self.gm_bound, int) and self.gm_bound > 0):
            raise ProgramError(f"{self.describe()}: gm_bound={self.gm_bound} must be a positive int with gm_reg")
        for scope, starts in ((self.SRC, s), (self.DST, d)):
            if scope == "GM":
                if not self.reads_dregs:  # else checked when the register is read (bind)
                    core.gm.check(self.describe(), starts, L)
            else:
                core.local(scope, self).check(self.describe(), starts, L)

    def accesses(self, core):
        n, L, s, d = self._geometry()
        return [Access(self.SRC, False, s, L, self.tag("src")), Access(self.DST, True, d, L, self.tag("dst"))]

    def gm_access(self):
        """(starts, length, is_write) on the GM side."""
        n, L, s, d = self._geometry()
        return (d, L, True) if self.DST == "GM" else (s, L, False)

    def execute(self, core) -> None:
        n, L, s, d = self._geometry()
        src = core.gm.data if self.SRC == "GM" else core.mem[self.SRC].data
        dst = core.gm.data if self.DST == "GM" else core.mem[self.DST].data
        ss, ds = (self.src_stride or L), (self.dst_stride or L)
        if n == 1 or (ss == L and ds == L):
            dst[self.dst: self.dst + n * L] = src[self.src: self.src + n * L]
            return
        to = byte_rows(dst, self.dst, n, ds, L, write=True)
        if to is not None and byte_rows(src, self.src, n, ss, L) is not None:
            to[...] = byte_rows(src, self.src, n, ss, L)  # as_strided copies like the fancy path (rows disjoint)
            return
        off = np.arange(L)
        dst[(d[:, None] + off).reshape(-1)] = src[(s[:, None] + off).reshape(-1)]

    def fast_effect(self):
        if self.reads_dregs:  # the address is bound on every replay: execute reads it
            return None
        n, L = self.n_burst, self.burst_len
        if not (n == 1 or ((self.src_stride or L) == L and (self.dst_stride or L) == L)):
            return None
        s0, d0, nb = self.src, self.dst, n * L
        src_gm, dst_gm, src_s, dst_s = self.SRC == "GM", self.DST == "GM", self.SRC, self.DST

        def effect(core):  # execute's contiguous case
            src = core.gm.data if src_gm else core.mem[src_s].data
            dst = core.gm.data if dst_gm else core.mem[dst_s].data
            dst[d0: d0 + nb] = src[s0: s0 + nb]

        def bind(core):  # the same on these memories, their byte ranges sliced once (launch replay's compiled plan)
            src = core.gm.data if src_gm else core.mem[src_s].data
            dst = core.gm.data if dst_gm else core.mem[dst_s].data
            return partial(np.copyto, dst[d0: d0 + nb], src[s0: s0 + nb])
        effect.bind = bind
        return effect

    def batch_key(self):
        if self.reads_dregs:
            return None
        if self.fast_effect() is None:  # strided: bursts of each member must not overlap where they are written
            n, L = self.n_burst, self.burst_len
            ls, gs = ((self.dst_stride or L), (self.src_stride or L)) if self.SRC == "GM" else \
                ((self.src_stride or L), (self.dst_stride or L))
            written = ls if self.SRC == "GM" else gs
            if written < L or ls < 0 or gs < 0:
                return None
            local = self.dst if self.SRC == "GM" else self.src
            return (type(self), self.pc, "strided", n, L, ls, gs, local)
        local = self.dst if self.SRC == "GM" else self.src
        return (type(self), self.pc, self.n_burst * self.burst_len, local)

    def batch_gm_address(self) -> int:
        return self.src if self.SRC == "GM" else self.dst

    def batch_effect(self):
        """The copy for every row: to or from the same local bytes of each row, GM at each member's address.
        Contiguous: GM rows as a strided view when the addresses step evenly. Strided: execute's bursts as index
        arrays (no burst overlaps another where written: batch_key)."""
        if self.fast_effect() is None:
            return self._batch_strided()
        nb = self.n_burst * self.burst_len
        if self.SRC == "GM":
            d0 = self.dst

            def load(loc2, rows, gm, addrs):
                loc2[rows, d0:d0 + nb] = _gm_rows(gm.data, addrs, nb, False)
            return self.DST, load
        s0 = self.src

        def store(loc2, rows, gm, addrs):
            vals = loc2[rows, s0:s0 + nb]
            to = _gm_rows(gm.data, addrs, nb, True)
            if to is not None:
                to[...] = vals
                return
            for i, a in enumerate(addrs):  # rows of different cores never overlap (one batch never conflicts)
                gm.data[a:a + nb] = vals[i]
        return self.SRC, store

    def _batch_strided(self):
        n, L = self.n_burst, self.burst_len
        off = np.arange(L)
        if self.SRC == "GM":
            li = (self.dst + np.arange(n)[:, None] * (self.dst_stride or L) + off).reshape(-1)
            go = (np.arange(n)[:, None] * (self.src_stride or L) + off).reshape(-1)

            def load(loc2, rows, gm, addrs):
                loc2[_rows_col(rows), li] = gm.data[addrs[:, None] + go]
            return self.DST, load
        li = (self.src + np.arange(n)[:, None] * (self.src_stride or L) + off).reshape(-1)
        go = (np.arange(n)[:, None] * (self.dst_stride or L) + off).reshape(-1)

        def store(loc2, rows, gm, addrs):
            gm.data[addrs[:, None] + go] = loc2[_rows_col(rows), li]
        return self.SRC, store

    def path_bytes(self):
        return (self.PATH, self.n_burst * self.burst_len)


@dataclass
class CopyGmToUb(_Copy):
    """MTE2: GM -> UB."""
    MNEMONIC = "copy_gm_to_ub"
    PIPE = "MTE2"
    SRC, DST, PATH = "GM", "UB", "GM->UB"


@dataclass
class CopyGmToL1(_Copy):
    """MTE2: GM -> L1 (ND; the fractal layout is made by the MTE1 loads)."""
    MNEMONIC = "copy_gm_to_l1"
    PIPE = "MTE2"
    SRC, DST, PATH = "GM", "L1", "GM->L1"


@dataclass
class CopyUbToGm(_Copy):
    """MTE3: UB -> GM."""
    MNEMONIC = "copy_ub_to_gm"
    PIPE = "MTE3"
    SRC, DST, PATH = "UB", "GM", "UB->GM"
