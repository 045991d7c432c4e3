"""C (M x N, f16) = A (M x K, f16) @ B (K x N, f16) on all cube cores, with L1 / L0 / L0C ping-pong.

Output blocks of BM x BN are dealt round-robin to cores. A block's accumulator is two BM x BN/2 halves in
L0C (h = 0, 1), so the fixpipe of half 0 overlaps the last mmads of half 1 and the next block's first
mmad on half 0 waits only for that half's fixpipe. Per block, per L1 k-step (L1 buffer l, BK1 deep), per
L0 k-step (L0 buffer z, BK0 deep):

    for blk in range(block_idx, n_blocks, block_num):
        for kk in range(0, K, BK1):                                  # l = L1 steps done % 2
            MTE2: wait MTE1->MTE2 l; A1[l] <- A[rows, kk:+BK1]; B1[l] <- B[kk:+BK1, cols]; set MTE2->MTE1 l
            MTE1: wait MTE2->MTE1 l
            for k0 in range(0, BK1, BK0):                            # z = L0 steps done % 2
                MTE1: wait M->MTE1 z; L0A[z] <- A1[l][:, k0:]; L0B[z][h] <- B1[l][k0:, half h]; set MTE1->M z
                M:    wait MTE1->M z
                for h in 0, 1:
                    M: (first step of the block) wait FIX->M h
                    M: mmad L0C[h] (+)= L0A[z] @ L0B[z][h]
                M:    set M->MTE1 z
            MTE1: set MTE1->MTE2 l
        for h in 0, 1:
            M: set M->FIX h;  FIX: wait M->FIX h; C[block, half h] <- cast_f16(L0C[h]); set FIX->M h

M, N, K must be multiples of BM, BN, BK1 (the example keeps tails out; the compiler's codegen handles them).
"""
from __future__ import annotations

import numpy as np

from ..errors import ProgramError
from ..launch import launch
from ..memory import GlobalMemory
from ..program import ProgramBuilder


def build_gemm(BM=128, BN=256, BK1=256, BK0=64):
    """Program params: a, b, c (GM addresses), M, N, K."""
    es = 2
    BH = BN // 2
    a_t, b_t = BM * BK1 * es, BK1 * BN * es
    if BN % 32 or 2 * (a_t + b_t) > 512 * 1024:
        raise ProgramError(f"gemm: BN={BN} must be a multiple of 32 and L1 ping-pong needs {2 * (a_t + b_t)} B "
                           f"<= 512 KiB")
    l0a, l0b, l0c_h = BM * BK0 * es, BK0 * BN * es, BM * BH * 4
    if 2 * l0a > 64 * 1024 or 2 * l0b > 64 * 1024 or 2 * l0c_h > 128 * 1024:
        raise ProgramError(f"gemm: L0 tiles BM={BM} BN={BN} BK0={BK0} do not ping-pong in L0A/L0B/L0C")
    b = ProgramBuilder(f"gemm_{BM}x{BN}x{BK1}", "aic", ["a", "b", "c", "M", "N", "K"])
    R = b.reg
    for i in range(2):
        b.set_flag("MTE1", "MTE2", i)
        b.set_flag("M", "MTE1", i)
        b.set_flag("FIX", "M", i)
    nbn = b.mov("nbn", R("N") // BN)
    nblk = b.mov("nblk", (R("M") // BM) * nbn)
    lc, zc = b.mov("lc", 0), b.mov("zc", 0)
    with b.loop("blk", R("block_idx"), nblk, R("block_num")) as blk:
        mb = b.mov("mb", blk // nbn)
        nb = b.mov("nb", blk % nbn)
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
                first = b.mov("first", kk.eq(0) * k0.eq(0))
                b.wait_flag("M", "MTE1", z)
                b.load_l1_to_l0a(z * l0a, la + k0 * es, BM, BK0, BK1 * es)
                for h in range(2):
                    b.load_l1_to_l0b(z * l0b + h * (l0b // 2), lb + (k0 * BN + h * BH) * es, BK0, BH, BN * es)
                b.set_flag("MTE1", "M", z)
                b.wait_flag("MTE1", "M", z)
                for h in range(2):
                    with b.if_(first):
                        b.wait_flag("FIX", "M", h)
                    b.mmad(h * l0c_h, z * l0a, z * l0b + h * (l0b // 2), BM, BK0, BH, "f16", init=first)
                b.set_flag("M", "MTE1", z)
            b.set_flag("MTE1", "MTE2", l)
        for h in range(2):
            b.set_flag("M", "FIX", h)
            b.wait_flag("M", "FIX", h)
            b.fixpipe(R("c") + (mb * BM * R("N") + nb * BN + h * BH) * es, h * l0c_h, BM, BH, R("N") * es,
                      dst_dtype="f16")
            b.set_flag("FIX", "M", h)
    for i in range(2):
        b.wait_flag("MTE1", "MTE2", i)
        b.wait_flag("M", "MTE1", i)
        b.wait_flag("FIX", "M", i)
    return b.build()


def run_gemm(A: np.ndarray, B: np.ndarray, *, chip="ascend910b1", block_dim=24, tiles=(128, 256, 256, 64),
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
