"""Launch replay (replay.py): a recorded launch's functional effects, replayed on new data without timing or hazard
checks, equal a full simulation bit for bit; a register-computed GM address that differs raises ReplayMismatch."""
import numpy as np
import pytest

from simulator import GlobalMemory, ProgramBuilder, launch
from simulator.examples.gemm import build_gemm
from simulator.examples.vector_add import build_vector_add
from simulator.replay import ReplayMismatch

from test_isa_register_dma import ROW, D, V, _gather_program


def _place(arrays, out_bytes):
    gm = GlobalMemory()
    addrs = [gm.put(a) for a in arrays]
    return gm, addrs, gm.alloc(out_bytes)


def test_vector_add_replay_is_bit_identical_and_skips_timing():
    rng = np.random.default_rng(0)
    prog = build_vector_add("f16", 1024, 2)
    x, y = (rng.standard_normal(16 * 1024).astype(np.float16) for _ in range(2))
    gm, (ax, ay), az = _place([x, y], x.nbytes)
    args = dict(x=ax, y=ay, z=az, n_tiles=16)
    res = launch(prog, block_dim=4, args=args, gm=gm, record=True)
    rec = res.recording
    assert rec.n_effects > 0 and rec.n_binds == 0
    # new data, same layout: replay against a full simulation
    x2, y2 = (rng.standard_normal(16 * 1024).astype(np.float16) for _ in range(2))
    gm_full, (bx, by), bz = _place([x2, y2], x2.nbytes)
    launch(prog, block_dim=4, args=args, gm=gm_full)
    want = gm_full.read(bz, "f16", (16 * 1024,))
    assert rec.plan is not None  # the cores write disjoint GM: replayed across cores in lock step
    for batched in (True, False):
        gm_rep, _, _ = _place([x2, y2], x2.nbytes)
        rec.replay(gm_rep, batched=batched)
        got = gm_rep.read(az, "f16", (16 * 1024,))
        assert got.tobytes() == want.tobytes()
        np.testing.assert_array_equal(got, x2 + y2)
        assert not np.array_equal(got, gm.read(az, "f16", (16 * 1024,)))  # the replay computed, it did not copy
    assert rec.replays == 2
    assert len(rec.plan) < len(rec.steps) / 2  # the cores' identical steps ran as one numpy operation each


def test_gemm_replay_is_bit_identical():
    rng = np.random.default_rng(1)
    prog = build_gemm(128, 256, 256, 128)
    M, K, N = 256, 256, 512
    A, B = rng.uniform(-1, 1, (M, K)).astype(np.float16), rng.uniform(-1, 1, (K, N)).astype(np.float16)
    gm, (aa, ab), ac = _place([A, B], M * N * 2)
    args = dict(a=aa, b=ab, c=ac, M=M, N=N, K=K)
    rec = launch(prog, block_dim=4, args=args, gm=gm, record=True).recording
    A2, B2 = -A[::-1].copy(), B * 0.5
    gm_full, _, _ = _place([A2, B2], M * N * 2)
    launch(prog, block_dim=4, args=args, gm=gm_full)
    for batched in (True, False):
        gm_rep, _, _ = _place([A2, B2], M * N * 2)
        rec.replay(gm_rep, batched=batched)
        assert gm_rep.read(ac, "f16", (M, N)).tobytes() == gm_full.read(ac, "f16", (M, N)).tobytes()


def test_cores_that_share_gm_bytes_replay_in_the_recorded_order():
    """Every core stores its tile to the same GM bytes (a race the checker would reject; checked off here): the
    recorded order decides the last writer, so each store waits for the one recorded before it (replay_batch's GM
    dependencies) while the loads and adds still run as one operation over the cores."""
    b = ProgramBuilder("last_writer", "aiv", ["x", "out"])
    b.copy_gm_to_ub(0, b.reg("x") + b.reg("block_idx") * 64, 64)
    b.pipe_barrier("ALL")
    b.vadds("f32", 64, 0, 1.0, repeat=1, mask=16)
    b.pipe_barrier("ALL")
    b.copy_ub_to_gm(b.reg("out"), 64, 64)
    prog = b.build()
    x = np.arange(4 * 16, dtype=np.float32)
    gm, (ax,), out = _place([x], 64)
    rec = launch(prog, block_dim=4, args=dict(x=ax, out=out), gm=gm, check_hazards=False, record=True).recording
    assert rec.plan is not None and len(rec.plan) == 2 + 4  # the load and the add batched, the 4 stores in turn
    gm2, _, _ = _place([x * 3], 64)
    launch(prog, block_dim=4, args=dict(x=ax, out=out), gm=gm2, check_hazards=False)
    for batched in (True, False):
        gm3, _, _ = _place([x * 3], 64)
        rec.replay(gm3, batched=batched)
        assert gm3.read(out, "f32", (16,)).tobytes() == gm2.read(out, "f32", (16,)).tobytes()


