"""Hand-written outlined vector kernels (what hfusion-fuse-ops + flatten-ops produce) for schedule/lowering tests."""

from __future__ import annotations

from graph_passes.ir.parser import parse_module


def module(kernel_args, kernel_body, results, kind, host_args, symbols="", target="ascend910b1"):
    """A module with one kernel ``@main_fused_0`` (out-parameters: one per result) and a host ``@main`` calling it.

    ``kernel_args``: [(name, type)] inputs; ``results``: [(value, type)]; ``host_args``: [(name, type)].
    """
    n_in = len(kernel_args)
    outs = [(f"out{i}", t) for i, (_, t) in enumerate(results)]
    args = ", ".join(f"%{n}: {t}" for n, t in kernel_args + outs)
    res_types = ", ".join(t for _, t in results)
    output_args = list(range(n_in, n_in + len(results)))
    ret = f"func.return {', '.join(v for v, _ in results)} : {res_types}"
    host = ", ".join(f"%{n}: {t}" for n, t in host_args)
    empties = "\n".join(f"    %e{i} = tensor.empty : () -> {t}" for i, (_, t) in enumerate(results))
    call_args = [f"%{n}" for n, _ in host_args] + [f"%e{i}" for i in range(len(results))]
    call_types = [t for _, t in host_args] + [t for _, t in results]
    call_res = "%r" if len(results) == 1 else f"%r:{len(results)}"
    rets = "%r" if len(results) == 1 else ", ".join(f"%r#{i}" for i in range(len(results)))
    rt = res_types if len(results) == 1 else f"({res_types})"
    text = f"""module attributes {{symbols = {{{symbols}}}, target = "{target}"}} {{
  func.func @main_fused_0({args}) -> ({res_types}) attributes {{kernel, fusion_kind = "{kind}", output_args = {output_args}}} {{
{kernel_body}
    {ret}
  }}
  func.func @main({host}) -> ({res_types}) {{
{empties}
    {call_res} = func.call {", ".join(call_args)} {{callee = "main_fused_0"}} : ({", ".join(call_types)}) -> {rt}
    func.return {rets} : {res_types}
  }}
}}
"""
    return parse_module(text)


def elementwise(n="(128*s0)", dtype="f16", symbols="s0 = [1, 1000000]"):
    """out = x * y + z, then * 2.0 (a vector-scalar op)."""
    t = f"tensor<{n}x{dtype}>"
    body = f"""    %t = hfusion.elemwise_binary %x, %y {{fun = "mul"}} : ({t}, {t}) -> {t}
    %u = hfusion.elemwise_binary %t, %z {{fun = "add"}} : ({t}, {t}) -> {t}
    %c = arith.constant {{value = 2.0}} : () -> {dtype}
    %r = hfusion.elemwise_binary %u, %c {{fun = "mul"}} : ({t}, {dtype}) -> {t}"""
    args = [("x", t), ("y", t), ("z", t)]
    return module(args, body, [("%r", t)], "PURE_ELEMWISE", [("a", t), ("b", t), ("c", t)], symbols)


def bias_relu(rows="s0", cols=96, dtype="f32", symbols="s0 = [1, 100000]"):
    """ANY_PB: out = relu(x + broadcast(bias)), and a second result x > 0 selected."""
    t, tb = f"tensor<{rows}x{cols}x{dtype}>", f"tensor<{cols}x{dtype}>"
    ti = f"tensor<{rows}x{cols}xi1>"
    body = f"""    %b = hfusion.broadcast %bias {{dims = [0]}} : ({tb}) -> {t}
    %s = hfusion.elemwise_binary %x, %b {{fun = "add"}} : ({t}, {t}) -> {t}
    %r = hfusion.elemwise_unary %s {{fun = "relu"}} : ({t}) -> {t}
    %z = arith.constant {{value = 0.0}} : () -> {dtype}
    %p = hfusion.compare %x, %z {{predicate = "gt"}} : ({t}, {dtype}) -> {ti}
    %q = hfusion.select %p, %x, %s : ({ti}, {t}, {t}) -> {t}"""
    args = [("x", t), ("bias", tb)]
    return module(args, body, [("%r", t), ("%q", t)], "ANY_PB", [("a", t), ("bb", tb)], symbols)


