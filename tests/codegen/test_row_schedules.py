"""Row-wise vector kernels (row reductions, softmax, norms) measured on the simulator: log-depth row reductions,
column broadcasts read in place by their binary users, whole rows in UB (one pass over GM)."""

import numpy as np
import torch
import torch.nn.functional as F

from graph_passes.ir.types import MemRefType

from .helpers import lower, only_kernel, run_kernel
from .test_pipeline import _inputs, _module, softmax
from codegen import compile_kernel

ROW_SUM = _module("""
  func.func @main(%x: tensor<s0x4096xf32>) -> (tensor<s0xf32>) {
    %s = hfusion.reduce %x {dims = [1], kind = "sum"} : (tensor<s0x4096xf32>) -> tensor<s0xf32>
    func.return %s : tensor<s0xf32>
  }""")


def _scratch(kernel):
    return next(op for op in kernel.walk() if op.name == "hivm.alloc" and op.attributes.get("scratch"))


def test_long_row_reduction_folds_in_log_depth():
    """Row sums of 4096 f32 (64 chunks of one repeat): the chunks fold into K partials per row, which halve to one —
    a handful of dependent steps. The same kernel given one 256-B partial per row (its scratch shrunk: the fold
    chain of one dependent instruction per chunk, 8-row tiles) takes over 1.4× the cycles."""
    module = lower(ROW_SUM)
    ck = only_kernel(module)
    kernel = module.lookup(ck.name)
    b = {"s0": 96}
    (x,) = _inputs(ck, b)
    (out,), res = run_kernel(ck, [x], b)
    np.testing.assert_allclose(out.reshape(-1), x.sum(1, dtype=np.float64), rtol=1e-5, atol=1e-4)
    assert res.stats.hazards_checked

    scratch = _scratch(kernel)
    rows = kernel.attributes["schedule"].tile[0]
    scratch.result.type = MemRefType((min(rows, 16) * 256,), "i8", scratch.result.type.scope)
    chain = compile_kernel(kernel, module)
    (out_chain,), res_chain = run_kernel(chain, [x], b)
    np.testing.assert_allclose(out_chain.reshape(-1), x.sum(1, dtype=np.float64), rtol=1e-5, atol=1e-4)
    assert res.stats.cycles * 1.4 < res_chain.stats.cycles, (res.stats.cycles, res_chain.stats.cycles)