def test_gm_dependencies_order_conflicting_steps_of_other_cores():
    """A read waits for the last write of its bytes by another core; a write for the last write and the reads since;
    steps of one core and disjoint bytes never wait."""
    from simulator.isa.base import Access
    from simulator.replay_batch import gm_dependencies

    class Step:
        def __init__(self, core, *accesses):
            self.core, self._acc = type("C", (), {"index": core})(), accesses

        def accesses(self, core):
            return [Access("GM", w, np.array([a]), 32) for a, w in self._acc]

    W, R = True, False
    xs = [Step(0, (0, W)), Step(1, (0, R)), Step(2, (0, R)), Step(1, (64, W)), Step(0, (0, W)), Step(2, (64, R)),
          Step(0, (128, W))]
    pos = {}
    placed = []
    for x in xs:
        c = x.core.index
        placed.append((c, pos.get(c, 0), x))
        pos[c] = pos.get(c, 0) + 1
    deps = gm_dependencies(placed)
    assert deps[(1, 0)] == [(0, 0)] and deps[(2, 0)] == [(0, 0)]  # the reads wait for core 0's write
    assert sorted(deps[(0, 1)]) == [(1, 0), (2, 0)]  # the second write waits for both reads (core 0's own: order)
    assert deps[(2, 1)] == [(1, 1)]  # core 1's write of 64
    assert (0, 2) not in deps and (0, 0) not in deps and (1, 1) not in deps


def _gather(prog, table, index, record=False):
    gm = GlobalMemory()
    t, i = gm.put(table), gm.put(index)
    out = gm.alloc(len(index) * ROW)
    res = launch(prog, args=dict(table=t, index=i, out=out), gm=gm, record=record)
    return gm, out, res


def test_register_computed_addresses_replay_when_equal_and_mismatch_when_not():
    index = np.array([3, 0, 36, 3, 17], np.int64)
    prog = _gather_program(len(index))
    table = np.arange(V * D, dtype=np.float32).reshape(V, D)
    _, _, res = _gather(prog, table, index, record=True)
    rec = res.recording
    assert rec.n_binds == len(index)
    # same indices, a new table: replayed, the new rows gathered
    gm, out, _ = _gather(prog, table * -2, index)
    gm.write(out, np.zeros(len(index) * D, np.float32))
    rec.replay(gm)
    np.testing.assert_array_equal(gm.read(out, np.float32, (len(index), D)), (table * -2)[index])
    # another index: the GM addresses (and so the timing) differ
    gm, _, _ = _gather(prog, table, index[::-1].copy())
    with pytest.raises(ReplayMismatch, match=r"copy_gm_to_ub \(pc \d+\) on core aiv0: register-computed GM address"):
        rec.replay(gm)


def test_byte_rows_is_the_fancy_index_or_none():
    """memory.byte_rows (strided rows for DMA, L1 loads, fixpipe) reads the bytes fancy indexing reads; it declines
    negative strides, overlapping rows to write and rows past the end."""
    from simulator.memory import byte_rows

    data = np.arange(256, dtype=np.uint8)
    for start, n, stride, length in ((0, 4, 40, 32), (5, 3, 16, 32), (64, 1, 0, 7), (0, 5, 32, 32)):
        idx = start + np.arange(n)[:, None] * stride + np.arange(length)[None, :]
        np.testing.assert_array_equal(byte_rows(data, start, n, stride, length), data[idx])
    assert byte_rows(data, 5, 3, 16, 32, write=True) is None  # overlapping rows: fancy assignment's order decides
    assert byte_rows(data, 64, 2, -32, 8) is None
    assert byte_rows(data, 200, 2, 40, 32) is None
    out = np.zeros(256, np.uint8)
    byte_rows(out, 8, 3, 64, 16, write=True)[...] = 7
    assert out.sum() == 7 * 48 and out[8:24].tolist() == [7] * 16 and out[24] == 0


