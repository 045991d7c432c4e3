"""One HIVM vector op at a time (hand-written one-tile kernels in barrier-all form) against numpy."""

import numpy as np
import pytest

from codegen import CodegenError, compile_module
from graph_passes.ir.parser import parse_module

from .helpers import run_kernel
from .kernels import single_tile

CAP = 4096
NP = {"f16": np.float16, "f32": np.float32}


def _types(buffers, operands, cap, dims, cols):
    sizes = {"f16": 2, "f32": 4, "i1": 1}
    out = []
    for o in operands:
        if o.startswith("%u_"):
            dt = buffers[o[3:]]
            pad = -(-cols * sizes[dt] // 32) * 32 // sizes[dt] if dims == 2 else 0
            out.append(f"memref<{cap}x{pad}x{dt}, ub>" if dims == 2 else f"memref<{cap}x{dt}, ub>")
        elif o.startswith("%s_"):
            out.append(o.split("_")[1])
        else:
            out.append("index")
    return out


def op(name, operands, attrs, buffers, cap=CAP, dims=1, cols=0):
    ext = ["%n"] if dims == 1 else ["%n", "%c"]
    ops = operands + ext
    types = _types(buffers, ops, cap, dims, cols)
    return f"{name} {', '.join(ops)} {attrs} : {', '.join(types)}"


def run(buffers, body, outputs, inputs, arrays, n, cap=CAP, dims=1, cols=0, consts=()):
    lines = [f"{c} = arith.constant {{value = {v}}} : () -> {c.split('_')[1]}" for c, v in consts] + body
    module = parse_module(single_tile(buffers, lines, outputs, inputs, cap, dims, cols))
    ck = compile_module(module)["k"]
    order = [a.name for a in ck.arg_layout if not a.is_output]
    outs, res = run_kernel(ck, [arrays[k] for k in order], {"s0": n})
    return dict(zip([a.name for a in ck.arg_layout if a.is_output], outs)), ck


@pytest.mark.parametrize("n", [1, 100, 4096])
@pytest.mark.parametrize("dt", ["f16", "f32"])
def test_compare_select(dt, n):
    bufs = {"x": dt, "y": dt, "m": "i1", "o": dt}
    body = [op("hivm.vcmp", ["%u_x", "%u_y", "%u_m"], '{predicate = "gt"}', bufs),
            op("hivm.vsel", ["%u_m", "%u_x", "%u_y", "%u_o"], "", bufs)]
    rng = np.random.default_rng(n)
    x, y = (rng.standard_normal(n).astype(NP[dt]) for _ in range(2))
    outs, _ = run(bufs, body, ["o"], ["x", "y"], {"x": x, "y": y}, n)
    np.testing.assert_array_equal(outs["o"], np.maximum(x, y))


@pytest.mark.parametrize("n", [100, 4096])
def test_select_i32_moves_bits(n):
    """i32 selects as f32 lanes (vsel is f16/f32 only): every bit pattern survives, those that are NaNs as floats
    (0x7fc00001, 0x7f800001, -1) included."""
    bufs = {"x": "i32", "y": "i32", "m": "i1", "o": "i32"}
    body = [op("hivm.vcmp", ["%u_x", "%u_y", "%u_m"], '{predicate = "gt"}', bufs),
            op("hivm.vsel", ["%u_m", "%u_x", "%u_y", "%u_o"], "", bufs)]
    rng = np.random.default_rng(n)
    x, y = (rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32) for _ in range(2))
    x[:3] = [0x7FC00001, 0x7F800001, -1]
    y[:3] = x[:3] - 1
    outs, ck = run(bufs, body, ["o"], ["x", "y"], {"x": x, "y": y}, n)
    np.testing.assert_array_equal(outs["o"], np.maximum(x, y))
    assert "vsel dtype=f32" in ck.assembly()


@pytest.mark.parametrize("fun,ref", [("add", lambda x, s: x + s), ("sub", lambda x, s: x - s),
                                     ("mul", lambda x, s: x * s), ("div", lambda x, s: x / s),
                                     ("max", lambda x, s: np.maximum(x, s))])
def test_vector_scalar(fun, ref):
    bufs = {"x": "f32", "o": "f32"}
    body = [op("hivm.vbinary", ["%u_x", "%s_f32", "%u_o"], f'{{fun = "{fun}"}}', bufs, cap=2048)]
    x = np.random.default_rng(1).standard_normal(1000).astype(np.float32)
    outs, _ = run(bufs, body, ["o"], ["x"], {"x": x}, 1000, cap=2048, consts=[("%s_f32", 2.5)])
    np.testing.assert_allclose(outs["o"], ref(x, np.float32(2.5)), rtol=1e-6)


def test_scalar_minus_vector_and_fill():
    bufs = {"x": "f32", "o": "f32", "f": "f32"}
    body = [op("hivm.vbinary", ["%s_f32", "%u_x", "%u_o"], '{fun = "sub"}', bufs, cap=1024),
            op("hivm.vfill", ["%u_f"], "{value = 3.0}", bufs, cap=1024),
            op("hivm.vbinary", ["%u_o", "%u_f", "%u_o"], '{fun = "mul"}', bufs, cap=1024)]
    x = np.random.default_rng(2).standard_normal(777).astype(np.float32)
    outs, _ = run(bufs, body, ["o"], ["x"], {"x": x}, 777, cap=1024, consts=[("%s_f32", 1.5)])
    np.testing.assert_allclose(outs["o"], (np.float32(1.5) - x) * 3, rtol=1e-6)


