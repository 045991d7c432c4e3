"""Cube ISA: MTE1 fractal layouts, mmad (init/accumulate; f16/bf16/i8/f32), fixpipe (cast, relu, NZ->ND)."""
import ml_dtypes
import numpy as np
import pytest

from simulator import GlobalMemory, MemoryAccessError, ProgramBuilder, launch

rng = np.random.default_rng(2)
NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "i8": np.int8}
K0 = {"f16": 16, "bf16": 16, "f32": 8, "i8": 32}


def cube_run(dtype, A, B, steps=1, relu=0, out_dtype=None, transpose_a=False, transpose_b=False):
    """Load A (m x k) and B (k x n) into L1, split K into `steps` mmads (first init, rest accumulate),
    fixpipe to GM. Returns (C, LaunchResult, L0A bytes, L0B bytes)."""
    m, k = A.shape
    n = B.shape[1]
    acc = "i32" if dtype == "i8" else "f32"
    out_dtype = out_dtype or acc
    es = np.dtype(NP[dtype]).itemsize
    gm = GlobalMemory()
    A_st = _pad_cols(A.T if transpose_a else A)   # L1 rows must start 32-B aligned
    B_st = _pad_cols(B.T if transpose_b else B)
    ga, gb = gm.put(A_st), gm.put(B_st)
    out_es = 4 if out_dtype in ("f32", "i32") else 2
    gc = gm.alloc(m * n * out_es)
    dump = gm.alloc(64 * 1024 * 2)
    b = ProgramBuilder("cube", "aic", [])
    b.copy_gm_to_l1(0, ga, A_st.nbytes)
    b.copy_gm_to_l1(256 * 1024, gb, B_st.nbytes)
    b.set_flag("MTE2", "MTE1", 0)
    b.wait_flag("MTE2", "MTE1", 0)
    ks = k // steps
    for s in range(steps):
        a_off = s * ks * es if not transpose_a else s * ks * A_st.shape[1] * es
        b_off = s * ks * B_st.shape[1] * es if not transpose_b else s * ks * es
        if s:
            b.wait_flag("M", "MTE1", 0)
        b.load_l1_to_l0a(0, a_off, m, ks, A_st.shape[1] * es, dtype, transpose=int(transpose_a))
        b.load_l1_to_l0b(0, 256 * 1024 + b_off, ks, n, B_st.shape[1] * es, dtype, transpose=int(transpose_b))
        b.set_flag("MTE1", "M", 0)
        b.wait_flag("MTE1", "M", 0)
        b.mmad(0, 0, 0, m, ks, n, dtype, init=int(s == 0))
        if s < steps - 1:
            b.set_flag("M", "MTE1", 0)
    b.set_flag("M", "FIX", 0)
    b.wait_flag("M", "FIX", 0)
    b.fixpipe(gc, 0, m, n, n * out_es, src_dtype=acc, dst_dtype=out_dtype, relu=relu)
    res = launch(b.build(), block_dim=1, args={}, gm=gm)
    C = gm.read(gc, {"f32": np.float32, "i32": np.int32, "f16": np.float16, "bf16": NP["bf16"]}[out_dtype], (m, n))
    return C, res


