// RUN: npu-opt %s -p hfusion-split-reductions --split-input-file | filecheck %s

// x.sum() over a million elements: 1024 partial rows of 1024 (128 work items of 8 rows, one 32-B block of f32
// partial sums each: 3 on the busiest of 48 cores), then one sum.
// CHECK-LABEL: func.func @full_sum(
// CHECK-NEXT:    [[V:%[0-9a-z_]+]] = hfusion.reshape %x : (tensor<256x4096xf32>) -> tensor<1024x1024xf32>
// CHECK-NEXT:    [[P:%[0-9a-z_]+]] = hfusion.reduce [[V]] {dims = [1], kind = "sum"} : (tensor<1024x1024xf32>) -> tensor<1024xf32>
// CHECK-NEXT:    [[S:%[0-9a-z_]+]] = hfusion.reduce [[P]] {dims = [0], kind = "sum"} : (tensor<1024xf32>) -> tensor<f32>
// CHECK-NEXT:    func.return [[S]]
module attributes {target = "ascend910b1"} {
  func.func @full_sum(%x: tensor<256x4096xf32>) -> (tensor<f32>) {
    %0 = hfusion.reduce %x {dims = [0, 1], kind = "sum"} : (tensor<256x4096xf32>) -> tensor<f32>
    func.return %0 : tensor<f32>
  }
}

// -----

// The split rows are the tensor's own rows: no reshape, the partial sums reduce the last dim.
// CHECK-LABEL: func.func @own_rows(
// CHECK-NEXT:    [[P:%[0-9a-z_]+]] = hfusion.reduce %x {dims = [1], kind = "sum"} : (tensor<1024x1024xf32>) -> tensor<1024xf32>
// CHECK-NEXT:    [[S:%[0-9a-z_]+]] = hfusion.reduce [[P]] {dims = [0], kind = "sum"} : (tensor<1024xf32>) -> tensor<f32>
// CHECK-NEXT:    func.return [[S]]
module attributes {target = "ascend910b1"} {
  func.func @own_rows(%x: tensor<1024x1024xf32>) -> (tensor<f32>) {
    %0 = hfusion.reduce %x {dims = [0, 1], kind = "sum"} : (tensor<1024x1024xf32>) -> tensor<f32>
    func.return %0 : tensor<f32>
  }
}

// -----

// amax over 4 long f16 rows: each split in 128 rows of 2048 (32 work items of 16 rows, one 32-B block of f16
// maxima each), the kept dim stays leading.
// CHECK-LABEL: func.func @row_max(
// CHECK-NEXT:    [[V:%[0-9a-z_]+]] = hfusion.reshape %x : (tensor<4x262144xf16>) -> tensor<4x128x2048xf16>
// CHECK-NEXT:    [[P:%[0-9a-z_]+]] = hfusion.reduce [[V]] {dims = [2], kind = "max"} : (tensor<4x128x2048xf16>) -> tensor<4x128xf16>
// CHECK-NEXT:    [[M:%[0-9a-z_]+]] = hfusion.reduce [[P]] {dims = [1], kind = "max"} : (tensor<4x128xf16>) -> tensor<4xf16>
// CHECK-NEXT:    func.return [[M]]
module attributes {target = "ascend910b1"} {
  func.func @row_max(%x: tensor<4x262144xf16>) -> (tensor<4xf16>) {
    %0 = hfusion.reduce %x {dims = [1], kind = "max"} : (tensor<4x262144xf16>) -> tensor<4xf16>
    func.return %0 : tensor<4xf16>
  }
}

// -----

