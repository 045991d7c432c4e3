// RUN: npu-opt %s -p hfusion-pad-matmul-output --split-input-file | filecheck %s

// An LM head, x @ W.t() with 50,257 f16 columns: rows of 100,514 B are not whole 32-B blocks (bands of 16 rows, 8 of
// 24 cube cores, each reading all of W). Padded with 15 zero columns to 50,272 (whole blocks: column tiles on every
// core), then sliced back; W is read in place (transpose flag kept, no copy).
// CHECK-LABEL: func.func @lm_head(
// CHECK-NEXT:    [[P:%[0-9a-z_]+]] = hfusion.matmul %x, %w {pad_n = 15, transpose_a = false, transpose_b = true} : (tensor<128x768xf16>, tensor<50257x768xf16>) -> tensor<128x50272xf16>
// CHECK-NEXT:    [[C:%[0-9a-z_]+]] = hfusion.slice [[P]] {offsets = [0, 0], sizes = [128, 50257], strides = [1, 1]} : (tensor<128x50272xf16>) -> tensor<128x50257xf16>
// CHECK-NEXT:    func.return [[C]]
module attributes {target = "ascend910b1"} {
  func.func @lm_head(%x: tensor<128x768xf16>, %w: tensor<50257x768xf16>) -> (tensor<128x50257xf16>) {
    %0 = hfusion.matmul %x, %w {transpose_b = true} : (tensor<128x768xf16>, tensor<50257x768xf16>) -> tensor<128x50257xf16>
    func.return %0 : tensor<128x50257xf16>
  }
}

// -----

// An f32 result pads to whole blocks of 8 columns: 1,001 -> 1,008.
// CHECK-LABEL: func.func @f32_result(
// CHECK-NEXT:    [[P:%[0-9a-z_]+]] = hfusion.matmul %a, %b {pad_n = 7, transpose_a = false, transpose_b = false} : (tensor<512x1024xf16>, tensor<1024x1001xf16>) -> tensor<512x1008xf32>
// CHECK-NEXT:    hfusion.slice [[P]] {offsets = [0, 0], sizes = [512, 1001], strides = [1, 1]} : (tensor<512x1008xf32>) -> tensor<512x1001xf32>
module attributes {target = "ascend910b1"} {
  func.func @f32_result(%a: tensor<512x1024xf16>, %b: tensor<1024x1001xf16>) -> (tensor<512x1001xf32>) {
    %0 = hfusion.matmul %a, %b : (tensor<512x1024xf16>, tensor<1024x1001xf16>) -> tensor<512x1001xf32>
    func.return %0 : tensor<512x1001xf32>
  }
}

// -----

// Left alone: rows of whole blocks (1024 columns), 77x1000x333 (five bands of 16 rows, 13,166 cycles estimated, cost
// less than the padded product and the slice kernel with its launch, 6,506 + 11,065), a batch_matmul, a symbolic M.
// CHECK-LABEL: func.func @unpadded(
// CHECK-NOT:     pad_n
// CHECK-NOT:     hfusion.slice
// CHECK:         func.return
module attributes {target = "ascend910b1", symbols = {s0 = [1, 4096]}} {
  func.func @unpadded(%a: tensor<1024x1024xf16>, %b: tensor<77x1000xf16>, %c: tensor<1000x333xf16>,
                      %d: tensor<4x64x96xf16>, %e: tensor<4x96x333xf16>, %f: tensor<s0x768xf16>, %w: tensor<768x1000xf16>)
      -> (tensor<1024x1024xf16>, tensor<77x333xf16>, tensor<4x64x333xf16>, tensor<s0x1000xf16>) {
    %0 = hfusion.matmul %a, %a : (tensor<1024x1024xf16>, tensor<1024x1024xf16>) -> tensor<1024x1024xf16>
    %1 = hfusion.matmul %b, %c : (tensor<77x1000xf16>, tensor<1000x333xf16>) -> tensor<77x333xf16>
    %2 = hfusion.batch_matmul %d, %e : (tensor<4x64x96xf16>, tensor<4x96x333xf16>) -> tensor<4x64x333xf16>
    %3 = hfusion.matmul %f, %w : (tensor<s0x768xf16>, tensor<768x1000xf16>) -> tensor<s0x1000xf16>
    func.return %0, %1, %2, %3 : tensor<1024x1024xf16>, tensor<77x333xf16>, tensor<4x64x333xf16>, tensor<s0x1000xf16>
  }
}
