"""DMA at a register-computed GM address (``gm_reg``/``gm_bound``, isa/dma.py): the scalar unit loads an index from UB
(``ld_ub``), turns it into a byte offset and issues one row copy per index — the A2 gather idiom (Ascend C
``GetValue`` + ``DataCopy``). Exact rows, the register read at issue (not at the copy's start), normal DMA timing, the
out-of-range error, the hazard checker's view of the S <-> MTE2 flags, and the assembly round trip."""
import numpy as np
import pytest

from simulator import GlobalMemory, ProgramBuilder, ProgramError, RaceError, launch, parse, to_text

V, D = 37, 12  # table rows, f32 elements per row (48 B: rows are not 32-B granules)
ROW = 4 * D
PITCH = 64  # UB row pitch (32-B aligned)


def _gather_program(n, *, flag=True, out_flag=True, clamp=True, index_dtype="i64"):
    """out[r] = table[index[r]] for r < n: index tile -> UB, MTE2 -> S flag, per row ld_ub / clamp / smul / copy."""
    es = 8 if index_dtype == "i64" else 4
    b = ProgramBuilder("gather_rows", "aiv", ["table", "index", "out"])
    b.copy_gm_to_ub(0, b.reg("index"), n * es)
    if flag:
        b.set_flag("MTE2", "S", 0)
        b.wait_flag("MTE2", "S", 0)
    b.dmov("row", ROW)
    b.dmov("lo", -1)
    b.dmov("hi", V)
    with b.loop("r", 0, n) as r:
        b.ld_ub(index_dtype, "i", r * es)
        if clamp:
            b.smax("i64", "i", "i", "lo")
            b.smin("i64", "i", "i", "hi")
        b.smul("i64", "i", "i", "row")
        b.copy_gm_to_ub(1024 + r * PITCH, b.reg("table"), ROW, gm_reg="i", gm_bound=V * ROW)
    if out_flag:
        b.set_flag("MTE2", "MTE3", 0)
        b.wait_flag("MTE2", "MTE3", 0)
    b.copy_ub_to_gm(b.reg("out"), 1024, ROW, n, src_stride=PITCH, dst_stride=ROW)
    return b.build()


def _run(prog, index, check=True):
    gm = GlobalMemory()
    table = np.arange(V * D, dtype=np.float32).reshape(V, D) * 0.5 - 7
    t, i = gm.put(table), gm.put(index)
    out = gm.alloc(len(index) * ROW)
    res = launch(prog, args=dict(table=t, index=i, out=out), gm=gm, check_hazards=check)
    return table, gm.read(out, np.float32, (len(index), D)), res


@pytest.mark.parametrize("index_dtype", ["i64", "i32"])
def test_rows_gathered_exactly(index_dtype):
    index = np.array([3, 0, 36, 3, 17, 36, 1, 0, 22], {"i64": np.int64, "i32": np.int32}[index_dtype])
    table, out, res = _run(_gather_program(len(index), index_dtype=index_dtype), index)
    np.testing.assert_array_equal(out, table[index])
    assert res.stats.hazards_checked
    assert res.stats.bytes["GM->UB"] == index.nbytes + len(index) * ROW


def test_register_is_read_when_the_copy_is_issued():
    """The next row's ld_ub overwrites the register long before MTE2 (busy with the previous row) starts the copy:
    each copy still moves the row its index named when the scalar unit issued it."""
    index = np.array([5, 6, 7, 8], np.int64)
    table, out, res = _run(_gather_program(4), index)
    np.testing.assert_array_equal(out, table[index])
    loads = sorted(t for _, p, m, t, _, _ in res.events if m == "ld_ub")
    copies = sorted(t for _, p, m, t, _, _ in res.events if m == "copy_gm_to_ub")[1:]
    assert loads[-1] < copies[1], (loads, copies)  # every index was read before the second row moved


def test_each_row_pays_a_normal_dma():
    """A row copy at a register address costs what the GM model charges the same copy at an immediate address; the
    scalar work is one scalar instruction each."""
    index = np.array([2, 9, 4], np.int64)
    table, _, res = _run(_gather_program(3), index)
    gm = GlobalMemory()
    t = gm.put(table)
    b = ProgramBuilder("plain", "aiv", ["table"])
    for r, i in enumerate(index):
        b.copy_gm_to_ub(1024 + r * PITCH, b.reg("table") + int(i) * ROW, ROW)
    plain = launch(b.build(), args=dict(table=t), gm=gm)
    rows = [dur for _, p, m, _, dur, _ in res.events if m == "copy_gm_to_ub"][1:]
    want = [dur for _, p, m, _, dur, _ in plain.events if m == "copy_gm_to_ub"]
    np.testing.assert_allclose(rows, want, rtol=1e-12)
    scalar = [dur for _, p, m, _, dur, _ in res.events if p == "S" and m in ("ld_ub", "smax", "smin", "smul")]
    assert len(scalar) == 4 * 3 and all(d == res.chip.scalar_op_cycles for d in scalar)


