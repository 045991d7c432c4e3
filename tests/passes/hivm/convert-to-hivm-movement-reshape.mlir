// RUN: npu-opt %s -p hfusion-auto-schedule,convert-to-hivm | filecheck %s

// Reshapes inside data-movement kernels (graph_passes/schedule/movement_reshape.py).

// The attention head split: the argument, read only through a reshape, is viewed in its shape (the split of the
// symbolic 8*s0 rows needs no symbolic step); the result, a merge of two dims the transpose made different walks,
// is stored through a view of the out-parameter in the transpose's shape. Rows of 8 contiguous elements.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    %x: memref<s0x8x4x8xf32, gm>, %out: memref<s0x4x8x8xf32, gm>,
// CHECK:         hivm.load %x, [[ROWS:%[a-z0-9_]+]], %r0_lo, %c0, %c0, %c0, [[LEN:%[a-z0-9_]+]], %c4, %c8, %c8 {dims = [0, 2, 1, 3], steps = [1, 1, 1, 1]}
// CHECK-NEXT:    hivm.store [[ROWS]], %out, %r0_lo, %c0, %c0, %c0, [[LEN]], %c4, %c8, %c8 :

// A transposed dim of 32 split into 4x8: two local dims walk GM dim 0, at steps 8 and 1 (loaded in the source's
// dim order for hivm.vpermute, schedule/movement.py).
// CHECK-LABEL: func.func @main_fused_1(
// CHECK-SAME:    %x: memref<32x16xf32, gm>, %out: memref<16x4x8xf32, gm>,
// CHECK:         hivm.load %x, {{.*}} {dims = [0, 0, 1], steps = [8, 1, 1]}

