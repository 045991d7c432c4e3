// RUN: npu-opt %s -p hfusion-flatten-ops --split-input-file | filecheck %s

// PURE_ELEMWISE over s0x4x128: one loop dim; the interface keeps its shapes (reshape in, reshape out).
// CHECK-LABEL: func.func @k(
// CHECK-SAME:    [[X:%[0-9a-z_]+]]: tensor<s0x4x128xf32>, [[Y:%[0-9a-z_]+]]: tensor<s0x4x128xf32>, [[O:%[0-9a-z_]+]]: tensor<s0x4x128xf32>) -> (tensor<s0x4x128xf32>)
// CHECK-NEXT:    [[FX:%[0-9a-z_]+]] = hfusion.reshape [[X]] : (tensor<s0x4x128xf32>) -> tensor<(512*s0)xf32>
// CHECK-NEXT:    [[FY:%[0-9a-z_]+]] = hfusion.reshape [[Y]] : (tensor<s0x4x128xf32>) -> tensor<(512*s0)xf32>
// CHECK-NEXT:    [[M:%[0-9a-z_]+]] = hfusion.elemwise_binary [[FX]], [[FY]] {fun = "mul"} : (tensor<(512*s0)xf32>, tensor<(512*s0)xf32>) -> tensor<(512*s0)xf32>
// CHECK-NEXT:    [[E:%[0-9a-z_]+]] = hfusion.elemwise_unary [[M]] {fun = "exp"} : (tensor<(512*s0)xf32>) -> tensor<(512*s0)xf32>
// CHECK-NEXT:    [[R:%[0-9a-z_]+]] = hfusion.reshape [[E]] : (tensor<(512*s0)xf32>) -> tensor<s0x4x128xf32>
// CHECK-NEXT:    func.return [[R]] : tensor<s0x4x128xf32>
module attributes {symbols = {s0 = [1, 64]}} {
  func.func @k(%x: tensor<s0x4x128xf32>, %y: tensor<s0x4x128xf32>, %out0: tensor<s0x4x128xf32>) -> (tensor<s0x4x128xf32>) attributes {kernel, fusion_kind = "PURE_ELEMWISE", output_args = [2]} {
    %m = hfusion.elemwise_binary %x, %y {fun = "mul"} : (tensor<s0x4x128xf32>, tensor<s0x4x128xf32>) -> tensor<s0x4x128xf32>
    %e = hfusion.elemwise_unary %m {fun = "exp"} : (tensor<s0x4x128xf32>) -> tensor<s0x4x128xf32>
    func.return %e : tensor<s0x4x128xf32>
  }
}

// -----

// LAST_AXIS_PBR over AxBxC reducing C: (A*B)xC; the reduce and broadcast dims follow.
// CHECK-LABEL: func.func @k(
// CHECK:         hfusion.reshape {{.*}} -> tensor<24x32xf32>
// CHECK:         hfusion.reduce {{.*}}{dims = [1], kind = "max"} : (tensor<24x32xf32>) -> tensor<24xf32>
// CHECK:         hfusion.broadcast {{.*}}{dims = [1]} : (tensor<24xf32>) -> tensor<24x32xf32>
// CHECK:         hfusion.reshape {{.*}} : (tensor<24x32xf32>) -> tensor<2x12x32xf32>
module {
  func.func @k(%x: tensor<2x12x32xf32>, %out0: tensor<2x12x32xf32>) -> (tensor<2x12x32xf32>) attributes {kernel, fusion_kind = "LAST_AXIS_PBR", output_args = [1]} {
    %m = hfusion.reduce %x {dims = [2], kind = "max"} : (tensor<2x12x32xf32>) -> tensor<2x12xf32>
    %b = hfusion.broadcast %m {dims = [2]} : (tensor<2x12xf32>) -> tensor<2x12x32xf32>
    %s = hfusion.elemwise_binary %x, %b {fun = "sub"} : (tensor<2x12x32xf32>, tensor<2x12x32xf32>) -> tensor<2x12x32xf32>
    func.return %s : tensor<2x12x32xf32>
  }
}

// -----

// ANY_PB with a bias broadcast along dim 0: the broadcast dim stays distinct, nothing collapses; host functions
// and cube kernels are left alone.
// CHECK-LABEL: func.func @k(
// CHECK-NOT:     hfusion.reshape
// CHECK:         hfusion.broadcast {{.*}} : (tensor<32xf32>) -> tensor<8x32xf32>
// CHECK-LABEL: func.func @mm(
// CHECK-NOT:     hfusion.reshape
// CHECK-LABEL: func.func @main(
// CHECK-NOT:     hfusion.reshape
module {
  func.func @k(%x: tensor<8x32xf32>, %bias: tensor<32xf32>, %out0: tensor<8x32xf32>) -> (tensor<8x32xf32>) attributes {kernel, fusion_kind = "ANY_PB", output_args = [2]} {
    %b = hfusion.broadcast %bias {dims = [0]} : (tensor<32xf32>) -> tensor<8x32xf32>
    %a = hfusion.elemwise_binary %x, %b {fun = "add"} : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    func.return %a : tensor<8x32xf32>
  }
  func.func @mm(%a: tensor<2x4x8xf32>, %b: tensor<2x8x4xf32>, %out0: tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>) attributes {kernel, fusion_kind = "SINGLE_CUBE", output_args = [2]} {
    %0 = hfusion.batch_matmul %a, %b : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
    func.return %0 : tensor<2x4x4xf32>
  }
  func.func @main(%x: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>) {
    %0 = hfusion.elemwise_unary %x {fun = "exp"} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    func.return %0 : tensor<2x4x8xf32>
  }
}
