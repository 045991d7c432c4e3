"""hivm.varange (vci) kernels from the real pipeline on the simulator, hazard checker on, against numpy."""

import numpy as np
import pytest

from .helpers import drop_one_sync, lower, only_kernel, run_kernel


def _arange_rows(dt: str, start: int, step: int) -> str:
    t, r = f"tensor<s0x40x{dt}>", f"tensor<s0x{dt}>"
    return f"""module attributes {{symbols = {{s0 = [1, 2000]}}}} {{
  func.func @main(%x: {t}) -> ({t}, {r}) {{
    %a = hfusion.arange {{start = {start}, step = {step}}} : () -> {r}
    %b = hfusion.broadcast %a {{dims = [1]}} : ({r}) -> {t}
    %m = hfusion.elemwise_binary %x, %b {{fun = "add"}} : ({t}, {t}) -> {t}
    func.return %m, %a : {t}, {r}
  }}
}}"""


@pytest.mark.parametrize("dt, start, step", [("f32", 0, 1), ("f32", 7, -3), ("f16", -5, 1), ("i32", 100, 2)])
def test_arange_along_tiled_rows(dt, start, step):
    """One value per row, counted from each work item's row offset; dynamic rows over several tiles and cores."""
    ck = only_kernel(lower(_arange_rows(dt, start, step)))
    npd = {"f32": np.float32, "f16": np.float16, "i32": np.int32}[dt]
    for s0 in (5, 1999):
        x = (np.arange(s0 * 40).reshape(s0, 40) % 7).astype(npd)
        outs, res = run_kernel(ck, [x], {"s0": s0})
        out, rows = sorted(outs, key=lambda a: -a.size)  # the fused kernel orders its outputs
        col = (start + step * np.arange(s0)).astype(npd)
        np.testing.assert_array_equal(rows.reshape(-1), col)
        np.testing.assert_array_equal(out.reshape(x.shape), x + col[:, None])
        assert res.stats.hazards_checked
        assert "vci" in ck.assembly()


def test_arange_row_returned_once():
    """A row returned beside the rows it scaled: only the first row tile stores it (no two cores write it)."""
    text = """module attributes {symbols = {s0 = [1, 5000]}} {
  func.func @main(%x: tensor<s0x8xf32>) -> (tensor<8xf32>, tensor<s0x8xf32>) {
    %a = hfusion.arange {start = 1, step = 2} : () -> tensor<8xf32>
    %b = hfusion.broadcast %a {dims = [0]} : (tensor<8xf32>) -> tensor<s0x8xf32>
    %m = hfusion.elemwise_binary %x, %b {fun = "mul"} : (tensor<s0x8xf32>, tensor<s0x8xf32>) -> tensor<s0x8xf32>
    func.return %a, %m : tensor<8xf32>, tensor<s0x8xf32>
  }
}"""
    ck = only_kernel(lower(text, max_tile_elems=256))
    s0 = 4000
    x = np.ones((s0, 8), np.float32)
    outs, res = run_kernel(ck, [x], {"s0": s0})
    out, row = sorted(outs, key=lambda a: -a.size)
    assert ck.tiling.block_dim({"s0": s0}) > 1
    np.testing.assert_array_equal(row.reshape(-1), 1 + 2 * np.arange(8, dtype=np.float32))
    row_ref = 1 + 2 * np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(out.reshape(x.shape), np.broadcast_to(row_ref, x.shape))


def _gather(dt: str, it: str, broadcast_index: bool) -> str:
    x, r = f"tensor<s0x37x{dt}>", f"tensor<s0x21x{dt}>"
    if broadcast_index:  # index_select: one index row for every row
        head = f"%i: tensor<21x{it}>"
        idx = f"%j = hfusion.broadcast %i {{dims = [0]}} : (tensor<21x{it}>) -> tensor<s0x21x{it}>\n    "
    else:
        head, idx = f"%i: tensor<s0x21x{it}>", ""
    j = "%j" if broadcast_index else "%i"
    return f"""module attributes {{symbols = {{s0 = [1, 3000]}}}} {{
  func.func @main(%x: {x}, {head}) -> ({r}) {{
    {idx}%g = hfusion.gather %x, {j} {{dim = 1}} : ({x}, tensor<s0x21x{it}>) -> {r}
    func.return %g : {r}
  }}
}}"""


