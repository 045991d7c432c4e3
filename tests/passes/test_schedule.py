"""hfusion-auto-schedule: tile sizes fit UB, the work split fits the cores, tiling expressions evaluate right."""

from __future__ import annotations

import math

import pytest
import torch

from graph_passes.dialects.schedule_attrs import MovementSchedule
from graph_passes.ir.sizes import evaluate, sym
from graph_passes.passes import PassManager
from graph_passes.schedule.buffers import plan_buffers
from graph_passes.schedule.kernel_info import analyze_kernel
from graph_passes.schedule.launch_alignment import rows_for_whole_blocks
from graph_passes.schedule.software_pipeline import split_stages
from graph_passes.target import target_spec
from tests.passes import vector_kernels as vk

TARGET = target_spec("ascend910b1")


def schedule(module, options=""):
    ctx = PassManager.from_pipeline(f"hfusion-auto-schedule{options}", verify=True).run(module)
    kernel = module.lookup("main_fused_0")
    return kernel, kernel.attributes.get("schedule"), kernel.attributes.get("tiling"), ctx


def ub_bytes(module, kernel, sched) -> int:
    """UB bytes of the buffers the lowering allocates (recomputed independently of the recorded figure)."""
    info = analyze_kernel(kernel, module.size_vars(), TARGET)
    plan = plan_buffers(info, sched.reduce_looped)
    return plan.ub_bytes(list(sched.tile), TARGET.ub_align, sched.io_copies)


def test_static_elementwise():
    m = vk.elementwise(n=4096, dtype="f32", symbols="")
    kernel, sched, tiling, ctx = schedule(m)
    assert ctx.counter("hfusion-auto-schedule", "kernels-scheduled") == 1
    assert sched.kind == "PURE_ELEMWISE" and len(sched.buffers) == 4 and sched.io_copies == 2
    tile = sched.tile[0]
    assert tile * 48 >= 4096 and tile % 8 == 0  # every core gets work, 32 B-aligned tiles
    assert tiling["n0"] == 4096 and tiling["n_tiles"] == math.ceil(4096 / tile)
    assert tiling["block_dim"] == min(48, tiling["n_tiles"])
    assert ub_bytes(m, kernel, sched) == sched.ub_bytes <= TARGET.ub_bytes


@pytest.mark.parametrize("s0", [1, 1000, 777777])
def test_dynamic_elementwise_tiling_evaluates(s0):
    m = vk.elementwise()  # 128*s0 f16 elements
    kernel, sched, tiling, _ = schedule(m)
    tile = sched.tile[0]
    assert isinstance(tile, int)
    n = evaluate(tiling["n0"], {"s0": s0})
    n_tiles = evaluate(tiling["n_tiles"], {"s0": s0})
    block_dim = evaluate(tiling["block_dim"], {"s0": s0})
    step = evaluate(tiling["step0"], {"s0": s0})  # split per launch: 32-B granules spread over the cores
    assert n == 128 * s0 and list(sched.split_dims) == [0]
    assert step == min(tile, 16 * math.ceil(n / (16 * 48)))
    assert n_tiles == math.ceil(n / step)
    assert block_dim == min(48, n_tiles)
    assert ub_bytes(m, kernel, sched) * 1 == sched.ub_bytes <= 192 * 1024
    # every live buffer times its depth: 4 buffers, all loaded or stored → depth 2
    assert len(sched.buffers) * 2 * tile * 2 <= 192 * 1024


def test_options_multi_buffer_max_tile_and_block_dim():
    _, sched, tiling, _ = schedule(vk.elementwise(), "{multi-buffer=3 max-tile-elems=1000 block-dim=7}")
    assert sched.io_copies == 3
    assert sched.tile[0] <= 1000
    assert evaluate(tiling["block_dim"], {"s0": 10**6}) == 7
    assert evaluate(tiling["block_dim"], {"s0": 1}) == evaluate(tiling["n_tiles"], {"s0": 1}) == 4  # 128 f16: 4 x 32


