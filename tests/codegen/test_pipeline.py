"""Kernels produced by the real pipeline (tensor-level hfusion text → default_pipeline → codegen) run on the
simulator with the hazard checker on, against numpy."""

import numpy as np
import pytest

from simulator import RaceError

from .helpers import drop_one_sync, lower, only_kernel, run_kernel

HEAD = "module attributes {symbols = {s0 = [1, 4096]}} {"


def _module(body: str) -> str:
    return HEAD + body + "\n}"


def elementwise(dt: str) -> str:
    t = f"tensor<s0x128x{dt}>"
    return _module(f"""
  func.func @main(%x: {t}, %y: {t}, %z: {t}) -> ({t}) {{
    %m = hfusion.elemwise_binary %x, %y {{fun = "mul"}} : ({t}, {t}) -> {t}
    %a = hfusion.elemwise_binary %m, %z {{fun = "add"}} : ({t}, {t}) -> {t}
    %r = hfusion.elemwise_unary %a {{fun = "relu"}} : ({t}) -> {t}
    func.return %r : {t}
  }}""")


BIAS_ADD = _module("""
  func.func @main(%x: tensor<s0x96xf32>, %bias: tensor<96xf32>) -> (tensor<s0x96xf32>) {
    %bb = hfusion.broadcast %bias {dims = [0]} : (tensor<96xf32>) -> tensor<s0x96xf32>
    %a = hfusion.elemwise_binary %x, %bb {fun = "add"} : (tensor<s0x96xf32>, tensor<s0x96xf32>) -> tensor<s0x96xf32>
    func.return %a : tensor<s0x96xf32>
  }""")


def softmax(dt: str, n: int) -> str:
    t, r = f"tensor<s0x{n}x{dt}>", f"tensor<s0x{dt}>"
    return _module(f"""
  func.func @main(%x: {t}) -> ({t}) {{
    %max = hfusion.reduce %x {{dims = [1], kind = "max"}} : ({t}) -> {r}
    %maxb = hfusion.broadcast %max {{dims = [1]}} : ({r}) -> {t}
    %sub = hfusion.elemwise_binary %x, %maxb {{fun = "sub"}} : ({t}, {t}) -> {t}
    %exp = hfusion.elemwise_unary %sub {{fun = "exp"}} : ({t}) -> {t}
    %sum = hfusion.reduce %exp {{dims = [1], kind = "sum"}} : ({t}) -> {r}
    %sumb = hfusion.broadcast %sum {{dims = [1]}} : ({r}) -> {t}
    %div = hfusion.elemwise_binary %exp, %sumb {{fun = "div"}} : ({t}, {t}) -> {t}
    func.return %div : {t}
  }}""")


SUM_DIM0 = _module("""
  func.func @main(%x: tensor<s0x64xf32>) -> (tensor<64xf32>) {
    %s = hfusion.reduce %x {dims = [0], kind = "sum"} : (tensor<s0x64xf32>) -> tensor<64xf32>
    func.return %s : tensor<64xf32>
  }""")

CAST_CHAIN = _module("""
  func.func @main(%x: tensor<s0x128xf16>) -> (tensor<s0x128xf16>) {
    %a = hfusion.cast %x : (tensor<s0x128xf16>) -> tensor<s0x128xf32>
    %b = hfusion.elemwise_unary %a {fun = "exp"} : (tensor<s0x128xf32>) -> tensor<s0x128xf32>
    %c = hfusion.cast %b : (tensor<s0x128xf32>) -> tensor<s0x128xf16>
    func.return %c : tensor<s0x128xf16>
  }""")

ADD_F32 = _module("""
  func.func @main(%x: tensor<s0x1024xf32>, %y: tensor<s0x1024xf32>) -> (tensor<s0x1024xf32>) {
    %a = hfusion.elemwise_binary %x, %y {fun = "add"} : (tensor<s0x1024xf32>, tensor<s0x1024xf32>) -> tensor<s0x1024xf32>
    func.return %a : tensor<s0x1024xf32>
  }""")


