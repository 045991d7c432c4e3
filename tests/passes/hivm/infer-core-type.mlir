// RUN: npu-opt %s -p hivm-infer-core-type | filecheck %s

// A HIVM vector kernel is AIV; a tensor-level cube kernel is AIC; a kernel with both units is MIX; the host
// function gets no core type.
// CHECK-LABEL: func.func @vec(
// CHECK-SAME:    core_type = "AIV"
// CHECK-LABEL: func.func @cube(
// CHECK-SAME:    core_type = "AIC"
// CHECK-LABEL: func.func @mix(
// CHECK-SAME:    core_type = "MIX"
// CHECK-LABEL: func.func @main(
// CHECK-NOT:     core_type
module attributes {target = "ascend910b1"} {
  func.func @vec(%x: memref<64xf32, gm>, %out: memref<64xf32, gm>) attributes {kernel, output_args = [1]} {
    %c64 = arith.constant {value = 64} : () -> index
    %c0 = arith.constant {value = 0} : () -> index
    %u = hivm.alloc : () -> memref<64xf32>
    hivm.load %x, %u, %c0, %c64 : memref<64xf32, gm>, memref<64xf32>, index, index
    hivm.vunary %u, %u, %c64 {fun = "exp"} : memref<64xf32>, memref<64xf32>, index
    hivm.store %u, %out, %c0, %c64 : memref<64xf32>, memref<64xf32, gm>, index, index
    func.return
  }
  func.func @cube(%a: tensor<16x32xf16>, %b: tensor<32x16xf16>, %out: tensor<16x16xf16>) -> (tensor<16x16xf16>) attributes {fusion_kind = "SINGLE_CUBE", kernel, output_args = [2]} {
    %r = hfusion.matmul %a, %b : (tensor<16x32xf16>, tensor<32x16xf16>) -> tensor<16x16xf16>
    func.return %r : tensor<16x16xf16>
  }
  func.func @mix(%a: tensor<16x32xf16>, %b: tensor<32x16xf16>, %out: tensor<16x16xf16>) -> (tensor<16x16xf16>) attributes {fusion_kind = "MIX_CV", kernel, output_args = [2]} {
    %r = hfusion.matmul %a, %b : (tensor<16x32xf16>, tensor<32x16xf16>) -> tensor<16x16xf16>
    %s = hfusion.elemwise_unary %r {fun = "relu"} : (tensor<16x16xf16>) -> tensor<16x16xf16>
    func.return %s : tensor<16x16xf16>
  }
  func.func @main(%x: tensor<64xf32>) -> (tensor<64xf32>) {
    %r = hfusion.elemwise_unary %x {fun = "exp"} : (tensor<64xf32>) -> tensor<64xf32>
    func.return %r : tensor<64xf32>
  }
}