def softmax(rows="s0", cols=64, dtype="f32", symbols="s0 = [1, 100000]"):
    """LAST_AXIS_PBR: softmax over the last dim, and the row sums as a second result."""
    t, tr = f"tensor<{rows}x{cols}x{dtype}>", f"tensor<{rows}x{dtype}>"
    body = f"""    %m = hfusion.reduce %x {{kind = "max", dims = [1]}} : ({t}) -> {tr}
    %mb = hfusion.broadcast %m {{dims = [1]}} : ({tr}) -> {t}
    %d = hfusion.elemwise_binary %x, %mb {{fun = "sub"}} : ({t}, {t}) -> {t}
    %e = hfusion.elemwise_unary %d {{fun = "exp"}} : ({t}) -> {t}
    %s = hfusion.reduce %e {{kind = "sum", dims = [1]}} : ({t}) -> {tr}
    %sb = hfusion.broadcast %s {{dims = [1]}} : ({tr}) -> {t}
    %r = hfusion.elemwise_binary %e, %sb {{fun = "div"}} : ({t}, {t}) -> {t}"""
    return module([("x", t)], body, [("%r", t), ("%s", tr)], "LAST_AXIS_PBR", [("a", t)], symbols)


def column_sum(rows="s0", cols=300, dtype="f32", symbols="s0 = [1, 100000]"):
    """ANY_PBR: sum over dim 0 of exp(x) scaled, plus the column max."""
    t, tc = f"tensor<{rows}x{cols}x{dtype}>", f"tensor<{cols}x{dtype}>"
    body = f"""    %c = arith.constant {{value = 0.5}} : () -> {dtype}
    %h = hfusion.elemwise_binary %x, %c {{fun = "mul"}} : ({t}, {dtype}) -> {t}
    %s = hfusion.reduce %h {{kind = "sum", dims = [0]}} : ({t}) -> {tc}
    %m = hfusion.reduce %x {{kind = "max", dims = [0]}} : ({t}) -> {tc}"""
    return module([("x", t)], body, [("%s", tc), ("%m", tc)], "ANY_PBR", [("a", t)], symbols)


def norm_param_grads(rows=256, cols=128, dtype="f32", symbols=""):
    """ANY_PBR: a layer norm's weight and bias gradients, sum over dim 0 of g · x̂ and of g (two loaded inputs)."""
    t, tc = f"tensor<{rows}x{cols}x{dtype}>", f"tensor<{cols}x{dtype}>"
    body = f"""    %p = hfusion.elemwise_binary %g, %xh {{fun = "mul"}} : ({t}, {t}) -> {t}
    %w = hfusion.reduce %p {{kind = "sum", dims = [0]}} : ({t}) -> {tc}
    %b = hfusion.reduce %g {{kind = "sum", dims = [0]}} : ({t}) -> {tc}"""
    return module([("g", t), ("xh", t)], body, [("%w", tc), ("%b", tc)], "ANY_PBR", [("a", t), ("c", t)], symbols)


def norm_affine(rows="s0", cols=256, dtype="f32", symbols="s0 = [1, 100000]"):
    """LAST_AXIS_PBR: x minus its row mean, then · w + b · s + h with four broadcast parameter rows (the demo's
    LayerNorm → scale/shift shape): four loop-invariant loads and one per-tile load."""
    t, tr, tb = f"tensor<{rows}x{cols}x{dtype}>", f"tensor<{rows}x{dtype}>", f"tensor<{cols}x{dtype}>"
    body = f"""    %inv = arith.constant {{value = {1 / cols}}} : () -> {dtype}
    %sum = hfusion.reduce %x {{kind = "sum", dims = [1]}} : ({t}) -> {tr}
    %mean = hfusion.elemwise_binary %sum, %inv {{fun = "mul"}} : ({tr}, {dtype}) -> {tr}
    %mb = hfusion.broadcast %mean {{dims = [1]}} : ({tr}) -> {t}
    %xc = hfusion.elemwise_binary %x, %mb {{fun = "sub"}} : ({t}, {t}) -> {t}
    %wb = hfusion.broadcast %w {{dims = [0]}} : ({tb}) -> {t}
    %y1 = hfusion.elemwise_binary %xc, %wb {{fun = "mul"}} : ({t}, {t}) -> {t}
    %bb = hfusion.broadcast %b {{dims = [0]}} : ({tb}) -> {t}
    %y2 = hfusion.elemwise_binary %y1, %bb {{fun = "add"}} : ({t}, {t}) -> {t}
    %sb = hfusion.broadcast %s {{dims = [0]}} : ({tb}) -> {t}
    %y3 = hfusion.elemwise_binary %y2, %sb {{fun = "mul"}} : ({t}, {t}) -> {t}
    %hb = hfusion.broadcast %h {{dims = [0]}} : ({tb}) -> {t}
    %y4 = hfusion.elemwise_binary %y3, %hb {{fun = "add"}} : ({t}, {t}) -> {t}"""
    args = [("x", t), ("w", tb), ("b", tb), ("s", tb), ("h", tb)]
    return module(args, body, [("%y4", t)], "LAST_AXIS_PBR",
                  [("a", t), ("aw", tb), ("ab", tb), ("as", tb), ("ah", tb)], symbols)


