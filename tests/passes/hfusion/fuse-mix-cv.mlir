// RUN: npu-opt %s -p "hfusion-fuse-ops,hfusion-fuse-mix-cv" --split-input-file | filecheck %s

// F.linear + GELU: the cube kernel and its epilogue kernel (bias add, cast, GELU) become one MIX_CV kernel. The
// product's out-parameter stays an argument, the workspace (workspace_args); the host makes one call.
// CHECK-LABEL: func.func @linear_gelu_fused_1_mix(
// CHECK-SAME:    %x: tensor<64x128xf16>, %w: tensor<256x128xf16>, %out0: tensor<64x256xf32>, %b: tensor<256xf16>, %out0_1: tensor<64x256xf16>
// CHECK-SAME:    attributes {fusion_kind = "MIX_CV", kernel, output_args = [4], workspace_args = [2]}
// CHECK-NEXT:    %p = hfusion.matmul %x, %w {transpose_a = false, transpose_b = true}
// CHECK-NEXT:    %b32 = hfusion.cast %b
// CHECK-NEXT:    %bb = hfusion.broadcast %b32 {dims = [0]}
// CHECK-NEXT:    %s = hfusion.elemwise_binary %bb, %p {fun = "add"}
// CHECK-NEXT:    %h = hfusion.cast %s
// CHECK-NEXT:    %g = hfusion.elemwise_unary %h {fun = "gelu_erf"}
// CHECK-NEXT:    func.return %g
// CHECK-NOT:   fusion_kind = "SINGLE_CUBE"
// CHECK-LABEL: func.func @linear_gelu(
// CHECK-NEXT:    [[WS:%[0-9]+]] = tensor.empty : () -> tensor<64x256xf32>
// CHECK-NEXT:    [[OUT:%[0-9]+]] = tensor.empty : () -> tensor<64x256xf16>
// CHECK-NEXT:    %g = func.call %x, %w, [[WS]], %b, [[OUT]] {callee = "linear_gelu_fused_1_mix"}
// CHECK-NEXT:    func.return %g
module attributes {target = "ascend910b1"} {
  func.func @linear_gelu(%x: tensor<64x128xf16>, %w: tensor<256x128xf16>, %b: tensor<256xf16>) -> (tensor<64x256xf16>) {
    %p = hfusion.matmul %x, %w {transpose_b = true} : (tensor<64x128xf16>, tensor<256x128xf16>) -> tensor<64x256xf32>
    %b32 = hfusion.cast %b {round_mode = "rint"} : (tensor<256xf16>) -> tensor<256xf32>
    %bb = hfusion.broadcast %b32 {dims = [0]} : (tensor<256xf32>) -> tensor<64x256xf32>
    %s = hfusion.elemwise_binary %bb, %p {fun = "add"} : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x256xf32>
    %h = hfusion.cast %s {round_mode = "rint"} : (tensor<64x256xf32>) -> tensor<64x256xf16>
    %g = hfusion.elemwise_unary %h {fun = "gelu_erf"} : (tensor<64x256xf16>) -> tensor<64x256xf16>
    func.return %g : tensor<64x256xf16>
  }
}

// -----

// A residual add and a scale: the epilogue reads a second [M, N] input.
// CHECK-LABEL: func.func @residual_fused_1_mix(
// CHECK-SAME:    attributes {fusion_kind = "MIX_CV", kernel, output_args = [4], workspace_args = [2]}
// CHECK-LABEL: func.func @residual(
// CHECK:         func.call {{.*}}callee = "residual_fused_1_mix"
// CHECK-NOT:     func.call
module attributes {target = "ascend910b1"} {
  func.func @residual(%x: tensor<32x64xf32>, %w: tensor<64x48xf32>, %r: tensor<32x48xf32>) -> (tensor<32x48xf32>) {
    %p = hfusion.matmul %x, %w : (tensor<32x64xf32>, tensor<64x48xf32>) -> tensor<32x48xf32>
    %c = arith.constant {value = 0.5} : () -> f32
    %s = hfusion.elemwise_binary %p, %c {fun = "mul"} : (tensor<32x48xf32>, f32) -> tensor<32x48xf32>
    %y = hfusion.elemwise_binary %s, %r {fun = "add"} : (tensor<32x48xf32>, tensor<32x48xf32>) -> tensor<32x48xf32>
    func.return %y : tensor<32x48xf32>
  }
}

// -----

// A row sum after the product needs whole rows: the epilogue kernel is not elementwise, two kernels stay.
// CHECK-LABEL: func.func @row_sum_fused_0(
// CHECK-SAME:    fusion_kind = "SINGLE_CUBE"
// CHECK-LABEL: func.func @row_sum_fused_1(
// CHECK-SAME:    fusion_kind = "LAST_AXIS_PBR"
// CHECK-NOT:   MIX_CV
module attributes {target = "ascend910b1"} {
  func.func @row_sum(%x: tensor<32x64xf32>, %w: tensor<64x48xf32>) -> (tensor<32xf32>) {
    %p = hfusion.matmul %x, %w : (tensor<32x64xf32>, tensor<64x48xf32>) -> tensor<32x48xf32>
    %e = hfusion.elemwise_unary %p {fun = "exp"} : (tensor<32x48xf32>) -> tensor<32x48xf32>
    %s = hfusion.reduce %e {dims = [1], kind = "sum"} : (tensor<32x48xf32>) -> tensor<32xf32>
    func.return %s : tensor<32xf32>
  }
}

// -----

// The product is returned as well as read by the epilogue: it must reach GM as an output, two kernels stay.
// CHECK-LABEL: func.func @two_users_fused_0(
// CHECK-SAME:    fusion_kind = "SINGLE_CUBE"
// CHECK-LABEL: func.func @two_users_fused_1(
// CHECK-SAME:    fusion_kind = "PURE_ELEMWISE"
// CHECK-NOT:   MIX_CV
module attributes {target = "ascend910b1"} {
  func.func @two_users(%x: tensor<32x64xf32>, %w: tensor<64x48xf32>) -> (tensor<32x48xf32>, tensor<32x48xf32>) {
    %p = hfusion.matmul %x, %w : (tensor<32x64xf32>, tensor<64x48xf32>) -> tensor<32x48xf32>
    %r = hfusion.elemwise_unary %p {fun = "relu"} : (tensor<32x48xf32>) -> tensor<32x48xf32>
    func.return %p, %r : tensor<32x48xf32>, tensor<32x48xf32>
  }
}

// -----

// Product rows of 40 f16 (80 B) are not whole 32-B blocks: the two vector cores of a group would share blocks.
// CHECK-LABEL: func.func @odd_rows_fused_0(
// CHECK-SAME:    fusion_kind = "SINGLE_CUBE"
// CHECK-LABEL: func.func @odd_rows_fused_1(
// CHECK-SAME:    fusion_kind = "PURE_ELEMWISE"
// CHECK-NOT:   MIX_CV
module attributes {target = "ascend910b1"} {
  func.func @odd_rows(%x: tensor<32x64xf16>, %w: tensor<64x40xf16>) -> (tensor<32x40xf16>) {
    %p = hfusion.matmul %x, %w : (tensor<32x64xf16>, tensor<64x40xf16>) -> tensor<32x40xf16>
    %r = hfusion.elemwise_unary %p {fun = "relu"} : (tensor<32x40xf16>) -> tensor<32x40xf16>
    func.return %r : tensor<32x40xf16>
  }
}
