// RUN: npu-opt %s -p hfusion-infer-fusion-kind --split-input-file | filecheck %s

// A module without kernels: every function is classified as one would-be kernel.
// CHECK-LABEL: func.func @elemwise(
// CHECK-SAME:    fusion_kind = "PURE_ELEMWISE"
// CHECK-LABEL: func.func @softmax_like(
// CHECK-SAME:    fusion_kind = "LAST_AXIS_PBR"
// CHECK-LABEL: func.func @bias_relu(
// CHECK-SAME:    fusion_kind = "ANY_PB"
// CHECK-LABEL: func.func @column_sum(
// CHECK-SAME:    fusion_kind = "ANY_PBR"
// CHECK-LABEL: func.func @one_matmul(
// CHECK-SAME:    fusion_kind = "SINGLE_CUBE"
// A matmul and an elementwise epilogue of its product: a cube-vector mix kernel (hfusion-fuse-mix-cv builds these).
// CHECK-LABEL: func.func @matmul_relu(
// CHECK-SAME:    fusion_kind = "MIX_CV"
// CHECK-LABEL: func.func @only_reshape(
// CHECK-SAME:    fusion_kind = "ANY_PB"
module {
  func.func @elemwise(%x: tensor<8x32xf32>, %y: tensor<8x32xf32>) -> (tensor<8x32xf32>) {
    %0 = hfusion.elemwise_binary %x, %y {fun = "mul"} : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    %1 = hfusion.elemwise_binary %0, %y {fun = "add"} : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    func.return %1 : tensor<8x32xf32>
  }
  func.func @softmax_like(%x: tensor<8x32xf32>) -> (tensor<8x32xf32>) {
    %0 = hfusion.reduce %x {dims = [1], kind = "max"} : (tensor<8x32xf32>) -> tensor<8xf32>
    %1 = hfusion.broadcast %0 {dims = [1]} : (tensor<8xf32>) -> tensor<8x32xf32>
    %2 = hfusion.elemwise_binary %x, %1 {fun = "sub"} : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    func.return %2 : tensor<8x32xf32>
  }
  func.func @bias_relu(%x: tensor<8x32xf32>, %b: tensor<32xf32>) -> (tensor<8x32xf32>) {
    %0 = hfusion.broadcast %b {dims = [0]} : (tensor<32xf32>) -> tensor<8x32xf32>
    %1 = hfusion.elemwise_binary %x, %0 {fun = "add"} : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    %2 = hfusion.elemwise_unary %1 {fun = "relu"} : (tensor<8x32xf32>) -> tensor<8x32xf32>
    func.return %2 : tensor<8x32xf32>
  }
  func.func @column_sum(%x: tensor<8x32xf32>) -> (tensor<32xf32>) {
    %0 = hfusion.elemwise_unary %x {fun = "abs"} : (tensor<8x32xf32>) -> tensor<8x32xf32>
    %1 = hfusion.reduce %0 {dims = [0], kind = "sum"} : (tensor<8x32xf32>) -> tensor<32xf32>
    func.return %1 : tensor<32xf32>
  }
  func.func @one_matmul(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>) -> (tensor<8x32xf32>) {
    %0 = hfusion.matmul %a, %b : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    func.return %0 : tensor<8x32xf32>
  }
  func.func @matmul_relu(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>) -> (tensor<8x32xf32>) {
    %0 = hfusion.matmul %a, %b : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %1 = hfusion.elemwise_unary %0 {fun = "relu"} : (tensor<8x32xf32>) -> tensor<8x32xf32>
    func.return %1 : tensor<8x32xf32>
  }
  func.func @only_reshape(%x: tensor<8x32xf32>) -> (tensor<256xf32>) {
    %0 = hfusion.reshape %x : (tensor<8x32xf32>) -> tensor<256xf32>
    func.return %0 : tensor<256xf32>
  }
}

// -----

// With kernels present only the kernels are labelled; a wrong recorded kind is replaced.
// CHECK-LABEL: func.func @k(
// CHECK-SAME:    fusion_kind = "LAST_AXIS_PBR"
// CHECK-LABEL: func.func @main(
// CHECK-NOT:     fusion_kind
module {
  func.func @k(%x: tensor<8x32xf32>, %out: tensor<8xf32>) -> (tensor<8xf32>) attributes {kernel, fusion_kind = "PURE_ELEMWISE", output_args = [1]} {
    %0 = hfusion.elemwise_unary %x {fun = "exp"} : (tensor<8x32xf32>) -> tensor<8x32xf32>
    %1 = hfusion.reduce %0 {dims = [1], kind = "sum"} : (tensor<8x32xf32>) -> tensor<8xf32>
    func.return %1 : tensor<8xf32>
  }
  func.func @main(%x: tensor<8x32xf32>) -> (tensor<8xf32>) {
    %e = tensor.empty : () -> tensor<8xf32>
    %0 = func.call %x, %e {callee = "k"} : (tensor<8x32xf32>, tensor<8xf32>) -> tensor<8xf32>
    func.return %0 : tensor<8xf32>
  }
}
