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

// Output batches of 4x5 f32 (80 B) share 32-B blocks: a work item is the fewest batches that are whole blocks (2),
// so two cores never write one block; 6 batches are 3 work items, each walking its batches, tile rows and columns.
// CHECK-LABEL: func.func @unaligned_batches(
// CHECK-SAME:    work_item = "batch"
// CHECK-SAME:    tiling = {batch = 6, batch_group = 2, block_dim = 3, items = 3,
// CHECK:         %b_first = arith.muli %t, %c2
// CHECK:         %b_end = arith.minsi
// CHECK:         scf.for %b_first, %b_end, %c1
// CHECK:         ^bb0(%b: index):
// CHECK:         ^bb0(%mi: index):
// CHECK:         ^bb0(%ni: index):
// CHECK:         hivm.fixpipe %c_l0, %out0, %b, %m0, %n0
module attributes {target = "ascend910b1"} {
  func.func @unaligned_batches(%x: tensor<6x4x8xf32>, %y: tensor<6x8x5xf32>, %out0: tensor<6x4x5xf32>) -> (tensor<6x4x5xf32>) attributes {fusion_kind = "SINGLE_CUBE", kernel, output_args = [2]} {
    %0 = hfusion.batch_matmul %x, %y : (tensor<6x4x8xf32>, tensor<6x8x5xf32>) -> tensor<6x4x5xf32>
    func.return %0 : tensor<6x4x5xf32>
  }
}
