"""A binary op's inlined column operand (``[rows, 1]`` broadcast along long rows) read as one scalar per row
(graph_passes.idioms.columns.scalar_column, codegen.vector_ops._scalar_column_binary): a V→S flag, ``ld_ub`` per
row, the vector-scalar instruction per row — against numpy with the hazard checker on, and faster than vbrcb."""

import numpy as np
import pytest

import codegen.vector_ops as vector_ops
from graph_passes.schedule import cost, tiling
from graph_passes.idioms.columns import scalar_column

from .helpers import lower, only_kernel, run_kernel
from .test_pipeline import _module

NP = {"f16": np.float16, "f32": np.float32}


def test_scalar_column_rule():
    """Few rows of several repeats, an op with a vector-scalar instruction (a subtraction: the column second)."""
    assert scalar_column("sub", False, "f32", 2, 4096)
    assert scalar_column("mul", True, "f16", 8, 512)  # 4 repeats of 128 f16
    assert not scalar_column("sub", True, "f32", 2, 4096)  # s - x: no single vector-scalar instruction
    assert not scalar_column("div", False, "f32", 2, 4096)  # x / s = x * (1/s) would round differently
    assert not scalar_column("add", False, "f32", 9, 4096)  # more rows: vbrcb covers 8 a repeat
    assert not scalar_column("add", False, "f32", 8, 192)  # 3 repeats a row
    assert not scalar_column("add", False, "i32", 2, 4096)


def _column_op(rows: str, cols: int, dt: str, fun: str, kind: str, column_first: bool = False) -> str:
    t, r = f"tensor<{rows}x{cols}x{dt}>", f"tensor<{rows}x{dt}>"
    a, b = ("%cb", "%x") if column_first else ("%x", "%cb")
    return _module(f"""
  func.func @main(%x: {t}) -> ({t}) {{
    %c = hfusion.reduce %x {{dims = [1], kind = "{kind}"}} : ({t}) -> {r}
    %cb = hfusion.broadcast %c {{dims = [1]}} : ({r}) -> {t}
    %y = hfusion.elemwise_binary {a}, {b} {{fun = "{fun}"}} : ({t}, {t}) -> {t}
    func.return %y : {t}
  }}""")


REF = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