def test_softmax_short_row_one_pass():
    m = vk.softmax(cols=64)
    kernel, sched, tiling, ctx = schedule(m)
    assert list(sched.reduce_dims) == [1] and not sched.reduce_looped and sched.passes == 1
    assert sched.tile[1] == 64 and sched.tile[0] > 1  # a block of whole rows per tile
    assert "tiles1" not in tiling and list(sched.split_dims) == [0]
    # the rows step per launch: whole tiles when there are many rows, fewer rows per work item for every core
    # (in steps of 8: the row sums' 4-B rows are whole 32-B blocks) when there are few
    rows = sched.tile[0]
    assert evaluate(tiling["n_tiles"], {"s0": 100_000}) == math.ceil(100_000 / rows)
    assert evaluate(tiling["step0"], {"s0": 1000}) == 24 and evaluate(tiling["n_tiles"], {"s0": 1000}) == 42
    assert ub_bytes(m, kernel, sched) <= TARGET.ub_bytes
    assert ctx.counter("hfusion-auto-schedule", "reductions-multipass") == 0


def test_softmax_row_too_long_for_ub_is_multipass():
    m = vk.softmax(rows="s0", cols=1_000_000)
    kernel, sched, tiling, ctx = schedule(m)
    assert sched.reduce_looped and sched.passes == 3  # running max, sum of exp, normalise
    # the row sums (4 B per row) are a result too: 8 rows per work item write whole 32-B GM blocks
    assert sched.tile[0] == 8 and sched.tile[1] < 1_000_000
    assert tiling["tiles1"] == math.ceil(1_000_000 / sched.tile[1])
    assert evaluate(tiling["n_tiles"], {"s0": 20}) == 3
    assert ub_bytes(m, kernel, sched) <= TARGET.ub_bytes
    assert ctx.counter("hfusion-auto-schedule", "reductions-multipass") == 1


def test_dim0_reduction():
    m = vk.column_sum(rows="s0", cols=300)
    kernel, sched, tiling, _ = schedule(m)
    assert list(sched.reduce_dims) == [0]
    assert sched.reduce_looped  # s0 is unbounded: the reduced rows are tiled and accumulated
    assert sched.passes == 2  # the sum's and the max's; no pass after them (the reductions are the results)
    rows, cols = list(sched.tile)
    assert rows > 1 and (cols == 300 or cols % 8 == 0)
    assert evaluate(tiling["n_tiles"], {"s0": 10}) == math.ceil(300 / cols) > 1  # columns spread over cores
    assert evaluate(tiling["tiles0"], {"s0": 10_000}) == math.ceil(10_000 / rows)
    assert ub_bytes(m, kernel, sched) <= TARGET.ub_bytes


def test_dim0_reduction_bounded_rows_one_pass():
    m = vk.column_sum(rows="s0", cols=64, symbols="s0 = [1, 64]")
    _, sched, tiling, _ = schedule(m)
    assert not sched.reduce_looped and sched.tile[0] == 64  # sized for the largest s0
    assert "tiles0" not in tiling


def test_dim0_reduction_narrows_columns_for_one_pass():
    """A layer norm's weight and bias gradients over 256×128 f32: two loaded inputs do not fit UB with every row in
    tiles of 128 (or 64) columns, but do in 32-B columns — one pass over GM instead of three over 75-row tiles, and
    32-B columns spread the work over 16 cores (not 2); the scratch holds the whole fold tree (128 rows of 32 B)."""
    m = vk.norm_param_grads()
    kernel, sched, tiling, ctx = schedule(m)
    assert not sched.reduce_looped and sched.passes == 1
    assert list(sched.tile) == [256, 8]
    assert tiling["block_dim"] == tiling["n_tiles"] == 16
    assert sched.scratch_bytes == 128 * 32
    assert ub_bytes(m, kernel, sched) == sched.ub_bytes <= TARGET.ub_bytes
    assert ctx.counter("hfusion-auto-schedule", "reductions-multipass") == 0


def test_dim0_reduction_spreads_32_byte_columns():
    """A bias gradient grad.sum(0) of 256×128 f32 fits one pass in 128-column tiles; its columns then shrink to
    one GM block (8 f32) per work item, not one vector repeat (64), so 16 cores share it."""
    _, sched, tiling, _ = schedule(vk.column_sum(rows=256, cols=128, symbols=""))
    assert not sched.reduce_looped and list(sched.tile) == [256, 8] and tiling["block_dim"] == 16


def test_schedule_is_attributes_only_interpreter_agrees():
    from torch_npu_backend.interpreter import interpret

    before, after = vk.softmax(), vk.softmax()
    schedule(after)
    x = torch.randn(37, 64)
    outs = [torch.zeros(37, 64), torch.zeros(37)]
    want = interpret(before, [x, *outs], func="main_fused_0")
    got = interpret(after, [x, *outs], func="main_fused_0")
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w)