def _mixed_vector_program():
    """Per core: its 512 f16 of x to UB; compare (tensor and scalar), select, dup with a partial mask, a strided
    copy (blk 2), vbrcb, a scalar op; every result back to the core's slice of out."""
    b = ProgramBuilder("mixed", "aiv", ["x", "y", "out"])
    off = b.reg("block_idx") * 1024
    b.copy_gm_to_ub(0, b.reg("x") + off, 1024)
    b.copy_gm_to_ub(1024, b.reg("y") + off, 1024)
    b.pipe_barrier("ALL")
    b.vcmp_lt("f16", 8192, 0, 1024, repeat=4)
    b.vcmps_gt("f16", 8448, 0, scalar=0.25, repeat=4)
    b.pipe_barrier("V")
    b.vsel("f16", 2048, 8192, 0, 1024, repeat=4)
    b.vsel("f16", 3072, 8448, 1024, 0, repeat=4)
    b.vdup("f16", 4096, -3.5, repeat=2, mask=100)
    b.vcopy("f16", 4608, 0, repeat=2, mask=128, dst_blk=1, src_blk=2, src_rep=16)
    b.vbrcb("f16", 5120, 0, repeat=2)
    b.vmuls("f16", 6144, 1024, 1.5, repeat=4)
    b.pipe_barrier("ALL")
    b.copy_ub_to_gm(b.reg("out") + b.reg("block_idx") * 6144, 2048, 6144)
    return b.build()


def test_mixed_vector_ops_replay_batched_and_in_order():
    rng = np.random.default_rng(4)
    prog = _mixed_vector_program()

    def run(x, y, record=False, full=True, batched=True, rec=None):
        gm, (ax, ay), out = _place([x, y], 4 * 6144)
        args = dict(x=ax, y=ay, out=out)
        if full:
            res = launch(prog, block_dim=4, args=args, gm=gm, record=record)
        else:
            rec.replay(gm, batched=batched)
            res = None
        return gm.read(out, "u8", (4 * 6144,)).tobytes(), res

    x, y = (rng.standard_normal(2048).astype(np.float16) for _ in range(2))
    _, res = run(x, y, record=True)
    rec = res.recording
    assert rec.plan is not None and len(rec.plan) < len(rec.steps) / 2
    x2, y2 = (rng.standard_normal(2048).astype(np.float16) for _ in range(2))
    want, _ = run(x2, y2)
    for batched in (True, False):
        assert run(x2, y2, full=False, batched=batched, rec=rec)[0] == want


def test_strided_tiles_replay_batched():
    """Each core moves a 2-D tile of a larger row-major matrix (strided bursts both ways): batched across cores."""
    b = ProgramBuilder("tiles", "aiv", ["x", "out"])
    col = b.reg("block_idx") * 32  # each core: 16 rows x 16 f16 at column block_idx * 16
    b.copy_gm_to_ub(0, b.reg("x") + col, 32, n_burst=16, src_stride=256, dst_stride=64)
    b.pipe_barrier("ALL")
    b.vadds("f16", 0, 0, 1.0, repeat=4)
    b.pipe_barrier("ALL")
    b.copy_ub_to_gm(b.reg("out") + col, 0, 32, n_burst=16, src_stride=64, dst_stride=256)
    prog = b.build()
    rng = np.random.default_rng(5)
    x = rng.standard_normal((16, 128)).astype(np.float16)
    gm, (ax,), out = _place([x], x.nbytes)
    rec = launch(prog, block_dim=8, args=dict(x=ax, out=out), gm=gm, record=True).recording
    assert rec.plan is not None and len(rec.plan) < len(rec.steps) / 2
    x2 = rng.standard_normal((16, 128)).astype(np.float16)
    gm_full, _, _ = _place([x2], x2.nbytes)
    launch(prog, block_dim=8, args=dict(x=ax, out=out), gm=gm_full)
    want = gm_full.read(out, "f16", (16, 128))
    np.testing.assert_array_equal(want, x2 + np.float16(1))
    for batched in (True, False):
        gm_rep, _, _ = _place([x2], x2.nbytes)
        rec.replay(gm_rep, batched=batched)
        assert gm_rep.read(out, "f16", (16, 128)).tobytes() == want.tobytes()


