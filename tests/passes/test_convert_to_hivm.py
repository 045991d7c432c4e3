"""convert-to-hivm: scheduled vector kernels lowered to HIVM compute what the tensor-level kernels compute.

The HIVM kernels run on :mod:`tests.passes.hivm_eval` (a torch-based evaluator of loads/stores/vector ops over valid
extents, every block index in turn); the tensor-level module runs on the reference interpreter.
"""

from __future__ import annotations

import pytest
import torch

from graph_passes.ir.printer import print_module
from graph_passes.ir.parser import parse_module
from graph_passes.passes import PassManager
from torch_npu_backend.interpreter import interpret

from tests.passes import vector_kernels as vk
from tests.passes.hivm_eval import run_host


def check(build, shapes, options="", dtype=torch.float32, atol=1e-5, rtol=1e-5):
    """Lower ``build()`` and compare it with the tensor-level kernel on inputs of each of ``shapes``."""
    reference, lowered = build(), build()
    pipeline = f"hfusion-auto-schedule{options},convert-to-hivm"
    ctx = PassManager.from_pipeline(pipeline, verify=True).run(lowered)
    lowered = parse_module(print_module(lowered))  # the text form carries everything the kernel needs
    for shape_args in shapes:
        bindings = shape_args[-1] if isinstance(shape_args[-1], dict) else {}
        shape_args = [s for s in shape_args if not isinstance(s, dict)]
        torch.manual_seed(0)
        args = [torch.randn(s, dtype=dtype) for s in shape_args]
        kernel = reference.lookup("main_fused_0")
        want = interpret(reference, args + _empties(kernel, args, bindings), dict(bindings), func="main_fused_0")
        got = run_host(lowered, args, dict(bindings))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w, atol=atol, rtol=rtol)
    return ctx


def _empties(kernel, args, bindings):
    """Out-parameter tensors for running the tensor-level kernel with the interpreter (their contents are unused)."""
    from torch_npu_backend.interpreter import Interpreter

    interp = Interpreter(None, dict(bindings))
    params = kernel.body.args
    for p, a in zip(params, args):
        for d, n in zip(p.type.shape, a.shape):
            if d.is_Symbol:
                interp.bindings.setdefault(d.name, int(n))
    return [torch.zeros(interp.shape(params[i].type)) for i in kernel.attributes["output_args"]]


def test_elementwise_dynamic_matches_interpreter():
    ctx = check(lambda: vk.elementwise(dtype="f32"), [[(128 * s,)] * 3 + [{"s0": s}] for s in (1, 97, 300)])
    assert ctx.counter("convert-to-hivm", "kernels-converted") == 1
    assert ctx.counter("convert-to-hivm", "loads") == 3
    assert ctx.counter("convert-to-hivm", "stores") == 1
    assert ctx.counter("convert-to-hivm", "vector-ops") == 3


def test_elementwise_small_tiles_many_per_core():
    check(lambda: vk.elementwise(dtype="f32"), [[(128 * 200,)] * 3 + [{"s0": 200}]], options="{max-tile-elems=256}")


def test_broadcast_kernel_two_results():
    check(lambda: vk.bias_relu(), [[(s, 96), (96,)] for s in (1, 33, 1000)])


def test_broadcast_kernel_tiled_columns():
    check(lambda: vk.bias_relu(cols=1000), [[(s, 1000), (1000,)] for s in (3, 70)], options="{max-tile-elems=300}")


def test_softmax_short_rows_one_pass():
    ctx = check(lambda: vk.softmax(), [[(s, 64)] for s in (1, 50, 777)])
    assert ctx.counter("hfusion-auto-schedule", "reductions-multipass") == 0


def test_softmax_long_row_multipass():
    ctx = check(lambda: vk.softmax(rows=3, cols=70000, symbols=""), [[(3, 70000)]], rtol=1e-4, atol=1e-6)
    assert ctx.counter("hfusion-auto-schedule", "reductions-multipass") == 1


def test_softmax_dynamic_row_length_multipass():
    check(lambda: vk.softmax(rows=4, cols="s1", symbols="s1 = [1, 1000000]"), [[(4, n)] for n in (5, 1000, 4099)],
          options="{max-tile-elems=1024}", rtol=1e-4, atol=1e-6)  # fmt: skip


@pytest.mark.parametrize("options", ["", "{max-tile-elems=2048}"])
def test_column_sum(options):
    check(lambda: vk.column_sum(), [[(s, 300)] for s in (1, 40, 3000)], options=options, rtol=1e-4, atol=1e-4)


