"""C (M x N, f16) = A (M x K, f16) @ B (K x N, f16) on all cube cores, L1 / L0 / L0C ping-pong.

Output blocks of BM x BN are dealt round-robin to cores. Per block (L0C buffer c), per L1 k-step (L1
buffer l, BK1 deep), per L0 k-step (L0 buffer z, BK0 deep):

    for blk in range(block_idx, n_blocks, block_num):            # c = blocks done % 2
        M:    wait FIX->M c
        for kk in range(0, K, BK1):                               # l = k-steps done % 2
            MTE2: wait MTE1->MTE2 l; A[l] <- A[rows, kk:kk+BK1]; B[l] <- B[kk:kk+BK1, cols]; set MTE2->MTE1 l
            MTE1: wait MTE2->MTE1 l
            for k0 in range(0, BK1, BK0):                         # z = L0 steps done % 2
                MTE1: wait M->MTE1 z; L0A[z] <- A[l][:, k0:]; L0B[z] <- B[l][k0:, :]; set MTE1->M z
                M:    wait MTE1->M z; mmad L0C[c] (+)= L0A[z] @ L0B[z]; set M->MTE1 z
            MTE1: set MTE1->MTE2 l
        M:    set M->FIX c
        FIX:  wait M->FIX c; C[block] <- cast_f16(L0C[c]); set FIX->M c

M, N, K must be multiples of BM, BN, BK1 (the example keeps tails out; the compiler's codegen handles them).
"""
from __future__ import annotations

import numpy as np

from ..errors import ProgramError
from ..launch import launch
from ..memory import GlobalMemory
from ..program import ProgramBuilder


def build_gemm(BM=128, BN=128, BK1=512, BK0=128):
    """Program params: a, b, c (GM addresses), M, N, K."""
    es = 2
    a_t, b_t = BM * BK1 * es, BK1 * BN * es
    if 2 * (a_t + b_t) > 512 * 1024:
        raise ProgramError(f"gemm: L1 ping-pong needs {2 * (a_t + b_t)} B > 512 KiB")
    if 2 * BM * BK0 * es > 64 * 1024 or 2 * BK0 * BN * es > 64 * 1024 or 2 * BM * BN * 4 > 128 * 1024:
        raise ProgramError(f"gemm: L0 tiles BM={BM} BN={BN} BK0={BK0} do not ping-pong in L0A/L0B/L0C")
    L1A = (0, a_t)
    L1B = (2 * a_t, 2 * a_t + b_t)
    l0a, l0b, l0c = BM * BK0 * es, BK0 * BN * es, BM * BN * 4
    b = ProgramBuilder(f"gemm_{BM}x{BN}x{BK1}", "aic", ["a", "b", "c", "M", "N", "K"])
    R = b.reg
    for i in range(2):
        b.set_flag("MTE1", "MTE2", i)
        b.set_flag("M", "MTE1", i)
        b.set_flag("FIX", "M", i)
    nbn = b.mov("nbn", R("N") // BN)
    nblk = b.mov("nblk", (R("M") // BM) * nbn)
    cc, lc, zc = b.mov("cc", 0), b.mov("lc", 0), b.mov("zc", 0)
    with b.loop("blk", R("block_idx"), nblk, R("block_num")) as blk:
        mb = b.mov("mb", blk // nbn)
        nb = b.mov("nb", blk % nbn)
        c = b.mov("cbuf", cc % 2)
        b.mov("cc", cc + 1)
        b.wait_flag("FIX", "M", c)
        with b.loop("kk", 0, R("K"), BK1) as kk:
            l = b.mov("lbuf", lc % 2)
            b.mov("lc", lc + 1)
            la = l * a_t                       # L1 A buffer l
            lb = 2 * a_t + l * b_t             # L1 B buffer l
            b.wait_flag("MTE1", "MTE2", l)
            b.copy_gm_to_l1(la, R("a") + (mb * BM * R("K") + kk) * es, BK1 * es, n_burst=BM,
                            src_stride=R("K") * es)
            b.copy_gm_to_l1(lb, R("b") + (kk * R("N") + nb * BN) * es, BN * es, n_burst=BK1,
                            src_stride=R("N") * es)
            b.set_flag("MTE2", "MTE1", l)
            b.wait_flag("MTE2", "MTE1", l)
            with b.loop("k0", 0, BK1, BK0) as k0:
                z = b.mov("zbuf", zc % 2)
                b.mov("zc", zc + 1)
                b.wait_flag("M", "MTE1", z)
                b.load_l1_to_l0a(z * l0a, la + k0 * es, BM, BK0, BK1 * es)
                b.load_l1_to_l0b(z * l0b, lb + k0 * BN * es, BK0, BN, BN * es)
                b.set_flag("MTE1", "M", z)
                b.wait_flag("MTE1", "M", z)
                b.mmad(c * l0c, z * l0a, z * l0b, BM, BK0, BN, "f16", init=kk.eq(0) * k0.eq(0))
                b.set_flag("M", "MTE1", z)
            b.set_flag("MTE1", "MTE2", l)
        b.set_flag("M", "FIX", c)
        b.wait_flag("M", "FIX", c)
        b.fixpipe(R("c") + (mb * BM * R("N") + nb * BN) * es, c * l0c, BM, BN, R("N") * es, dst_dtype="f16")
        b.set_flag("FIX", "M", c)
    for i in range(2):
        b.wait_flag("MTE1", "MTE2", i)
        b.wait_flag("M", "MTE1", i)
        b.wait_flag("FIX", "M", i)
    return b.build()


def run_gemm(A: np.ndarray, B: np.ndarray, *, chip="ascend910b1", block_dim=24, tiles=(128, 128, 512, 128),
             check_hazards=True, trace=True):
    """Host side: place A, B (f16) in GM, launch, return (C f16, LaunchResult)."""
    M, K = A.shape
    K2, N = B.shape
    BM, BN, BK1, BK0 = tiles
    if K != K2 or M % BM or N % BN or K % BK1 or BK1 % BK0:
        raise ProgramError(f"run_gemm: shapes {A.shape} @ {B.shape} must be multiples of tiles {tiles}")
    gm = GlobalMemory()
    aa, ab, ac = gm.put(A.astype(np.float16)), gm.put(B.astype(np.float16)), gm.alloc(M * N * 2)
    prog = build_gemm(*tiles)
    res = launch(prog, chip=chip, block_dim=block_dim, args=dict(a=aa, b=ab, c=ac, M=M, N=N, K=K), gm=gm,
                 check_hazards=check_hazards, trace=trace)
    return gm.read(ac, np.float16, (M, N)), res
