"""Row reductions whose source dies at them (a norm's squares) fold in the source's own buffer: no scratch, and
ceil(log2(chunks)) + 1 dependent steps (graph_passes.schedule.buffers.in_place_folds, codegen.reduce); rows of whole
repeats fold block by block instead, the first level's results in scratch and the second's in the source."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from graph_passes.idioms.folds import in_place_fold_levels

from .helpers import lower, only_kernel, run_kernel
from .test_pipeline import _module
from .test_row_schedules import _layer_norm_f16


def _sum_of_squares(rows: int, cols: int) -> str:
    t, r = f"tensor<{rows}x{cols}xf32>", f"tensor<{rows}xf32>"
    return _module(f"""
  func.func @main(%x: {t}) -> ({r}) {{
    %sq = hfusion.elemwise_binary %x, %x {{fun = "mul"}} : ({t}, {t}) -> {t}
    %s = hfusion.reduce %sq {{dims = [1], kind = "sum"}} : ({t}) -> {r}
    func.return %s : {r}
  }}""")


def _reduces(kernel) -> list:
    return [op for op in kernel.walk() if op.name == "hivm.vreduce"]


def test_in_place_fold_levels():
    """64 chunks: 6 pairwise steps and the per-repeat reduce (a 16-partial scratch fold takes 8); one chunk more
    needs a step more; every MAX_REPEAT rows again."""
    assert in_place_fold_levels(2, 64) == 7
    assert in_place_fold_levels(2, 65) == 8
    assert in_place_fold_levels(2, 2) == 2
    assert in_place_fold_levels(300, 16) == 10


@pytest.mark.parametrize("rows,cols", [(40, 1000), (64, 512), (520, 200), (16, 72)])
def test_sum_of_squares_folds_in_place(rows, cols):
    """Σ x² per row: the squares die at the sum, so it folds in their buffer (16 chunks, the last one partial, at
    1000 columns; 4 and 2 at 200 and 72, the last partial; software-pipelined at 520 rows) and the kernel has no
    scratch. At 512 (8 whole repeats) it folds block by block: 512 → 64 (vcgadd into scratch), then vcadd."""
    module = lower(_sum_of_squares(rows, cols))
    ck = only_kernel(module)
    kernel = module.lookup(ck.name)
    assert _reduces(kernel) and all(op.attributes.get("fold_in_place") for op in _reduces(kernel))
    scratch = [op for op in kernel.walk() if op.name == "hivm.alloc" and op.attributes.get("scratch")]
    blocks = "vcgadd" in ck.assembly()
    assert (blocks, bool(scratch)) == ((True, True) if cols == 512 else (False, False))
    x = np.random.default_rng(3).standard_normal((rows, cols)).astype(np.float32)
    (out,), res = run_kernel(ck, [x], {})
    assert res.stats.hazards_checked
    np.testing.assert_allclose(out.reshape(-1), (x.astype(np.float64) ** 2).sum(1), rtol=2e-6)


def _loop_barriers(ck) -> int:
    """``pipe_barrier``s in the body of the kernel's work-item loop (``loop t``)."""
    lines = ck.assembly().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("loop t ="))
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = next(i for i in range(start + 1, len(lines)) if lines[i] == " " * indent + "}")
    return sum("pipe_barrier" in line for line in lines[start:end])


def test_layer_norm_squares_fold_in_place():
    """Layer norm over 256 rows of 4096 f16 (2 rows per work item, pipelined): x − mean lives on after its row sum,
    whose fold keeps its source; the squares die at theirs, whose second level writes into them. Both fold block by
    block — 4096 → 512 → 64 (vcgadd), then vcadd: 3 steps each, where the pairwise folds took 7 in place and 8 in
    scratch. A pipelined iteration runs the longer stage's 10 levels after the barrier opening it: a level of either
    stage with no vector op (the tile load's wait, a set_flag between a fold's closing barrier and the next op's)
    joins the next instead of pairing the other stage's step with nothing. The mean and rstd are read as per-row
    scalars (vadds/vmuls, no vbrcb level; the mean's 1/N applied by the scalar unit, no vmuls level:
    tests/codegen/test_scalar_columns.py). 11 barriers and 7,807 cycles with the vector unit's mean, 12 and 8,639
    with vbrcb'd columns, 16 and 9,791 with the pairwise folds, 18 and 10,303 before the in-place fold."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((256, 4096)).astype(np.float16)
    w, b = rng.standard_normal(4096).astype(np.float16), rng.standard_normal(4096).astype(np.float16)
    module = lower(_layer_norm_f16(256))
    ck = only_kernel(module)
    kernel = module.lookup(ck.name)
    assert [bool(op.attributes.get("fold_in_place")) for op in _reduces(kernel)].count(True) >= 1
    assert not all(op.attributes.get("fold_in_place") for op in _reduces(kernel))
    (out,), res = run_kernel(ck, [x, w, b], {})
    assert res.stats.hazards_checked
    ref = F.layer_norm(torch.from_numpy(x).float(), (4096,), torch.from_numpy(w).float(), torch.from_numpy(b).float())
    np.testing.assert_allclose(out.reshape(x.shape).astype(np.float32), ref.numpy(), atol=2e-2, rtol=1e-2)
    assert "vcgadd" in ck.assembly()
    assert _loop_barriers(ck) == 10
    assert res.stats.cycles < 7_800, res.stats.cycles


def test_fold_in_place_needs_static_rows():
    """The schedule folds only rows of a static length in place (it plans no scratch for them): a ``vreduce
    {fold_in_place}`` over rows of a symbolic length is refused by codegen, naming the op."""
    from codegen import CodegenError, compile_kernel

    t, r = "tensor<s0xs1xf32>", "tensor<s0xf32>"
    module = lower(f"""module attributes {{symbols = {{s0 = [1, 4096], s1 = [1, 100000]}}}} {{
  func.func @main(%x: {t}) -> ({r}) {{
    %s = hfusion.reduce %x {{dims = [1], kind = "sum"}} : ({t}) -> {r}
    func.return %s : {r}
  }}
}}""")
    kernel = module.lookup(only_kernel(module).name)
    (reduce,) = _reduces(kernel)
    reduce.attributes["fold_in_place"] = True
    with pytest.raises(CodegenError, match=r"hivm.vreduce.*fold_in_place over rows of a symbolic length"):
        compile_kernel(kernel, module)
