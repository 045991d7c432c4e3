"""Scalar UB loads/stores (GetValue/SetValue) and data-register arithmetic: exact i64 against numpy, costs, the
hazard checker's view of the S pipe, and the assembly round trip."""
import numpy as np
import pytest

from simulator import GlobalMemory, ProgramBuilder, ProgramError, RaceError, launch, parse, to_text
from simulator.isa.scalar_mem import SALU_OPS
from tests.simulator.helpers import run_vector

I64 = np.iinfo(np.int64)
OUT = 4096


def _run(body, inputs, out_bytes, check=True):
    """Inputs at UB 0, 1024, ...; body(b) emits the scalar work after a MTE2 -> S flag; OUT goes back to GM
    after an S -> MTE3 flag."""
    return run_vector(body, inputs, out_bytes, ub_in=[i * 1024 for i in range(len(inputs))], ub_out=OUT, pipe="S",
                      check_hazards=check)


def _edge_i64(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(I64.min, I64.max, n, dtype=np.int64, endpoint=True)
    x[:6] = [I64.min, I64.max, -1, 0, 1, I64.min + 1]
    return x


@pytest.mark.parametrize("op", ["add", "sub", "mul", "max", "min", "and", "or", "neg", "abs",
                                "cmp_eq", "cmp_ne", "cmp_lt", "cmp_le", "cmp_gt", "cmp_ge"])
def test_i64_elementwise_wraps_like_numpy(op):
    n = 32
    x, y = _edge_i64(n, 1), _edge_i64(n, 2)
    y[6:10] = x[6:10]  # some equal pairs for the compares

    def body(b):
        for i in range(n):
            b.ld_ub("i64", "a", 8 * i)
            b.ld_ub("i64", "c", 1024 + 8 * i)
            getattr(b, "s" + op)("i64", "r", "a", "c")
            b.st_ub("i64", "r", OUT + 8 * i)

    out, res = _run(body, [x, y], 8 * n)
    with np.errstate(over="ignore"):
        ref = {"add": x + y, "sub": x - y, "mul": x * y, "max": np.maximum(x, y), "min": np.minimum(x, y),
               "and": x & y, "or": x | y, "neg": -x, "abs": np.abs(x), "cmp_eq": x == y, "cmp_ne": x != y,
               "cmp_lt": x < y, "cmp_le": x <= y, "cmp_gt": x > y, "cmp_ge": x >= y}[op]
    np.testing.assert_array_equal(out.view(np.int64), ref.astype(np.int64))
    assert res.stats.hazards_checked


def test_dmov_sel_shifts_and_narrow_stores():
    def body(b):
        b.dmov("k", 2**40 + 3)
        b.dmov("one", 1)
        b.ld_ub("u8", "m", 0)  # 0b10100101
        for bit in range(8):
            b.dmov("s", bit)
            b.sshr("i64", "t", "m", "s")
            b.sand("i64", "t", "t", "one")
            b.ssel("i64", "v", "t", "k", "one")
            b.st_ub("i64", "v", OUT + 8 * bit)
        b.st_ub("i32", "k", OUT + 64)  # the low 32 bits, two's complement
        b.st_ub("u8", "k", OUT + 68)

    out, _ = _run(body, [np.array([0b10100101] * 32, np.uint8)], 96)
    bits = [(0b10100101 >> i) & 1 for i in range(8)]
    np.testing.assert_array_equal(out[:64].view(np.int64), [2**40 + 3 if t else 1 for t in bits])
    assert out[64:68].view(np.int32)[0] == 3 and out[68] == 3

    b = ProgramBuilder("t", "aiv", [])
    b.dmov("k", 2**40 + 3)
    b.sshl("i64", "w", "k", "k")
    with pytest.raises(ProgramError, match=r"sshl \(pc 1\): shift by 1099511627779 \(must be in \[0, 64\)\)"):
        launch(b.build(), gm=GlobalMemory())


def test_reduction_loop_cost_is_one_scalar_op_per_instruction():
    x = _edge_i64(16, 3)

    def body(b):
        b.dmov("acc", 0)
        with b.loop("i", 0, 16) as i:
            b.ld_ub("i64", "v", i * 8)
            b.sadd("i64", "acc", "acc", "v")
        b.st_ub("i64", "acc", OUT)

    out, res = _run(body, [x], 32)
    with np.errstate(over="ignore"):
        assert out[:8].view(np.int64)[0] == x.sum()
    s = [dur for _, pipe, m, _, dur, _ in res.events if pipe == "S" and m in ("ld_ub", "sadd", "st_ub", "dmov")]
    assert s == [1] * (2 + 2 * 16)  # ChipSpec.scalar_op_cycles each


def test_scalar_access_needs_a_flag_against_vector_and_mte():
    x = np.arange(8, dtype=np.int64)

    def vector_then_scalar(flag):
        def body(b):
            b.vdup("i32", 2048, 7, repeat=1)
            if flag:
                b.set_flag("V", "S", 0)
                b.wait_flag("V", "S", 0)
            b.ld_ub("i32", "a", 2048)
            b.st_ub("i32", "a", OUT)
        return body

    out, _ = _run(vector_then_scalar(True), [x], 32)
    assert out.view(np.int32)[0] == 7
    # without the flag the load runs before the 30-cycle vector start-up is over: a race either way round
    with pytest.raises(RaceError, match=r"race on UB\[0x0800, 0x0820\) of core aiv0: vdup \(V.* ld_ub \(S"):
        _run(vector_then_scalar(False), [x], 32)

    # S writes, MTE3 reads: the scalar unit issuing the store before the DMA does not order them
    gm = GlobalMemory()
    out = gm.alloc(32)
    b = ProgramBuilder("t", "aiv", [])
    b.dmov("v", 5)
    b.st_ub("i64", "v", 0)
    b.copy_ub_to_gm(out, 0, 32)
    with pytest.raises(RaceError, match=r"copy_ub_to_gm \(MTE3, core aiv0, pc \d+\) reads what st_ub \(S"):
        launch(b.build(), gm=gm)
    # ... and a set/wait S -> MTE3 does, as does pipe_barrier(ALL)
    for sync in (lambda b: (b.set_flag("S", "MTE3", 1), b.wait_flag("S", "MTE3", 1)),
                 lambda b: b.pipe_barrier("ALL")):
        gm = GlobalMemory()
        out = gm.alloc(32)
        b = ProgramBuilder("t", "aiv", [])
        b.dmov("v", -5)
        b.st_ub("i64", "v", 0)
        sync(b)
        b.copy_ub_to_gm(out, 0, 32)
        launch(b.build(), gm=gm)
        assert gm.read(out, np.int64, (1,))[0] == -5


def test_errors_name_the_instruction_and_numbers():
    b = ProgramBuilder("t", "aiv", [])
    with pytest.raises(ProgramError, match="dtype bf16 not supported"):
        b.ld_ub("bf16", "a", 0)
    with pytest.raises(ProgramError, match="sand: dtype f32 not supported"):
        b.sand("f32", "r", "a", "b")
    b.ld_ub("i64", "a", 4)
    with pytest.raises(Exception, match=r"ld_ub \(pc 0\): UB address 0x4 is not aligned to its 8-byte i64"):
        launch(b.build(), gm=GlobalMemory())
    b = ProgramBuilder("t", "aiv", [])
    b.sadd("i64", "r", "a", "b")
    with pytest.raises(ProgramError, match="data register a is read before it is written"):
        launch(b.build(), gm=GlobalMemory())


def test_assembly_round_trip():
    b = ProgramBuilder("t", "aiv", ["n"])
    b.dmov("z", b.reg("n") * 2)
    with b.loop("i", 0, b.reg("n")) as i:
        b.ld_ub("i64", "a", i * 8)
        for op in SALU_OPS:
            nargs = 1 if op in ("neg", "abs") else 3 if op == "sel" else 2
            getattr(b, "s" + op)("i64", "r", *["a", "z", "a"][:nargs])
        b.st_ub("i32", "r", 512 + i * 4)
    b.set_flag("S", "V", 0)
    b.wait_flag("S", "V", 0)
    text = to_text(b.build())
    assert "sadd dtype=i64 dst=r a=a b=z" in text and "ld_ub dtype=i64 dreg=a addr=(i*8)" in text
    assert to_text(parse(text)) == text


def test_float_values_feed_vector_scalar_instructions():
    """GetValue on f32/f16 UB elements, float data-register arithmetic rounded to the dtype, and a vector-scalar
    instruction whose scalar is a data register (``sreg``): Ascend C's Adds(dst, src, t.GetValue(i)) after a V→S
    flag; the register is read as the instruction issues, after the loads before it."""
    x = np.random.default_rng(1).standard_normal((2, 64)).astype(np.float32)
    h = np.float16(3.140625)

    def body(b):
        b.vmuls("f32", 1024, 0, 2.0, repeat=2, mask=64)
        b.set_flag("V", "S", 0)
        b.wait_flag("V", "S", 0)
        b.ld_ub("f32", "m0", 1024)
        b.ld_ub("f32", "m1", 1024 + 256)
        b.sneg("f32", "m0", "m0")
        b.smul("f32", "p", "m1", "m1")
        b.dmov("q", 0.25)  # a float immediate
        b.smul("f32", "p", "p", "q")
        b.ld_ub("f16", "h", 512)
        b.set_flag("S", "V", 0)
        b.wait_flag("S", "V", 0)
        b.vadds("f32", OUT, 1024, sreg="m0", repeat=1, mask=64)
        b.vmuls("f32", OUT + 256, 1024 + 256, sreg="p", repeat=1, mask=64)
        b.vmaxs("f32", OUT + 512, 0, sreg="h", repeat=1, mask=64)

    y = np.zeros(64, np.float32)
    y[0] = h
    out, res = run_vector(body, [x, np.array([h] * 16, np.float16)], 768, ub_in=[0, 512], ub_out=OUT)
    out = out.view(np.float32).reshape(3, 64)
    np.testing.assert_array_equal(out[0], 2 * x[0] - 2 * x[0, 0])
    np.testing.assert_array_equal(out[1], (2 * x[1]) * (np.float32(2 * x[1, 0]) ** 2 * np.float32(0.25)))
    np.testing.assert_array_equal(out[2], np.maximum(x[0], np.float32(h)))
    assert res.stats.hazards_checked
    s = [dur for _, pipe, m, _, dur, _ in res.events if pipe == "S" and m in ("ld_ub", "sneg", "smul", "dmov")]
    assert s == [1] * 7  # ChipSpec.scalar_op_cycles each
    vadds = [dur for _, _, m, _, dur, _ in res.events if m == "vadds"]
    assert vadds == [31]  # a vector-scalar repeat (1 cycle) after the start-up: the pipe idled while S loaded


def test_vector_writes_after_scalar_reads_need_an_s_to_v_flag():
    """The scalar unit issuing a vector op after its ld_ub does not order the load before the op's write (the
    hazard checker's view of S, as for integers): the S → V flag does."""
    x = np.ones(64, np.float32)

    def body(flag):
        def emit(b):
            b.ld_ub("f32", "m", 0)
            if flag:
                b.set_flag("S", "V", 0)
                b.wait_flag("S", "V", 0)
            b.vadds("f32", 0, 0, sreg="m", repeat=1, mask=64)
            b.pipe_barrier("V")
            b.vcopy("f32", OUT, 0, repeat=1, mask=64)
            b.set_flag("V", "S", 1)  # the copy back (after an S -> MTE3 flag) reads what V wrote
            b.wait_flag("V", "S", 1)
        return emit

    out, _ = run_vector(body(True), [x], 256, ub_in=[0], ub_out=OUT, pipe="S")
    np.testing.assert_array_equal(out.view(np.float32), 2 * x)
    with pytest.raises(RaceError, match=r"ld_ub \(S.*vadds \(V|vadds \(V.*ld_ub \(S"):
        run_vector(body(False), [x], 256, ub_in=[0], ub_out=OUT, pipe="S")


def test_sreg_assembly_round_trip():
    b = ProgramBuilder("t", "aiv", [])
    b.ld_ub("f32", "m", 0)
    b.sneg("f32", "m", "m")
    b.vadds("f32", 256, 512, sreg="m", repeat=2, mask=64)
    b.vadds("f32", 256, 512, 1.5, repeat=2, mask=64)
    text = to_text(b.build())
    assert "sreg=m" in text and text.count("sreg") == 1 and "ld_ub dtype=f32 dreg=m addr=0" in text
    assert to_text(parse(text)) == text
