"""C (M x N, f16) = A (M x K, f16) @ B (K x N, f16) on all cube cores, with L1 / L0 / L0C ping-pong.

Work split. The output is cut into BM x BN blocks. The first `(blocks // block_num) * block_num` of them
are dealt round-robin to the cores (every core gets the same number); the few blocks left over (the
tail, fewer than one per core) are cut into 32-column strips and every core takes an equal share of
strips (one or two narrower tiles). On 910B1 at 2048^3 with 128 x 256 blocks that is 5 whole blocks per
core plus 64 or 96 columns of the last 128-row band, instead of 6 or 5 blocks (89% at best).

One output tile (rows r0 .. r0+BM, columns c0 .. c0+w, w <= BN a multiple of 32): its accumulator is two
BM x w/2 halves in L0C (h = 0, 1). Per L1 k-step (L1 buffer l, BK1 deep) the cube first does all of half
0 and then all of half 1, so in the last k-step the fixpipe of half 0 runs while the cube works on half
1, and the fixpipe of half 1 runs while the next tile's first k-step works on half 0: the cube never waits
for FixPipe (40 B/cycle would otherwise stall it about 10% of the time). L0A is reloaded for each half
(MTE1 has the time: 32 + 64 cycles of loads per 256-cycle mmad).

    for each tile (r0, c0, w):
        for kk in range(0, K, BK1):                                  # l = L1 steps done % 2
            MTE2: wait MTE1->MTE2 l; A1[l] <- A[r0:+BM, kk:+BK1]; B1[l] <- B[kk:+BK1, c0:+w]; set MTE2->MTE1 l
            MTE1: wait MTE2->MTE1 l
            for h in 0, 1:
                for k0 in range(0, BK1, BK0):                        # z = L0 steps done % 2
                    MTE1: wait M->MTE1 z; L0A[z] <- A1[l][:, k0:+BK0]; L0B[z] <- B1[l][k0:+BK0, half h]
                          set MTE1->M z
                    M:    wait MTE1->M z; (first step of the tile) wait FIX->M h
                          mmad L0C[h] (+)= L0A[z] @ L0B[z]; set M->MTE1 z
                if last kk: M: set M->FIX h;  FIX: wait M->FIX h; C[tile, half h] <- f16(L0C[h]); set FIX->M h
            MTE1: set MTE1->MTE2 l

M, N, K must be multiples of BM, BN, BK1 (the example keeps tails out; the compiler's codegen handles them).
"""
from __future__ import annotations

import numpy as np

from ..errors import ProgramError
from ..expr import emax, emin
from ..launch import launch
from ..memory import GlobalMemory
from ..program import ProgramBuilder