def test_host_call_becomes_launch():
    m = vk.bias_relu()
    PassManager.from_pipeline("hfusion-auto-schedule,convert-to-hivm").run(m)
    host = m.lookup("main")
    names = [op.name for op in host.body.ops]
    assert "hivm.launch" in names and "func.call" not in names
    kernel = m.lookup("main_fused_0")
    tiling = kernel.attributes["tiling"]
    params = [a.name_hint for a in kernel.body.args if str(a.type) == "index"]
    assert params == sorted(tiling)


def test_unsupported_kernel_stays_tensor_level():
    t = "tensor<8x16xf32>"
    # a transpose feeding compute in one kernel (fusion keeps them apart; movement kernels have no compute)
    body = f"""    %t = hfusion.transpose %x {{perm = [1, 0]}} : ({t}) -> tensor<16x8xf32>
    %r = hfusion.elemwise_unary %t {{fun = "exp"}} : (tensor<16x8xf32>) -> tensor<16x8xf32>"""
    m = vk.module([("x", t)], body, [("%r", "tensor<16x8xf32>")], "ANY_PB", [("a", t)])
    ctx = PassManager.from_pipeline("hfusion-auto-schedule,convert-to-hivm").run(m)
    kernel = m.lookup("main_fused_0")
    assert kernel.attributes["hivm.unsupported"] == "hfusion.transpose"
    assert ctx.counter("convert-to-hivm", "kernels-unsupported") == 1
    assert any(op.name == "func.call" for op in m.lookup("main").body.ops)


def test_mem_scope_conflict_names_the_op():
    from graph_passes.passes import PassError

    text = """module attributes {target = "ascend910b1"} {
  func.func @bad(%out: memref<64xf32, gm>) attributes {kernel, output_args = [0]} {
    %c64 = arith.constant {value = 64} : () -> index
    %c0 = arith.constant {value = 0} : () -> index
    %u0 = hivm.alloc : () -> memref<64xf32>
    %u1 = hivm.alloc : () -> memref<64xf32>
    hivm.load %u0, %u1, %c0, %c64 : memref<64xf32>, memref<64xf32>, index, index
    hivm.store %u1, %out, %c0, %c64 : memref<64xf32>, memref<64xf32, gm>, index, index
    func.return
  }
}
"""
    with pytest.raises(PassError, match="'hivm.load' uses a local buffer .* global-memory operand 0"):
        PassManager.from_pipeline("hivm-infer-mem-scope").run(parse_module(text))


def test_full_vector_pipeline_scopes_and_core_type():
    m = vk.softmax()
    pipeline = "hfusion-auto-schedule,convert-to-hivm,hivm-infer-core-type,hivm-infer-mem-scope"
    ctx = PassManager.from_pipeline(pipeline, verify=True).run(m)
    kernel = m.lookup("main_fused_0")
    assert kernel.attributes["core_type"] == "AIV"
    allocs = [op for op in kernel.walk() if op.name == "hivm.alloc"]
    assert allocs and all(op.result.type.scope == "ub" for op in allocs)
    assert ctx.counter("hivm-infer-mem-scope", "buffers-scoped") == len(allocs)
    assert ctx.counter("hivm-infer-core-type", "aiv") == 1


FULL = (
    "canonicalize,cse,hfusion-fuse-ops,hfusion-flatten-ops,hfusion-infer-fusion-kind,hfusion-auto-schedule,"
    "convert-to-hivm,hivm-infer-core-type,hivm-infer-mem-scope,hivm-mark-multi-buffer,hivm-enable-multi-buffer,"
    "hivm-plan-memory,hivm-inject-sync"
)


@pytest.mark.parametrize("case", ["ELEMWISE", "SOFTMAX", "LAYER_NORM", "BIAS_RELU", "MATMUL_CHAIN"])
def test_fused_graphs_through_the_hivm_pipeline(case):
    """Imported-style graphs through fusion, scheduling and every HIVM pass still compute what they computed."""
    from tests.passes.hfusion import cases

    text = getattr(cases, case)
    lowered = parse_module(text)
    ctx = PassManager.from_pipeline(FULL, verify=True).run(lowered)
    assert ctx.counter("convert-to-hivm", "kernels-converted") >= 1
    reference = parse_module(text)
    torch.manual_seed(0)
    args = [torch.randn([int(d.subs({s: 5 for s in d.free_symbols})) for d in a.type.shape])
            for a in reference.lookup("main").body.args]  # fmt: skip
    want = interpret(reference, args, {"s0": 5})
    got = run_host(parse_module(print_module(lowered)), args, {"s0": 5})
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, atol=1e-4, rtol=1e-4)