NP = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "i64": np.int64}


@pytest.mark.parametrize("dt, it, broadcast_index",
                         [("f32", "i64", False), ("f16", "i64", True), ("f32", "i32", False), ("bf16", "i64", False),
                          ("i64", "i64", False), ("i64", "i32", True)])
def test_gather_last_dim(dt, it, broadcast_index):
    """x.gather(1, index): the rows of x whole in UB, the index converted to byte offsets, one vgather per row (i64
    data: b32 words, each element's two)."""
    import ml_dtypes

    npd = ml_dtypes.bfloat16 if dt == "bf16" else NP[dt]
    ck = only_kernel(lower(_gather(dt, it, broadcast_index)))
    rng = np.random.default_rng(0)
    for s0 in (3, 2500):
        x = rng.integers(-2**62, 2**62, (s0, 37)) if dt == "i64" else rng.uniform(-9, 9, (s0, 37)).astype(npd)
        index = rng.integers(0, 37, (21,) if broadcast_index else (s0, 21)).astype(NP[it])
        args = {"x": x, "i": index}
        (out,), res = run_kernel(ck, [args[a.name] for a in ck.arg_layout if not a.is_output], {"s0": s0})
        full = np.broadcast_to(index, (s0, 21))
        np.testing.assert_array_equal(out.reshape(s0, 21), np.take_along_axis(x, full.astype(np.int64), 1))
        assert res.stats.hazards_checked
    assert "vgather" in ck.assembly()


def test_gather_i64_data_moves_word_pairs():
    """The A2 vgather moves b16 and b32 elements: an i64 gather is a b32 vgather of twice the words, by offsets that
    pair each element's offset with the next word's (8 levels more than an f32 gather's)."""
    i64 = only_kernel(lower(_gather("i64", "i32", False))).assembly()
    f32 = only_kernel(lower(_gather("f32", "i32", False))).assembly()
    gathers = [line for line in i64.splitlines() if line.lstrip().startswith("vgather")]
    assert gathers and all("i32" in line for line in gathers), gathers
    assert "vci" in i64 and "vci" not in f32
    assert i64.count("pipe_barrier barrier_pipe=V") == f32.count("pipe_barrier barrier_pipe=V") + 8


@pytest.mark.parametrize("it, levels", [("i64", 10), ("i32", 4)])
def test_gather_index_conversion_levels(it, levels):
    """The index → byte offsets conversion runs the low and high words' independent steps side by side: an i64
    index takes 9 vector levels (each a pipe_barrier V and a start-up) before the data vgathers' (13 before), an
    i32 index 3."""
    ck = only_kernel(lower(_gather("f32", it, False)))
    assert ck.assembly().count("pipe_barrier barrier_pipe=V") == levels


@pytest.mark.parametrize("dt, where", [("f32", r"element 5 of repeat 0 .* outside the source of 148 B \(37 elements of 4 B\)"),
                                       ("i64", r"element 1[01] of repeat 0 .* outside the source of 296 B")])
@pytest.mark.parametrize("bad", [37, -1, 2**32 + 3, -(2**32) + 5, 2**31 + 1])
def test_gather_index_out_of_range(bad, dt, where):
    """An index outside [0, 37) — also one whose low word alone looks valid — stops the kernel, naming vgather (i64
    data: both of the element's words' offsets stay outside the row)."""
    from simulator import ProgramError

    ck = only_kernel(lower(_gather(dt, "i64", False)))
    x = np.zeros((4, 37), NP[dt])
    index = np.zeros((4, 21), np.int64)
    index[2, 5] = bad
    args = {"x": x, "i": index}
    with pytest.raises(ProgramError, match=r"vgather \(pc \d+\): " + where):
        run_kernel(ck, [args[a.name] for a in ck.arg_layout if not a.is_output], {"s0": 4})