def build_gemm(BM=128, BN=256, BK1=256, BK0=128, balance=True):
    """Program params: a, b, c (GM addresses), M, N, K. `balance=False` deals whole blocks round-robin
    (no tail split), for comparison."""
    es = 2
    a_t, b_t = BM * BK1 * es, BK1 * BN * es
    if BN % 32 or BM % 16 or BK1 % BK0 or BK0 % 16:
        raise ProgramError(f"gemm: BN={BN} must be a multiple of 32, BM and BK0 of 16, BK1 of BK0")
    if 2 * (a_t + b_t) > 512 * 1024:
        raise ProgramError(f"gemm: L1 ping-pong needs {2 * (a_t + b_t)} B > 512 KiB")
    l0a, l0b, l0c_h = BM * BK0 * es, BK0 * (BN // 2) * es, BM * (BN // 2) * 4
    if 2 * l0a > 64 * 1024 or 2 * l0b > 64 * 1024 or 2 * l0c_h > 128 * 1024:
        raise ProgramError(f"gemm: L0 tiles BM={BM} BN={BN} BK0={BK0} do not ping-pong in L0A/L0B/L0C")
    b = ProgramBuilder(f"gemm_{BM}x{BN}x{BK1}", "aic", ["a", "b", "c", "M", "N", "K"])
    R = b.reg
    K, N = R("K"), R("N")
    for i in range(2):
        b.set_flag("MTE1", "MTE2", i)
        b.set_flag("M", "MTE1", i)
        b.set_flag("FIX", "M", i)
    lc, zc = b.mov("lc", 0), b.mov("zc", 0)

    def tile(r0, c0, w):
        """C[r0:+BM, c0:+w] = A[r0:+BM, :] @ B[:, c0:+w]; w a multiple of 32, at most BN."""
        wh = b.mov("wh", w // 2)
        with b.loop("kk", 0, K, BK1) as kk:
            l = b.mov("lbuf", lc % 2)
            b.mov("lc", lc + 1)
            la = l * a_t                       # L1 A buffer l: BM rows of BK1
            lb = 2 * a_t + l * b_t             # L1 B buffer l: BK1 rows of w, row pitch BN
            b.wait_flag("MTE1", "MTE2", l)
            b.copy_gm_to_l1(la, R("a") + (r0 * K + kk) * es, BK1 * es, n_burst=BM, src_stride=K * es)
            b.copy_gm_to_l1(lb, R("b") + (kk * N + c0) * es, wh * (2 * es), n_burst=BK1, src_stride=N * es,
                            dst_stride=BN * es)
            b.set_flag("MTE2", "MTE1", l)
            b.wait_flag("MTE2", "MTE1", l)
            last = b.mov("last", kk.eq(K - BK1))
            for h in range(2):
                with b.loop("k0", 0, BK1, BK0) as k0:
                    z = b.mov("zbuf", zc % 2)
                    b.mov("zc", zc + 1)
                    first = b.mov("first", kk.eq(0) * k0.eq(0))
                    b.wait_flag("M", "MTE1", z)
                    b.load_l1_to_l0a(z * l0a, la + k0 * es, BM, BK0, BK1 * es)
                    b.load_l1_to_l0b(z * l0b, lb + (k0 * BN + h * wh) * es, BK0, wh, BN * es)
                    b.set_flag("MTE1", "M", z)
                    b.wait_flag("MTE1", "M", z)
                    with b.if_(first):
                        b.wait_flag("FIX", "M", h)
                    b.mmad(h * l0c_h, z * l0a, z * l0b, BM, BK0, wh, "f16", init=first)
                    b.set_flag("M", "MTE1", z)
                with b.if_(last):
                    b.set_flag("M", "FIX", h)
                    b.wait_flag("M", "FIX", h)
                    b.fixpipe(R("c") + (r0 * N + c0 + h * wh) * es, h * l0c_h, BM, wh, N * es, dst_dtype="f16")
                    b.set_flag("FIX", "M", h)
            b.set_flag("MTE1", "MTE2", l)

    nbn = b.mov("nbn", N // BN)
    nblk = b.mov("nblk", (R("M") // BM) * nbn)
    P = R("block_num")
    nmain = b.mov("nmain", (nblk // P) * P if balance else nblk)
    with b.loop("blk", R("block_idx"), nmain, P) as blk:
        tile(blk // nbn * BM, blk % nbn * BN, BN)
    if balance:
        # tail: strips of 32 columns, unit u of the tail lies in block u // U at column (u % U) * 32
        U = BN // 32
        tu = b.mov("tu", (nblk - nmain) * U)
        s0 = b.mov("s0", nmain * U + R("block_idx") * tu // P)
        s1 = b.mov("s1", nmain * U + (R("block_idx") + 1) * tu // P)
        with b.loop("tb", s0 // U, (s1 + U - 1) // U - s1.eq(s0)) as tb:
            u0 = b.mov("u0", emax(s0, tb * U))
            u1 = b.mov("u1", emin(s1, tb * U + U))
            tile(tb // nbn * BM, tb % nbn * BN + (u0 - tb * U) * 32, (u1 - u0) * 32)
    for i in range(2):
        b.wait_flag("MTE1", "MTE2", i)
        b.wait_flag("M", "MTE1", i)
        b.wait_flag("FIX", "M", i)
    return b.build()


def run_gemm(A: np.ndarray, B: np.ndarray, *, chip="ascend910b1", block_dim=24, tiles=(128, 256, 256, 128),
             balance=True, check_hazards=True, trace=True):
    """Host side: place A, B (f16) in GM, launch, return (C f16, LaunchResult)."""
    M, K = A.shape
    K2, N = B.shape
    BM, BN, BK1, BK0 = tiles
    if K != K2 or M % BM or N % BN or K % BK1 or BK1 % BK0:
        raise ProgramError(f"run_gemm: shapes {A.shape} @ {B.shape} must be multiples of tiles {tiles}")
    gm = GlobalMemory()
    aa, ab, ac = gm.put(A.astype(np.float16)), gm.put(B.astype(np.float16)), gm.alloc(M * N * 2)
    prog = build_gemm(*tiles, balance=balance)
    res = launch(prog, chip=chip, block_dim=block_dim, args=dict(a=aa, b=ab, c=ac, M=M, N=N, K=K), gm=gm,
                 check_hazards=check_hazards, trace=trace)
    return gm.read(ac, np.float16, (M, N)), res