@pytest.mark.parametrize("rows,cols,dt,fun,kind,first", [
    (16, 4096, "f32", "sub", "max", False),   # softmax's x - max
    (12, 4096, "f16", "sub", "max", False),
    (16, 2048, "f32", "mul", "sum", True),    # the column first: commutative
    (6, 1024, "f32", "add", "min", False),
    (10, 4096, "f16", "max", "min", False),
    (10, 4096, "f32", "min", "max", True),
    ("s0", 4096, "f32", "sub", "max", False),  # rows a launch-time size: each row's load and op guarded
])
def test_column_read_as_scalars(rows, cols, dt, fun, kind, first, monkeypatch):
    """(With the schedule's choice forced: most of these small kernels stream DDR longer than they compute.)"""
    monkeypatch.setattr(tiling, "streams_ddr", lambda *a: False)
    ck = only_kernel(lower(_column_op(rows, cols, dt, fun, kind, first)))
    asm = ck.assembly()
    assert "ld_ub" in asm and "sreg=" in asm and "vbrcb" not in asm, asm
    assert "set_flag src_pipe=V dst_pipe=S" in asm and "set_flag src_pipe=S dst_pipe=V" in asm
    n = 37 if rows == "s0" else rows
    bind = {"s0": n} if rows == "s0" else {}
    x = np.random.default_rng(3).uniform(-2, 2, (n, cols)).astype(NP[dt])
    (out,), res = run_kernel(ck, [x], bind)
    assert res.stats.hazards_checked
    c = {"max": np.max, "min": np.min, "sum": np.sum}[kind](x.astype(np.float32), axis=1,
                                                            keepdims=True).astype(NP[dt])
    want = REF[fun](c, x) if first else REF[fun](x, c)
    tol = dict(rtol=1e-6, atol=1e-5) if dt == "f32" else dict(rtol=2e-3, atol=2e-3)
    if kind == "sum":
        tol = dict(rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(out.reshape(x.shape).astype(np.float32), want.astype(np.float32), **tol)


def test_only_a_kernel_bound_by_its_vector_work_reads_scalars():
    """The scalar unit waits for the vector pipe before each load, and issues nothing meanwhile — the next tile's
    load included: x - max(x) over 4 rows of 4096 f32 (4 cores, little DDR traffic) reads scalars; over 16 rows
    (16 cores streaming 32 KiB a row at their share of DDR) it keeps vbrcb, and its schedule says so."""
    small = lower(_column_op(4, 4096, "f32", "sub", "max"))
    assert "ld_ub" in only_kernel(small).assembly()
    large = lower(_column_op(16, 4096, "f32", "sub", "max"))
    assert "vbrcb" in only_kernel(large).assembly() and "ld_ub" not in only_kernel(large).assembly()
    sched = [op.attributes["schedule"] for m in (small, large) for op in m.walk()
             if op.name == "func.func" and "schedule" in op.attributes]
    assert [s.scalar_columns for s in sched] == [True, False]


def test_scalar_columns_are_faster_than_vbrcb(monkeypatch):
    """x - max(x) over 4 rows of 4096 f32 (one a core): the subtraction's repeats cost 1 cycle (vadds) instead of 2
    (vsub with a vbrcb'd column), with the same result."""
    text = _column_op(4, 4096, "f32", "sub", "max")
    x = np.random.default_rng(4).standard_normal((4, 4096)).astype(np.float32)
    (fast_out,), fast = run_kernel(only_kernel(lower(text)), [x], {})
    for mod in (cost, vector_ops):  # the modules that read the idiom
        monkeypatch.setattr(mod, "scalar_column", lambda *a: False)
    ck = only_kernel(lower(text))
    assert "vbrcb" in ck.assembly() and "ld_ub" not in ck.assembly()
    (slow_out,), slow = run_kernel(ck, [x], {})
    np.testing.assert_array_equal(fast_out, slow_out)
    # 64 repeats a cycle cheaper and no vbrcb step: 1,096 -> 1,023 cycles when written
    assert fast.stats.cycles < slow.stats.cycles - 60, (fast.stats.cycles, slow.stats.cycles)


def test_no_spare_event_id_keeps_vbrcb(monkeypatch):
    """The op's own V→S and S→V flags need ids no inject-sync flag of the kernel uses; with none free the column
    is vbrcb'd, with the same result."""
    from codegen.lowering import KernelEmitter

    text = _column_op(4, 4096, "f32", "sub", "max")
    x = np.random.default_rng(5).standard_normal((4, 4096)).astype(np.float32)
    (want,), _ = run_kernel(only_kernel(lower(text)), [x], {})
    monkeypatch.setattr(KernelEmitter, "spare_event_id", lambda self, src, dst: None)
    ck = only_kernel(lower(text))
    assert "vbrcb" in ck.assembly() and "ld_ub" not in ck.assembly()
    (out,), res = run_kernel(ck, [x], {})
    assert res.stats.hazards_checked
    np.testing.assert_array_equal(out, want)


def _centered(rows: int, cols: int, dt: str) -> str:
    """x - mean(x) over the last dim: the mean a row sum times a constant (1/cols), read only by the subtraction."""
    t, r = f"tensor<{rows}x{cols}x{dt}>", f"tensor<{rows}x{dt}>"
    return _module(f"""
  func.func @main(%x: {t}) -> ({t}) {{
    %k = arith.constant {{value = {1.0 / cols}}} : () -> {dt}
    %s = hfusion.reduce %x {{dims = [1], kind = "sum"}} : ({t}) -> {r}
    %m = hfusion.elemwise_binary %s, %k {{fun = "mul"}} : ({r}, {dt}) -> {r}
    %mb = hfusion.broadcast %m {{dims = [1]}} : ({r}) -> {t}
    %y = hfusion.elemwise_binary %x, %mb {{fun = "sub"}} : ({t}, {t}) -> {t}
    func.return %y : {t}
  }}""")


@pytest.mark.parametrize("spare,cols", [(True, 4096), (True, 768), (False, 4096)])  # 1/768: not exact in f32
def test_a_scaled_column_is_scaled_by_the_scalar_unit(spare, cols, monkeypatch):
    """x - sum(x)/N: no vector op computes the mean (convert-to-hivm's scaled columns, ``column_scale``); the scalar
    unit multiplies each row's sum as it loads it (smul f32: the product vmuls would give, so the result is the
    same bit for bit as with the vector multiply) — or, with no spare event id, a vmuls over the vbrcb'd blocks."""
    from codegen.lowering import KernelEmitter

    if not spare:
        monkeypatch.setattr(KernelEmitter, "spare_event_id", lambda self, src, dst: None)
    rows = 4
    module = lower(_centered(rows, cols, "f32"))
    kernel = next(op for op in module.walk() if op.name == "func.func" and "schedule" in op.attributes)
    binaries = [op for op in kernel.walk() if op.name == "hivm.vbinary"]
    assert [op.attributes.get("column_scale") for op in binaries] == [1.0 / cols]  # the mean's mul is gone
    ck = only_kernel(module)
    asm = ck.assembly()
    assert ("smul" in asm and "vbrcb" not in asm) if spare else ("smul" not in asm and "vbrcb" in asm)
    x = np.random.default_rng(6).standard_normal((rows, cols)).astype(np.float32)
    (out,), res = run_kernel(ck, [x], {})
    assert res.stats.hazards_checked
    s = x.astype(np.float64).sum(1)
    np.testing.assert_allclose(out.reshape(x.shape), x - (s / cols)[:, None], rtol=0, atol=1e-6)
    from graph_passes.conversion import hfusion_to_hivm

    monkeypatch.setattr(hfusion_to_hivm.KernelLowering, "_scaled_columns", lambda self: {})
    plain = only_kernel(lower(_centered(rows, cols, "f32")))
    assert "vmuls" in plain.assembly()  # the mean computed by the vector unit
    (want,), _ = run_kernel(plain, [x], {})
    np.testing.assert_array_equal(out, want)
