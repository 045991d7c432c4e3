"""The full default pipeline + codegen + simulator (hazard checker on) on common tensor-level kernels, in f32, f16 and
bf16, at a static and a dynamic row count, against a float64 numpy reference.

bf16 compute is legalized to f32 between casts (hfusion-legalize-bf16): every op rounds its result to bf16, as torch
eager does; f16 computes in f16 on the vector unit. Tolerances are per dtype accordingly.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from .helpers import lower, only_kernel, run_kernel

NP = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}
TOL = {"f32": (1e-4, 1e-5), "f16": (2e-2, 2e-2), "bf16": (6e-2, 6e-2)}  # (rtol, atol)


def _module(rows, body: str) -> str:
    symbols = "{s0 = [1, 2048]}" if rows == "s0" else "{}"
    return f"module attributes {{symbols = {symbols}}} {{\n{body}\n}}"


def elementwise(dt, rows, cols=128):
    t = f"tensor<{rows}x{cols}x{dt}>"
    return f"""
  func.func @main(%x: {t}, %y: {t}, %z: {t}) -> ({t}) {{
    %m = hfusion.elemwise_binary %x, %y {{fun = "mul"}} : ({t}, {t}) -> {t}
    %a = hfusion.elemwise_binary %m, %z {{fun = "add"}} : ({t}, {t}) -> {t}
    %e = hfusion.elemwise_unary %a {{fun = "exp"}} : ({t}) -> {t}
    %r = hfusion.elemwise_unary %e {{fun = "relu"}} : ({t}) -> {t}
    func.return %r : {t}
  }}""", lambda a: np.maximum(np.exp(a["x"] * a["y"] + a["z"]), 0)


def bias_relu(dt, rows, cols=96):
    t, v = f"tensor<{rows}x{cols}x{dt}>", f"tensor<{cols}x{dt}>"
    return f"""
  func.func @main(%x: {t}, %bias: {v}) -> ({t}) {{
    %bb = hfusion.broadcast %bias {{dims = [0]}} : ({v}) -> {t}
    %a = hfusion.elemwise_binary %x, %bb {{fun = "add"}} : ({t}, {t}) -> {t}
    %r = hfusion.elemwise_unary %a {{fun = "relu"}} : ({t}) -> {t}
    func.return %r : {t}
  }}""", lambda a: np.maximum(a["x"] + a["bias"], 0)


def softmax(dt, rows, cols):
    t, r = f"tensor<{rows}x{cols}x{dt}>", f"tensor<{rows}x{dt}>"

    def ref(a):
        e = np.exp(a["x"] - a["x"].max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    return f"""
  func.func @main(%x: {t}) -> ({t}) {{
    %max = hfusion.reduce %x {{dims = [1], kind = "max"}} : ({t}) -> {r}
    %maxb = hfusion.broadcast %max {{dims = [1]}} : ({r}) -> {t}
    %sub = hfusion.elemwise_binary %x, %maxb {{fun = "sub"}} : ({t}, {t}) -> {t}
    %exp = hfusion.elemwise_unary %sub {{fun = "exp"}} : ({t}) -> {t}
    %sum = hfusion.reduce %exp {{dims = [1], kind = "sum"}} : ({t}) -> {r}
    %sumb = hfusion.broadcast %sum {{dims = [1]}} : ({r}) -> {t}
    %div = hfusion.elemwise_binary %exp, %sumb {{fun = "div"}} : ({t}, {t}) -> {t}
    func.return %div : {t}
  }}""", ref


def layer_norm(dt, rows, cols=64):
    t, r, v = f"tensor<{rows}x{cols}x{dt}>", f"tensor<{rows}x{dt}>", f"tensor<{cols}x{dt}>"

    def ref(a):
        x = a["x"]
        xc = x - x.mean(1, keepdims=True)
        return xc / np.sqrt((xc * xc).mean(1, keepdims=True) + 1e-5) * a["w"] + a["b"]

    return f"""
  func.func @main(%x: {t}, %w: {v}, %b: {v}) -> ({t}) {{
    %inv_n = arith.constant {{value = {1 / cols}}} : () -> {dt}
    %eps = arith.constant {{value = 1e-05}} : () -> {dt}
    %s = hfusion.reduce %x {{dims = [1], kind = "sum"}} : ({t}) -> {r}
    %mean = hfusion.elemwise_binary %s, %inv_n {{fun = "mul"}} : ({r}, {dt}) -> {r}
    %meanb = hfusion.broadcast %mean {{dims = [1]}} : ({r}) -> {t}
    %xc = hfusion.elemwise_binary %x, %meanb {{fun = "sub"}} : ({t}, {t}) -> {t}
    %sq = hfusion.elemwise_binary %xc, %xc {{fun = "mul"}} : ({t}, {t}) -> {t}
    %ss = hfusion.reduce %sq {{dims = [1], kind = "sum"}} : ({t}) -> {r}
    %var = hfusion.elemwise_binary %ss, %inv_n {{fun = "mul"}} : ({r}, {dt}) -> {r}
    %ve = hfusion.elemwise_binary %var, %eps {{fun = "add"}} : ({r}, {dt}) -> {r}
    %rstd = hfusion.elemwise_unary %ve {{fun = "rsqrt"}} : ({r}) -> {r}
    %rstdb = hfusion.broadcast %rstd {{dims = [1]}} : ({r}) -> {t}
    %xn = hfusion.elemwise_binary %xc, %rstdb {{fun = "mul"}} : ({t}, {t}) -> {t}
    %wb = hfusion.broadcast %w {{dims = [0]}} : ({v}) -> {t}
    %xw = hfusion.elemwise_binary %xn, %wb {{fun = "mul"}} : ({t}, {t}) -> {t}
    %bb = hfusion.broadcast %b {{dims = [0]}} : ({v}) -> {t}
    %y = hfusion.elemwise_binary %xw, %bb {{fun = "add"}} : ({t}, {t}) -> {t}
    func.return %y : {t}
  }}""", ref


def rms_norm(dt, rows, cols=128):
    t, r, v = f"tensor<{rows}x{cols}x{dt}>", f"tensor<{rows}x{dt}>", f"tensor<{cols}x{dt}>"

    def ref(a):
        x = a["x"]
        return x / np.sqrt((x * x).mean(1, keepdims=True) + 1e-6) * a["w"]

    return f"""
  func.func @main(%x: {t}, %w: {v}) -> ({t}) {{
    %inv_n = arith.constant {{value = {1 / cols}}} : () -> {dt}
    %eps = arith.constant {{value = 1e-06}} : () -> {dt}
    %sq = hfusion.elemwise_binary %x, %x {{fun = "mul"}} : ({t}, {t}) -> {t}
    %ss = hfusion.reduce %sq {{dims = [1], kind = "sum"}} : ({t}) -> {r}
    %ms = hfusion.elemwise_binary %ss, %inv_n {{fun = "mul"}} : ({r}, {dt}) -> {r}
    %me = hfusion.elemwise_binary %ms, %eps {{fun = "add"}} : ({r}, {dt}) -> {r}
    %rstd = hfusion.elemwise_unary %me {{fun = "rsqrt"}} : ({r}) -> {r}
    %rstdb = hfusion.broadcast %rstd {{dims = [1]}} : ({r}) -> {t}
    %xn = hfusion.elemwise_binary %x, %rstdb {{fun = "mul"}} : ({t}, {t}) -> {t}
    %wb = hfusion.broadcast %w {{dims = [0]}} : ({v}) -> {t}
    %y = hfusion.elemwise_binary %xn, %wb {{fun = "mul"}} : ({t}, {t}) -> {t}
    func.return %y : {t}
  }}""", ref


def sum_dim0(dt, rows, cols=72):
    t, v = f"tensor<{rows}x{cols}x{dt}>", f"tensor<{cols}x{dt}>"
    return f"""
  func.func @main(%x: {t}) -> ({v}) {{
    %s = hfusion.reduce %x {{dims = [0], kind = "sum"}} : ({t}) -> {v}
    func.return %s : {v}
  }}""", lambda a: a["x"].sum(0)


KERNELS = {
    "elementwise": elementwise,
    "bias_relu": bias_relu,
    "softmax_short": lambda dt, rows: softmax(dt, rows, 40),
    "softmax_long": lambda dt, rows: softmax(dt, rows, 1000),
    "layer_norm": layer_norm,
    "rms_norm": rms_norm,
    "sum_dim0": sum_dim0,
}


def check(kernel: str, dt: str, rows, bindings: dict, n_rows: int):
    body, ref = KERNELS[kernel](dt, rows)
    ck = only_kernel(lower(_module(rows, body)))
    rng = np.random.default_rng(n_rows)
    names = [a.name for a in ck.arg_layout if not a.is_output]
    arrays = [rng.standard_normal(a.evaluate_shape(ck.tiling.sizes, bindings)).astype(NP[dt])
              for a in ck.arg_layout if not a.is_output]
    (out,), res = run_kernel(ck, arrays, bindings)
    assert res.stats.hazards_checked
    args = {n: a.astype(np.float64).reshape([s for s in a.shape if s != 1] or [1]) if n in ("w", "b", "bias") else
            a.astype(np.float64).reshape(n_rows, -1) for n, a in zip(names, arrays)}  # fmt: skip
    want = ref(args)
    rtol, atol = TOL[dt]
    if kernel == "sum_dim0":
        atol *= np.sqrt(n_rows)  # a sum of n_rows rounded terms
    np.testing.assert_allclose(out.astype(np.float64).reshape(want.shape), want, rtol=rtol, atol=atol,
                               err_msg=f"{kernel} {dt} rows={rows} {bindings}")


@pytest.mark.parametrize("shape", ["static", "dynamic"])
@pytest.mark.parametrize("dt", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("kernel", list(KERNELS))
def test_matrix(kernel, dt, shape):
    if shape == "static":
        check(kernel, dt, 64, {}, 64)
    else:
        check(kernel, dt, "s0", {"s0": 37}, 37)


@pytest.mark.slow
@pytest.mark.parametrize("dt", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("kernel", list(KERNELS))
def test_matrix_large(kernel, dt):
    check(kernel, dt, "s0", {"s0": 700}, 700)


def demo_block(dt, rows, cols=256):
    """examples/demo.py's block: LayerNorm (w, b) → · scale + shift → GELU → softmax → + x, one LAST_AXIS_PBR kernel
    with five inputs (four broadcast parameter rows) and, like the traced graph, the saved intermediates as results.
    GELU is the tanh form (codegen has no erf sequence yet)."""
    t, r, v = f"tensor<{rows}x{cols}x{dt}>", f"tensor<{rows}x{dt}>", f"tensor<{cols}x{dt}>"

    def gelu(z):
        return 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z**3)))

    def ref(a):
        x = a["x"]
        mean = x.mean(1, keepdims=True)
        rstd = 1 / np.sqrt(((x - mean) ** 2).mean(1, keepdims=True) + 1e-5)
        ln = (x - mean) * rstd * a["w"] + a["b"]
        pre = ln * a["scale"] + a["shift"]
        g = gelu(pre)
        e = np.exp(g - g.max(1, keepdims=True))
        sm = e / e.sum(1, keepdims=True)
        return [ln, mean[:, 0], rstd[:, 0], pre, sm, sm + x]

    def bcast(name, var):
        return f"    %{var} = hfusion.broadcast %{name} {{dims = [0]}} : ({v}) -> {t}"

    return f"""
  func.func @main(%x: {t}, %w: {v}, %b: {v}, %scale: {v}, %shift: {v}) -> ({t}, {r}, {r}, {t}, {t}, {t}) {{
    %n = arith.constant {{value = {float(cols)}}} : () -> {dt}
    %eps = arith.constant {{value = 1e-05}} : () -> {dt}
    %s = hfusion.reduce %x {{dims = [1], kind = "sum"}} : ({t}) -> {r}
    %mean = hfusion.elemwise_binary %s, %n {{fun = "div"}} : ({r}, {dt}) -> {r}
    %meanb = hfusion.broadcast %mean {{dims = [1]}} : ({r}) -> {t}
    %xc = hfusion.elemwise_binary %x, %meanb {{fun = "sub"}} : ({t}, {t}) -> {t}
    %sq = hfusion.elemwise_binary %xc, %xc {{fun = "mul"}} : ({t}, {t}) -> {t}
    %ss = hfusion.reduce %sq {{dims = [1], kind = "sum"}} : ({t}) -> {r}
    %var = hfusion.elemwise_binary %ss, %n {{fun = "div"}} : ({r}, {dt}) -> {r}
    %ve = hfusion.elemwise_binary %var, %eps {{fun = "add"}} : ({r}, {dt}) -> {r}
    %rstd = hfusion.elemwise_unary %ve {{fun = "rsqrt"}} : ({r}) -> {r}
    %rstdb = hfusion.broadcast %rstd {{dims = [1]}} : ({r}) -> {t}
    %xn = hfusion.elemwise_binary %xc, %rstdb {{fun = "mul"}} : ({t}, {t}) -> {t}
{bcast("w", "wb")}
    %xw = hfusion.elemwise_binary %xn, %wb {{fun = "mul"}} : ({t}, {t}) -> {t}
{bcast("b", "bb")}
    %ln = hfusion.elemwise_binary %xw, %bb {{fun = "add"}} : ({t}, {t}) -> {t}
{bcast("scale", "sb")}
    %m = hfusion.elemwise_binary %ln, %sb {{fun = "mul"}} : ({t}, {t}) -> {t}
{bcast("shift", "hb")}
    %pre = hfusion.elemwise_binary %m, %hb {{fun = "add"}} : ({t}, {t}) -> {t}
    %g = hfusion.elemwise_unary %pre {{fun = "gelu_tanh"}} : ({t}) -> {t}
    %mx = hfusion.reduce %g {{dims = [1], kind = "max"}} : ({t}) -> {r}
    %mxb = hfusion.broadcast %mx {{dims = [1]}} : ({r}) -> {t}
    %d = hfusion.elemwise_binary %g, %mxb {{fun = "sub"}} : ({t}, {t}) -> {t}
    %e = hfusion.elemwise_unary %d {{fun = "exp"}} : ({t}) -> {t}
    %es = hfusion.reduce %e {{dims = [1], kind = "sum"}} : ({t}) -> {r}
    %esb = hfusion.broadcast %es {{dims = [1]}} : ({r}) -> {t}
    %sm = hfusion.elemwise_binary %e, %esb {{fun = "div"}} : ({t}, {t}) -> {t}
    %out = hfusion.elemwise_binary %sm, %x {{fun = "add"}} : ({t}, {t}) -> {t}
    func.return %ln, %mean, %rstd, %pre, %sm, %out : {t}, {r}, {r}, {t}, {t}, {t}
  }}""", ref


def sum_of_inputs(dt, rows, cols=256, n=10):
    """Ten distinct per-tile inputs summed: ten loads per work item, one load stage, two MTE2 → V syncs (the first
    add waits for x0 and x1 only)."""
    t = f"tensor<{rows}x{cols}x{dt}>"
    args = ", ".join(f"%x{i}: {t}" for i in range(n))
    lines = [f'    %a1 = hfusion.elemwise_binary %x0, %x1 {{fun = "add"}} : ({t}, {t}) -> {t}']
    lines += [f'    %a{i} = hfusion.elemwise_binary %a{i - 1}, %x{i} {{fun = "add"}} : ({t}, {t}) -> {t}'
              for i in range(2, n)]
    body = "\n".join(lines)
    return f"""
  func.func @main({args}) -> ({t}) {{
{body}
    func.return %a{n - 1} : {t}
  }}""", lambda a: [sum(a[f"x{i}"] for i in range(n))]


def check_many(make, dt: str, rows, bindings: dict, n_rows: int, rtol=None, atol=None):
    """Like ``check`` for kernels with several results and named vector parameters (1-D arguments)."""
    body, ref = make(dt, rows)
    module = lower(_module(rows, body))
    ck = only_kernel(module)
    kernel = next(f for f in module.functions if f.attributes.get("kernel"))
    sets = [op for op in kernel.walk() if op.name == "hivm.set_flag" and op.attributes["src_pipe"] == "PIPE_MTE2"
            and op.attributes["dst_pipe"] == "PIPE_V" and kernel.body is not op.parent]  # fmt: skip
    # the load stage: one MTE2 -> V sync for the loads the first op reads, one for the others (when there are any)
    assert len(sets) <= 2, "at most two MTE2 -> V syncs cover the load stage"
    import torch

    from codegen import compile_module

    from .helpers import run_host

    rng = np.random.default_rng(n_rows)
    host = module.lookup("main")
    shapes = [[int(d.subs({x: bindings[x.name] for x in d.free_symbols})) for d in a.type.shape]
              for a in host.body.args]
    arrays = [rng.standard_normal(s).astype(NP[dt]) for s in shapes]
    results: list = []
    outs = run_host(module, compile_module(module), [torch.from_numpy(a) for a in arrays], dict(bindings),
                    results=results)
    assert results and all(r.stats.hazards_checked for r in results)
    args = {a.name_hint: x.astype(np.float64) for a, x in zip(host.body.args, arrays)}
    wants = ref(args)
    assert len(outs) == len(wants)
    d_rtol, d_atol = TOL[dt]
    for i, (got, want) in enumerate(zip(outs, wants)):
        np.testing.assert_allclose(got.numpy().astype(np.float64).reshape(want.shape), want, rtol=rtol or d_rtol,
                                   atol=atol or d_atol, err_msg=f"result {i}, {dt} rows={rows} {bindings}")
    return module, ck


@pytest.mark.parametrize("shape", ["static", "dynamic"])
@pytest.mark.parametrize("dt", ["f32", "f16"])
def test_demo_block(dt, shape):
    """examples/demo.py's block compiles (it used to need 10 MTE2 -> V ids) and matches numpy."""
    tol = {"f32": (1e-4, 1e-4), "f16": (3e-2, 3e-2)}[dt]
    if shape == "static":
        check_many(demo_block, dt, 64, {}, 64, *tol)
    else:
        check_many(demo_block, dt, "s0", {"s0": 37}, 37, *tol)