def test_unschedulable_vector_kernel_is_counted():
    t = "tensor<8x16xf32>"
    # a transpose feeding compute: neither a vector kernel (two dim orders) nor a data-movement kernel
    body = f"""    %t = hfusion.transpose %x {{perm = [1, 0]}} : ({t}) -> tensor<16x8xf32>
    %r = hfusion.elemwise_unary %t {{fun = "exp"}} : (tensor<16x8xf32>) -> tensor<16x8xf32>"""
    m = vk.module([("x", t)], body, [("%r", "tensor<16x8xf32>")], "ANY_PB", [("a", t)])
    kernel, sched, _, ctx = schedule(m)
    assert sched is None
    assert ctx.counter("hfusion-auto-schedule", "kernels-unschedulable") == 1


def test_transpose_kernel_gets_the_movement_schedule():
    t = "tensor<8x16xf32>"
    body = f"""    %r = hfusion.transpose %x {{perm = [1, 0]}} : ({t}) -> tensor<16x8xf32>"""
    m = vk.module([("x", t)], body, [("%r", "tensor<16x8xf32>")], "ANY_PB", [("a", t)])
    kernel, sched, tiling, ctx = schedule(m)
    # output rows of 8 f32 are whole 32-B blocks: one row per work item, 16 of them over 16 cores
    assert isinstance(sched, MovementSchedule) and list(sched.tiles[0]) == [1, 8] and tiling["block_dim"] == 16
    assert ctx.counter("hfusion-auto-schedule", "kernels-movement") == 1


def _permute_kernel(src: str, perm: list[int], dst: str, symbols: str = ""):
    body = f"""    %r = hfusion.transpose %x {{perm = {perm}}} : ({src}) -> {dst}"""
    return vk.module([("x", src)], body, [("%r", dst)], "PURE_ELEMWISE", [("a", src)], symbols=symbols)


def test_movement_work_items_are_tiles_of_several_dims():
    """The attention head split of one sequence, [1, 512, 12, 64] f32 -> [1, 12, 512, 64]: dim 0 alone would be
    one work item. The work items are tiles of dims 1 and 2 (whole rows of 64 f32: 32-B blocks apart), 12 × 4 = 48
    of [1, 1, 128, 64], one per core."""
    kernel, sched, tiling, _ = schedule(_permute_kernel("tensor<1x512x12x64xf32>", [0, 2, 1, 3],
                                                        "tensor<1x12x512x64xf32>"))
    assert isinstance(sched, MovementSchedule) and list(sched.tiles[0]) == [1, 1, 128, 64]
    assert {k: v for k, v in tiling.items() if k.startswith("r0_tiles")} == {"r0_tiles1": 12, "r0_tiles2": 4,
                                                                             "r0_tiles": 48}
    assert tiling["block_dim"] == 48 and sched.ub_bytes <= TARGET.ub_bytes


def test_movement_keeps_a_dim_whose_slabs_share_gm_blocks_inside_the_work_item():
    """[5, 4, 24] f16 -> [4, 5, 24]: one index of dim 0 is 5 rows of 48 B = 240 B, not whole 32-B blocks, so two
    cores holding tiles of dim 1 in neighbouring slabs would write one block: dim 1 is never split. Dim 0 is split
    in pairs of slabs (480 B), the only whole-block tiles: 2 work items, however few for the cores."""
    kernel, sched, tiling, _ = schedule(_permute_kernel("tensor<5x4x24xf16>", [1, 0, 2], "tensor<4x5x24xf16>"))
    assert sched.tiles[0][0] == 2 and list(sched.tiles[0][1:]) == [5, 24]
    assert tiling["r0_tiles0"] == 2 and tiling["r0_tiles"] == 2 and "r0_tiles1" not in tiling


@pytest.mark.parametrize("s0", [1, 3])
def test_movement_symbolic_work_items(s0):
    """[s0, 512, 12, 64] f32 -> [s0, 12, 512, 64]: the work items are tiles of dims 0, 1 and 2 and their count a
    size expression; a result with a symbolic work dim keeps the tile UB gave it (not spread over the cores)."""
    kernel, sched, tiling, _ = schedule(_permute_kernel("tensor<s0x512x12x64xf32>", [0, 2, 1, 3],
                                                        "tensor<s0x12x512x64xf32>", "s0 = [1, 64]"))
    tile = list(sched.tiles[0])
    assert tile[0] == 1 and tile[1] == 1 and tile[2] < 512 and tile[3] == 64
    items = s0 * 12 * math.ceil(512 / tile[2])
    assert evaluate(tiling["r0_tiles"], {"s0": s0}) == items
    assert evaluate(tiling["block_dim"], {"s0": s0}) == min(48, items)