// A concat's 2x8 rows merged into 16: each input's walk of GM dim 1 runs on past its 8 rows into dim 0. The
// 16x64 result is 48 work items of [1, 24] (both dims are work dims, rows of 64 f32 are whole 32-B blocks): a
// work item's columns meet each input in 0 or 1 trips of a loop over its part of the input's columns.
// CHECK-LABEL: func.func @main_fused_2(
// CHECK-SAME:    %a: memref<2x8x32xf32, gm>, %b: memref<2x8x32xf32, gm>, %out: memref<16x64xf32, gm>,
// CHECK-SAME:    tiles = [[1, 24]]
// CHECK-SAME:    tiling = {block_dim = 48, r0_tiles = 48, r0_tiles0 = 16, r0_tiles1 = 3}
// CHECK:         [[I1:%[a-z0-9_]+]] = arith.remsi %t, %c3
// CHECK-NEXT:    [[I0:%[a-z0-9_]+]] = arith.floordivsi %t, %c3
// CHECK-NEXT:    [[LO:%[a-z0-9_]+]] = arith.muli [[I1]], %c24
// CHECK:         [[HI:%[a-z0-9_]+]] = arith.minsi {{%[a-z0-9_]+}}, %c64
// CHECK-NEXT:    [[HIA:%[a-z0-9_]+]] = arith.minsi [[HI]], %c32
// CHECK-NEXT:    scf.for [[LO]], [[HIA]], %c24 ({
// CHECK-NEXT:    ^bb0([[S:%[a-z0-9_]+]]: index):
// CHECK-NEXT:      [[L:%[a-z0-9_]+]] = arith.subi [[HIA]], [[S]]
// CHECK-NEXT:      hivm.load %a, [[R:%[a-z0-9_]+]], %c0, [[I0]], [[S]], %c1, [[L]] {dims = [1, 2], steps = [1, 1]}
// CHECK-NEXT:      hivm.store [[R]], %out, [[I0]], [[S]], %c1, [[L]] :
// CHECK:         [[LOB:%[a-z0-9_]+]] = arith.maxsi [[LO]], %c32
// CHECK-NEXT:    scf.for [[LOB]], [[HI]], %c24 ({
// CHECK-NEXT:    ^bb0([[S2:%[a-z0-9_]+]]: index):
// CHECK-NEXT:      [[J:%[a-z0-9_]+]] = arith.subi [[S2]], %c32
// CHECK-NEXT:      [[L2:%[a-z0-9_]+]] = arith.subi [[HI]], [[S2]]
// CHECK-NEXT:      [[OUT:%[a-z0-9_]+]] = arith.addi %c32, [[J]]
// CHECK-NEXT:      hivm.load %b, [[R]], %c0, [[I0]], [[J]], %c1, [[L2]] {dims = [1, 2], steps = [1, 1]}
// CHECK-NEXT:      hivm.store [[R]], %out, [[I0]], [[OUT]], %c1, [[L2]] :
module attributes {symbols = {s0 = [1, 1000000]}, target = "ascend910b1"} {
  func.func @main_fused_0(%x: tensor<(8*s0)x32xf32>, %out: tensor<(4*s0)x8x8xf32>) -> (tensor<(4*s0)x8x8xf32>) attributes {fusion_kind = "PURE_ELEMWISE", kernel, output_args = [1]} {
    %v = hfusion.reshape %x : (tensor<(8*s0)x32xf32>) -> tensor<s0x8x4x8xf32>
    %t = hfusion.transpose %v {perm = [0, 2, 1, 3]} : (tensor<s0x8x4x8xf32>) -> tensor<s0x4x8x8xf32>
    %r = hfusion.reshape %t : (tensor<s0x4x8x8xf32>) -> tensor<(4*s0)x8x8xf32>
    func.return %r : tensor<(4*s0)x8x8xf32>
  }
  func.func @main_fused_1(%x: tensor<32x16xf32>, %out: tensor<16x4x8xf32>) -> (tensor<16x4x8xf32>) attributes {fusion_kind = "PURE_ELEMWISE", kernel, output_args = [1]} {
    %t = hfusion.transpose %x {perm = [1, 0]} : (tensor<32x16xf32>) -> tensor<16x32xf32>
    %r = hfusion.reshape %t : (tensor<16x32xf32>) -> tensor<16x4x8xf32>
    func.return %r : tensor<16x4x8xf32>
  }
  func.func @main_fused_2(%a: tensor<2x8x32xf32>, %b: tensor<2x8x32xf32>, %out: tensor<16x64xf32>) -> (tensor<16x64xf32>) attributes {fusion_kind = "PURE_ELEMWISE", kernel, output_args = [2]} {
    %c = hfusion.concat %a, %b {dim = 2} : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x64xf32>
    %r = hfusion.reshape %c : (tensor<2x8x64xf32>) -> tensor<16x64xf32>
    func.return %r : tensor<16x64xf32>
  }
  func.func @main(%x: tensor<(8*s0)x32xf32>, %y: tensor<32x16xf32>, %a: tensor<2x8x32xf32>, %b: tensor<2x8x32xf32>) -> (tensor<(4*s0)x8x8xf32>, tensor<16x4x8xf32>, tensor<16x64xf32>) {
    %e0 = tensor.empty : () -> tensor<(4*s0)x8x8xf32>
    %r0 = func.call %x, %e0 {callee = "main_fused_0"} : (tensor<(8*s0)x32xf32>, tensor<(4*s0)x8x8xf32>) -> tensor<(4*s0)x8x8xf32>
    %e1 = tensor.empty : () -> tensor<16x4x8xf32>
    %r1 = func.call %y, %e1 {callee = "main_fused_1"} : (tensor<32x16xf32>, tensor<16x4x8xf32>) -> tensor<16x4x8xf32>
    %e2 = tensor.empty : () -> tensor<16x64xf32>
    %r2 = func.call %a, %b, %e2 {callee = "main_fused_2"} : (tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
    func.return %r0, %r1, %r2 : tensor<(4*s0)x8x8xf32>, tensor<16x4x8xf32>, tensor<16x64xf32>
  }
}
