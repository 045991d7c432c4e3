// RUN: npu-opt %s -p hfusion-fold-matmul-views --split-input-file | filecheck %s

// x @ w.t(): the weight's transpose becomes transpose_b; the transpose, now unused, is gone.
// CHECK-LABEL: func.func @weight_transpose(
// CHECK-NOT:     hfusion.transpose
// CHECK:         [[P:%[0-9a-z_]+]] = hfusion.matmul %x, %w {transpose_a = false, transpose_b = true} : (tensor<16x32xf16>, tensor<24x32xf16>) -> tensor<16x24xf16>
// CHECK-NEXT:    func.return [[P]]
module {
  func.func @weight_transpose(%x: tensor<16x32xf16>, %w: tensor<24x32xf16>) -> (tensor<16x24xf16>) {
    %0 = hfusion.transpose %w {perm = [1, 0]} : (tensor<24x32xf16>) -> tensor<32x24xf16>
    %1 = hfusion.matmul %x, %0 : (tensor<16x32xf16>, tensor<32x24xf16>) -> tensor<16x24xf16>
    func.return %1 : tensor<16x24xf16>
  }
}

// -----

// A weight gradient grad.t() @ x, transposed back to the weight's layout: the operand's transpose becomes
// transpose_a, then (g^T x)^T = x^T g is one product with the operands swapped; no transpose is left.
// CHECK-LABEL: func.func @weight_grad(
// CHECK-NOT:     hfusion.transpose
// CHECK:         [[P:%[0-9a-z_]+]] = hfusion.matmul %x, %g {transpose_a = true, transpose_b = false} : (tensor<16x32xf32>, tensor<16x24xf32>) -> tensor<32x24xf32>
// CHECK-NEXT:    func.return [[P]]
module {
  func.func @weight_grad(%g: tensor<16x24xf32>, %x: tensor<16x32xf32>) -> (tensor<32x24xf32>) {
    %0 = hfusion.transpose %g {perm = [1, 0]} : (tensor<16x24xf32>) -> tensor<24x16xf32>
    %1 = hfusion.matmul %0, %x : (tensor<24x16xf32>, tensor<16x32xf32>) -> tensor<24x32xf32>
    %2 = hfusion.transpose %1 {perm = [1, 0]} : (tensor<24x32xf32>) -> tensor<32x24xf32>
    func.return %2 : tensor<32x24xf32>
  }
}

// -----

// A transpose with another user stays for it; the matmul reads the untransposed value.
// CHECK-LABEL: func.func @shared_transpose(
// CHECK:         [[T:%[0-9a-z_]+]] = hfusion.transpose %w {perm = [1, 0]}
// CHECK:         [[P:%[0-9a-z_]+]] = hfusion.matmul %x, %w {transpose_a = false, transpose_b = true}
// CHECK-NEXT:    func.return [[P]], [[T]]
module {
  func.func @shared_transpose(%x: tensor<16x32xf32>, %w: tensor<24x32xf32>) -> (tensor<16x24xf32>, tensor<32x24xf32>) {
    %0 = hfusion.transpose %w {perm = [1, 0]} : (tensor<24x32xf32>) -> tensor<32x24xf32>
    %1 = hfusion.matmul %x, %0 : (tensor<16x32xf32>, tensor<32x24xf32>) -> tensor<16x24xf32>
    func.return %1, %0 : tensor<16x24xf32>, tensor<32x24xf32>
  }
}

// -----

