"""Math funs with no vector instruction (codegen/math_ops.py): erf, gelu_erf, sin, cos, sign, pow — kernels from the
real pipeline (scratch sized by hfusion-auto-schedule), run on the simulator with the hazard checker on, against
torch in float64 rounded to the dtype."""

import numpy as np
import pytest
import torch

from .helpers import lower, only_kernel, op_levels, run_kernel

NP = {"f16": np.float16, "f32": np.float32}
TOL = {"f32": dict(rtol=1.3e-6, atol=1e-5), "f16": dict(rtol=1e-3, atol=1e-3)}
COLS = 200  # f16 rows of 400 B are padded to 416 B in UB: the row-mode path; f32 rows are contiguous


def _unary_module(fun: str, dt: str, cols: int = COLS) -> str:
    t = f"tensor<s0x{cols}x{dt}>"
    return f"""module attributes {{symbols = {{s0 = [1, 4096]}}}} {{
  func.func @main(%x: {t}) -> ({t}) {{
    %r = hfusion.elemwise_unary %x {{fun = "{fun}"}} : ({t}) -> {t}
    func.return %r : {t}
  }}
}}"""


def _pow_module(e: float, dt: str, cols: int = COLS, scalar_base: bool = False) -> str:
    t = f"tensor<s0x{cols}x{dt}>"
    operands = f"%c, %x : ({dt}, {t})" if scalar_base else f"%x, %c : ({t}, {dt})"
    return f"""module attributes {{symbols = {{s0 = [1, 4096]}}}} {{
  func.func @main(%x: {t}) -> ({t}) {{
    %c = arith.constant {{value = {e!r}}} : () -> {dt}
    %r = hfusion.elemwise_binary {operands.split(' : ')[0]} {{fun = "pow"}} : {operands.split(' : ')[1]} -> {t}
    func.return %r : {t}
  }}
}}"""


def _run(text: str, x: np.ndarray):
    ck = only_kernel(lower(text))
    rows = x.size // COLS
    (out,), res = run_kernel(ck, [x.reshape(rows, COLS)], {"s0": rows})
    assert res.stats.hazards_checked and res.stats.cycles > 0
    return out.reshape(-1), ck


