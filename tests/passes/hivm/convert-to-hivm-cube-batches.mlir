// RUN: npu-opt %s -p hfusion-auto-schedule,convert-to-hivm --split-input-file | filecheck %s

// A rank-2 operand of a batch_matmul (a matrix shared by every batch, hfusion-fold-matmul-views) loads its box
// without a batch offset; the batched operand and the output select batch %b.
// CHECK-LABEL: func.func @shared_matrix(
// CHECK:         %b = arith.floordivsi %t
// CHECK:         hivm.load %a, %a_l1, %b, %m0, %kk, {{.*}} {dims = [1, 2]} : memref<4x16x32xf16, gm>
// CHECK-NEXT:    hivm.load %w, %b_l1, %n0, %kk, {{[^{]*}}: memref<24x32xf16, gm>
// CHECK:         hivm.load_l0b %b_l1, %b_l0, {{.*}} {transpose = true}
// CHECK:         hivm.fixpipe %c_l0, %out0, %b, %m0, %n0
module attributes {target = "ascend910b1"} {
  func.func @shared_matrix(%a: tensor<4x16x32xf16>, %w: tensor<24x32xf16>, %out0: tensor<4x16x24xf32>) -> (tensor<4x16x24xf32>) attributes {fusion_kind = "SINGLE_CUBE", kernel, output_args = [2]} {
    %0 = hfusion.batch_matmul %a, %w {transpose_a = false, transpose_b = true} : (tensor<4x16x32xf16>, tensor<24x32xf16>) -> tensor<4x16x24xf32>
    func.return %0 : tensor<4x16x24xf32>
  }
}

// -----

// Output batches of 4x5 f32 (80 B) share 32-B blocks, so no two cores may write two batches: the kernel is one
// work item (block dim 1) walking every batch, tile row and tile column.
// CHECK-LABEL: func.func @unaligned_batches(
// CHECK-SAME:    work_item = "all"
// CHECK-SAME:    tiling = {batch = 2, block_dim = 1, items = 1,
// CHECK:         ^bb0(%b: index):
// CHECK:         ^bb0(%mi: index):
// CHECK:         ^bb0(%ni: index):
// CHECK:         hivm.fixpipe %c_l0, %out0, %b, %m0, %n0
module attributes {target = "ascend910b1"} {
  func.func @unaligned_batches(%x: tensor<2x4x8xf32>, %y: tensor<2x8x5xf32>, %out0: tensor<2x4x5xf32>) -> (tensor<2x4x5xf32>) attributes {fusion_kind = "SINGLE_CUBE", kernel, output_args = [2]} {
    %0 = hfusion.batch_matmul %x, %y : (tensor<2x4x8xf32>, tensor<2x8x5xf32>) -> tensor<2x4x5xf32>
    func.return %0 : tensor<2x4x5xf32>
  }
}