// (x * y).sum(): the product feeding only the sum is rebuilt at the split shape from reshaped inputs; the old one
// is gone.
// CHECK-LABEL: func.func @chain(
// CHECK-NEXT:    [[X:%[0-9a-z_]+]] = hfusion.reshape %x : (tensor<256x4096xf32>) -> tensor<1024x1024xf32>
// CHECK-NEXT:    [[Y:%[0-9a-z_]+]] = hfusion.reshape %y : (tensor<256x4096xf32>) -> tensor<1024x1024xf32>
// CHECK-NEXT:    [[M:%[0-9a-z_]+]] = hfusion.elemwise_binary [[X]], [[Y]] {fun = "mul"} : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
// CHECK-NEXT:    [[P:%[0-9a-z_]+]] = hfusion.reduce [[M]] {dims = [1], kind = "sum"} : (tensor<1024x1024xf32>) -> tensor<1024xf32>
// CHECK-NEXT:    hfusion.reduce [[P]] {dims = [0], kind = "sum"} : (tensor<1024xf32>) -> tensor<f32>
// CHECK-NOT:     tensor<256x4096xf32>)
// CHECK:         func.return
module attributes {target = "ascend910b1"} {
  func.func @chain(%x: tensor<256x4096xf32>, %y: tensor<256x4096xf32>) -> (tensor<f32>) {
    %0 = hfusion.elemwise_binary %x, %y {fun = "mul"} : (tensor<256x4096xf32>, tensor<256x4096xf32>) -> tensor<256x4096xf32>
    %1 = hfusion.reduce %0 {dims = [0, 1], kind = "sum"} : (tensor<256x4096xf32>) -> tensor<f32>
    func.return %1 : tensor<f32>
  }
}

// -----

// A softmax's sum over 4 long rows, broadcast back over them (a row kernel: one row per core unsplit): 1024 rows
// of 1024, the busiest core's 24 rows 9% of a row of 262144. exp(x - max) is rebuilt at the split shape, the row
// max broadcast over the split rows (it stays one value per row); the original exp stays for the division.
// CHECK-LABEL: func.func @row_chain(
// CHECK:         [[X:%[0-9a-z_]+]] = hfusion.reshape %x : (tensor<4x262144xf32>) -> tensor<4x256x1024xf32>
// CHECK-NEXT:    [[B:%[0-9a-z_]+]] = hfusion.broadcast %m {dims = [1, 2]} : (tensor<4xf32>) -> tensor<4x256x1024xf32>
// CHECK-NEXT:    [[D:%[0-9a-z_]+]] = hfusion.elemwise_binary [[X]], [[B]] {fun = "sub"} : (tensor<4x256x1024xf32>, tensor<4x256x1024xf32>) -> tensor<4x256x1024xf32>
// CHECK-NEXT:    [[E:%[0-9a-z_]+]] = hfusion.elemwise_unary [[D]] {fun = "exp"} : (tensor<4x256x1024xf32>) -> tensor<4x256x1024xf32>
// CHECK-NEXT:    [[P:%[0-9a-z_]+]] = hfusion.reduce [[E]] {dims = [2], kind = "sum"} : (tensor<4x256x1024xf32>) -> tensor<4x256xf32>
// CHECK-NEXT:    [[S:%[0-9a-z_]+]] = hfusion.reduce [[P]] {dims = [1], kind = "sum"} : (tensor<4x256xf32>) -> tensor<4xf32>
// CHECK:         hfusion.elemwise_binary {{.*}} {fun = "div"} : (tensor<4x262144xf32>, tensor<4x262144xf32>)
module attributes {target = "ascend910b1"} {
  func.func @row_chain(%x: tensor<4x262144xf32>, %m: tensor<4xf32>) -> (tensor<4x262144xf32>) {
    %0 = hfusion.broadcast %m {dims = [1]} : (tensor<4xf32>) -> tensor<4x262144xf32>
    %1 = hfusion.elemwise_binary %x, %0 {fun = "sub"} : (tensor<4x262144xf32>, tensor<4x262144xf32>) -> tensor<4x262144xf32>
    %2 = hfusion.elemwise_unary %1 {fun = "exp"} : (tensor<4x262144xf32>) -> tensor<4x262144xf32>
    %3 = hfusion.reduce %2 {dims = [1], kind = "sum"} : (tensor<4x262144xf32>) -> tensor<4xf32>
    %4 = hfusion.broadcast %3 {dims = [1]} : (tensor<4xf32>) -> tensor<4x262144xf32>
    %5 = hfusion.elemwise_binary %2, %4 {fun = "div"} : (tensor<4x262144xf32>, tensor<4x262144xf32>) -> tensor<4x262144xf32>
    func.return %5 : tensor<4x262144xf32>
  }
}