def test_every_hivm_op_has_the_location_of_its_source_op():
    """convert-to-hivm and the HIVM passes after it give each new op the location of the hfusion op (FX node) or
    kernel argument it comes from, so errors point somewhere (the broadcasts are read in place by sub and div)."""
    from collections import Counter

    from graph_passes.ir.parser import parse_module
    from graph_passes.passes import PassManager
    from graph_passes.pipelines import default_pipeline

    t, r = "tensor<s0xs1xf32>", "tensor<s0xf32>"
    text = "module attributes {symbols = {s0 = [1, 512], s1 = [1, 20000]}} {\n" + f'''
  func.func @main(%x: {t}) -> ({t}) {{
    %max = hfusion.reduce %x {{dims = [1], kind = "max"}} : ({t}) -> {r} loc("amax")
    %maxb = hfusion.broadcast %max {{dims = [1]}} : ({r}) -> {t} loc("expand")
    %sub = hfusion.elemwise_binary %x, %maxb {{fun = "sub"}} : ({t}, {t}) -> {t} loc("sub")
    %exp = hfusion.elemwise_unary %sub {{fun = "exp"}} : ({t}) -> {t} loc("exp")
    %sum = hfusion.reduce %exp {{dims = [1], kind = "sum"}} : ({t}) -> {r} loc("sum_1")
    %sumb = hfusion.broadcast %sum {{dims = [1]}} : ({r}) -> {t} loc("expand_1")
    %div = hfusion.elemwise_binary %exp, %sumb {{fun = "div"}} : ({t}, {t}) -> {t} loc("div")
    func.return %div : {t}
  }}
}}'''
    m = parse_module(text)
    PassManager.from_pipeline(default_pipeline()).run(m)
    kernel = next(f for f in m.functions if f.attributes.get("kernel"))
    assert Counter(op.name for op in kernel.walk() if op.loc is None) == Counter()
    locs = {(op.name, str(op.loc)) for op in kernel.walk() if op.dialect == "hivm"}
    for expected in [("hivm.vreduce", "amax"), ("hivm.vbinary", "sub"), ("hivm.vunary", "exp"),
                     ("hivm.vreduce", "sum_1"), ("hivm.vbinary", "div"), ("hivm.store", "div"),
                     ("hivm.load", f"{kernel.sym_name}:%x")]:
        assert expected in locs, (expected, sorted(locs))


def test_invariant_loads_hoisted_and_tile_loads_grouped():
    """Broadcast parameter rows (offsets and extents independent of the work item) are loaded once per core before
    the tile loop, single-buffered; the per-tile loads form a load stage at the top of the body, before any vector
    op, so inject-sync needs one MTE2 -> V set/wait for them (CopyIn -> Compute -> CopyOut)."""
    check(lambda: vk.norm_affine(), [[(s, 256)] + [(256,)] * 4 for s in (1, 37, 300)])
    m = vk.norm_affine()
    passes = ("hfusion-auto-schedule,convert-to-hivm,hivm-infer-core-type,hivm-infer-mem-scope,"
              "hivm-mark-multi-buffer,hivm-enable-multi-buffer,hivm-plan-memory,hivm-inject-sync")
    PassManager.from_pipeline(passes, verify=True).run(m)
    kernel = m.lookup("main_fused_0")
    (loop,) = [op for op in kernel.body.ops if op.name == "scf.for"]
    top_loads = [op for op in kernel.body.ops if op.name == "hivm.load"]
    assert [op.operands[0].name_hint for op in top_loads] == ["w", "b", "s", "h"]
    assert all(kernel.body.ops.index(op) < kernel.body.ops.index(loop) for op in top_loads)
    for ld in top_loads:  # not multi-buffered: no DMA inside the loop feeds them
        assert ld.operands[1].op.name == "hivm.alloc" and "multi_buffer" not in ld.operands[1].op.attributes
    body = loop.body.ops
    pipe_ops = [op for op in body if getattr(op, "pipe", None)]
    loads = [i for i, op in enumerate(pipe_ops) if op.name == "hivm.load"]
    first_vec = min(i for i, op in enumerate(pipe_ops) if op.pipe == "PIPE_V")
    assert len(loads) == 1 and max(loads) < first_vec
    assert pipe_ops[loads[0]].operands[1].op.name == "hivm.multi_buffer_select"  # the tile's rows rotate
    mte2_v = [op for op in body if op.name == "hivm.set_flag" and op.attributes["src_pipe"] == "PIPE_MTE2"
              and op.attributes["dst_pipe"] == "PIPE_V"]
    assert len(mte2_v) == 1
