// RUN: npu-opt %s -p hfusion-auto-schedule --split-input-file | filecheck %s

// Cube kernels (SINGLE_CUBE) get a #hfusion.cube_schedule (schedule/cube.py, docs/cube.md).

// A 2048^3 f16 GEMM: 128 x 256 tiles (the L0C holds one, f32) in two accumulator parts of 128 x 128 (one drains
// while the other is computed), K in L1 steps of 256 and L0 steps of 128, ping-pong at L1 and L0; 128 tiles
// over the 24 cube cores: 5 full waves, and the last 8 tiles cut into 3 column strips each (24 work items for the
// 24 cores instead of 8 tiles on 8).
// CHECK-LABEL: func.func @big(
// CHECK-SAME:    base_m = 128, base_n = 256, base_k = 128, l1_k = 256, acc_parts = 2, tail_strips = 3, waves = 6
// CHECK-SAME:    {role = "a_l1", scope = "l1", dtype = "f16", shape = [128, 256], copies = 2}
// CHECK-SAME:    {role = "b_l0", scope = "l0b", dtype = "f16", shape = [128, 128], copies = 2}
// CHECK-SAME:    {role = "c_l0", scope = "l0c", dtype = "f32", shape = [128, 128], copies = 2}
// CHECK-SAME:    tiling = {block_dim = 24, full_items = 120, items = 144, k = 2048, m = 2048, m_tiles = 16, n = 2048, n_tiles = 8}
module attributes {target = "ascend910b1"} {
  func.func @big(%a: tensor<2048x2048xf16>, %b: tensor<2048x2048xf16>, %out: tensor<2048x2048xf16>) -> (tensor<2048x2048xf16>) attributes {fusion_kind = "SINGLE_CUBE", kernel, output_args = [2]} {
    %r = hfusion.matmul %a, %b : (tensor<2048x2048xf16>, tensor<2048x2048xf16>) -> tensor<2048x2048xf16>
    func.return %r : tensor<2048x2048xf16>
  }
}

// -----

// Output rows of 1000 f16 (2000 B) are not whole 32-B blocks: a core takes a band of rows (every tile of it), so no
// two cores write one block. B is read transposed: its L1 box is n x k.
// CHECK-LABEL: func.func @odd_n(
// CHECK-SAME:    base_m = 16, base_n = 256
// CHECK-SAME:    work_item = "band"
// CHECK-SAME:    {role = "b_l1", scope = "l1", dtype = "f16", shape = [256, 384], copies = 2}
// CHECK-SAME:    tiling = {block_dim = 5, items = 5, k = 333, m = 77, m_tiles = 5, n = 1000, n_tiles = 4}
module attributes {target = "ascend910b1"} {
  func.func @odd_n(%a: tensor<77x333xf16>, %b: tensor<1000x333xf16>, %out: tensor<77x1000xf16>) -> (tensor<77x1000xf16>) attributes {fusion_kind = "SINGLE_CUBE", kernel, output_args = [2]} {
    %r = hfusion.matmul %a, %b {transpose_b = true} : (tensor<77x333xf16>, tensor<1000x333xf16>) -> tensor<77x1000xf16>
    func.return %r : tensor<77x1000xf16>
  }
}

// -----

// Batches of 4 x 5 bf16 (40 B) are not whole blocks either: a work item is the fewest batches that are (4).
// CHECK-LABEL: func.func @batches(
// CHECK-SAME:    work_item = "batch"
// CHECK-SAME:    tiling = {batch = 6, batch_group = 4, block_dim = 2, items = 2
module attributes {target = "ascend910b1"} {
  func.func @batches(%a: tensor<6x4x8xbf16>, %b: tensor<6x8x5xbf16>, %out: tensor<6x4x5xbf16>) -> (tensor<6x4x5xbf16>) attributes {fusion_kind = "SINGLE_CUBE", kernel, output_args = [2]} {
    %r = hfusion.batch_matmul %a, %b : (tensor<6x4x8xbf16>, tensor<6x8x5xbf16>) -> tensor<6x4x5xbf16>
    func.return %r : tensor<6x4x5xbf16>
  }
}

// -----

// A symbolic M: the tile is chosen for the largest M the symbol's range allows; no wave count (known at launch);
// the host tiling function gives the tile counts and the block dim.
// CHECK-LABEL: func.func @dyn_m(
// CHECK-SAME:    base_m = 128, base_n = 256, base_k = 128, l1_k = 256, acc_parts = 2, buffers
// CHECK-SAME:    tiling = {block_dim = (Min(24,3*ceiling(s0/128))), items = (3*ceiling(s0/128)), k = 768, m = s0, m_tiles = (ceiling(s0/128))
module attributes {target = "ascend910b1", symbols = {s0 = [1, 4096]}} {
  func.func @dyn_m(%a: tensor<s0x768xf16>, %b: tensor<768x768xf16>, %out: tensor<s0x768xf16>) -> (tensor<s0x768xf16>) attributes {fusion_kind = "SINGLE_CUBE", kernel, output_args = [2]} {
    %r = hfusion.matmul %a, %b : (tensor<s0x768xf16>, tensor<768x768xf16>) -> tensor<s0x768xf16>
    func.return %r : tensor<s0x768xf16>
  }
}
