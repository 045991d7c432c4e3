// RUN: npu-opt %s -p hfusion-auto-schedule --split-input-file | filecheck %s
// RUN: npu-opt %s -p "hfusion-auto-schedule{cv-pipelining=false}" --split-input-file | filecheck %s --check-prefix=OFF

// cv-pipelining (docs/cube.md): linear + GELU 256x1024x1024, one 96 x 128 tile per group. Its estimate favours
// pieces of 64 columns, each a whole K loop with the A rows resident (an L1 box a K step of 256: 4 copies), and a
// ring workspace of 2 slots per group: 24 groups x 2 slots x 96 rows of 64 f32, which the kernel's workspace
// argument and the host's allocation become (the product-shaped one is gone).
// CHECK-LABEL: func.func @linear_gelu_fused_1_mix(
// CHECK-SAME:    %out0: tensor<4608x64xf32>
// CHECK-SAME:    #hfusion.cube_schedule<{kind = "MIX_CV", base_m = 96, base_n = 128, base_k = 128, l1_k = 256, acc_parts = 2,
// CHECK-SAME:    {role = "a_l1", scope = "l1", dtype = "f16", shape = [96, 256], copies = 4}
// CHECK-SAME:    resident_a = true, ws_slots = 2}>
// CHECK-LABEL: func.func @linear_gelu(
// CHECK-NOT:     tensor<256x1024xf32>
// CHECK:         [[RING:%[0-9]+]] = tensor.empty : () -> tensor<4608x64xf32>
// CHECK-NEXT:    func.call %x, %w, [[RING]], %b
// Without cv-pipelining the workspace holds the product and the tile's K loop both parts.
// OFF-LABEL: func.func @linear_gelu_fused_1_mix(
// OFF-SAME:    %out0: tensor<256x1024xf32>
// OFF-NOT:     resident_a
// OFF-LABEL: func.func @linear_gelu(
// OFF:         tensor.empty : () -> tensor<256x1024xf32>
module attributes {target = "ascend910b1"} {
  func.func @linear_gelu_fused_1_mix(%x: tensor<256x1024xf16>, %w: tensor<1024x1024xf16>, %out0: tensor<256x1024xf32>, %b: tensor<1024xf16>, %out0_1: tensor<256x1024xf16>) -> (tensor<256x1024xf16>) attributes {fusion_kind = "MIX_CV", kernel, output_args = [4], workspace_args = [2]} {
    %p = hfusion.matmul %x, %w {transpose_a = false, transpose_b = true} : (tensor<256x1024xf16>, tensor<1024x1024xf16>) -> tensor<256x1024xf32>
    %b32 = hfusion.cast %b {round_mode = "rint"} : (tensor<1024xf16>) -> tensor<1024xf32>
    %bb = hfusion.broadcast %b32 {dims = [0]} : (tensor<1024xf32>) -> tensor<256x1024xf32>
    %s = hfusion.elemwise_binary %bb, %p {fun = "add"} : (tensor<256x1024xf32>, tensor<256x1024xf32>) -> tensor<256x1024xf32>
    %h = hfusion.cast %s {round_mode = "rint"} : (tensor<256x1024xf32>) -> tensor<256x1024xf16>
    %g = hfusion.elemwise_unary %h {fun = "gelu_erf"} : (tensor<256x1024xf16>) -> tensor<256x1024xf16>
    func.return %g : tensor<256x1024xf16>
  }
  func.func @linear_gelu(%x: tensor<256x1024xf16>, %w: tensor<1024x1024xf16>, %b: tensor<1024xf16>) -> (tensor<256x1024xf16>) {
    %0 = tensor.empty : () -> tensor<256x1024xf32>
    %1 = tensor.empty : () -> tensor<256x1024xf16>
    %g = func.call %x, %w, %0, %b, %1 {callee = "linear_gelu_fused_1_mix"} : (tensor<256x1024xf16>, tensor<1024x1024xf16>, tensor<256x1024xf32>, tensor<1024xf16>, tensor<256x1024xf16>) -> tensor<256x1024xf16>
    func.return %g : tensor<256x1024xf16>
  }
}

// -----

// A bias add and ReLU after K = 128: the estimate says the extra drain costs more than the earlier hand-off saves, so the
// schedule stays as the cube tile chose it and the workspace holds the product.
// CHECK-LABEL: func.func @linear_relu_fused_1_mix(
// CHECK-SAME:    %out0: tensor<256x1024xf32>
// CHECK-NOT:     resident_a
// CHECK-LABEL: func.func @linear_relu(
// CHECK:         tensor.empty : () -> tensor<256x1024xf32>
// OFF-LABEL: func.func @linear_relu_fused_1_mix(
// OFF-SAME:    %out0: tensor<256x1024xf32>
module attributes {target = "ascend910b1"} {
  func.func @linear_relu_fused_1_mix(%x: tensor<256x128xf16>, %w: tensor<1024x128xf16>, %out0: tensor<256x1024xf32>, %b: tensor<1024xf16>, %out0_1: tensor<256x1024xf16>) -> (tensor<256x1024xf16>) attributes {fusion_kind = "MIX_CV", kernel, output_args = [4], workspace_args = [2]} {
    %p = hfusion.matmul %x, %w {transpose_a = false, transpose_b = true} : (tensor<256x128xf16>, tensor<1024x128xf16>) -> tensor<256x1024xf32>
    %b32 = hfusion.cast %b {round_mode = "rint"} : (tensor<1024xf16>) -> tensor<1024xf32>
    %bb = hfusion.broadcast %b32 {dims = [0]} : (tensor<1024xf32>) -> tensor<256x1024xf32>
    %s = hfusion.elemwise_binary %bb, %p {fun = "add"} : (tensor<256x1024xf32>, tensor<256x1024xf32>) -> tensor<256x1024xf32>
    %h = hfusion.cast %s {round_mode = "rint"} : (tensor<256x1024xf32>) -> tensor<256x1024xf16>
    %g = hfusion.elemwise_unary %h {fun = "relu"} : (tensor<256x1024xf16>) -> tensor<256x1024xf16>
    func.return %g : tensor<256x1024xf16>
  }
  func.func @linear_relu(%x: tensor<256x128xf16>, %w: tensor<1024x128xf16>, %b: tensor<1024xf16>) -> (tensor<256x1024xf16>) {
    %0 = tensor.empty : () -> tensor<256x1024xf32>
    %1 = tensor.empty : () -> tensor<256x1024xf16>
    %g = func.call %x, %w, %0, %b, %1 {callee = "linear_relu_fused_1_mix"} : (tensor<256x128xf16>, tensor<1024x128xf16>, tensor<256x1024xf32>, tensor<1024xf16>, tensor<256x1024xf16>) -> tensor<256x1024xf16>
    func.return %g : tensor<256x1024xf16>
  }
}