@pytest.mark.parametrize("fun,ref", [("exp", np.exp), ("sqrt", lambda x: np.sqrt(np.abs(x))),
                                     ("sigmoid", lambda x: 1 / (1 + np.exp(-x))), ("abs", np.abs),
                                     ("tanh", np.tanh), ("silu", lambda x: x / (1 + np.exp(-x))),
                                     ("gelu_tanh", lambda x: 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))),
                                     ("floor", np.floor), ("ceil", np.ceil)])
def test_unary(fun, ref):
    bufs = {"x": "f32", "o": "f32"}
    pre = []
    if fun == "sqrt":
        pre = [op("hivm.vunary", ["%u_x", "%u_x"], '{fun = "abs"}', bufs)]
    body = pre + [op("hivm.vunary", ["%u_x", "%u_o"], f'{{fun = "{fun}"}}', bufs)]
    x = np.random.default_rng(3).standard_normal(3000).astype(np.float32)
    outs, _ = run(bufs, body, ["o"], ["x"], {"x": x}, 3000)
    np.testing.assert_allclose(outs["o"], ref(x).astype(np.float32), rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("kind,ref", [("sum", np.sum), ("max", np.max), ("min", np.min)])
@pytest.mark.parametrize("n", [5, 64, 4000])
def test_reduce_whole_1d(kind, ref, n):
    bufs = {"x": "f32", "r": "f32", "o": "f32"}
    body = [f'hivm.vreduce %u_x, %u_r, %n {{dims = [0], kind = "{kind}"}} : memref<{CAP}xf32, ub>, memref<1xf32, ub>, '
            f"index",
            f"hivm.vbrc %u_r, %u_o, %n {{dims = [0]}} : memref<1xf32, ub>, memref<{CAP}xf32, ub>, index"]
    text_bufs = dict(bufs)
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    module_text = single_tile(text_bufs, body, ["o"], ["x"], CAP).replace(
        f"%u_r = hivm.alloc {{offsets = [{CAP * 4}]}} : () -> memref<{CAP}xf32, ub>",
        f"%u_r = hivm.alloc {{offsets = [{CAP * 4}]}} : () -> memref<1xf32, ub>")
    ck = compile_module(parse_module(module_text))["k"]
    (out,), _ = run_kernel(ck, [x], {"s0": n})
    np.testing.assert_allclose(out, np.full(n, ref(x), np.float32), rtol=1e-5)


def test_row_broadcast_and_row_reduce_2d():
    cols = 200  # rows longer than one repeat (64 f32): the row reduction folds column chunks first
    bufs = {"x": "f32", "o": "f32"}
    ub = "memref<64x200xf32, ub>"
    body = [f'hivm.vreduce %u_x, %u_r, %n, %c {{dims = [1], kind = "max"}} : {ub}, memref<64x1xf32, ub>, index, index',
            f"hivm.vbrc %u_r, %u_o, %n, %c {{dims = [1]}} : memref<64x1xf32, ub>, {ub}, index, index",
            f'hivm.vbinary %u_x, %u_o, %u_o, %n, %c {{fun = "sub"}} : {ub}, {ub}, {ub}, index, index']
    text = single_tile(bufs, body, ["o"], ["x"], 64, dims=2, cols=cols)
    text = text.replace("    %c0 = arith.constant", f"    %u_r = hivm.alloc {{offsets = [{2 * 64 * 200 * 4}]}} : () -> "
                                                     f"memref<64x1xf32, ub>\n    %c0 = arith.constant")
    ck = compile_module(parse_module(text))["k"]
    for n in (1, 9, 64):
        x = np.random.default_rng(n).standard_normal((n, cols)).astype(np.float32)
        (out,), _ = run_kernel(ck, [x], {"s0": n})
        np.testing.assert_array_equal(out, x - x.max(1, keepdims=True))


def _bf16_kernel(body_fun: str, binary: bool):
    ty = f"memref<{CAP}xbf16, ub>"
    if binary:
        body = [f'hivm.vbinary %u_x, %u_y, %u_o, %n {{fun = "{body_fun}"}} : {ty}, {ty}, {ty}, index']
        bufs, ins = {"x": "f16", "y": "f16", "o": "f16"}, ["x", "y"]
    else:
        body = [f'hivm.vunary %u_x, %u_o, %n {{fun = "{body_fun}"}} : {ty}, {ty}, index']
        bufs, ins = {"x": "f16", "o": "f16"}, ["x"]
    return single_tile(bufs, body, ["o"], ins).replace("xf16", "xbf16")


def test_bf16_math_is_reported():
    """bf16 compute is legalized to f32 by hfusion-legalize-bf16; a bf16 vector op reaching codegen names it."""
    for fun, binary in (("exp", False), ("add", True)):
        with pytest.raises(CodegenError, match="no bf16 arithmetic.*hfusion-legalize-bf16"):
            compile_module(parse_module(_bf16_kernel(fun, binary)))