def test_softmax_reads_row_maxima_and_sums_in_place():
    """softmax over rows of 4096: the row max and row sum are broadcast along the row only inside the binary ops
    that read them (vbrcb one block per row, block stride 0), so no R×4096 copy is computed or allocated."""
    module = lower(softmax("f32", 4096))
    ck = only_kernel(module)
    kernel = module.lookup(ck.name)
    assert not [op for op in kernel.walk() if op.name == "hivm.vbrc"]
    sched = kernel.attributes["schedule"]
    # x (loaded, 2 copies), the row max, the row sum, and x - max: exp and the quotient overwrite it in place (the
    # quotient's other operand, the row sum, already read exp(x - max)); stored, 2 copies
    assert len(sched.buffers) == 4 and not sched.reduce_looped
    b = {"s0": 50}
    (x,) = _inputs(ck, b)
    (out,), res = run_kernel(ck, [x], b)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(out.reshape(x.shape), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    assert "src1_blk=0" in ck.assembly() and res.stats.hazards_checked


def test_layer_norm_reads_each_row_once(fresh_dynamo):
    """Layer norm over rows of 4096 f16 (the rows fit UB with the weight and bias): one pass per row, so GM traffic
    is x once, the output once, and the weight and bias once per core (loaded before the work-item loop)."""
    import torch_npu_backend

    torch.manual_seed(0)
    rows, cols = 96, 4096
    x = torch.randn(rows, cols, dtype=torch.float16)
    w, bias = torch.randn(cols, dtype=torch.float16), torch.randn(cols, dtype=torch.float16)
    fn = torch.compile(lambda x, w, b: F.layer_norm(x, (cols,), w, b), backend="npu")
    with torch.no_grad(), torch_npu_backend.profile(trace=False) as prof:
        out = fn(x, w, bias)
    ref = F.layer_norm(x.float(), (cols,), w.float(), bias.float())
    torch.testing.assert_close(out.float(), ref, atol=2e-2, rtol=1e-2)
    (rec,) = prof.records
    assert rec.simulated and rec.hazards_checked
    assert rec.gm_bytes == 2 * rows * cols * 2 + rec.block_dim * 2 * cols * 2, rec.gm_bytes


def _softmax_f16(rows: int, cols: int = 4096) -> str:
    """torch.softmax over f16 rows as the importer decomposes it (computed in f32, as eager does)."""
    h, f, hr, fr = (f"tensor<{rows}x{cols}xf16>", f"tensor<{rows}x{cols}xf32>", f"tensor<{rows}xf16>",
                    f"tensor<{rows}xf32>")
    return _module(f"""
  func.func @main(%x: {h}) -> ({h}) {{
    %xf = hfusion.cast %x {{round_mode = "rint"}} : ({h}) -> {f}
    %m = hfusion.reduce %x {{dims = [1], kind = "max"}} : ({h}) -> {hr}
    %mf = hfusion.cast %m {{round_mode = "rint"}} : ({hr}) -> {fr}
    %mb = hfusion.broadcast %mf {{dims = [1]}} : ({fr}) -> {f}
    %d = hfusion.elemwise_binary %xf, %mb {{fun = "sub"}} : ({f}, {f}) -> {f}
    %e = hfusion.elemwise_unary %d {{fun = "exp"}} : ({f}) -> {f}
    %s = hfusion.reduce %e {{dims = [1], kind = "sum"}} : ({f}) -> {fr}
    %r = hfusion.elemwise_unary %s {{fun = "reciprocal"}} : ({fr}) -> {fr}
    %rb = hfusion.broadcast %r {{dims = [1]}} : ({fr}) -> {f}
    %p = hfusion.elemwise_binary %e, %rb {{fun = "mul"}} : ({f}, {f}) -> {f}
    %y = hfusion.cast %p {{round_mode = "rint"}} : ({f}) -> {h}
    func.return %y : {h}
  }}""")


def _run_rows(text: str, x, **options):
    module = lower(text, **options)
    ck = only_kernel(module)
    (out,), res = run_kernel(ck, [x], {})
    assert res.stats.hazards_checked
    return module.lookup(ck.name), ck, out.reshape(x.shape), res


def test_softmax_rows_pipelined_across_work_items():
    """softmax over 96 rows of 4096 f16: the schedule cuts a work item in two stages — cast, row max, x − max, exp;
    row sum, 1/sum, product, cast — and runs stage 0 of work item t beside stage 1 of work item t − block_dim, their
    vector steps in pairs between barriers. The same result as the lockstep loop (row_pipeline off), in under 95%
    of its cycles."""
    x = np.random.default_rng(0).standard_normal((96, 4096)).astype(np.float16)
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    want = e / e.sum(1, keepdims=True)
    kernel, ck, out, res = _run_rows(_softmax_f16(96), x)
    sched = kernel.attributes["schedule"]
    assert sched.pipelined and sched.tile[1] == 4096
    stages = {op.attributes["stage"] for op in kernel.walk() if "stage" in op.attributes}
    assert stages == {0, 1}
    np.testing.assert_allclose(out.astype(np.float64), want, rtol=2e-3, atol=1e-4)
    lock_kernel, _, lock_out, lock_res = _run_rows(_softmax_f16(96), x, row_pipeline=False)
    assert not lock_kernel.attributes["schedule"].pipelined
    np.testing.assert_allclose(out.astype(np.float32), lock_out.astype(np.float32), rtol=4e-3, atol=1e-6)
    assert res.stats.cycles < 0.95 * lock_res.stats.cycles, (res.stats.cycles, lock_res.stats.cycles)


def test_independent_ops_share_a_vector_level():
    """The input cast and the row-max fold of softmax f16 read the same tile and write different buffers: no
    barrier between them (the fold's scratch was not touched since the last one), so they share one start-up."""
    module = lower(_softmax_f16(96), row_pipeline=False)
    text = only_kernel(module).assembly().splitlines()
    cast = next(i for i, line in enumerate(text) if "vconv src_dtype=f16 dst_dtype=f32" in line)
    fold = next(i for i, line in enumerate(text) if line.strip().startswith("vcgmax"))  # the fold's first level
    assert cast < fold and not [line for line in text[cast:fold] if "pipe_barrier" in line]


def _layer_norm_f16(rows: int, cols: int = 4096) -> str:
    """F.layer_norm over f16 rows with weight and bias as the importer decomposes it (in f32)."""
    h, f, fr, hv, fv = (f"tensor<{rows}x{cols}xf16>", f"tensor<{rows}x{cols}xf32>", f"tensor<{rows}xf32>",
                        f"tensor<{cols}xf16>", f"tensor<{cols}xf32>")
    return _module(f"""
  func.func @main(%x: {h}, %w: {hv}, %b: {hv}) -> ({h}) {{
    %inv_n = arith.constant {{value = {1 / cols}}} : () -> f32
    %eps = arith.constant {{value = 1e-05}} : () -> f32
    %xf = hfusion.cast %x {{round_mode = "rint"}} : ({h}) -> {f}
    %s = hfusion.reduce %xf {{dims = [1], kind = "sum"}} : ({f}) -> {fr}
    %mean = hfusion.elemwise_binary %s, %inv_n {{fun = "mul"}} : ({fr}, f32) -> {fr}
    %mb = hfusion.broadcast %mean {{dims = [1]}} : ({fr}) -> {f}
    %d = hfusion.elemwise_binary %xf, %mb {{fun = "sub"}} : ({f}, {f}) -> {f}
    %sq = hfusion.elemwise_binary %d, %d {{fun = "mul"}} : ({f}, {f}) -> {f}
    %ss = hfusion.reduce %sq {{dims = [1], kind = "sum"}} : ({f}) -> {fr}
    %var = hfusion.elemwise_binary %ss, %inv_n {{fun = "mul"}} : ({fr}, f32) -> {fr}
    %ve = hfusion.elemwise_binary %var, %eps {{fun = "add"}} : ({fr}, f32) -> {fr}
    %rstd = hfusion.elemwise_unary %ve {{fun = "rsqrt"}} : ({fr}) -> {fr}
    %rb = hfusion.broadcast %rstd {{dims = [1]}} : ({fr}) -> {f}
    %n = hfusion.elemwise_binary %d, %rb {{fun = "mul"}} : ({f}, {f}) -> {f}
    %wf = hfusion.cast %w {{round_mode = "rint"}} : ({hv}) -> {fv}
    %wb = hfusion.broadcast %wf {{dims = [0]}} : ({fv}) -> {f}
    %nw = hfusion.elemwise_binary %n, %wb {{fun = "mul"}} : ({f}, {f}) -> {f}
    %bf = hfusion.cast %b {{round_mode = "rint"}} : ({hv}) -> {fv}
    %bb = hfusion.broadcast %bf {{dims = [0]}} : ({fv}) -> {f}
    %o = hfusion.elemwise_binary %nw, %bb {{fun = "add"}} : ({f}, {f}) -> {f}
    %y = hfusion.cast %o {{round_mode = "rint"}} : ({f}) -> {h}
    func.return %y : {h}
  }}""")


def test_layer_norm_rows_pipelined_with_one_copy_of_the_tiles():
    """Layer norm over 192 rows of 4096 f16: two copies of the carried x − mean (f32) leave no UB for second copies
    of the loaded and stored f16 tiles at 2 rows per work item, so the pipelined schedule keeps one of each — the
    next tile's load still overlaps this one's compute after its cast, the previous tile's store this one's before
    its last cast — and the weight and bias are loaded after the first work item's stage 0, which does not read
    them. The same result as the lockstep loop, in fewer cycles."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((192, 4096)).astype(np.float16)
    w, b = rng.standard_normal(4096).astype(np.float16), rng.standard_normal(4096).astype(np.float16)
    text = _layer_norm_f16(192)
    runs = {}
    for rp in (True, False):
        module = lower(text, row_pipeline=rp)
        ck = only_kernel(module)
        (out,), res = run_kernel(ck, [x, w, b], {})
        assert res.stats.hazards_checked
        runs[rp] = (module.lookup(ck.name).attributes["schedule"], out.reshape(x.shape), res.stats.cycles)
    sched = runs[True][0]
    assert sched.pipelined and list(sched.tile) == [2, 4096] and sched.io_copies == 1
    ref = F.layer_norm(torch.from_numpy(x).float(), (4096,), torch.from_numpy(w).float(), torch.from_numpy(b).float())
    np.testing.assert_allclose(runs[True][1].astype(np.float32), ref.numpy(), atol=2e-2, rtol=1e-2)
    np.testing.assert_allclose(runs[True][1].astype(np.float32), runs[False][1].astype(np.float32), rtol=4e-3,
                               atol=4e-3)  # the row sums fold in another order (an ulp of f16 apart at most)
    assert runs[True][2] < 0.95 * runs[False][2], (runs[True][2], runs[False][2])