def _inputs(dt: str, lo: float, hi: float, rows: int = 37, special=()) -> np.ndarray:
    n = rows * COLS
    rng = np.random.default_rng(0)
    x = np.concatenate([np.linspace(lo, hi, n // 2), rng.uniform(lo, hi, n - n // 2)])
    x[: len(special)] = special
    return x.astype(NP[dt])


def _check(out, ref, dt):
    with np.errstate(over="ignore"):
        ref = ref.astype(NP[dt]).astype(np.float64)  # torch's result in the dtype (f16 overflow: inf)
    np.testing.assert_allclose(out.astype(np.float64), ref, **TOL[dt])


def _torch(f, x):
    return f(torch.from_numpy(x.astype(np.float64))).numpy()


def _reference(fun, x):
    """torch in float64, but eager's own result in x's dtype at ±inf for gelu_erf: NaN at +inf in f32 (its
    vectorized GELU), +inf in f16."""
    f = UNARY[fun][0]
    ref = _torch(f, x)
    if fun == "gelu_erf":
        inf = np.isinf(x)
        ref[inf] = f(torch.from_numpy(x[inf])).double().numpy()
    return ref


SPECIAL = (np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-30, -1e-30)
UNARY = {
    "erf": (torch.erf, -6.0, 6.0),
    "gelu_erf": (torch.nn.functional.gelu, -10.0, 10.0),
    "sin": (torch.sin, -100.0, 100.0),
    "cos": (torch.cos, -100.0, 100.0),
}


@pytest.mark.parametrize("dt", ["f32", "f16"])
@pytest.mark.parametrize("fun", sorted(UNARY))
def test_unary_math(fun, dt):
    f, lo, hi = UNARY[fun]
    special = SPECIAL if fun in ("erf", "gelu_erf") else (np.nan, 0.0, -0.0, 1e-30, np.pi, -np.pi / 2, 3 * np.pi / 2)
    x = _inputs(dt, lo, hi, special=special)
    out, ck = _run(_unary_module(fun, dt), x)
    _check(out, _reference(fun, x), dt)
    if fun == "erf":
        assert out[0] == 1 and out[1] == -1 and np.isnan(out[2])
    if fun == "gelu_erf":  # gelu(+inf) as eager in the dtype; gelu(-inf) NaN in both
        assert (np.isnan(out[0]) if dt == "f32" else out[0] == np.inf) and np.isnan(out[1]) and np.isnan(out[2])
    asm = ck.assembly()
    assert "vmul" in asm and ("vdiv" in asm) == (fun in ("erf", "gelu_erf"))  # the sequence, no fallback
    assert ("vconv" in asm) == (dt == "f16" or fun in ("sin", "cos"))


def test_unary_math_in_a_softmax_like_fused_kernel():
    """gelu on a 2-D tile in between other ops (in place on an intermediate buffer)."""
    t = f"tensor<s0x{COLS}xf32>"
    text = f"""module attributes {{symbols = {{s0 = [1, 4096]}}}} {{
  func.func @main(%x: {t}, %y: {t}) -> ({t}) {{
    %a = hfusion.elemwise_binary %x, %y {{fun = "add"}} : ({t}, {t}) -> {t}
    %g = hfusion.elemwise_unary %a {{fun = "gelu_erf"}} : ({t}) -> {t}
    %s = hfusion.elemwise_unary %g {{fun = "sin"}} : ({t}) -> {t}
    func.return %s : {t}
  }}
}}"""
    ck = only_kernel(lower(text))
    rng = np.random.default_rng(1)
    for rows in (1, 300):
        x, y = (rng.standard_normal((rows, COLS)).astype(np.float32) * 3 for _ in range(2))
        args = {"x": x, "y": y}
        (out,), _ = run_kernel(ck, [args[a.name] for a in ck.arg_layout if not a.is_output], {"s0": rows})
        ref = np.sin(_torch(torch.nn.functional.gelu, (x.astype(np.float64) + y)))
        np.testing.assert_allclose(out.reshape(ref.shape), ref, **TOL["f32"])


@pytest.mark.parametrize("dt", ["f32", "f16"])
def test_sign(dt):
    tiny = 1e-45 if dt == "f32" else 6e-8  # the smallest subnormal
    x = _inputs(dt, -3.0, 3.0, special=SPECIAL + (tiny, -tiny, 0.0))
    out, _ = _run(_unary_module("sign", dt), x)
    ref = _torch(torch.sign, x).astype(NP[dt])
    ref[np.isnan(x)] = np.nan  # NaN propagates (torch gives 0; docs/codegen.md)
    np.testing.assert_array_equal(out, ref)
    assert np.signbit(out[x == 0]).tolist() == np.signbit(x[x == 0]).tolist()  # sign(±0) = ±0


POW_INT = [2.0, 3.0, 4.0, 5.0, 7.0, 10.0, -1.0, -2.0, -3.0, 0.0]  # x ** 1 is folded by canonicalize
POW_FRAC = [0.5, -0.5, 1.7, -0.3, 2.5]


@pytest.mark.parametrize("dt", ["f32", "f16"])
@pytest.mark.parametrize("e", POW_INT + POW_FRAC)
def test_pow_scalar_exponent(e, dt):
    if float(e).is_integer():  # negative bases: torch's (-1)^e·|x|^e
        x = _inputs(dt, -4.0, 4.0, special=(0.0, -0.0, np.nan, 1.0, -1.0, 2.0, -2.0))
    else:  # non-integer exponents: x < 0 gives NaN (torch)
        x = _inputs(dt, 0.05, 10.0, special=(0.0, np.inf, np.nan, -1.0, -2.5, 1.0, 4.0))
    out, _ = _run(_pow_module(e, dt), x)
    _check(out, _torch(lambda v: torch.pow(v, e), x), dt)


@pytest.mark.parametrize("dt", ["f32", "f16"])
def test_pow_scalar_base(dt):
    x = _inputs(dt, -8.0, 8.0)
    out, _ = _run(_pow_module(1.5, dt, scalar_base=True), x)
    _check(out, _torch(lambda v: torch.pow(1.5, v), x), dt)


def test_scratch_is_planned_for_the_temporaries():
    from graph_passes.idioms.math_funs import math_temps

    module = lower(_unary_module("erf", "f16"))
    allocs = [op for op in module.walk() if op.name == "hivm.alloc" and op.attributes.get("scratch")]
    assert len(allocs) == 1
    assert math_temps("erf", "f16") == 6 and math_temps("pow", "f32", 2.0) == 0 and math_temps("pow", "f32", 3) == 2


def _static_unary(fun: str) -> str:
    t = "tensor<8x512xf32>"
    return f"""module {{
  func.func @main(%x: {t}) -> ({t}) {{
    %r = hfusion.elemwise_unary %x {{fun = "{fun}"}} : ({t}) -> {t}
    func.return %r : {t}
  }}
}}"""


@pytest.mark.parametrize("fun, levels", [("erf", 16), ("gelu_erf", 20)])
def test_erf_polynomials_share_their_steps(fun, levels):
    """erf's numerator P and denominator Q (Horner in x², 12 and 8 steps) run side by side, and the clamp beside
    x²: 16 dependent steps of the vector pipe (each pays the start-up after a ``pipe_barrier V``), where one chain
    after the other took 25; gelu_erf 20 (was 29). The results stay those of each chain's Horner rounding."""
    ck = only_kernel(lower(_static_unary(fun)))
    assert op_levels(ck, "hivm.vunary") == levels
    x = _inputs("f32", -6.0, 6.0, rows=8 * 512 // COLS + 1, special=SPECIAL)[: 8 * 512].reshape(8, 512)
    (out,), res = run_kernel(ck, [x], {})
    assert res.stats.hazards_checked
    _check(out.reshape(-1), _reference(fun, x.reshape(-1)), "f32")


@pytest.mark.parametrize("fun", ["erf", "gelu_erf", "sin", "cos"])
def test_schedule_estimate_counts_the_sequence(fun):
    """The schedule's estimate (graph_passes/schedule/cost.py ``SEQUENCES``) of a math sequence: as many dependent
    steps as codegen emits and as many instructions (each over the one repeat of this 64-element tile)."""
    from graph_passes.schedule.cost import SEQUENCES

    t = "tensor<64xf32>"
    ck = only_kernel(lower(_static_unary(fun).replace("tensor<8x512xf32>", t)))
    classes, levels = SEQUENCES[fun]
    assert op_levels(ck, "hivm.vunary") == levels
    asm = ck.assembly()
    body = asm[asm.index("# hivm.vunary"):]
    body = body[: body.index("\n#", 1)] if "\n#" in body[1:] else body
    n_instr = sum(1 for line in body.splitlines() if line.strip().startswith("v"))
    assert n_instr == sum(classes.values())


def test_schedule_estimate_counts_the_f16_gelu():
    """f16 gelu_erf keeps gelu(+inf) = +inf (eager's f16 GELU): the f32 sequence without its x + x·0, plus the casts
    in and out; the schedule's ``F16_SEQUENCES`` counts what codegen emits."""
    from graph_passes.schedule.cost import F16_SEQUENCES, SEQUENCES

    t = "tensor<64xf16>"
    ck = only_kernel(lower(_static_unary("gelu_erf").replace("tensor<8x512xf32>", t)))
    classes, levels = F16_SEQUENCES["gelu_erf"]
    assert op_levels(ck, "hivm.vunary") == levels + 2
    asm = ck.assembly()
    body = asm[asm.index("# hivm.vunary"):]
    body = body[: body.index("\n#", 1)] if "\n#" in body[1:] else body
    n_instr = sum(1 for line in body.splitlines() if line.strip().startswith("v"))
    assert n_instr == sum(classes.values()) + 2  # the casts
    assert sum(SEQUENCES["gelu_erf"][0].values()) == sum(classes.values()) + 2  # f32: x·0 and x + x·0 instead
