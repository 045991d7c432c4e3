// RUN: npu-opt %s -p hfusion-split-k --split-input-file | filecheck %s

// 64x64 output, K = 16384: at most 16 small tiles, each reading all of K (estimate 29,386 cycles). 8 chunks of 2,048:
// one cube kernel of f32 partials (the chunks are batches, read in place at K offset s·2048), their sum and the cast
// (estimate 16,976 cycles with the sum's kernel and launch).
// CHECK-LABEL: func.func @small_out_long_k(
// CHECK-NEXT:    [[P:%[0-9a-z_]+]] = hfusion.batch_matmul %a, %b {k_chunk = 2048, transpose_a = false, transpose_b = false} : (tensor<64x16384xf16>, tensor<16384x64xf16>) -> tensor<8x64x64xf32>
// CHECK-NEXT:    [[S:%[0-9a-z_]+]] = hfusion.reduce [[P]] {dims = [0], kind = "sum"} : (tensor<8x64x64xf32>) -> tensor<64x64xf32>
// CHECK-NEXT:    [[C:%[0-9a-z_]+]] = hfusion.cast [[S]] {round_mode = "rint"} : (tensor<64x64xf32>) -> tensor<64x64xf16>
// CHECK-NEXT:    func.return [[C]]
module attributes {target = "ascend910b1"} {
  func.func @small_out_long_k(%a: tensor<64x16384xf16>, %b: tensor<16384x64xf16>) -> (tensor<64x64xf16>) {
    %0 = hfusion.matmul %a, %b : (tensor<64x16384xf16>, tensor<16384x64xf16>) -> tensor<64x64xf16>
    func.return %0 : tensor<64x64xf16>
  }
}

// -----

// A weight gradient x.t() @ g over 16384 tokens, bf16: both transposes stay flags of the partial products.
// CHECK-LABEL: func.func @weight_grad(
// CHECK-NEXT:    [[P:%[0-9a-z_]+]] = hfusion.batch_matmul %x, %g {k_chunk = {{[0-9]+}}, transpose_a = true, transpose_b = false} : (tensor<16384x64xbf16>, tensor<16384x128xbf16>) -> tensor<{{[0-9]+}}x64x128xf32>
// CHECK-NEXT:    [[S:%[0-9a-z_]+]] = hfusion.reduce [[P]] {dims = [0], kind = "sum"}
// CHECK-NEXT:    hfusion.cast [[S]] {round_mode = "rint"} : (tensor<64x128xf32>) -> tensor<64x128xbf16>
module attributes {target = "ascend910b1"} {
  func.func @weight_grad(%x: tensor<16384x64xbf16>, %g: tensor<16384x128xbf16>) -> (tensor<64x128xbf16>) {
    %0 = hfusion.matmul %x, %g {transpose_a = true} : (tensor<16384x64xbf16>, tensor<16384x128xbf16>) -> tensor<64x128xbf16>
    func.return %0 : tensor<64x128xbf16>
  }
}

// -----

// f32 operands: the partials are the result's dtype, no cast after the sum.
// CHECK-LABEL: func.func @f32_product(
// CHECK-NEXT:    [[P:%[0-9a-z_]+]] = hfusion.batch_matmul %a, %w {k_chunk = {{[0-9]+}}, transpose_a = false, transpose_b = false}
// CHECK-NEXT:    [[S:%[0-9a-z_]+]] = hfusion.reduce [[P]] {dims = [0], kind = "sum"} : (tensor<{{[0-9]+}}x64x64xf32>) -> tensor<64x64xf32>
// CHECK-NEXT:    func.return [[S]]
module attributes {target = "ascend910b1"} {
  func.func @f32_product(%a: tensor<64x16384xf32>, %w: tensor<16384x64xf32>) -> (tensor<64x64xf32>) {
    %0 = hfusion.matmul %a, %w : (tensor<64x16384xf32>, tensor<16384x64xf32>) -> tensor<64x64xf32>
    func.return %0 : tensor<64x64xf32>
  }
}

// -----

// Left alone: a GEMM whose tiles fill the cores (1024^3), 256x256x4096 (the split's estimate is within the margin of
// the unsplit one: the sum's launch eats the gain), a short K, a batch_matmul, a symbolic M.
// CHECK-LABEL: func.func @unsplit(
// CHECK-NOT:     k_chunk
// CHECK-NOT:     hfusion.reduce
// CHECK:         func.return
module attributes {target = "ascend910b1"} {
  func.func @unsplit(%a: tensor<1024x1024xf16>, %b: tensor<256x4096xf16>, %c: tensor<4096x256xf16>,
                     %d: tensor<64x384xf16>, %e: tensor<384x64xf16>, %f: tensor<4x64x8192xf16>, %g: tensor<4x8192x64xf16>)
      -> (tensor<1024x1024xf16>, tensor<256x256xf16>, tensor<64x64xf16>, tensor<4x64x64xf16>) {
    %0 = hfusion.matmul %a, %a : (tensor<1024x1024xf16>, tensor<1024x1024xf16>) -> tensor<1024x1024xf16>
    %1 = hfusion.matmul %b, %c : (tensor<256x4096xf16>, tensor<4096x256xf16>) -> tensor<256x256xf16>
    %2 = hfusion.matmul %d, %e : (tensor<64x384xf16>, tensor<384x64xf16>) -> tensor<64x64xf16>
    %3 = hfusion.batch_matmul %f, %g : (tensor<4x64x8192xf16>, tensor<4x8192x64xf16>) -> tensor<4x64x64xf16>
    func.return %0, %1, %2, %3 : tensor<1024x1024xf16>, tensor<256x256xf16>, tensor<64x64xf16>, tensor<4x64x64xf16>
  }
}

// -----

// symbolic M: no static chunk count to weigh; left alone.
// CHECK-LABEL: func.func @symbolic(
// CHECK-NEXT:    hfusion.matmul
// CHECK-NEXT:    func.return
module attributes {target = "ascend910b1", symbols = {s0 = [1, 64]}} {
  func.func @symbolic(%a: tensor<s0x16384xf16>, %b: tensor<16384x64xf16>) -> (tensor<s0x64xf16>) {
    %0 = hfusion.matmul %a, %b : (tensor<s0x16384xf16>, tensor<16384x64xf16>) -> tensor<s0x64xf16>
    func.return %0 : tensor<s0x64xf16>
  }
}

// -----

// chunks=3 forces three chunks of 1,344 (4000 / 3 rounded up to 64; the last 1,312) whatever the estimate says.
// RUN: npu-opt %s -p "hfusion-split-k{chunks=3}" --split-input-file | filecheck %s --check-prefix=FORCED
// FORCED-LABEL: func.func @forced(
// FORCED-NEXT:    hfusion.batch_matmul %a, %b {k_chunk = 1344, transpose_a = false, transpose_b = false} : (tensor<48x4000xf16>, tensor<4000x40xf16>) -> tensor<3x48x40xf32>
module attributes {target = "ascend910b1"} {
  func.func @forced(%a: tensor<48x4000xf16>, %b: tensor<4000x40xf16>) -> (tensor<48x40xf16>) {
    %0 = hfusion.matmul %a, %b : (tensor<48x4000xf16>, tensor<4000x40xf16>) -> tensor<48x40xf16>
    func.return %0 : tensor<48x40xf16>
  }
}