// -----

// A column sum (a bias gradient over 8192 rows of 128 f32): 128 slices of 64 rows, a work item per 512-B stretch
// of a slice's rows (2·48 wanted: the smallest divisor of 8192 from 96 is 128, at most 8192 / 16).
// CHECK-LABEL: func.func @column_sum(
// CHECK-NEXT:    [[V:%[0-9a-z_]+]] = hfusion.reshape %g : (tensor<8192x128xf32>) -> tensor<128x64x128xf32>
// CHECK-NEXT:    [[P:%[0-9a-z_]+]] = hfusion.reduce [[V]] {dims = [1], kind = "sum"} : (tensor<128x64x128xf32>) -> tensor<128x128xf32>
// CHECK-NEXT:    [[S:%[0-9a-z_]+]] = hfusion.reduce [[P]] {dims = [0], kind = "sum"} : (tensor<128x128xf32>) -> tensor<128xf32>
// CHECK-NEXT:    func.return [[S]]
module attributes {target = "ascend910b1"} {
  func.func @column_sum(%g: tensor<8192x128xf32>) -> (tensor<128xf32>) {
    %0 = hfusion.reduce %g {dims = [0], kind = "sum"} : (tensor<8192x128xf32>) -> tensor<128xf32>
    func.return %0 : tensor<128xf32>
  }
}

// -----

// A layer norm's weight gradient: sum over the rows of g * (x - mean), the per-row mean broadcast along the columns
// is rebuilt from the mean reshaped to the slices' rows; a row of weights broadcast along 4 long rows likewise.
// CHECK-LABEL: func.func @broadcast_operands(
// CHECK:         [[M:%[0-9a-z_]+]] = hfusion.reshape %mean : (tensor<8192xf32>) -> tensor<128x64xf32>
// CHECK-NEXT:    [[B:%[0-9a-z_]+]] = hfusion.broadcast [[M]] {dims = [2]} : (tensor<128x64xf32>) -> tensor<128x64x128xf32>
// CHECK:         hfusion.reduce {{.*}} {dims = [1], kind = "sum"} : (tensor<128x64x128xf32>) -> tensor<128x128xf32>
// CHECK:         [[W:%[0-9a-z_]+]] = hfusion.reshape %w : (tensor<262144xf32>) -> tensor<256x1024xf32>
// CHECK-NEXT:    [[C:%[0-9a-z_]+]] = hfusion.broadcast [[W]] {dims = [0]} : (tensor<256x1024xf32>) -> tensor<4x256x1024xf32>
// CHECK:         hfusion.reduce {{.*}} {dims = [2], kind = "sum"} : (tensor<4x256x1024xf32>) -> tensor<4x256xf32>
module attributes {target = "ascend910b1"} {
  func.func @broadcast_operands(%g: tensor<8192x128xf32>, %x: tensor<8192x128xf32>, %mean: tensor<8192xf32>, %y: tensor<4x262144xf32>, %w: tensor<262144xf32>) -> (tensor<128xf32>, tensor<4xf32>) {
    %0 = hfusion.broadcast %mean {dims = [1]} : (tensor<8192xf32>) -> tensor<8192x128xf32>
    %1 = hfusion.elemwise_binary %x, %0 {fun = "sub"} : (tensor<8192x128xf32>, tensor<8192x128xf32>) -> tensor<8192x128xf32>
    %2 = hfusion.elemwise_binary %g, %1 {fun = "mul"} : (tensor<8192x128xf32>, tensor<8192x128xf32>) -> tensor<8192x128xf32>
    %3 = hfusion.reduce %2 {dims = [0], kind = "sum"} : (tensor<8192x128xf32>) -> tensor<128xf32>
    %4 = hfusion.broadcast %w {dims = [0]} : (tensor<262144xf32>) -> tensor<4x262144xf32>
    %5 = hfusion.elemwise_binary %y, %4 {fun = "mul"} : (tensor<4x262144xf32>, tensor<4x262144xf32>) -> tensor<4x262144xf32>
    %6 = hfusion.reduce %5 {dims = [1], kind = "sum"} : (tensor<4x262144xf32>) -> tensor<4xf32>
    func.return %3, %6 : tensor<128xf32>, tensor<4xf32>
  }
}