@pytest.mark.parametrize("bad", [37, -1, 2**62, -(2**63)])
def test_index_out_of_range_names_the_copy_and_the_numbers(bad):
    index = np.array([1, bad, 2], np.int64)
    prog = _gather_program(3)
    pattern = (rf"copy_gm_to_ub \(pc \d+\) on core aiv0: GM offset register i = -?\d+ B is outside \[0, {V * ROW}\) "
               rf"B: index out of range")
    with pytest.raises(ProgramError, match=pattern):
        _run(prog, index)


def test_unclamped_offset_outside_the_bound_is_caught():
    """Without the clamp (which keeps a huge index from wrapping in the i64 multiply), the bound alone rejects the
    first index past the table."""
    index = np.array([0, V], np.int64)
    with pytest.raises(ProgramError, match=rf"= {V * ROW} B is outside \[0, {V * ROW}\)"):
        _run(_gather_program(2, clamp=False), index)


def test_missing_mte2_to_s_flag_is_a_race():
    """The scalar unit's ld_ub of the index is not ordered after the MTE2 load by issue order."""
    with pytest.raises(RaceError, match=r"ld_ub \(S, core aiv0, pc \d+\) reads what copy_gm_to_ub \(MTE2"):
        _run(_gather_program(3, flag=False), np.array([1, 2, 3], np.int64))


def test_missing_mte2_to_mte3_flag_is_a_race():
    with pytest.raises(RaceError, match=r"copy_ub_to_gm \(MTE3, core aiv0, pc \d+\) reads what copy_gm_to_ub"):
        _run(_gather_program(3, out_flag=False), np.array([1, 2, 3], np.int64))


def test_register_read_before_any_write_is_an_error():
    b = ProgramBuilder("t", "aiv", ["x"])
    b.copy_gm_to_ub(0, b.reg("x"), 32, gm_reg="k", gm_bound=64)
    gm = GlobalMemory()
    x = gm.put(np.zeros(16, np.float32))
    with pytest.raises(ProgramError, match=r"copy_gm_to_ub \(pc 0\) on core aiv0: data register k is read before"):
        launch(b.build(), args=dict(x=x), gm=gm)


def test_gm_reg_needs_a_positive_bound():
    b = ProgramBuilder("t", "aiv", ["x"])
    b.dmov("k", 0)
    b.copy_gm_to_ub(0, b.reg("x"), 32, gm_reg="k")
    gm = GlobalMemory()
    x = gm.put(np.zeros(16, np.float32))
    with pytest.raises(ProgramError, match=r"gm_bound=0 must be a positive int with gm_reg"):
        launch(b.build(), args=dict(x=x), gm=gm)


def test_register_addressed_store_scatters_rows():
    """The MTE3 direction: the register offsets the GM destination (a row scatter)."""
    gm = GlobalMemory()
    src = np.arange(3 * 8, dtype=np.float32).reshape(3, 8)
    where = np.array([4, 0, 2], np.int64)
    s, w = gm.put(src), gm.put(where)
    out = gm.put(np.full((5, 8), -1, np.float32))
    b = ProgramBuilder("scatter", "aiv", ["s", "w", "o"])
    b.copy_gm_to_ub(0, b.reg("w"), 24)
    b.copy_gm_to_ub(1024, b.reg("s"), 96)
    b.set_flag("MTE2", "S", 0)
    b.wait_flag("MTE2", "S", 0)
    b.set_flag("MTE2", "MTE3", 0)
    b.wait_flag("MTE2", "MTE3", 0)
    b.dmov("row", 32)
    for r in range(3):
        b.ld_ub("i64", "i", 8 * r)
        b.smul("i64", "i", "i", "row")
        b.copy_ub_to_gm(b.reg("o"), 1024 + 32 * r, 32, gm_reg="i", gm_bound=5 * 32)
    launch(b.build(), args=dict(s=s, w=w, o=out), gm=gm)
    ref = np.full((5, 8), -1, np.float32)
    ref[where] = src
    np.testing.assert_array_equal(gm.read(out, np.float32, (5, 8)), ref)


def test_assembly_round_trip_prints_the_register_only_when_used():
    text = to_text(_gather_program(2))
    assert to_text(parse(text)) == text
    assert "gm_reg=i gm_bound=1776" in text
    plain = [line for line in text.splitlines() if "copy_ub_to_gm" in line][0]
    assert "gm_reg" not in plain and "gm_bound" not in plain