def softmax_f16(rows=256, cols=4096, symbols=""):
    """LAST_AXIS_PBR: torch.softmax of f16 rows as imported (in f32: cast, max on f16, …, product, cast back)."""
    h, f, hr, fr = f"tensor<{rows}x{cols}xf16>", f"tensor<{rows}x{cols}xf32>", f"tensor<{rows}xf16>", f"tensor<{rows}xf32>"
    body = f"""    %xf = hfusion.cast %x {{round_mode = "rint"}} : ({h}) -> {f}
    %m = hfusion.reduce %x {{kind = "max", dims = [1]}} : ({h}) -> {hr}
    %mf = hfusion.cast %m {{round_mode = "rint"}} : ({hr}) -> {fr}
    %mb = hfusion.broadcast %mf {{dims = [1]}} : ({fr}) -> {f}
    %d = hfusion.elemwise_binary %xf, %mb {{fun = "sub"}} : ({f}, {f}) -> {f}
    %e = hfusion.elemwise_unary %d {{fun = "exp"}} : ({f}) -> {f}
    %s = hfusion.reduce %e {{kind = "sum", dims = [1]}} : ({f}) -> {fr}
    %r = hfusion.elemwise_unary %s {{fun = "reciprocal"}} : ({fr}) -> {fr}
    %rb = hfusion.broadcast %r {{dims = [1]}} : ({fr}) -> {f}
    %p = hfusion.elemwise_binary %e, %rb {{fun = "mul"}} : ({f}, {f}) -> {f}
    %y = hfusion.cast %p {{round_mode = "rint"}} : ({f}) -> {h}"""
    return module([("x", h)], body, [("%y", h)], "LAST_AXIS_PBR", [("a", h)], symbols)


def scaled_rows_f16(rows=256, cols=4096, symbols=""):
    """LAST_AXIS_PBR: f16 rows minus their mean, times an f16 weight row cast to f32 once per core (a hoisted
    value): the weight's f16 load is dead once the work-item loop starts."""
    h, f, fr, hv, fv = (f"tensor<{rows}x{cols}xf16>", f"tensor<{rows}x{cols}xf32>", f"tensor<{rows}xf32>",
                        f"tensor<{cols}xf16>", f"tensor<{cols}xf32>")
    body = f"""    %inv = arith.constant {{value = {1 / cols}}} : () -> f32
    %xf = hfusion.cast %x {{round_mode = "rint"}} : ({h}) -> {f}
    %s = hfusion.reduce %xf {{kind = "sum", dims = [1]}} : ({f}) -> {fr}
    %mean = hfusion.elemwise_binary %s, %inv {{fun = "mul"}} : ({fr}, f32) -> {fr}
    %mb = hfusion.broadcast %mean {{dims = [1]}} : ({fr}) -> {f}
    %d = hfusion.elemwise_binary %xf, %mb {{fun = "sub"}} : ({f}, {f}) -> {f}
    %wf = hfusion.cast %w {{round_mode = "rint"}} : ({hv}) -> {fv}
    %wb = hfusion.broadcast %wf {{dims = [0]}} : ({fv}) -> {f}
    %p = hfusion.elemwise_binary %d, %wb {{fun = "mul"}} : ({f}, {f}) -> {f}
    %y = hfusion.cast %p {{round_mode = "rint"}} : ({f}) -> {h}"""
    return module([("x", h), ("w", hv)], body, [("%y", h)], "LAST_AXIS_PBR", [("a", h), ("aw", hv)], symbols)
