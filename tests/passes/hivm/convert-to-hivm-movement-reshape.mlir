// RUN: npu-opt %s -p hfusion-auto-schedule,convert-to-hivm | filecheck %s

// Reshapes inside data-movement kernels (graph_passes/schedule/movement_reshape.py).

// The attention head split: the argument, read only through a reshape, is viewed in its shape (the split of the
// symbolic 8*s0 rows needs no symbolic step); the result, a merge of two dims the transpose made different walks,
// is stored through a view of the out-parameter in the transpose's shape. Rows of 8 contiguous elements.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    %x: memref<s0x8x4x8xf32, gm>, %out: memref<s0x4x8x8xf32, gm>,
// CHECK:         hivm.load %x, [[ROWS:%[a-z0-9_]+]], %s, %c0, %c0, %c0, [[LEN:%[a-z0-9_]+]], %c4, %c8, %c8 {dims = [0, 2, 1, 3], steps = [1, 1, 1, 1]}
// CHECK-NEXT:    hivm.store [[ROWS]], %out, %s, %c0, %c0, %c0, [[LEN]], %c4, %c8, %c8 :

// A transposed dim of 32 split into 4x8: two local dims walk GM dim 0, at steps 8 and 1 (loaded in the source's
// dim order for hivm.vpermute, schedule/movement.py).
// CHECK-LABEL: func.func @main_fused_1(
// CHECK-SAME:    %x: memref<32x16xf32, gm>, %out: memref<16x4x8xf32, gm>,
// CHECK:         hivm.load %x, {{.*}} {dims = [0, 0, 1], steps = [8, 1, 1]}

// A concat's 2x8 rows merged into 16: each input's walk of GM dim 1 runs on past its 8 rows into dim 0.
// CHECK-LABEL: func.func @main_fused_2(
// CHECK-SAME:    %a: memref<2x8x32xf32, gm>, %b: memref<2x8x32xf32, gm>, %out: memref<16x64xf32, gm>,
// CHECK:         hivm.load %a, [[R:%[a-z0-9_]+]], %c0, [[S:%[a-z0-9_]+]], %c0, [[L:%[a-z0-9_]+]], %c32 {dims = [1, 2], steps = [1, 1]}
// CHECK-NEXT:    hivm.store [[R]], %out, [[S]], %c0, [[L]], %c32 :
// CHECK:         hivm.load %b, [[R2:%[a-z0-9_]+]], %c0, [[S2:%[a-z0-9_]+]], %c0, [[L2:%[a-z0-9_]+]], %c32 {dims = [1, 2], steps = [1, 1]}
// CHECK-NEXT:    hivm.store [[R2]], %out, [[S2]], %c32, [[L2]], %c32 :
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