def test_pooled_local_memories_are_zero_for_every_replay():
    """Replays share the pool's local memories (replay_pool.py): a replay that writes UB leaves it zeroed again, so
    a launch that stores UB bytes it never wrote (zeros in a fresh core) gets zeros after another launch's replay."""
    from simulator.replay_pool import POOL

    def program(name, write):
        b = ProgramBuilder(name, "aiv", ["x", "out"])
        off = b.reg("block_idx") * 1024
        if write:
            b.copy_gm_to_ub(0, b.reg("x") + off, 1024)
            b.pipe_barrier("ALL")
            b.vadds("f32", 0, 0, 1.0, repeat=4)
            b.pipe_barrier("ALL")
        b.copy_ub_to_gm(b.reg("out") + off, 0, 1024)
        return b.build()

    x = np.arange(4 * 256, dtype=np.float32) + 1
    recs = {}
    for name, write in (("writes_ub", True), ("reads_fresh_ub", False)):
        gm, (ax,), out = _place([x], x.nbytes)
        recs[name] = launch(program(name, write), block_dim=4, args=dict(x=ax, out=out), gm=gm, check_hazards=False,
                            record=True).recording
    assert recs["writes_ub"].footprint == {("aiv", "UB"): [(0, 1024)]} and recs["reads_fresh_ub"].footprint == {}
    for batched in (True, False):
        gm, _, out = _place([x * 2], x.nbytes)
        recs["writes_ub"].replay(gm, batched=batched)
        np.testing.assert_array_equal(gm.read(out, "f32", (1024,)), x * 2 + 1)
        gm, _, out = _place([x * 3], x.nbytes)
        recs["reads_fresh_ub"].replay(gm, batched=batched)
        assert not gm.read(out, "f32", (1024,)).any()
    assert not any(a.any() for a in POOL.arrays.values())


def test_compiled_replay_is_kept_for_its_gm_image():
    """The plan is bound once per GM image (functions over views of it): replays on the same image reuse it and
    compute each call's new data; another image binds it again."""
    rng = np.random.default_rng(3)
    prog = build_vector_add("f32", 512, 2)
    x, y = (rng.standard_normal(8 * 512).astype(np.float32) for _ in range(2))
    gm, (ax, ay), az = _place([x, y], x.nbytes)
    args = dict(x=ax, y=ay, z=az, n_tiles=8)
    rec = launch(prog, block_dim=4, args=args, gm=gm, record=True).recording
    runs = None
    for k in range(3):
        gm.write(ax, x * k)
        rec.replay(gm)
        np.testing.assert_array_equal(gm.read(az, "f32", (x.size,)), x * k + y)
        assert runs is None or rec._runs[2] is runs  # bound once for this image
        runs = rec._runs[2]
    gm2, _, _ = _place([y, x], x.nbytes)
    rec.replay(gm2)
    assert rec._runs[2] is not runs
    np.testing.assert_array_equal(gm2.read(az, "f32", (x.size,)), x + y)


def test_grid_shape_and_views():
    """stack_rows: sequences that step evenly in runs (a grid) become one strided view; others do not."""
    from simulator.stack_rows import gm_view, grid_shape, rows_view

    assert grid_shape(np.arange(6)) == (1, 6)
    assert grid_shape(np.array([0, 1, 2, 4, 5, 6]), np.array([0, 64, 128, 1024, 1088, 1152])) == (2, 3)
    assert grid_shape(np.array([0, 1, 2, 4, 5, 6]), np.array([0, 64, 128, 1024, 1088, 1100])) is None
    assert grid_shape(np.array([0, 1, 3])) is None and grid_shape(np.array([3, 1])) is None
    stack = np.arange(8 * 16, dtype=np.uint8).reshape(8, 16)
    rows = np.array([0, 1, 4, 5])
    v = rows_view(stack, rows, (2, 2), 3, 5)
    np.testing.assert_array_equal(v.reshape(4, 5), stack[rows, 3:8])
    v[...] = 0
    assert not stack[rows, 3:8].any() and stack[2, 3:8].all()  # a view: written through, other rows untouched
    data = np.arange(4096, dtype=np.uint8)
    addrs = np.array([0, 100, 1000, 1100])
    g = gm_view(data, addrs, (2, 2), 3, 20, 8, write=False)
    want = data[addrs[:, None, None] + np.arange(3)[:, None] * 20 + np.arange(8)]
    np.testing.assert_array_equal(g.reshape(4, 3, 8), want)
    assert gm_view(data, addrs + 3000, (2, 2), 3, 20, 8, write=False) is None  # past the end