// -----

// Dynamic rows: no static divisor to reshape by, so a full sum keeps its own rows in the partial reduction (s0 rows,
// up to unbounded); unchanged: a static tail under 1024 elements (8x256), rows bounded below 96 (s1 <= 64), a sum
// broadcast back.
// CHECK-LABEL: func.func @dynamic_rows(
// CHECK-NEXT:    [[P:%[0-9a-z_]+]] = hfusion.reduce %a {dims = [1], kind = "sum"} : (tensor<s0x4096xf32>) -> tensor<s0xf32>
// CHECK-NEXT:    hfusion.reduce [[P]] {dims = [0], kind = "sum"} : (tensor<s0xf32>) -> tensor<f32>
// CHECK-NEXT:    hfusion.reduce %b {dims = [1, 2], kind = "max"}
// CHECK-NEXT:    hfusion.reduce %c {dims = [0, 1], kind = "sum"}
// CHECK-NEXT:    hfusion.reduce %d {dims = [0, 1], kind = "sum"}
// CHECK-NEXT:    hfusion.broadcast
module attributes {target = "ascend910b1", symbols = {s0 = [2, 9223372036854775807], s1 = [2, 64]}} {
  func.func @dynamic_rows(%a: tensor<s0x4096xf32>, %b: tensor<s0x8x256xf32>, %c: tensor<s1x4096xf32>, %d: tensor<s0x4096xf32>) -> (tensor<f32>, tensor<s0xf32>, tensor<f32>, tensor<s0x4096xf32>) {
    %0 = hfusion.reduce %a {dims = [0, 1], kind = "sum"} : (tensor<s0x4096xf32>) -> tensor<f32>
    %1 = hfusion.reduce %b {dims = [1, 2], kind = "max"} : (tensor<s0x8x256xf32>) -> tensor<s0xf32>
    %2 = hfusion.reduce %c {dims = [0, 1], kind = "sum"} : (tensor<s1x4096xf32>) -> tensor<f32>
    %3 = hfusion.reduce %d {dims = [0, 1], kind = "sum"} : (tensor<s0x4096xf32>) -> tensor<f32>
    %4 = hfusion.broadcast %3 {dims = [0, 1]} : (tensor<f32>) -> tensor<s0x4096xf32>
    func.return %0, %1, %2, %4 : tensor<f32>, tensor<s0xf32>, tensor<f32>, tensor<s0x4096xf32>
  }
}

// -----