def test_row_kernel_software_pipelined_when_the_estimate_favours_it():
    """softmax over 256 rows of 4096 f16: the estimate (graph_passes/schedule/cost.py) prefers running stage 0 of
    one work item beside stage 1 of the previous; its carried f32 buffer counts twice in UB. row-pipeline=false
    keeps the lockstep schedule."""
    m = vk.softmax_f16()
    kernel, sched, tiling, _ = schedule(m)
    assert sched.pipelined and sched.tile[1] == 4096
    info = analyze_kernel(kernel, m.size_vars(), TARGET)
    plan = plan_buffers(info, False)
    (stages,) = [st for st in split_stages(info, plan, list(sched.tile), TARGET, True)
                 + split_stages(info, plan, list(sched.tile), TARGET, False) if st.split == sched.stage_split][:1]
    carried = [plan.buffers[i] for i in stages.carried]
    assert [b.dtype for b in carried] == ["f32"] and not any(b.loaded or b.stored for b in carried)
    assert abs(stages.first.levels - stages.second.levels) <= 3  # the split evens the stages' dependent steps
    assert sched.ub_bytes <= TARGET.ub_bytes
    _, lock, _, _ = schedule(vk.softmax_f16(), "{row-pipeline=false}")
    assert not lock.pipelined and lock.stage_split == -1


def test_no_stage_cut_carries_a_stored_buffer():
    """f32 softmax computes its result in place over exp(x − max): every cut before the quotient would carry the
    buffer the store reads (stage 0 of the next work item would refill the copy being stored), and the row sums are
    a result (stores come last): no cut, the lockstep schedule."""
    m = vk.softmax(rows=256, cols=4096, symbols="")
    kernel, sched, _, _ = schedule(m)
    info = analyze_kernel(kernel, m.size_vars(), TARGET)
    assert split_stages(info, plan_buffers(info, False), list(sched.tile), TARGET) == []
    assert not sched.pipelined


def test_invariant_load_read_only_by_hoisted_values_shares_ub():
    """A weight row loaded in f16 and cast to f32 once per core: its f16 buffer is dead before the work-item loop,
    so the schedule counts the UB peak (hivm-plan-memory places it over the loop's buffers), not the sum."""
    m = vk.scaled_rows_f16()
    kernel, sched, _, _ = schedule(m)
    info = analyze_kernel(kernel, m.size_vars(), TARGET)
    plan = plan_buffers(info, False)
    tile, whole = list(sched.tile), {1}
    early = [b for b in plan.buffers if plan._dead_before_loop(b, whole)]
    assert [b.dtype for b in early] == ["f16"] and early[0].mask == (1,)
    total = sum(b.nbytes(tile, TARGET.ub_align) * b.depth(2, whole) for b in plan.buffers)
    assert plan.ub_bytes(tile, TARGET.ub_align, 2, whole) == total + plan.scratch_bytes(tile, TARGET.ub_align) - \
        early[0].nbytes(tile, TARGET.ub_align)


def test_pipelined_estimate_keeps_the_ddr_bound():
    """The estimate of a pipelined kernel never beats its work items' share of DDR (the first and last stage move
    their tiles too): a memory-bound row kernel gains nothing from pipelining on paper either."""
    from graph_passes.schedule.cost import Estimate, kernel_time

    m = vk.softmax_f16()
    kernel, sched, _, _ = schedule(m)
    info = analyze_kernel(kernel, m.size_vars(), TARGET)
    plan = plan_buffers(info, False)
    stages = split_stages(info, plan, [2, 4096], TARGET)[0]
    free = Estimate(0, 0)  # no vector work at all: only DDR bounds it
    stages.first, stages.second = free, free
    lock = kernel_time(info, plan, [2, 4096], TARGET, free)
    assert kernel_time(info, plan, [2, 4096], TARGET, free, stages) >= lock - 1e-6