def _inputs(ck, bindings, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for a in ck.arg_layout:
        if not a.is_output:
            dt = {"f16": np.float16, "f32": np.float32}[a.dtype]
            out.append(rng.standard_normal(a.evaluate_shape(ck.tiling.sizes, bindings)).astype(dt))
    return out


@pytest.mark.parametrize("dt", ["f16", "f32"])
def test_elementwise_dynamic_sizes_one_program(dt):
    ck = only_kernel(lower(elementwise(dt)))
    for s0 in (1, 77, 1000):  # one partial tile; several tiles with a partial last one; more tiles than cores
        b = {"s0": s0}
        x, y, z = _inputs(ck, b)
        (out,), res = run_kernel(ck, [x, y, z], b)
        ref = np.maximum(x * y + z, 0)
        np.testing.assert_array_equal(out.reshape(ref.shape), ref)
        assert res.stats.hazards_checked


def test_broadcast_add():
    ck = only_kernel(lower(BIAS_ADD))
    for s0 in (3, 1000):
        b = {"s0": s0}
        args = dict(zip([a.name for a in ck.arg_layout if not a.is_output], _inputs(ck, b)))
        (out,), _ = run_kernel(ck, list(args.values()), b)  # the fused kernel's argument order is fusion's
        x, bias = args["x"], args["bias"]
        np.testing.assert_array_equal(out.reshape(x.shape), x + bias)


@pytest.mark.parametrize("dt,n,sizes", [("f32", 40, (1, 242, 1000)), ("f16", 40, (5, 300)), ("f32", 1000, (3, 50))])
def test_last_axis_softmax(dt, n, sizes):
    ck = only_kernel(lower(softmax(dt, n)))
    for s0 in sizes:
        b = {"s0": s0}
        (x,) = _inputs(ck, b)
        (out,), _ = run_kernel(ck, [x], b)
        xf = x.astype(np.float32)
        e = np.exp(xf - xf.max(1, keepdims=True))
        ref = e / e.sum(1, keepdims=True)
        np.testing.assert_allclose(out.reshape(ref.shape).astype(np.float32), ref, rtol=2e-3 if dt == "f16" else 1e-5,
                                   atol=1e-3 if dt == "f16" else 1e-7)


def test_sum_over_dim0():
    ck = only_kernel(lower(SUM_DIM0))
    for s0 in (1, 300, 1200):  # 1200 rows: several reduced tiles accumulated
        b = {"s0": s0}
        (x,) = _inputs(ck, b)
        (out,), _ = run_kernel(ck, [x], b)
        np.testing.assert_allclose(out.reshape(-1), x.sum(0, dtype=np.float64), rtol=1e-4, atol=1e-4)


def test_cast_chain():
    ck = only_kernel(lower(CAST_CHAIN))
    for s0 in (2, 500):
        b = {"s0": s0}
        (x,) = _inputs(ck, b)
        (out,), _ = run_kernel(ck, [x], b)
        ref = np.exp(x.astype(np.float32)).astype(np.float16)
        np.testing.assert_array_equal(out.reshape(ref.shape), ref)


def test_double_buffering_is_faster_on_a_bandwidth_bound_kernel():
    """Without the per-DMA fixed costs double buffering is faster; with them both depths run at the chip's DDR
    roofline on every core (docs/simulator.md: the vector add likewise), within 1% of each other."""
    from simulator import get_chip

    b = {"s0": 2048}  # 8 MiB per operand: every core runs several tiles
    chip = get_chip("ascend910b1")
    cycles = {}
    for depth in (1, 2):
        ck = only_kernel(lower(ADD_F32, multi_buffer=depth))
        x, y = _inputs(ck, b)
        for c in (chip, chip.without_fixed_costs()):
            (out,), res = run_kernel(ck, [x, y], b, chip=c)
            np.testing.assert_array_equal(out.reshape(x.shape), x + y)
            cycles[depth, c.fixed_costs] = res.stats.cycles
    assert cycles[2, False] < cycles[1, False], cycles
    assert cycles[2, True] < 1.01 * cycles[1, True] and cycles[2, True] >= res.stats.roofline_cycles, cycles


def test_dropping_a_wait_from_a_pipeline_kernel_is_a_race():
    module = lower(elementwise("f32"))
    ck = only_kernel(module)
    broken = drop_one_sync(ck, module)
    b = {"s0": 1000}
    with pytest.raises(RaceError):
        run_kernel(broken, _inputs(broken, b), b)


def test_fusion_cases_end_to_end():
    """The hfusion pass tests' cases (elementwise, softmax, layer norm, bias+relu, a matmul chain whose vector kernel
    is compiled), host function interpreted, kernels on the simulator, against the reference interpreter."""
    import torch

    from graph_passes.ir.parser import parse_module
    from torch_npu_backend.interpreter import interpret

    from codegen import compile_module
    from tests.passes.hfusion import cases

    from .helpers import run_host

    for name in ("ELEMWISE", "SOFTMAX", "LAYER_NORM", "BIAS_RELU", "MATMUL_CHAIN"):
        text = getattr(cases, name)
        ref_module, module = parse_module(text), lower(text)
        kernels = compile_module(module)
        assert kernels, name
        for s0 in (1, 37):
            gen = torch.Generator().manual_seed(s0)
            args = [torch.randn([s0 if str(d) == "s0" else int(d) for d in a.type.shape], generator=gen)
                    for a in ref_module.lookup("main").body.args]
            launches = []
            got = run_host(module, kernels, args, results=launches)
            ref = interpret(ref_module, args)
            assert launches and all(r.stats.hazards_checked for r in launches)
            for g, r in zip(got, ref):
                torch.testing.assert_close(g, r, rtol=1e-5, atol=1e-5, msg=f"{name} s0={s0}")


@pytest.mark.parametrize("kind", ["sum", "max"])
def test_middle_dim_reduction(kind):
    text = _module(f"""
  func.func @main(%x: tensor<s0x8x32xf32>) -> (tensor<s0x32xf32>) {{
    %s = hfusion.reduce %x {{dims = [1], kind = "{kind}"}} : (tensor<s0x8x32xf32>) -> tensor<s0x32xf32>
    func.return %s : tensor<s0x32xf32>
  }}""")
    ck = only_kernel(lower(text))
    for s0 in (1, 100):
        b = {"s0": s0}
        (x,) = _inputs(ck, b)
        (out,), res = run_kernel(ck, [x], b)
        ref = x.sum(1) if kind == "sum" else x.max(1)
        np.testing.assert_allclose(out.reshape(ref.shape), ref, rtol=1e-6, atol=1e-6)
    assert "loop d" not in ck.assembly()  # the [rows, 8, 32] tile is contiguous: one burst, no per-row loop


def test_scalar_operands_in_a_ub_filling_kernel():
    """x / 3 and 2 - x have no vector-scalar instruction; the tile fills UB, so no scratch: dst takes the scalar."""
    t = "tensor<s0x128xf32>"
    ck = only_kernel(lower(_module(f"""
  func.func @main(%x: {t}) -> ({t}) {{
    %c = arith.constant {{value = 3.0}} : () -> f32
    %d = arith.constant {{value = 2.0}} : () -> f32
    %a = hfusion.elemwise_binary %x, %c {{fun = "div"}} : ({t}, f32) -> {t}
    %b = hfusion.elemwise_binary %d, %a {{fun = "sub"}} : (f32, {t}) -> {t}
    func.return %b : {t}
  }}""")))
    b = {"s0": 300}
    (x,) = _inputs(ck, b)
    (out,), _ = run_kernel(ck, [x], b)
    np.testing.assert_array_equal(out.reshape(x.shape), np.float32(2) - x / np.float32(3))


def test_pipeline_kernel_assembly_parses_back():
    from simulator import parse, to_text

    ck = only_kernel(lower(softmax("f16", 40)))
    text = ck.assembly()
    assert "# hivm.vbinary {fun = sub}" in text and "vbrcb" in text  # the row max is an inlined column operand
    assert to_text(parse(text)) == to_text(ck.program)


def test_bf16_math_through_legalize_with_ub_full():
    """bf16 compute is legalized to f32 between casts before fusion (hfusion-legalize-bf16): the casts are kernel
    ops with planned buffers, so a kernel whose tiles fill UB still compiles; each op rounds to bf16 like torch."""
    import ml_dtypes

    bf16 = ml_dtypes.bfloat16
    t = "tensor<s0x128xbf16>"
    text = _module(f"""
  func.func @main(%x: {t}, %y: {t}) -> ({t}) {{
    %e = hfusion.elemwise_unary %x {{fun = "exp"}} : ({t}) -> {t}
    %a = hfusion.elemwise_binary %e, %y {{fun = "add"}} : ({t}, {t}) -> {t}
    func.return %a : {t}
  }}""")
    module = lower(text)
    ck = only_kernel(module)
    kernel = module.lookup(ck.name)
    assert kernel.attributes["schedule"].ub_bytes > 192 * 1024 - 8 * 1024  # the tiles fill UB
    assert "vconv src_dtype=bf16 dst_dtype=f32" in ck.assembly()
    for s0 in (3, 1000):
        b = {"s0": s0}
        rng = np.random.default_rng(s0)
        x, y = (rng.standard_normal((s0, 128)).astype(bf16) for _ in range(2))
        (out,), res = run_kernel(ck, [x, y], b)
        e = np.exp(x.astype(np.float32)).astype(bf16)  # torch eager: every bf16 op rounds its result
        ref = (e.astype(np.float32) + y.astype(np.float32)).astype(bf16)
        np.testing.assert_array_equal(out.reshape(ref.shape).astype(np.float32), ref.astype(np.float32))
        assert res.stats.hazards_checked


def test_long_row_reduction_with_ub_full_uses_planned_scratch():
    """Row sums of 944 f32 (longer than one 64-lane repeat): the 15 column chunks of each row fold into K = 4
    partials per row, 16 rows at a time (scratch 16 × 4 × 256 B). The buffers alone would fill UB to the byte;
    auto-schedule counts the kernel's scratch, convert-to-hivm allocates it (``scratch = true``), plan-memory places
    it, codegen folds into it."""
    text = _module("""
  func.func @main(%x: tensor<s0x944xf32>) -> (tensor<s0xf32>) {
    %s = hfusion.reduce %x {dims = [1], kind = "sum"} : (tensor<s0x944xf32>) -> tensor<s0xf32>
    func.return %s : tensor<s0xf32>
  }""")
    module = lower(text)
    ck = only_kernel(module)
    kernel = module.lookup(ck.name)
    sched = kernel.attributes["schedule"]
    assert sched.scratch_bytes == 16 * 4 * 256 and sched.ub_bytes <= 192 * 1024
    scratch = [op for op in kernel.walk() if op.name == "hivm.alloc" and op.attributes.get("scratch")]
    assert len(scratch) == 1 and scratch[0].result.type.nbytes == 16 * 4 * 256 and "offsets" in scratch[0].attributes
    for s0 in (1, 25, 700):
        b = {"s0": s0}
        (x,) = _inputs(ck, b)
        (out,), res = run_kernel(ck, [x], b)
        np.testing.assert_allclose(out.reshape(-1), x.sum(1, dtype=np.float64), rtol=1e-5, atol=1e-4)
        assert res.stats.hazards_checked


BIAS_DYN = """module attributes {symbols = {s0 = [1, 4096], s1 = [1, 8192]}} {
  func.func @main(%x: tensor<s0xs1xf32>, %bias: tensor<s1xf32>) -> (tensor<s0xs1xf32>) {
    %bb = hfusion.broadcast %bias {dims = [0]} : (tensor<s1xf32>) -> tensor<s0xs1xf32>
    %a = hfusion.elemwise_binary %x, %bb {fun = "add"} : (tensor<s0xs1xf32>, tensor<s0xs1xf32>) -> tensor<s0xs1xf32>
    func.return %a : tensor<s0xs1xf32>
  }
}"""


def test_tiles_write_whole_gm_blocks_across_cores():
    """Every work item's GM footprint covers whole 32-B blocks (docs/schedule.md), so no two cores write one block:
    softmax f16 rows of 40 B take a multiple of 4 rows per tile; x[s0, s1] + bias with a symbolic row takes a multiple
    of 8 rows and keeps a row's column tiles on one core. The hazard checker sees every copy_ub_to_gm."""
    ck = only_kernel(lower(softmax("f16", 20)))
    b = {"s0": 1000}
    (x,) = _inputs(ck, b)
    (out,), res = run_kernel(ck, [x], b)
    assert ck.tiling.block_dim(b) > 1 and res.stats.hazards_checked
    xf = x.astype(np.float32)
    e = np.exp(xf - xf.max(1, keepdims=True))
    np.testing.assert_allclose(out.reshape(x.shape).astype(np.float32), e / e.sum(1, keepdims=True), rtol=2e-3,
                               atol=1e-3)
    module = lower(BIAS_DYN)
    ck = only_kernel(module)
    for s0, s1 in ((3, 100), (37, 3001), (9, 7)):
        b = {"s0": s0, "s1": s1}
        args = dict(zip([a.name for a in ck.arg_layout if not a.is_output], _inputs(ck, b)))
        (out,), res = run_kernel(ck, list(args.values()), b)
        assert res.stats.hazards_checked
        np.testing.assert_array_equal(out.reshape(s0, s1), args["x"] + args["bias"])
    assert ck.tiling.block_dim({"s0": 37, "s1": 3001}) > 1


def test_softmax_dynamic_last_dim_event_ids():
    """Last-axis softmax over a dynamic row (s1 up to 20000: multi-pass): more set/wait pairs of MTE2 -> V than the 8
    event ids; flags at one point merge and the passes' ids are reused across quiesce points inside the work-item
    loop. The hazard checker checks the result on the simulator."""
    text = softmax("f32", "s1").replace("symbols = {s0 = [1, 4096]}", "symbols = {s0 = [1, 512], s1 = [1, 20000]}")
    module = lower(text)
    ck = only_kernel(module)
    assert module.lookup(ck.name).attributes["schedule"].reduce_looped
    for s0, s1 in ((3, 20000), (50, 77)):
        b = {"s0": s0, "s1": s1}
        (x,) = _inputs(ck, b)
        (out,), res = run_kernel(ck, [x], b)
        assert res.stats.hazards_checked
        e = np.exp(x - x.max(1, keepdims=True))
        np.testing.assert_allclose(out.reshape(x.shape), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