// Unchanged: fewer than 32768 elements; a dynamic dim reduced alone; a middle dim; rows enough for the cores (64 rows of 65536:
// no split halves the busiest core's 8-row block); a bool "any"; a chain reaching a computed row of weights (its
// reshape would make it a GM tensor); 24 rows of 65536 in a row kernel (the sum broadcast back): split, its busiest
// core would reduce half a row (four 8-row work items of 1024); a column sum of 32-KiB rows (48 strips of 512 B
// or more unsplit); a column sum broadcast back over columns with a 32-B strip for every core (x - x.mean(0) over
// 2048x768: one kernel reads x once).
// CHECK-LABEL: func.func @kept(
// CHECK-NOT:     hfusion.reshape
// CHECK-NOT:     _partial
// CHECK:         func.return
module attributes {target = "ascend910b1", symbols = {s0 = [2, 9223372036854775807]}} {
  func.func @kept(%a: tensor<16x1000xf32>, %b: tensor<4xs0xf32>, %c: tensor<4x65536x4xf32>, %d: tensor<512x65536xf32>, %e: tensor<4x262144xi1>, %f: tensor<262144xf32>, %g: tensor<4x262144xf32>, %h: tensor<24x65536xf32>, %i: tensor<64x8192xf32>, %j: tensor<2048x768xf32>) -> (tensor<f32>, tensor<4xf32>, tensor<4x4xf32>, tensor<512xf32>, tensor<4xi1>, tensor<4xf32>, tensor<24x65536xf32>, tensor<8192xf32>, tensor<2048x768xf32>) {
    %0 = hfusion.reduce %a {dims = [0, 1], kind = "sum"} : (tensor<16x1000xf32>) -> tensor<f32>
    %1 = hfusion.reduce %b {dims = [1], kind = "sum"} : (tensor<4xs0xf32>) -> tensor<4xf32>
    %2 = hfusion.reduce %c {dims = [1], kind = "sum"} : (tensor<4x65536x4xf32>) -> tensor<4x4xf32>
    %3 = hfusion.reduce %d {dims = [1], kind = "sum"} : (tensor<512x65536xf32>) -> tensor<512xf32>
    %4 = hfusion.reduce %e {dims = [1], kind = "any"} : (tensor<4x262144xi1>) -> tensor<4xi1>
    %w = hfusion.elemwise_unary %f {fun = "exp"} : (tensor<262144xf32>) -> tensor<262144xf32>
    %5 = hfusion.broadcast %w {dims = [0]} : (tensor<262144xf32>) -> tensor<4x262144xf32>
    %6 = hfusion.elemwise_binary %g, %5 {fun = "mul"} : (tensor<4x262144xf32>, tensor<4x262144xf32>) -> tensor<4x262144xf32>
    %7 = hfusion.reduce %6 {dims = [1], kind = "sum"} : (tensor<4x262144xf32>) -> tensor<4xf32>
    %8 = hfusion.reduce %h {dims = [1], kind = "sum"} : (tensor<24x65536xf32>) -> tensor<24xf32>
    %9 = hfusion.broadcast %8 {dims = [1]} : (tensor<24xf32>) -> tensor<24x65536xf32>
    %10 = hfusion.elemwise_binary %h, %9 {fun = "div"} : (tensor<24x65536xf32>, tensor<24x65536xf32>) -> tensor<24x65536xf32>
    %11 = hfusion.reduce %i {dims = [0], kind = "sum"} : (tensor<64x8192xf32>) -> tensor<8192xf32>
    %12 = hfusion.reduce %j {dims = [0], kind = "sum"} : (tensor<2048x768xf32>) -> tensor<768xf32>
    %13 = hfusion.broadcast %12 {dims = [0]} : (tensor<768xf32>) -> tensor<2048x768xf32>
    %14 = hfusion.elemwise_binary %j, %13 {fun = "sub"} : (tensor<2048x768xf32>, tensor<2048x768xf32>) -> tensor<2048x768xf32>
    func.return %0, %1, %2, %3, %4, %7, %10, %11, %14 : tensor<f32>, tensor<4xf32>, tensor<4x4xf32>, tensor<512xf32>, tensor<4xi1>, tensor<4xf32>, tensor<24x65536xf32>, tensor<8192xf32>, tensor<2048x768xf32>
  }
}

// -----

