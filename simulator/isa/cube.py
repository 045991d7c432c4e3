"""Cube side: MTE1 loads into fractal layouts, `mmad` on PIPE_M, `fixpipe` L0C -> GM/UB on PIPE_FIX.

Layouts (k0 = 32 B / element size: 16 for f16/bf16, 32 for i8, 8 for f32; M1 = ceil(m/16) etc.):

  L0A "zZ": fractal (mb, kb) at element ((mb*K1 + kb) * 16*k0), row-major 16 x k0 inside:
            L0A[((mb*K1+kb)*16 + i)*k0 + j] = A[mb*16+i, kb*k0+j]
  L0B "nZ": fractal (kb, nb) at element ((kb*N1 + nb) * k0*16), stored n-major inside (16 rows of k0):
            L0B[((kb*N1+nb)*16 + j)*k0 + i] = B[kb*k0+i, nb*16+j]
  L0C "NZ": fractal (mb, nb) at element ((nb*M1 + mb) * 256), row-major 16 x 16 inside (fp32 or int32):
            L0C[((nb*M1+mb)*16 + i)*16 + j] = C[mb*16+i, nb*16+j]

Padding elements (beyond m, k, n) are written as zeros by the loads.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Access, Instr
from ..dtypes import itemsize, np_dtype
from ..errors import ProgramError
from ..intmath import ceil_div
from ..memory import byte_rows

CUBE_IN = {"f16": "f32", "bf16": "f32", "i8": "i32", "f32": "f32"}  # input dtype -> L0C accumulator


def k0_of(dtype: str) -> int:
    return 32 // itemsize(dtype)


@dataclass
class _Load(Instr):
    PIPE = "MTE1"
    EXPRS = ()
    KIND = "op"

    def _rows(self):
        """(row starts in L1, row bytes): the ND rows read from L1."""
        es = itemsize(self.dtype)
        nrows, ncols = self._nd_shape()
        return self.src + np.arange(nrows) * self.src_ld, ncols * es

    def _frac_bytes(self):
        a, b = self._logical()
        r0, c0 = self._fractal()
        return ceil_div(a, r0) * r0 * ceil_div(b, c0) * c0 * itemsize(self.dtype)

    def check(self, core):
        if self.dtype not in CUBE_IN:
            raise ProgramError(f"{self.describe()}: dtype {self.dtype} not a cube input ({sorted(CUBE_IN)})")
        rows, nb = self._rows()
        if min(self._logical()) <= 0:
            raise ProgramError(f"{self.describe()}: sizes {self._logical()} must be positive")
        if self.src_ld < nb:
            raise ProgramError(f"{self.describe()}: src_ld={self.src_ld} B is shorter than a row of {nb} B")
        core.local("L1", self).check(self.describe(), rows, nb)
        core.local(self.DST, self).check(self.describe(), np.asarray([self.dst]), self._frac_bytes())

    def accesses(self, core):
        rows, nb = self._rows()
        return [Access("L1", False, rows, nb, self.tag("src")),
                Access(self.DST, True, np.asarray([self.dst]), self._frac_bytes(), self.tag("dst"))]

    def _read_nd(self, core):
        """The logical matrix (rows x cols of the target operand, after the optional transpose)."""
        es = itemsize(self.dtype)
        nrows, ncols = self._nd_shape()
        data = core.mem["L1"].data
        rows = byte_rows(data, self.src, nrows, self.src_ld, ncols * es)
        if rows is not None:
            mat = np.ascontiguousarray(rows).view(np_dtype(self.dtype)).reshape(nrows, ncols)
        else:
            idx = (self.src + np.arange(nrows)[:, None] * self.src_ld + np.arange(ncols * es)[None, :])
            mat = data[idx.reshape(-1)].view(np_dtype(self.dtype)).reshape(nrows, ncols)
        return mat.T if self.transpose else mat

    def cycles(self, chip):
        return ceil_div(self._frac_bytes(), self._bpc(chip))

    def path_bytes(self):
        return (self.PATH, self._frac_bytes())


@dataclass
class LoadL1ToL0A(_Load):
    """MTE1: A (m x k, ND rows of `src_ld` bytes in L1; with transpose=1 L1 holds A^T, k x m) -> L0A zZ."""
    dst: object
    src: object
    m: object
    k: object
    src_ld: object
    dtype: str = "f16"
    transpose: object = 0
    EXPRS = ("dst", "src", "m", "k", "src_ld", "transpose")
    MNEMONIC = "load_l1_to_l0a"
    DST, PATH = "L0A", "L1->L0A"

    def _logical(self):
        return self.m, self.k

    def _nd_shape(self):
        return (self.k, self.m) if self.transpose else (self.m, self.k)

    def _fractal(self):
        return 16, k0_of(self.dtype)

    def _bpc(self, chip):
        return chip.l1_to_l0a_bpc

    def execute(self, core):
        k0 = k0_of(self.dtype)
        a = self._read_nd(core)
        M1, K1 = ceil_div(self.m, 16), ceil_div(self.k, k0)
        pad = np.zeros((M1 * 16, K1 * k0), dtype=a.dtype)
        pad[: self.m, : self.k] = a
        frac = pad.reshape(M1, 16, K1, k0).transpose(0, 2, 1, 3).reshape(-1)
        es = itemsize(self.dtype)
        core.mem["L0A"].view(self.dtype)[self.dst // es: self.dst // es + frac.size] = frac


@dataclass
class LoadL1ToL0B(_Load):
    """MTE1: B (k x n, ND rows of `src_ld` bytes in L1; with transpose=1 L1 holds B^T, n x k) -> L0B nZ."""
    dst: object
    src: object
    k: object
    n: object
    src_ld: object
    dtype: str = "f16"
    transpose: object = 0
    EXPRS = ("dst", "src", "k", "n", "src_ld", "transpose")
    MNEMONIC = "load_l1_to_l0b"
    DST, PATH = "L0B", "L1->L0B"

    def _logical(self):
        return self.k, self.n

    def _nd_shape(self):
        return (self.n, self.k) if self.transpose else (self.k, self.n)

    def _fractal(self):
        return k0_of(self.dtype), 16

    def _bpc(self, chip):
        return chip.l1_to_l0b_bpc

    def execute(self, core):
        k0 = k0_of(self.dtype)
        b = self._read_nd(core)
        K1, N1 = ceil_div(self.k, k0), ceil_div(self.n, 16)
        pad = np.zeros((K1 * k0, N1 * 16), dtype=b.dtype)
        pad[: self.k, : self.n] = b
        frac = pad.reshape(K1, k0, N1, 16).transpose(0, 2, 3, 1).reshape(-1)
        es = itemsize(self.dtype)
        core.mem["L0B"].view(self.dtype)[self.dst // es: self.dst // es + frac.size] = frac


@dataclass
class Mmad(Instr):
    """PIPE_M: C (m x n, L0C NZ) = [C +] A (m x k, L0A zZ) @ B (k x n, L0B nZ).

        for m, n: C[m,n] = (0 if init else C[m,n]) + sum_k A[m,k]*B[k,n]

    f16/bf16/f32 inputs accumulate in fp32, i8 in int32 (wrapping). The k-sum is formed exactly (float64 /
    int64), rounded once to the accumulator type and added to C in the accumulator type.
    Cost: ceil(m/16)*ceil(k/k0)*ceil(n/16) fractals x cycles per fractal (+ 6 head when the cube was idle).
    """
    dst: object
    a: object
    b: object
    m: object
    k: object
    n: object
    dtype: str = "f16"
    init: object = 1
    EXPRS = ("dst", "a", "b", "m", "k", "n", "init")
    MNEMONIC = "mmad"
    PIPE = "M"

    def validate(self):
        if self.dtype not in CUBE_IN:
            raise ProgramError(f"mmad: dtype {self.dtype} not a cube input ({sorted(CUBE_IN)})")

    def _dims(self):
        k0 = k0_of(self.dtype)
        return ceil_div(self.m, 16), ceil_div(self.k, k0), ceil_div(self.n, 16), k0

    def _sizes(self):
        M1, K1, N1, k0 = self._dims()
        es, ea = itemsize(self.dtype), 4
        return M1 * K1 * 16 * k0 * es, K1 * N1 * k0 * 16 * es, M1 * N1 * 256 * ea

    def check(self, core):
        if min(self.m, self.k, self.n) <= 0:
            raise ProgramError(f"{self.describe()}: m,k,n = {self.m},{self.k},{self.n} must be positive")
        sa, sb, sc = self._sizes()
        for scope, addr, n in (("L0A", self.a, sa), ("L0B", self.b, sb), ("L0C", self.dst, sc)):
            core.local(scope, self).check(self.describe(), np.asarray([addr]), n)

    def accesses(self, core):
        sa, sb, sc = self._sizes()
        acc = [Access("L0A", False, np.asarray([self.a]), sa, self.tag("a")),
               Access("L0B", False, np.asarray([self.b]), sb, self.tag("b"))]
        if not self.init:
            acc.append(Access("L0C", False, np.asarray([self.dst]), sc, self.tag("dst")))
        return acc + [Access("L0C", True, np.asarray([self.dst]), sc, self.tag("dst"))]

    def execute(self, core):
        M1, K1, N1, k0 = self._dims()
        es = itemsize(self.dtype)
        acc = CUBE_IN[self.dtype]
        A = core.mem["L0A"].view(self.dtype)[self.a // es: self.a // es + M1 * K1 * 16 * k0]
        A = A.reshape(M1, K1, 16, k0).transpose(0, 2, 1, 3).reshape(M1 * 16, K1 * k0)
        B = core.mem["L0B"].view(self.dtype)[self.b // es: self.b // es + K1 * N1 * 16 * k0]
        B = B.reshape(K1, N1, 16, k0).transpose(0, 3, 1, 2).reshape(K1 * k0, N1 * 16)
        wide = np.int64 if acc == "i32" else np.float64
        A = np.ascontiguousarray(A[:, : self.k], dtype=wide)   # contiguous so numpy uses BLAS
        B = np.ascontiguousarray(B[: self.k, :], dtype=wide)
        prod = A @ B
        cv = core.mem["L0C"].view(acc)
        n = M1 * N1 * 256
        C = cv[self.dst // 4: self.dst // 4 + n].reshape(N1, M1, 16, 16).transpose(1, 2, 0, 3)
        C = C.reshape(M1 * 16, N1 * 16)
        if acc == "i32":
            p64 = prod if self.init else C.astype(np.int64) + prod
            res = (p64 & 0xFFFFFFFF).astype(np.uint32).view(np.int32)  # int32 wraps
        else:
            p32 = prod.astype(np.float32)
            res = p32 if self.init else (C + p32)
        out = res.reshape(M1, 16, N1, 16).transpose(2, 0, 1, 3).reshape(-1)
        cv[self.dst // 4: self.dst // 4 + n] = out

    def cycles(self, chip):
        M1, K1, N1, _ = self._dims()
        return M1 * K1 * N1 * chip.cube_fractal[self.dtype][3]

    def head(self, chip):
        return chip.cube_head

    def flops(self):
        return 2 * self.m * self.k * self.n


_FIX_CASTS = {("f32", "f32"), ("f32", "f16"), ("f32", "bf16"), ("i32", "i32"), ("i32", "f16")}  # CANN-INI


@dataclass
class _Fix(Instr):
    PIPE = "FIX"

    def validate(self):
        if (self.src_dtype, self.dst_dtype) not in _FIX_CASTS:
            raise ProgramError(f"{self.mnemonic}: {self.src_dtype}->{self.dst_dtype} not a FixPipe conversion "
                               f"(CANN-INI: {sorted(_FIX_CASTS)})")

    def _M1(self):
        return ceil_div(self.src_m or self.m, 16)

    def _rows(self):
        return self.dst + np.arange(self.m) * self.dst_ld, self.n * itemsize(self.dst_dtype)

    def _src_bytes(self):
        return self._M1() * ceil_div(self.n, 16) * 256 * 4

    def check(self, core):
        if min(self.m, self.n) <= 0:
            raise ProgramError(f"{self.describe()}: m,n = {self.m},{self.n} must be positive")
        if self._M1() * 16 < self.m:
            raise ProgramError(f"{self.describe()}: src_m={self.src_m} < m={self.m}")
        rows, nb = self._rows()
        core.local("L0C", self).check(self.describe(), np.asarray([self.src]), self._src_bytes())
        if self.DST == "GM":
            core.gm.check(self.describe(), rows, nb)
        else:
            core.local("UB", self).check(self.describe(), rows, nb)

    def accesses(self, core):
        rows, nb = self._rows()
        return [Access("L0C", False, np.asarray([self.src]), self._src_bytes(), self.tag("src")),
                Access(self.DST, True, rows, nb, self.tag("dst"))]

    def gm_access(self):
        rows, nb = self._rows()
        return rows, nb, True

    def _values(self, core):
        M1, N1 = self._M1(), ceil_div(self.n, 16)
        cv = core.mem["L0C"].view(self.src_dtype)
        C = cv[self.src // 4: self.src // 4 + M1 * N1 * 256].reshape(N1, M1, 16, 16).transpose(1, 2, 0, 3)
        C = C.reshape(M1 * 16, N1 * 16)[: self.m, : self.n]
        if self.relu:
            C = np.maximum(C, 0)
        return C.astype(np_dtype(self.dst_dtype))  # f32->f16/bf16 round to nearest even

    def execute(self, core):
        vals = self._values(core)
        rows, nb = self._rows()
        dst = core.gm.data if self.DST == "GM" else core.mem["UB"].data
        raw = np.ascontiguousarray(vals).view(np.uint8).reshape(self.m, nb)
        to = byte_rows(dst, self.dst, self.m, self.dst_ld, nb, write=True)
        if to is not None:
            to[...] = raw
            return
        dst[(rows[:, None] + np.arange(nb)[None, :]).reshape(-1)] = raw.reshape(-1)

    def path_bytes(self):
        return (self.PATH, self.m * self.n * itemsize(self.dst_dtype))


@dataclass
class Fixpipe(_Fix):
    """PIPE_FIX: L0C (NZ, `src_m` rows of fractals, default m) -> GM ND rows of `dst_ld` bytes:

        for i < m, j < n: GM[dst + i*dst_ld + j*es] = cast(relu?(C[i, j]))
    Cost: max(bytes / l0c_to_gm_bpc, GM port/curve) via the GM model.
    """
    dst: object
    src: object
    m: object
    n: object
    dst_ld: object
    src_m: object = 0
    src_dtype: str = "f32"
    dst_dtype: str = "f16"
    relu: object = 0
    EXPRS = ("dst", "src", "m", "n", "dst_ld", "src_m", "relu")
    MNEMONIC = "fixpipe"
    KIND = "dma"
    DST, PATH = "GM", "L0C->GM"


@dataclass
class FixpipeToUb(_Fix):
    """PIPE_FIX: L0C -> UB (coupled chips only), same conversion as `fixpipe`; cost bytes / l0c_to_ub."""
    dst: object
    src: object
    m: object
    n: object
    dst_ld: object
    src_m: object = 0
    src_dtype: str = "f32"
    dst_dtype: str = "f16"
    relu: object = 0
    EXPRS = ("dst", "src", "m", "n", "dst_ld", "src_m", "relu")
    MNEMONIC = "fixpipe_ub"
    DST, PATH = "UB", "L0C->UB"

    def cycles(self, chip):
        return ceil_div(self._src_bytes(), chip.l0c_to_ub_bpc)
