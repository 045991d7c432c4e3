"""Bitwise ops on i16 lanes over the bytes (codegen/bitwise.py) and bools in kernels (hfusion-legalize-bool): i32
and/or/xor/not (also with a scalar), logical ops on i1 masks, masks stored as GM bools and GM bools read back —
kernels from the real pipeline, on the simulator with the hazard checker on, exactly equal to numpy. Sizes cover
several repeats, a partial tail, dynamic extents and 2-D tiles whose mask rows are padded (the rows path)."""

import numpy as np
import pytest

from simulator.errors import RaceError

from .helpers import drop_one_sync, lower, only_kernel, run_kernel


def _module(args: dict, body: str, results: dict, symbols: str = "s0 = [1, 4096]") -> str:
    sig = ", ".join(f"%{n}: {t}" for n, t in args.items())
    lines = "\n".join("    " + line for line in body.strip().splitlines())
    return f"""module attributes {{symbols = {{{symbols}}}}} {{
  func.func @main({sig}) -> ({", ".join(results.values())}) {{
{lines}
    func.return {", ".join(results)} : {", ".join(results.values())}
  }}
}}"""


def _run(text: str, inputs: dict, bindings: dict):
    ck = only_kernel(lower(text))
    arrays = [inputs[a.name].reshape(a.evaluate_shape(ck.tiling.sizes, bindings))
              for a in ck.arg_layout if not a.is_output]  # the kernel's views of the host tensors
    outs, res = run_kernel(ck, arrays, bindings)
    assert res.stats.hazards_checked and res.stats.cycles > 0
    return outs, ck


def _equal(got, ref):
    assert got.dtype == ref.dtype
    np.testing.assert_array_equal(got.reshape(ref.shape), ref)


@pytest.mark.parametrize("rows", [1, 37, 300])
def test_i32_bitwise(rows):
    t = "tensor<s0x100xi32>"
    body = f"""
%c = arith.constant {{value = 1234567}} : () -> i32
%and = hfusion.elemwise_binary %a, %b {{fun = "bitwise_and"}} : ({t}, {t}) -> {t}
%or = hfusion.elemwise_binary %a, %b {{fun = "bitwise_or"}} : ({t}, {t}) -> {t}
%xor = hfusion.elemwise_binary %a, %b {{fun = "bitwise_xor"}} : ({t}, {t}) -> {t}
%not = hfusion.elemwise_unary %a {{fun = "bitwise_not"}} : ({t}) -> {t}
%xs = hfusion.elemwise_binary %a, %c {{fun = "bitwise_xor"}} : ({t}, i32) -> {t}
%as = hfusion.elemwise_binary %c, %b {{fun = "bitwise_and"}} : (i32, {t}) -> {t}"""
    text = _module({"a": t, "b": t}, body, {f"%{k}": t for k in ("and", "or", "xor", "not", "xs", "as")})
    rng = np.random.default_rng(rows)
    a, b = (rng.integers(-2**31, 2**31, (rows, 100), dtype=np.int64).astype(np.int32) for _ in range(2))
    outs, ck = _run(text, {"a": a, "b": b}, {"s0": rows})
    want = [a & b, a | b, a ^ b, ~a, a ^ np.int32(1234567), np.int32(1234567) & b]
    for got, ref in zip(outs, want):
        _equal(got, ref)
    asm = ck.assembly()
    assert "vand" in asm and "vsub" in asm and "vnot" in asm


def _logic_module() -> str:
    t = "tensor<s0x200xi1>"
    body = f"""
%and = hfusion.elemwise_binary %p, %q {{fun = "logical_and"}} : ({t}, {t}) -> {t}
%or = hfusion.elemwise_binary %p, %q {{fun = "logical_or"}} : ({t}, {t}) -> {t}
%xor = hfusion.elemwise_binary %p, %q {{fun = "logical_xor"}} : ({t}, {t}) -> {t}
%not = hfusion.elemwise_unary %p {{fun = "logical_not"}} : ({t}) -> {t}"""
    return _module({"p": t, "q": t}, body, {f"%{k}": t for k in ("and", "or", "xor", "not")})


@pytest.mark.parametrize("rows", [1, 37, 300])
def test_bool_logic(rows):
    """GM bools in and out of a 1-D kernel: masks combined with vand/vor/vnot and xor on their packed bits."""
    text = _logic_module()
    rng = np.random.default_rng(rows)
    p, q = (rng.random((rows, 200)) < 0.5 for _ in range(2))
    outs, _ = _run(text, {"p": p, "q": q}, {"s0": rows})
    for got, ref in zip(outs, [p & q, p | q, p ^ q, ~p]):
        _equal(got, ref)