def _rows(dt: str, it: str, d: int = 40) -> str:
    """out = w[i] * 2 (embedding rows from GM by an index broadcast over the row), dynamic table rows s1."""
    w, r = f"tensor<s1x{d}x{dt}>", f"tensor<s0x{d}x{dt}>"
    mul = "" if dt == "bf16" else f"""
    %m = hfusion.elemwise_binary %g, %c {{fun = "mul"}} : ({r}, {dt}) -> {r}"""
    out = "%g" if dt == "bf16" else "%m"
    return f"""module attributes {{symbols = {{s0 = [1, 3000], s1 = [1, 100000]}}}} {{
  func.func @main(%w: {w}, %i: tensor<s0x{it}>) -> ({r}) {{
    %c = arith.constant {{value = 2.0}} : () -> {dt}
    %j = hfusion.broadcast %i {{dims = [1]}} : (tensor<s0x{it}>) -> tensor<s0x{d}x{it}>
    %g = hfusion.gather %w, %j {{dim = 0}} : ({w}, tensor<s0x{d}x{it}>) -> {r}{mul}
    func.return {out} : {r}
  }}
}}"""


def _run_rows(ck, w, index, bindings):
    args = {"w": w, "i": index}
    return run_kernel(ck, [args[a.name] for a in ck.arg_layout if not a.is_output], bindings)


@pytest.mark.parametrize("dt, it", [("f32", "i64"), ("f16", "i32"), ("bf16", "i64")])
def test_gather_rows_from_gm(dt, it):
    """w[i]: the index tile in UB, one register-addressed row copy per index (hivm.embedding_gather), hazard-free
    on several cores; the table's rows are dynamic and never loaded whole."""
    import ml_dtypes

    npd = ml_dtypes.bfloat16 if dt == "bf16" else NP[dt]
    ck = only_kernel(lower(_rows(dt, it)))
    asm = ck.assembly()
    assert "gm_reg=g_i" in asm and "ld_ub dtype=" + it in asm
    rng = np.random.default_rng(1)
    for s0, s1 in ((7, 3), (2500, 1000)):
        w = rng.uniform(-9, 9, (s1, 40)).astype(npd)
        index = rng.integers(0, s1, s0).astype(NP[it])
        index[:2] = [0, s1 - 1]
        (out,), res = _run_rows(ck, w, index, {"s0": s0, "s1": s1})
        ref = w[index.astype(np.int64)]
        np.testing.assert_array_equal(out.reshape(s0, 40), ref if dt == "bf16" else ref * npd(2))
        assert res.stats.hazards_checked
        assert res.stats.bytes["GM->UB"] == index.nbytes + ref.nbytes  # the index once, each row once
    assert ck.tiling.block_dim({"s0": 2500, "s1": 1000}) > 1


def test_gather_rows_spread_over_cores_whole():
    """A static embedding of 256 rows of 128 on 48 cores: 43 work items of 6 whole rows (one index load and six row
    copies on the busiest core), not 86 half rows (two index loads and twelve row copies, each paying a DMA's fixed
    latency: 3,361 cycles before)."""
    text = """module {
  func.func @main(%w: tensor<512x128xf32>, %i: tensor<256xi64>) -> (tensor<256x128xf32>) {
    %j = hfusion.broadcast %i {dims = [1]} : (tensor<256xi64>) -> tensor<256x128xi64>
    %g = hfusion.gather %w, %j {dim = 0} : (tensor<512x128xf32>, tensor<256x128xi64>) -> tensor<256x128xf32>
    func.return %g : tensor<256x128xf32>
  }
}"""
    ck = only_kernel(lower(text))
    assert ck.tiling({})["block_dim"] == 43 and "tiles1" not in ck.tiling({})
    w = np.random.default_rng(2).standard_normal((512, 128)).astype(np.float32)
    index = np.random.default_rng(3).integers(0, 512, 256)
    (out,), res = _run_rows(ck, w, index, {})
    np.testing.assert_array_equal(out.reshape(256, 128), w[index])
    assert res.stats.hazards_checked and res.stats.cycles < 2000