// Attention scores q @ k.transpose(-2, -1) over [B, H, T, D]: the batch dims are merged after the transpose; the
// merge moves before it (a view of k) and the transpose becomes transpose_b.
// CHECK-LABEL: func.func @attention_scores(
// CHECK-NOT:     hfusion.transpose
// CHECK:         [[K:%[0-9a-z_]+]] = hfusion.reshape %k : (tensor<2x3x8x16xbf16>) -> tensor<6x8x16xbf16>
// CHECK:         hfusion.batch_matmul %{{[0-9a-z_]+}}, [[K]] {transpose_a = false, transpose_b = true} : (tensor<6x8x16xbf16>, tensor<6x8x16xbf16>) -> tensor<6x8x8xbf16>
module {
  func.func @attention_scores(%q: tensor<2x3x8x16xbf16>, %k: tensor<2x3x8x16xbf16>) -> (tensor<2x3x8x8xbf16>) {
    %0 = hfusion.transpose %k {perm = [0, 1, 3, 2]} : (tensor<2x3x8x16xbf16>) -> tensor<2x3x16x8xbf16>
    %1 = hfusion.reshape %q : (tensor<2x3x8x16xbf16>) -> tensor<6x8x16xbf16>
    %2 = hfusion.reshape %0 : (tensor<2x3x16x8xbf16>) -> tensor<6x16x8xbf16>
    %3 = hfusion.batch_matmul %1, %2 : (tensor<6x8x16xbf16>, tensor<6x16x8xbf16>) -> tensor<6x8x8xbf16>
    %4 = hfusion.reshape %3 : (tensor<6x8x8xbf16>) -> tensor<2x3x8x8xbf16>
    func.return %4 : tensor<2x3x8x8xbf16>
  }
}

// -----

// The attention backward's transpose of a product with its batch dims split again: the product is taken swapped
// and the split follows it.
// CHECK-LABEL: func.func @transposed_batch_product(
// CHECK-NOT:     hfusion.transpose
// CHECK:         [[P:%[0-9a-z_]+]] = hfusion.batch_matmul %b, %a {transpose_a = true, transpose_b = true} : (tensor<6x8x16xf32>, tensor<6x16x8xf32>) -> tensor<6x16x16xf32>
// CHECK-NEXT:    [[R:%[0-9a-z_]+]] = hfusion.reshape [[P]] : (tensor<6x16x16xf32>) -> tensor<2x3x16x16xf32>
// CHECK-NEXT:    func.return [[R]]
module {
  func.func @transposed_batch_product(%a: tensor<6x16x8xf32>, %b: tensor<6x8x16xf32>) -> (tensor<2x3x16x16xf32>) {
    %0 = hfusion.batch_matmul %a, %b : (tensor<6x16x8xf32>, tensor<6x8x16xf32>) -> tensor<6x16x16xf32>
    %1 = hfusion.reshape %0 : (tensor<6x16x16xf32>) -> tensor<2x3x16x16xf32>
    %2 = hfusion.transpose %1 {perm = [0, 1, 3, 2]} : (tensor<2x3x16x16xf32>) -> tensor<2x3x16x16xf32>
    func.return %2 : tensor<2x3x16x16xf32>
  }
}

// -----

// A product with another user is not swapped (its transpose stays).
// CHECK-LABEL: func.func @product_used_twice(
// CHECK:         [[P:%[0-9a-z_]+]] = hfusion.matmul %a, %b {transpose_a = false, transpose_b = false}
// CHECK-NEXT:    [[T:%[0-9a-z_]+]] = hfusion.transpose [[P]] {perm = [1, 0]}
// CHECK-NEXT:    func.return [[P]], [[T]]
module {
  func.func @product_used_twice(%a: tensor<16x8xf32>, %b: tensor<8x24xf32>) -> (tensor<16x24xf32>, tensor<24x16xf32>) {
    %0 = hfusion.matmul %a, %b : (tensor<16x8xf32>, tensor<8x24xf32>) -> tensor<16x24xf32>
    %1 = hfusion.transpose %0 {perm = [1, 0]} : (tensor<16x24xf32>) -> tensor<24x16xf32>
    func.return %0, %1 : tensor<16x24xf32>, tensor<24x16xf32>
  }
}

// -----

// A batch broadcast of a matrix (a @ w with w expanded over the batch, or a batch-1 tensor squeezed and expanded)
// is not materialised: the batch_matmul reads the rank-2 operand for every batch, its transpose folded too.
// CHECK-LABEL: func.func @broadcast_batch(
// CHECK-NOT:     hfusion.broadcast
// CHECK:         [[P:%[0-9a-z_]+]] = hfusion.batch_matmul %a, %w {transpose_a = false, transpose_b = true} : (tensor<4x16x32xf16>, tensor<24x32xf16>) -> tensor<4x16x24xf16>
// CHECK-NEXT:    func.return [[P]]
module {
  func.func @broadcast_batch(%a: tensor<4x16x32xf16>, %w: tensor<24x32xf16>) -> (tensor<4x16x24xf16>) {
    %0 = hfusion.transpose %w {perm = [1, 0]} : (tensor<24x32xf16>) -> tensor<32x24xf16>
    %1 = hfusion.broadcast %0 {dims = [0]} : (tensor<32x24xf16>) -> tensor<4x32x24xf16>
    %2 = hfusion.batch_matmul %a, %1 : (tensor<4x16x32xf16>, tensor<4x32x24xf16>) -> tensor<4x16x24xf16>
    func.return %2 : tensor<4x16x24xf16>
  }
}

