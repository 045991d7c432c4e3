// RUN: npu-opt %s -p hivm-normalize-matmul --split-input-file | filecheck %s

// F.linear's addmm as the importer gives it: init (the bias broadcast over the rows) + x @ w.t(). The product into
// zero keeps its flags; the init is added after it.
// CHECK-LABEL: func.func @linear(
// CHECK-NEXT:    [[B:%[0-9a-z_]+]] = hfusion.broadcast %b {dims = [0]} : (tensor<24xf32>) -> tensor<16x24xf32>
// CHECK-NEXT:    [[P:%[0-9a-z_]+]] = hfusion.matmul %x, %w {transpose_a = false, transpose_b = true} : (tensor<16x32xf32>, tensor<24x32xf32>) -> tensor<16x24xf32>
// CHECK-NEXT:    [[S:%[0-9a-z_]+]] = hfusion.elemwise_binary [[B]], [[P]] {fun = "add"} : (tensor<16x24xf32>, tensor<16x24xf32>) -> tensor<16x24xf32>
// CHECK-NEXT:    func.return [[S]]
module {
  func.func @linear(%x: tensor<16x32xf32>, %w: tensor<24x32xf32>, %b: tensor<24xf32>) -> (tensor<16x24xf32>) {
    %0 = hfusion.broadcast %b {dims = [0]} : (tensor<24xf32>) -> tensor<16x24xf32>
    %1 = hfusion.matmul %x, %w, %0 {transpose_b = true} : (tensor<16x32xf32>, tensor<24x32xf32>, tensor<16x24xf32>) -> tensor<16x24xf32>
    func.return %1 : tensor<16x24xf32>
  }
}

// -----

// baddbmm of f16 operands: the product and the init in f32 (the accumulator's dtype), one cast after the add.
// CHECK-LABEL: func.func @baddbmm(
// CHECK-NEXT:    [[P:%[0-9a-z_]+]] = hfusion.batch_matmul %a, %b {transpose_a = false, transpose_b = false} : (tensor<4x8x32xf16>, tensor<4x32x16xf16>) -> tensor<4x8x16xf32>
// CHECK-NEXT:    [[S:%[0-9a-z_]+]] = hfusion.elemwise_binary %c, [[P]] {fun = "add"}
// CHECK-NEXT:    hfusion.cast [[S]]
// CHECK-NOT:     hfusion.batch_matmul
module {
  func.func @baddbmm(%a: tensor<4x8x32xf16>, %b: tensor<4x32x16xf16>, %c: tensor<4x8x16xf32>) -> (tensor<4x8x16xf16>) {
    %0 = hfusion.batch_matmul %a, %b, %c : (tensor<4x8x32xf16>, tensor<4x32x16xf16>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %1 = hfusion.cast %0 : (tensor<4x8x16xf32>) -> tensor<4x8x16xf16>
    func.return %1 : tensor<4x8x16xf16>
  }
}

// -----

// A product into zero is left alone.
// CHECK-LABEL: func.func @plain(
// CHECK-NEXT:    hfusion.matmul %a, %b {transpose_a = false, transpose_b = false} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    func.return
module {
  func.func @plain(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> (tensor<8x8xf32>) {
    %0 = hfusion.matmul %a, %b : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    func.return %0 : tensor<8x8xf32>
  }
}
