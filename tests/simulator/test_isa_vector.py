"""Vector ISA semantics per instruction and dtype against numpy references."""
import ml_dtypes
import numpy as np
import pytest

from simulator import ProgramError, ProgramBuilder
from simulator.errors import MemoryAccessError
from helpers import run_vector

OUT = 96 * 1024
rng = np.random.default_rng(1)
NP = {"f16": np.float16, "f32": np.float32, "i32": np.int32, "i16": np.int16, "bf16": ml_dtypes.bfloat16}


def rand(dt, n, lo=-4, hi=4):
    if dt in ("i32", "i16"):
        return rng.integers(-1000, 1000, n).astype(NP[dt])
    return rng.uniform(lo, hi, n).astype(NP[dt])


@pytest.mark.parametrize("op,ref", [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                                    ("max", np.maximum), ("min", np.minimum), ("div", np.divide)])
@pytest.mark.parametrize("dt", ["f16", "f32", "i32"])
def test_binary(op, ref, dt):
    if op == "div" and dt == "i32":
        with pytest.raises(ProgramError, match="vdiv: dtype i32 not supported"):  # CANN-INI: f16/f32 only
            ProgramBuilder("t", "aiv", []).vdiv(dt, 0, 0, 0)
        return
    n = 1024
    x, y = rand(dt, n), rand(dt, n)
    if op == "div":
        y[y == 0] = 1
    lanes = 256 // x.itemsize
    out, _ = run_vector(lambda b: getattr(b, "v" + op)(dt, OUT, 0, 32768, repeat=n // lanes), [x, y], x.nbytes)
    got = out.view(NP[dt])
    np.testing.assert_array_equal(got, ref(x, y).astype(NP[dt]))


def test_binary_mask_and_strides():
    # 2 repeats, 100 active lanes, src1 repeat stride 0 (row broadcast), dst untouched beyond mask
    x = rand("f16", 256)
    row = rand("f16", 128)
    def body(b):
        b.vdup("f16", OUT, 7.0, repeat=2)
        b.pipe_barrier("V")
        b.vadd("f16", OUT, 0, 32768, repeat=2, mask=100, src1_rep=0)
    out, _ = run_vector(body, [x, row], 512)
    got = out.view(np.float16).reshape(2, 128)
    exp = np.full((2, 128), 7.0, np.float16)
    exp[:, :100] = (x.reshape(2, 128) + row[None, :])[:, :100]
    np.testing.assert_array_equal(got, exp)


def test_block_stride_gathers_every_other_block():
    x = rand("f32", 128)
    out, _ = run_vector(lambda b: b.vmuls("f32", OUT, 0, 2.0, repeat=1, src_blk=2), [x], 256)
    exp = (x.reshape(16, 8)[::2].reshape(-1) * 2).astype(np.float32)
    np.testing.assert_array_equal(out.view(np.float32), exp)


@pytest.mark.parametrize("op,ref", [("exp", np.exp), ("ln", np.log), ("sqrt", np.sqrt),
                                    ("rsqrt", lambda v: 1 / np.sqrt(v)), ("rec", lambda v: 1 / v),
                                    ("abs", np.abs), ("relu", lambda v: np.maximum(v, 0)), ("neg", np.negative)])
@pytest.mark.parametrize("dt", ["f16", "f32"])
def test_unary(op, ref, dt):
    x = rand(dt, 512, 0.1, 4) if op in ("ln", "sqrt", "rsqrt", "rec") else rand(dt, 512)
    lanes = 256 // x.itemsize
    out, _ = run_vector(lambda b: getattr(b, "v" + op)(dt, OUT, 0, repeat=512 // lanes), [x], x.nbytes)
    exp = ref(x.astype(np.float32)).astype(NP[dt])
    np.testing.assert_array_equal(out.view(NP[dt]), exp)


@pytest.mark.parametrize("op,ref", [("adds", np.add), ("muls", np.multiply), ("maxs", np.maximum),
                                    ("mins", np.minimum)])
def test_vector_scalar(op, ref):
    x = rand("f16", 256)
    out, _ = run_vector(lambda b: getattr(b, "v" + op)("f16", OUT, 0, 0.3, repeat=2), [x], 512)
    np.testing.assert_array_equal(out.view(np.float16), ref(x, np.float16(0.3)))


def test_scalar_from_register():
    x = rand("i32", 64)
    def body(b):
        b.mov("s", 5 * 3)
        b.vadds("i32", OUT, 0, b.reg("s"), repeat=1)
    out, _ = run_vector(body, [x], 256)
    np.testing.assert_array_equal(out.view(np.int32), x + 15)


@pytest.mark.parametrize("op,ref", [("sum", np.sum), ("rmax", np.max), ("rmin", np.min)])
def test_reduce_per_repeat_and_whole(op, ref):
    x = rand("f32", 64 * 4)
    mn = {"sum": "vcadd", "rmax": "vcmax", "rmin": "vcmin"}[op]
    whole = {"sum": "vredsum", "rmax": "vredmax", "rmin": "vredmin"}[op]
    def body(b):
        getattr(b, mn)("f32", OUT, 0, repeat=4, mask=50)
        getattr(b, whole)("f32", OUT + 64, 0, repeat=4)
    out, _ = run_vector(body, [x], 128)
    got = out.view(np.float32)
    np.testing.assert_array_equal(got[:4], ref(x.reshape(4, 64)[:, :50], axis=1).astype(np.float32))
    np.testing.assert_array_equal(got[16], np.float32(ref(x)))


def test_reduce_f16_accumulates_in_f32():
    x = np.full(128, 0.1, np.float16)
    out, _ = run_vector(lambda b: b.vcadd("f16", OUT, 0, repeat=1), [x], 32)
    assert out.view(np.float16)[0] == np.float16(np.float32(0.1 * 0 + x.astype(np.float32).sum()))


@pytest.mark.parametrize("op,ref", [("sum", np.sum), ("rmax", np.max), ("rmin", np.min)])
@pytest.mark.parametrize("dt", ["f16", "f32"])
def test_block_reduce_one_result_per_block(op, ref, dt):
    # 3 repeats, a mask ending inside block 5 (f32: 45 lanes = 5 blocks and 5 elements), results 2 repeats apart
    epb, lanes = (16, 128) if dt == "f16" else (8, 64)
    mask = 5 * epb + 5
    x = rand(dt, 3 * lanes, 0, 1)
    mn = {"sum": "vcgadd", "rmax": "vcgmax", "rmin": "vcgmin"}[op]
    out, res = run_vector(lambda b: getattr(b, mn)(dt, OUT, 0, repeat=3, mask=mask, dst_rep=2), [x], 256)
    got = out.view(NP[dt])
    for r in range(3):
        row = x[r * lanes: r * lanes + mask].astype(np.float32)
        want = [ref(row[k * epb:(k + 1) * epb]) for k in range(6)]
        np.testing.assert_allclose(got[16 * r: 16 * r + 6].astype(np.float32), want, rtol=2e-3 if dt == "f16" else 1e-6)
        assert not got[16 * r + 6: 16 * r + 16].any()  # blocks past the mask and the gap are not written
    # PTO's slope: one cycle per repeat (vcadd: 7)
    assert [d for _, _, m, _, d, _ in res.events if m == mn] == [30 + 3]


def test_block_sum_is_a_tree_of_adjacent_pairs_in_the_dtype():
    x = np.array([2048, 1, 0, 1] + [0] * 12, np.float16)  # f16 spacing at 2048 is 2: 2048 + 1 rounds to 2048
    out, _ = run_vector(lambda b: b.vcgadd("f16", OUT, 0, repeat=1, mask=16), [x], 32)
    assert out.view(np.float16)[0] == np.float16(2048)  # ((2048 + 1) + (0 + 1)) in f16; one f32 sum gives 2050
    y = np.full(16, 60000, np.float16)
    out, _ = run_vector(lambda b: b.vcgadd("f16", OUT, 0, repeat=1, mask=16), [y], 32)
    assert out.view(np.float16)[0] == np.float16(65504)  # a finite overflow saturates


def test_block_reduce_rejects_a_misaligned_dst_and_other_dtypes():
    with pytest.raises(ProgramError, match="vcgadd: dtype i32 not supported"):
        ProgramBuilder("t", "aiv", []).vcgadd("i32", 0, 0)
    with pytest.raises(MemoryAccessError, match="vcgadd .*UB address 0x18004 is not 32-byte aligned"):
        run_vector(lambda b: b.vcgadd("f32", OUT + 4, 0), [rand("f32", 64)], 32)


@pytest.mark.parametrize("src,dst,mode", [("f16", "f32", "rint"), ("f32", "f16", "rint"), ("f32", "bf16", "rint"),
                                          ("bf16", "f32", "rint"), ("f32", "i32", "rint"), ("f32", "i32", "floor"),
                                          ("f32", "i32", "ceil"), ("f32", "i32", "trunc"), ("f32", "i32", "round"),
                                          ("f16", "i32", "trunc"), ("i32", "f32", "rint")])
def test_cast(src, dst, mode):
    x = rand(src, 256, -50, 50) if src != "i32" else rng.integers(-(1 << 26), 1 << 26, 256).astype(np.int32)
    if src == "f32":
        x[:4] = [2.5, -2.5, 3.5, 1e10]  # ties and saturation
    es_s, es_d = np.dtype(NP[src]).itemsize, np.dtype(NP[dst]).itemsize
    lanes = 256 // max(es_s, es_d)
    # repeat strides as Ascend C requires for mixed widths: each operand advances lanes*es bytes
    out, _ = run_vector(lambda b: b.vconv(src, dst, OUT, 0, round_mode=mode, repeat=256 // lanes,
                                          src_rep=lanes * es_s // 32, dst_rep=lanes * es_d // 32), [x],
                        256 * np.dtype(NP[dst]).itemsize)
    got = out.view(NP[dst])
    if dst == "i32" and src != "i32":
        f = {"rint": np.rint, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
             "round": lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5)}[mode]
        exp = np.clip(f(x.astype(np.float64)), -2**31, 2**31 - 1).astype(np.int32)
    else:
        with np.errstate(over="ignore"):
            exp = x.astype(NP[dst])
    np.testing.assert_array_equal(got, exp)
    if src == "f32" and dst == "i32" and mode == "rint":
        assert list(got[:3]) == [2, -2, 4] and got[3] == 2**31 - 1


def test_cast_rejects_unsupported_mode():
    b = ProgramBuilder("t", "aiv", [])
    with pytest.raises(ProgramError, match="round mode 'floor' not supported"):
        b.vconv("f32", "f16", 0, 0, round_mode="floor")


def test_bf16_arithmetic_rejected():
    b = ProgramBuilder("t", "aiv", [])
    with pytest.raises(ProgramError, match="bf16 not supported"):
        b.vadd("bf16", 0, 0, 0)


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_compare_and_select(op):
    x, y = rand("f16", 256), rand("f16", 256)
    y[:10] = x[:10]
    def body(b):
        getattr(b, "vcmp_" + op)("f16", 65536, 0, 32768, repeat=2)
        b.pipe_barrier("V")
        b.vsel("f16", OUT, 65536, 0, 32768, repeat=2)
    out, _ = run_vector(body, [x, y], 512)
    cond = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[op]
    np.testing.assert_array_equal(out.view(np.float16), np.where(cond, x, y))


def test_compare_scalar_mask_bits():
    x = rand("f32", 64)
    out, _ = run_vector(lambda b: b.vcmps_gt("f32", OUT, 0, scalar=0.5, repeat=1), [x], 32)
    np.testing.assert_array_equal(np.unpackbits(out[:8], bitorder="little").astype(bool), x > 0.5)


def test_dup_brcb_transpose():
    col = rand("f32", 16)
    blk = rand("f16", 256)
    def body(b):
        b.vdup("f32", OUT, 1.5, repeat=1, mask=10)
        b.vbrcb("f32", OUT + 256, 0, repeat=2)
        b.vtranspose("f16", OUT + 1024, 32768)
    out, _ = run_vector(body, [col, blk], 1536)
    f = out.view(np.float32)
    np.testing.assert_array_equal(f[:10], np.full(10, 1.5, np.float32))
    np.testing.assert_array_equal(f[64:192], np.repeat(col, 8))
    np.testing.assert_array_equal(out[1024:].view(np.float16).reshape(16, 16), blk.reshape(16, 16).T)


def test_repeat_limit_and_mask_errors():
    x = rand("f16", 128)
    with pytest.raises(ProgramError, match="repeat=256 must be in 1..255"):
        run_vector(lambda b: b.vadds("f16", OUT, 0, 1.0, repeat=256), [x], 256)
    with pytest.raises(ProgramError, match="mask=129"):
        run_vector(lambda b: b.vadds("f16", OUT, 0, 1.0, mask=129), [x], 256)


def _exact_round(v: int, bits: int, mode: str) -> float:
    """Integer ``v`` rounded once to ``bits`` significand bits (Python integers: the reference)."""
    m = abs(v)
    shift = max(m.bit_length() - bits, 0)
    q, rem = divmod(m, 1 << shift)
    half = (1 << shift) // 2
    up = {"rint": rem > half or (rem == half and rem and q % 2 == 1), "round": rem and rem >= half,
          "trunc": False, "floor": rem and v < 0, "ceil": rem and v > 0}[mode]
    r = (q + bool(up)) << shift
    return float(-r if v < 0 else r)


def _run_cast(src, dst, x, mode="rint", **kw):
    es_s, es_d = x.itemsize, 8 if dst == "i64" else np.dtype(NP.get(dst, np.float32)).itemsize
    lanes = 256 // max(es_s, es_d)
    n = x.size
    out, _ = run_vector(lambda b: b.vconv(src, dst, OUT, 0, round_mode=mode, repeat=n // lanes,
                                          src_rep=lanes * es_s // 32, dst_rep=lanes * es_d // 32, **kw), [x], n * es_d)
    return out


@pytest.mark.parametrize("mode", ["rint", "round", "floor", "ceil", "trunc"])
@pytest.mark.parametrize("src", ["i32", "i64"])
def test_cast_int_to_f32_rounds_once(src, mode):
    """s322f32 / s642f32 with every round mode: one rounding of the exact integer (ties and |x| > 2^24)."""
    big = 62 if src == "i64" else 30
    vals = [int(v) for v in rng.integers(-(1 << big), 1 << big, 192)]
    vals += [(1 << 24) + 1, -((1 << 24) + 1), (1 << 25) + 2, (1 << 25) + 6, 3, -7, 0]  # ties at 2^24+1, 2^25+2
    vals += [-(1 << 63), (1 << 63) - 1] if src == "i64" else [-(1 << 31), (1 << 31) - 1]
    vals += [0] * (256 - len(vals))
    x = np.array(vals, np.int64 if src == "i64" else np.int32)
    got = _run_cast(src, "f32", x, mode).view(np.float32).astype(np.float64)
    np.testing.assert_array_equal(got, [_exact_round(v, 24, mode) for v in vals])


@pytest.mark.parametrize("mode", ["rint", "round", "floor", "ceil", "trunc"])
def test_cast_f32_to_i64_saturates(mode):
    x = rng.uniform(-1e6, 1e6, 128).astype(np.float32)
    x[:8] = [2.5, -2.5, 3.5, 1e19, -1e19, np.nan, 2.0**62, -(2.0**63)]
    got = _run_cast("f32", "i64", x, mode).view(np.int64)
    f = {"rint": np.rint, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
         "round": lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5)}[mode]
    exp = f(x[8:].astype(np.float64)).astype(np.int64)
    np.testing.assert_array_equal(got[8:], exp)
    assert list(got[3:8]) == [2**63 - 1, -(2**63), 0, 2**62, -(2**63)]
    assert list(got[:3]) == {"rint": [2, -2, 4], "round": [3, -3, 4], "floor": [2, -3, 3], "ceil": [3, -2, 4],
                             "trunc": [2, -2, 3]}[mode]


def test_cast_i32_i64_widen_and_narrow():
    x = rng.integers(-(1 << 31), (1 << 31) - 1, 256).astype(np.int32)
    np.testing.assert_array_equal(_run_cast("i32", "i64", x).view(np.int64), x.astype(np.int64))
    y = rng.integers(-(1 << 40), 1 << 40, 256).astype(np.int64)
    y[:4] = [1, -1, 2**31, -(2**31) - 1]
    sat = _run_cast("i64", "i32", y).view(np.int32)
    np.testing.assert_array_equal(sat, np.clip(y, -(2**31), 2**31 - 1).astype(np.int32))
    wrap = _run_cast("i64", "i32", y, overflow="wrap").view(np.int32)
    np.testing.assert_array_equal(wrap, y.astype(np.int32))  # two's complement: the low 32 bits
    assert list(wrap[:4]) == [1, -1, -(2**31), 2**31 - 1]


@pytest.mark.parametrize("mode", ["round", "floor", "ceil", "trunc"])
def test_cast_f32_to_bf16_round_modes(mode):
    """vconv_f322bf16{a,f,c,z}: candidates are the two neighbouring bf16 values; ties decided by the mode."""
    x = (rng.integers(-(1 << 15), 1 << 15, 256) * 2.0**-7).astype(np.float32)  # many exact ties
    x[:64] = rng.uniform(-100, 100, 64).astype(np.float32)
    got = _run_cast("f32", "bf16", x, mode).view(ml_dtypes.bfloat16).astype(np.float64)
    down = x.astype(ml_dtypes.bfloat16).astype(np.float64)  # RNE, then the neighbour on the other side
    other = np.nextafter(x.astype(ml_dtypes.bfloat16), np.where(down < x, np.inf, -np.inf).astype(ml_dtypes.bfloat16))
    lo, hi = np.minimum(down, other.astype(np.float64)), np.maximum(down, other.astype(np.float64))
    xd = x.astype(np.float64)
    exact = down == xd
    pick = {"floor": lo, "ceil": hi, "trunc": np.where(xd > 0, lo, hi),
            "round": np.where(np.abs(xd - lo) == np.abs(hi - xd), np.where(xd > 0, hi, lo),
                              np.where(np.abs(xd - lo) < np.abs(hi - xd), lo, hi))}[mode]
    np.testing.assert_array_equal(got, np.where(exact, xd, pick))


def test_cast_rejects_wrap_on_a_widening():
    with pytest.raises(ProgramError, match="overflow 'wrap' not supported"):
        ProgramBuilder("t", "aiv", []).vconv("i32", "i64", 0, 0, overflow="wrap")


def test_i64_arithmetic_rejected():
    with pytest.raises(ProgramError, match="dtype i64 not supported"):
        ProgramBuilder("t", "aiv", []).vadd("i64", 0, 0, 0)


@pytest.mark.parametrize("mnem", ["vdup", "vbrcb"])
def test_b64_moves_rejected(mnem):
    b = ProgramBuilder("t", "aiv", [])
    with pytest.raises(ProgramError, match="dtype i64 not supported"):
        b.vdup("i64", 0, 1) if mnem == "vdup" else b.vbrcb("i64", 0, 0)