# A loss's per-row kernel: 512 rows of 1000 f32 log-probabilities gathered at each row's target, the mask returned as
# bools (1 B a row: work items of whole 32-row steps). Two copies of 32 source rows (2 x 128 000 B) exceed UB.
PER_ROW_GATHER = """module attributes {target = "ascend910b1"} {
  func.func @main_fused_0(%t: tensor<512x1xi64>, %logp: tensor<512x1000xf32>, %out0: tensor<512x1xi8>,
                          %out1: tensor<512x1xf32>) -> (tensor<512x1xi8>, tensor<512x1xf32>)
      attributes {fusion_kind = "ANY_PB", kernel, output_args = [2, 3]} {
    %ignore = arith.constant {value = -100} : () -> i64
    %ne = hfusion.compare %t, %ignore {predicate = "ne"} : (tensor<512x1xi64>, i64) -> tensor<512x1xi1>
    %one = arith.constant {value = 1.0} : () -> f16
    %zero = arith.constant {value = 0.0} : () -> f16
    %h = hfusion.select %ne, %one, %zero : (tensor<512x1xi1>, f16, f16) -> tensor<512x1xf16>
    %b = hfusion.cast %h : (tensor<512x1xf16>) -> tensor<512x1xi8>
    %z = hfusion.fill {value = 0} : () -> tensor<i64>
    %zb = hfusion.broadcast %z {dims = [0, 1]} : (tensor<i64>) -> tensor<512x1xi64>
    %w = hfusion.select %ne, %t, %zb : (tensor<512x1xi1>, tensor<512x1xi64>, tensor<512x1xi64>) -> tensor<512x1xi64>
    %g = hfusion.gather %logp, %w {dim = 1} : (tensor<512x1000xf32>, tensor<512x1xi64>) -> tensor<512x1xf32>
    %n = hfusion.elemwise_unary %g {fun = "neg"} : (tensor<512x1xf32>) -> tensor<512x1xf32>
    func.return %b, %n : tensor<512x1xi8>, tensor<512x1xf32>
  }
}
"""


def test_one_copy_of_the_io_buffers_when_that_spreads_the_work_items():
    from graph_passes.ir.parser import parse_module

    m = parse_module(PER_ROW_GATHER)
    kernel, sched, tiling, _ = schedule(m)
    assert sched.io_copies == 1 and sched.block_dim == 0, sched  # not pinned to one core
    assert sched.tile[0] % 32 == 0 and tiling["block_dim"] == 512 // sched.tile[0] > 1, (sched, tiling)
    assert ub_bytes(m, kernel, sched) == sched.ub_bytes <= TARGET.ub_bytes
    # the one copy is the schedule's decision, read by hivm-mark-multi-buffer (no other pass stamps it)
    assert all(b.copies == 1 for b in sched.buffers if b.loaded or b.stored)
    PassManager.from_pipeline("convert-to-hivm,hivm-mark-multi-buffer", verify=True).run(m)
    allocs = [op for op in m.lookup("main_fused_0").walk() if op.name == "hivm.alloc" and "scratch" not in op.attributes]
    assert allocs and not any("multi_buffer" in a.attributes for a in allocs)


@pytest.mark.parametrize("row_bytes, rows", [(1, [32, 16, 32, 2, 1]), (4, [8, 4, 8, 1, 1]), (6, [16, 8, 16, 1, 1])])
def test_rows_for_whole_blocks_at_each_launch(row_bytes, rows):
    """The fewest rows of ``row_bytes × T`` bytes that are whole 32-B blocks, as the launch evaluates it, at
    T = 1, 2, 3, 16, 32: 32 / gcd(row bytes, 32)."""
    t = sym("s0")
    e = rows_for_whole_blocks(row_bytes * t, 32)
    assert [evaluate(e, {"s0": n}) for n in (1, 2, 3, 16, 32)] == rows
    assert all(32 // math.gcd(row_bytes * n, 32) == r for n, r in zip((1, 2, 3, 16, 32), rows))


_TWO = "s0 = [1, 1000000], s1 = [1, 1000000]"


@pytest.mark.parametrize("make", [lambda: vk.bias_relu(rows="(s0-s1)", symbols=_TWO),
                                  lambda: vk.elementwise(n="(16*s0-16*s1)", symbols=_TWO)], ids=["rows", "columns"])
def test_a_launch_without_rows_steps_by_at_least_one_granule(make):
    """A size that is 0 at a launch (a slice ``s0 - s1`` of zero length; GPT-2's backward with dynamic=True): the
    per-launch step stays at least one granule, so the tile counts are 0, not NaN (the launch failed: "The
    argument 'nan' is not comparable")."""
    m = make()
    _, sched, tiling, _ = schedule(m)
    (d,) = list(sched.split_dims)
    at = {"s0": 5, "s1": 5}
    assert evaluate(tiling[f"step{d}"], at) >= 1
    assert evaluate(tiling["n_tiles"], at) == 0 and evaluate(tiling["block_dim"], at) == 0