def test_gather_rows_tiled_along_the_row():
    """Rows longer than the tile: each work item copies its column slice of every indexed row."""
    ck = only_kernel(lower(_rows("f32", "i64", d=3000), max_tile_elems=2048))
    w = np.arange(50 * 3000, dtype=np.float32).reshape(50, 3000)
    index = np.array([49, 0, 7, 7, 23], np.int64)
    (out,), res = _run_rows(ck, w, index, {"s0": 5, "s1": 50})
    np.testing.assert_array_equal(out.reshape(5, 3000), w[index] * 2)
    assert ck.tiling({"s0": 5, "s1": 50})["tiles1"] > 1 and res.stats.hazards_checked


@pytest.mark.parametrize("bad", [50, -1, 2**40, -(2**63)])
def test_gather_rows_index_out_of_range(bad):
    """An index outside [0, 50) stops the kernel at the row copy, naming it and the byte numbers."""
    from simulator import ProgramError

    ck = only_kernel(lower(_rows("f32", "i64")))
    index = np.array([3, bad, 4], np.int64)
    with pytest.raises(ProgramError, match=r"copy_gm_to_ub \(pc \d+\) on core aiv\d+: GM offset register g_i = -?\d+ "
                                           r"B is outside \[0, 8000\) B: index out of range"):
        _run_rows(ck, np.zeros((50, 40), np.float32), index, {"s0": 3, "s1": 50})


@pytest.mark.parametrize("src, dst", [("PIPE_MTE2", "PIPE_S"), ("PIPE_MTE2", "PIPE_V")])
def test_gather_rows_without_its_flag_races(src, dst):
    """Dropping the MTE2 -> S wait (the index read) or the MTE2 -> V wait (the rows read) is a race."""
    from simulator import RaceError

    module = lower(_rows("f32", "i64"))
    ck = only_kernel(module)
    broken = drop_one_sync(ck, module, src=src, dst=dst)
    reader = "ld_ub" if dst == "PIPE_S" else "v"
    with pytest.raises(RaceError, match=rf"{reader}\w* \({dst[5:]}, core aiv0, pc \d+\) reads what copy_gm_to_ub"):
        _run_rows(broken, np.ones((20, 40), np.float32), np.arange(6, dtype=np.int64), {"s0": 6, "s1": 20})


def test_gather_offsets_must_be_the_vector_op_right_before():
    """A ``vgather {converted}`` finds its byte offsets where its ``vgather_offsets`` left them, in the scratch: a
    vector op emitted between the two (which may reuse the scratch) is refused by codegen, naming both ops."""
    from codegen import CodegenError, compile_kernel

    module = lower(_gather("f32", "i64", False))
    func = next(op for op in module.body.ops if op.name == "func.func" and "kernel" in op.attributes)
    clone = func.clone()
    offsets = next(op for op in clone.walk() if op.name == "hivm.vgather_offsets")
    gather = next(op for op in clone.walk() if op.name == "hivm.vgather")
    gather.parent.insert_before(gather, offsets.clone())  # fine: the same index's offsets, again
    compile_kernel(clone, module)
    intruder = next(op for op in clone.walk() if op.name == "hivm.vgather_offsets").clone()
    intruder.set_operand(0, gather.operands[0])  # offsets of another buffer, written to the same scratch
    gather.parent.insert_before(gather, intruder)
    with pytest.raises(CodegenError, match=r"needs the hivm.vgather_offsets of its index as the vector op right "
                                           r"before it .*found 'hivm.vgather_offsets'"):
        compile_kernel(clone, module)
