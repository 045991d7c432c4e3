"""Assembly round trip: every mnemonic, the example kernels, loops/ifs and errors."""
import pytest

from simulator import AssemblyError, MixProgram, ProgramBuilder, parse, to_text
from simulator.examples import build_gemm, build_vector_add
from simulator.isa import MNEMONICS


def roundtrip(p):
    text = to_text(p)
    again = to_text(parse(text))
    assert again == text
    return text


def test_examples_roundtrip():
    roundtrip(build_vector_add("f16", 16384, 2))
    roundtrip(build_gemm())


def test_loops_ifs_and_expressions():
    b = ProgramBuilder("k", "aiv", ["n"])
    with b.loop("i", 0, b.reg("n") // 2, 2) as i:
        with b.if_((i % 4).eq(0)):
            b.vadds("f32", i * 256, 0, -1.5e-05)
        with b.else_():
            b.vdup("f16", 0, 2.0)
    text = roundtrip(b.build())
    assert "loop i = 0, (n//2), 2 {" in text and "} else {" in text


def test_mix_roundtrip():
    a = ProgramBuilder("a", "aic", ["x"]); a.cross_set("FIX", 3)
    v = ProgramBuilder("v", "aiv", ["x"]); v.cross_wait(3)
    roundtrip(MixProgram("m", ["x"], a.build(), v.build()))


# one instance per mnemonic: every entry of the table must print and parse back
SAMPLES = {
    "copy_gm_to_ub": dict(dst=0, src=512, burst_len=64), "copy_gm_to_l1": dict(dst=0, src=0, burst_len=64),
    "copy_ub_to_gm": dict(dst=0, src=0, burst_len=64), "load_l1_to_l0a": dict(dst=0, src=0, m=16, k=16, src_ld=32),
    "load_l1_to_l0b": dict(dst=0, src=0, k=16, n=16, src_ld=32), "mmad": dict(dst=0, a=0, b=0, m=16, k=16, n=16),
    "fixpipe": dict(dst=0, src=0, m=16, n=16, dst_ld=32), "fixpipe_ub": dict(dst=0, src=0, m=16, n=16, dst_ld=32),
    "mov": dict(reg="r", value=3), "set_flag": dict(src_pipe="MTE2", dst_pipe="V", event=1),
    "wait_flag": dict(src_pipe="MTE2", dst_pipe="V", event=1), "pipe_barrier": dict(barrier_pipe="V"),
    "cross_set": dict(set_pipe="MTE3", flag=2), "cross_wait": dict(flag=2),
    "vdup": dict(dtype="f16", dst=0, scalar=1.0), "vbrcb": dict(dtype="f32", dst=0, src=0),
    "vconv": dict(src_dtype="f16", dst_dtype="f32", dst=0, src=0), "vsel": dict(dtype="f16", dst=0, sel=0, src0=0, src1=0),
    "vtranspose": dict(dtype="f16", dst=0, src=0), "vci": dict(dtype="i32", dst=0, first=3),
    "vgather": dict(dtype="f32", dst=0, src=256, offset=512, src_len=64),
    "dmov": dict(dreg="d", value=3), "ld_ub": dict(dtype="i64", dreg="d", addr=8),
    "st_ub": dict(dtype="i32", dreg="d", addr=4),
}


@pytest.mark.parametrize("mnemonic", sorted(MNEMONICS))
def test_every_mnemonic_roundtrips(mnemonic):
    cls, fixed = MNEMONICS[mnemonic]
    if mnemonic in SAMPLES:
        kw = SAMPLES[mnemonic]
    elif cls.__name__ == "VBinary":
        kw = dict(dtype="f16" if fixed["op"] not in ("and", "or") else "i16", dst=0, src0=0, src1=0)
    elif cls.__name__ in ("VUnary", "VScalar"):
        kw = dict(dtype="f16" if fixed["op"] != "not" else "i16", dst=0, src=0)
        if cls.__name__ == "VScalar":
            kw["scalar"] = 0.5
    elif cls.__name__ == "SAlu":
        kw = dict(dtype="i64", dst="r", a="x", b="y", c="z")
    elif cls.__name__ in ("VReduce", "VBlockReduce"):
        kw = dict(dtype="f32", dst=0, src=0)
    else:
        kw = dict(dtype="f32", dst=0, src0=0)
    b = ProgramBuilder("one", "aiv", [])
    ins = getattr(b, mnemonic)(**kw) if mnemonic != "mov" else b.mov("r", 3)
    text = roundtrip(b.build())
    assert text.splitlines()[1].strip().startswith(mnemonic)
    # completeness: every instruction has a pipe, a cost and (for ops) a functional rule
    from simulator.presets import get_chip
    r = ins.resolve({}) if mnemonic != "mov" else None
    if r is not None:
        assert r.pipe in ("S", "MTE1", "MTE2", "MTE3", "M", "V", "FIX")
        if r.KIND == "op":
            assert r.cycles(get_chip()) >= 1 and type(r).execute is not type(r).__mro__[-2].execute


def test_parse_errors_name_the_line():
    with pytest.raises(AssemblyError, match="line 2: .*unknown mnemonic 'vfoo'"):
        parse("kernel k core=aiv params= {\n  vfoo dst=0\n}")
    with pytest.raises(AssemblyError, match="missing '}'"):
        parse("kernel k core=aiv params= {\n  vdup dtype=f16 dst=0 scalar=1\n")