@pytest.mark.parametrize("rows", [3, 37])
def test_bool_rows(rows):
    """2-D tiles (a broadcast row keeps the kernel 2-D): mask rows padded to 128 B, stored as bytes; a GM bool
    selects between floats and is cast to f32."""
    x, v, m = "tensor<s0x100xf32>", "tensor<100xf32>", "tensor<s0x100xi1>"
    body = f"""
%c0 = arith.constant {{value = 0.0}} : () -> f32
%vb = hfusion.broadcast %v {{dims = [0]}} : ({v}) -> {x}
%gt = hfusion.compare %x, %vb {{predicate = "gt"}} : ({x}, {x}) -> {m}
%pos = hfusion.compare %x, %c0 {{predicate = "ge"}} : ({x}, f32) -> {m}
%both = hfusion.elemwise_binary %gt, %pos {{fun = "logical_xor"}} : ({m}, {m}) -> {m}
%any = hfusion.elemwise_binary %both, %k {{fun = "logical_or"}} : ({m}, {m}) -> {m}
%sel = hfusion.select %k, %x, %vb : ({m}, {x}, {x}) -> {x}
%kf = hfusion.cast %k : ({m}) -> {x}
%sum = hfusion.elemwise_binary %sel, %kf {{fun = "add"}} : ({x}, {x}) -> {x}"""
    text = _module({"x": x, "v": v, "k": m}, body, {"%any": m, "%sum": x})
    rng = np.random.default_rng(rows)
    xs = rng.standard_normal((rows, 100)).astype(np.float32)
    vs = rng.standard_normal(100).astype(np.float32)
    ks = rng.random((rows, 100)) < 0.5
    (anyv, sumv), _ = _run(text, {"x": xs, "v": vs, "k": ks}, {"s0": rows})
    _equal(anyv, ((xs > vs) ^ (xs >= 0)) | ks)
    _equal(sumv, np.where(ks, xs, vs) + ks.astype(np.float32))


def test_bool_kernel_dropped_wait_is_a_race():
    """The bytes loaded for a GM bool are read by vconv only after the load: without that wait, a race."""
    module = lower(_logic_module())
    ck = only_kernel(module)
    broken = drop_one_sync(ck, module)
    p = np.ones((300, 200), np.bool_).reshape(-1)
    with pytest.raises(RaceError, match="race"):
        run_kernel(broken, [p, p], {"s0": 300})


@pytest.mark.parametrize("rows", [3, 37, 300])
def test_column_masks(rows):
    """Masks over rows only (last dim 1: a bit per row, one bit string over the rows, not a 32-B row each): an i64
    compare (a scalar loop) and an f32 compare, their and, a select, broadcast over the row — embedding backward's
    padding_idx mask."""
    c, r = "tensor<s0xf32>", "tensor<s0x8xf32>"
    body = f"""
%z = arith.constant {{value = 0}} : () -> i64
%h = arith.constant {{value = 0.5}} : () -> f32
%f = arith.constant {{value = 0.0}} : () -> f32
%k = hfusion.compare %i, %z {{predicate = "ne"}} : (tensor<s0xi64>, i64) -> tensor<s0xi1>
%a = hfusion.compare %y, %h {{predicate = "gt"}} : ({c}, f32) -> tensor<s0xi1>
%m = hfusion.elemwise_binary %k, %a {{fun = "bitwise_and"}} : (tensor<s0xi1>, tensor<s0xi1>) -> tensor<s0xi1>
%s = hfusion.select %m, %y, %f : (tensor<s0xi1>, {c}, f32) -> {c}
%b = hfusion.broadcast %s {{dims = [1]}} : ({c}) -> {r}
%o = hfusion.elemwise_binary %x, %b {{fun = "mul"}} : ({r}, {r}) -> {r}"""
    text = _module({"i": "tensor<s0xi64>", "y": c, "x": r}, body, {"%o": r})
    rng = np.random.default_rng(rows)
    i = rng.integers(0, 3, rows).astype(np.int64)
    y = rng.uniform(0, 1, rows).astype(np.float32)
    x = rng.uniform(-2, 2, (rows, 8)).astype(np.float32)
    (out,), ck = _run(text, {"i": i, "y": y, "x": x}, {"s0": rows})
    keep = (i != 0) & (y > 0.5)
    _equal(out, x * np.where(keep, y, np.float32(0))[:, None])
    asm = ck.assembly()
    assert "vsel" in asm and "vand" in asm and "scmp_ne" in asm
