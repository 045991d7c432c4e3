// RUN: npu-opt %s -p hfusion-auto-schedule,convert-to-hivm | filecheck %s

// A general f32 permutation (attention keys transposed for q @ k^T: [0, 2, 3, 1]) is a data-movement kernel whose
// piece is of kind `permute` (graph_passes/schedule/movement.py): the box is loaded in the argument's own dim order
// (rows of 8 contiguous elements, here the whole box contiguous), hivm.vpermute gathers it into the result's rows
// by a table of byte offsets, and rows are stored. The table covers the dims after the batch dim 0 (which source
// and result share), plus rows for a last partial gather repeat; hivm.vindex builds it once, before the work loop:
// result dim 1 walks source dim 2 (32 B), dim 2 source dim 3 (4 B), dim 3 source dim 1 (128 B).
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    schedule = #hfusion.movement_schedule<{tiles = [[47, 4, 8, 8]]
// CHECK:         [[ROWS:%[a-z0-9_]+]] = hivm.alloc : () -> memref<47x4x8x8xf32>
// CHECK-NEXT:    [[SRC:%[a-z0-9_]+]] = hivm.alloc : () -> memref<47x8x4x8xf32>
// CHECK-NEXT:    [[TABLE:%[a-z0-9_]+]] = hivm.alloc : () -> memref<6x8x8xi32>
// CHECK-NEXT:    hivm.vindex [[TABLE]] {clamp = 8, strides = [32, 4, 128]} : memref<6x8x8xi32>
// CHECK-NEXT:    scf.for %bid,
// CHECK:           hivm.load %k, [[SRC]], %r0_lo, %c0, %c0, %c0, [[LEN:%[a-z0-9_]+]], %c8, %c4, %c8 {dims = [0, 1, 2, 3], steps = [1, 1, 1, 1]}
// CHECK-NEXT:      hivm.vpermute [[SRC]], [[TABLE]], [[ROWS]], [[LEN]], %c4, %c8, %c8 :
// CHECK-NEXT:      hivm.store [[ROWS]], %out, %r0_lo, %c0, %c0, %c0, [[LEN]], %c4, %c8, %c8 :
module attributes {symbols = {s0 = [1, 1000000]}, target = "ascend910b1"} {
  func.func @main_fused_0(%k: tensor<s0x8x4x8xf32>, %out: tensor<s0x4x8x8xf32>) -> (tensor<s0x4x8x8xf32>) attributes {fusion_kind = "PURE_ELEMWISE", kernel, output_args = [1]} {
    %t = hfusion.transpose %k {perm = [0, 2, 3, 1]} : (tensor<s0x8x4x8xf32>) -> tensor<s0x4x8x8xf32>
    func.return %t : tensor<s0x4x8x8xf32>
  }
  func.func @main(%k: tensor<s0x8x4x8xf32>) -> (tensor<s0x4x8x8xf32>) {
    %e = tensor.empty : () -> tensor<s0x4x8x8xf32>
    %r = func.call %k, %e {callee = "main_fused_0"} : (tensor<s0x8x4x8xf32>, tensor<s0x4x8x8xf32>) -> tensor<s0x4x8x8xf32>
    func.return %r : tensor<s0x4x8x8xf32>
  }
}