@pytest.mark.parametrize("dt", ["f32", "f16"])
def test_sum_of_ten_inputs(dt):
    check_many(sum_of_inputs, dt, 64, {}, 64)



def row_sum(dt, rows, cols):
    t, r = f"tensor<{rows}x{cols}x{dt}>", f"tensor<{rows}x{dt}>"
    return f"""
  func.func @main(%x: {t}) -> ({r}) {{
    %s = hfusion.reduce %x {{dims = [1], kind = "sum"}} : ({t}) -> {r}
    func.return %s : {r}
  }}"""


@pytest.mark.parametrize("rows", [16, 1024])
def test_row_sum_whole_block_step_of_long_rows(rows):
    """A row reduction whose 8-row whole-GM-block step (f32 row sums) does not fit UB with whole rows (8 × 4096 f32
    × 2 copies): the schedule tiles the reduced last dim multi-pass. It used to shrink it in a one-pass schedule:
    loads of whole rows into a narrower tile buffer, wrong sums, and past the end of UB in a core's second work item
    (softmax's unfused row max at 4096 × 4096 f16: ``copy_gm_to_ub ... is outside UB``)."""
    module = lower(_module(rows, row_sum("f32", rows, 4096)))
    ck = only_kernel(module)
    kernel = next(f for f in module.functions if f.attributes.get("kernel"))
    sched = kernel.attributes["schedule"]
    assert int(sched.tile[0]) % 8 == 0 and (int(sched.tile[1]) >= 4096 or sched.reduce_looped), sched
    x = np.random.default_rng(rows).standard_normal((rows, 4096)).astype(np.float32)
    (out,), res = run_kernel(ck, [x], {})
    assert res.stats.hazards_checked
    np.testing.assert_allclose(out.astype(np.float64).reshape(rows), x.astype(np.float64).sum(1), rtol=1e-4,
                               atol=1e-3)