def _pad_cols(X):
    cols = -(-X.shape[1] // 32) * 32
    out = np.zeros((X.shape[0], cols), X.dtype)
    out[:, : X.shape[1]] = X
    return out


def ref_mm(A, B, steps, dtype):
    if dtype == "i8":
        return (A.astype(np.int64) @ B.astype(np.int64)).astype(np.int32)
    ks = A.shape[1] // steps
    C = None
    for s in range(steps):
        p = (A[:, s * ks:(s + 1) * ks].astype(np.float64) @ B[s * ks:(s + 1) * ks].astype(np.float64)).astype(np.float32)
        C = p if C is None else (C + p).astype(np.float32)
    return C


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32", "i8"])
@pytest.mark.parametrize("m,k,n,steps", [(40, 64, 60, 1), (32, 96, 48, 3), (16, 128, 16, 2)])
def test_mmad_against_numpy(dtype, m, k, n, steps):
    if dtype == "i8":
        A = rng.integers(-128, 128, (m, k)).astype(np.int8); B = rng.integers(-128, 128, (k, n)).astype(np.int8)
    else:
        A = rng.uniform(-2, 2, (m, k)).astype(NP[dtype]); B = rng.uniform(-2, 2, (k, n)).astype(NP[dtype])
    C, _ = cube_run(dtype, A, B, steps)
    np.testing.assert_array_equal(C, ref_mm(A, B, steps, dtype))


def test_partial_k_is_zero_padded():
    A = rng.uniform(-1, 1, (20, 20)).astype(np.float16); B = rng.uniform(-1, 1, (20, 24)).astype(np.float16)
    C, _ = cube_run("f16", A, B)
    np.testing.assert_array_equal(C, ref_mm(A, B, 1, "f16"))


def test_transposed_loads():
    A = rng.uniform(-1, 1, (32, 48)).astype(np.float16); B = rng.uniform(-1, 1, (48, 32)).astype(np.float16)
    C, _ = cube_run("f16", A, B, transpose_a=True, transpose_b=True)
    np.testing.assert_array_equal(C, ref_mm(A, B, 1, "f16"))


def test_fixpipe_cast_and_relu():
    A = rng.uniform(-1, 1, (32, 32)).astype(np.float16); B = rng.uniform(-1, 1, (32, 32)).astype(np.float16)
    ref = ref_mm(A, B, 1, "f16")
    C, _ = cube_run("f16", A, B, relu=1, out_dtype="f16")
    np.testing.assert_array_equal(C, np.maximum(ref, 0).astype(np.float16))
    C, _ = cube_run("f16", A, B, out_dtype="bf16")
    np.testing.assert_array_equal(C, ref.astype(NP["bf16"]))


def test_fractal_layouts_in_l0():
    """L0A zZ / L0B nZ / L0C NZ element placement, read straight from the core's memories."""
    from simulator.core import Core
    from simulator.isa import LoadL1ToL0A, LoadL1ToL0B, Mmad
    from simulator.presets import get_chip
    chip = get_chip()
    core = Core(0, "aic0", "aic", chip, GlobalMemory(), 0)
    A = np.arange(32 * 32, dtype=np.float16).reshape(32, 32)
    core.mem["L1"].view("f16")[: A.size] = A.reshape(-1)
    LoadL1ToL0A(0, 0, 32, 32, 64).resolve({}).execute(core)
    l0a = core.mem["L0A"].view("f16")
    # fractal (mb=1, kb=0) starts at element (1*2+0)*256; its row i, col j = A[16+i, j]
    assert l0a[2 * 256 + 3 * 16 + 5] == A[16 + 3, 5]
    LoadL1ToL0B(0, 0, 32, 32, 64).resolve({}).execute(core)
    l0b = core.mem["L0B"].view("f16")
    # fractal (kb=1, nb=0) at element (1*2+0)*256; n-major inside: [j][i] = B[16+i, j]
    assert l0b[2 * 256 + 5 * 16 + 3] == A[16 + 3, 5]
    Mmad(0, 0, 0, 32, 32, 32).resolve({}).execute(core)
    l0c = core.mem["L0C"].view("f32")
    C = A.astype(np.float64) @ A.astype(np.float64)
    # fractal (mb=1, nb=0) is at ((nb*M1 + mb) * 256) = 256
    assert l0c[256 + 2 * 16 + 7] == np.float32(C[16 + 2, 7])


def test_l0a_over_capacity_is_an_error():
    b = ProgramBuilder("t", "aic", [])
    b.mmad(0, 0, 0, 256, 256, 16, "f16")   # A needs 128 KiB, L0A has 64 KiB
    with pytest.raises(MemoryAccessError, match=r"mmad \(pc 0\): L0A\[0x0, 0x20000\) is outside L0A of 65536"):
        launch(b.build(), block_dim=1, args={}, gm=GlobalMemory())


def test_l0_alignment_is_512():
    b = ProgramBuilder("t", "aic", [])
    b.mmad(0, 64, 0, 16, 16, 16, "f16")
    with pytest.raises(MemoryAccessError, match="L0A address 0x40 is not 512-byte aligned"):
        launch(b.build(), block_dim=1, args={}, gm=GlobalMemory())