// A batch norm's statistics over 8192 rows of 128 f32 (16 column strips of 32 B, fewer than the cores): the mean's
// sum splits; the variance's sum of (x - mean)^2 splits too, its broadcast of the mean (a reduction's result, a GM
// tensor to the partial kernel) rebuilt over the slices.
// CHECK-LABEL: func.func @batch_norm_stats(
// CHECK:         [[XS:%[0-9a-z_]+]] = hfusion.reshape [[X:%[0-9a-z_]+]] : (tensor<8192x128xf32>) -> tensor<{{[0-9]+}}x{{[0-9]+}}x128xf32>
// CHECK:         [[P:%[0-9a-z_]+]] = hfusion.reduce [[XS]] {dims = [1], kind = "sum"}
// CHECK:         [[S:%[0-9a-z_]+]] = hfusion.reduce [[P]] {dims = [0], kind = "sum"} : (tensor<{{[0-9]+}}x128xf32>) -> tensor<128xf32>
// CHECK:         [[M:%[0-9a-z_]+]] = hfusion.elemwise_binary [[S]]
// CHECK:         hfusion.broadcast [[M]] {dims = [0, 1]} : (tensor<128xf32>) -> tensor<{{[0-9]+}}x{{[0-9]+}}x128xf32>
// CHECK:         hfusion.reduce {{%[0-9a-z_]+}} {dims = [1], kind = "sum"}
// CHECK:         hfusion.reduce {{%[0-9a-z_]+}} {dims = [0], kind = "sum"} : (tensor<{{[0-9]+}}x128xf32>) -> tensor<128xf32>
module attributes {target = "ascend910b1"} {
  func.func @batch_norm_stats(%x: tensor<8192x128xf32>) -> (tensor<8192x128xf32>, tensor<128xf32>) {
    %n = arith.constant {value = 0.0001220703125} : () -> f32
    %0 = hfusion.reduce %x {dims = [0], kind = "sum"} : (tensor<8192x128xf32>) -> tensor<128xf32>
    %1 = hfusion.elemwise_binary %0, %n {fun = "mul"} : (tensor<128xf32>, f32) -> tensor<128xf32>
    %2 = hfusion.broadcast %1 {dims = [0]} : (tensor<128xf32>) -> tensor<8192x128xf32>
    %3 = hfusion.elemwise_binary %x, %2 {fun = "sub"} : (tensor<8192x128xf32>, tensor<8192x128xf32>) -> tensor<8192x128xf32>
    %4 = hfusion.elemwise_binary %3, %3 {fun = "mul"} : (tensor<8192x128xf32>, tensor<8192x128xf32>) -> tensor<8192x128xf32>
    %5 = hfusion.reduce %4 {dims = [0], kind = "sum"} : (tensor<8192x128xf32>) -> tensor<128xf32>
    func.return %3, %5 : tensor<8192x128xf32>, tensor<128xf32>
  }
}

// -----

// A batch norm's statistics over [N, C, H*W] (dims 0 and 2, not one block): the trailing block (H*W, 256
// elements) first, as rows of every (n, c), then dim 0 of those partial sums; no reshape. A trailing block of 16
// elements stays one reduction.
// CHECK-LABEL: func.func @trailing_block_first(
// CHECK-SAME:    [[X:%[0-9a-z_]+]]: tensor<16x64x256xf32>, [[Y:%[0-9a-z_]+]]: tensor<64x64x16xf32>
// CHECK-NOT:     hfusion.reshape
// CHECK:         [[P:%[0-9a-z_]+]] = hfusion.reduce [[X]] {dims = [2], kind = "sum"} : (tensor<16x64x256xf32>) -> tensor<16x64xf32>
// CHECK:         hfusion.reduce [[P]] {dims = [0], kind = "sum"} : (tensor<16x64xf32>) -> tensor<64xf32>
// CHECK:         hfusion.reduce [[Y]] {dims = [0, 2], kind = "max"} : (tensor<64x64x16xf32>) -> tensor<64xf32>
module attributes {target = "ascend910b1"} {
  func.func @trailing_block_first(%x: tensor<16x64x256xf32>, %y: tensor<64x64x16xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
    %0 = hfusion.reduce %x {dims = [0, 2], kind = "sum"} : (tensor<16x64x256xf32>) -> tensor<64xf32>
    %1 = hfusion.reduce %y {dims = [0, 2], kind = "max"} : (tensor<64x64x16xf32>) -> tensor<64xf32>
    func.return %0, %1 : tensor<64xf32>, tensor<64xf32>
  }
}
