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
    rows = kernel.attributes["schedule"]["tile"][0]
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
    assert sched["buffers"] == 4 and not sched["reduce_looped"]
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