// -----

// Broadcast over [2, 3] and the batch dims merged (a 4-D a @ w with w of shape [1, 1, K, N]): the same.
// CHECK-LABEL: func.func @broadcast_merged_batch(
// CHECK-NOT:     hfusion.broadcast
// CHECK:         hfusion.batch_matmul %a, %w {transpose_a = false, transpose_b = false} : (tensor<6x16x32xf32>, tensor<32x24xf32>) -> tensor<6x16x24xf32>
module {
  func.func @broadcast_merged_batch(%a: tensor<6x16x32xf32>, %w: tensor<32x24xf32>) -> (tensor<6x16x24xf32>) {
    %0 = hfusion.broadcast %w {dims = [0, 1]} : (tensor<32x24xf32>) -> tensor<2x3x32x24xf32>
    %1 = hfusion.reshape %0 : (tensor<2x3x32x24xf32>) -> tensor<6x32x24xf32>
    %2 = hfusion.batch_matmul %a, %1 : (tensor<6x16x32xf32>, tensor<6x32x24xf32>) -> tensor<6x16x24xf32>
    func.return %2 : tensor<6x16x24xf32>
  }
}

// -----

// Left alone: a broadcast along one batch dim only (a [B, 1, K, N] against [B, H, M, K]) and a permutation that
// moves a batch dim. Of two broadcast operands only the first is folded: the other keeps the batch dim.
// CHECK-LABEL: func.func @not_folded(
// CHECK:         hfusion.broadcast %v {dims = [1]}
// CHECK:         hfusion.transpose %c {perm = [2, 1, 0]}
// CHECK-NOT:     hfusion.broadcast %x
// CHECK:         [[Y:%[0-9a-z_]+]] = hfusion.broadcast %y {dims = [0]}
// CHECK-NEXT:    hfusion.batch_matmul %x, [[Y]] {transpose_a = false, transpose_b = false} : (tensor<16x32xf32>, tensor<4x32x24xf32>)
module {
  func.func @not_folded(%a: tensor<6x16x32xf32>, %v: tensor<2x32x24xf32>, %b: tensor<4x16x32xf32>, %c: tensor<24x32x4xf32>, %x: tensor<16x32xf32>, %y: tensor<32x24xf32>) -> (tensor<6x16x24xf32>, tensor<4x16x24xf32>, tensor<4x16x24xf32>) {
    %0 = hfusion.broadcast %v {dims = [1]} : (tensor<2x32x24xf32>) -> tensor<2x3x32x24xf32>
    %1 = hfusion.reshape %0 : (tensor<2x3x32x24xf32>) -> tensor<6x32x24xf32>
    %2 = hfusion.batch_matmul %a, %1 : (tensor<6x16x32xf32>, tensor<6x32x24xf32>) -> tensor<6x16x24xf32>
    %3 = hfusion.transpose %c {perm = [2, 1, 0]} : (tensor<24x32x4xf32>) -> tensor<4x32x24xf32>
    %4 = hfusion.batch_matmul %b, %3 : (tensor<4x16x32xf32>, tensor<4x32x24xf32>) -> tensor<4x16x24xf32>
    %5 = hfusion.broadcast %x {dims = [0]} : (tensor<16x32xf32>) -> tensor<4x16x32xf32>
    %6 = hfusion.broadcast %y {dims = [0]} : (tensor<32x24xf32>) -> tensor<4x32x24xf32>
    %7 = hfusion.batch_matmul %5, %6 : (tensor<4x16x32xf32>, tensor<4x32x24xf32>) -> tensor<4x16x24xf32>
    func.return %2, %4, %7 : tensor<6x16x24xf32>, tensor<4x16x24xf32>, tensor<4x16x24xf32>
  }
}
