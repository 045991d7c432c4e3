// RUN: npu-opt %s -p hfusion-legalize-int-sums --split-input-file | filecheck %s

// A count of bools (mask.sum(), cross_entropy's non-ignored rows): summed in f32, exact for up to 2^24 elements,
// then cast once.
// CHECK-LABEL: func.func @count(
// CHECK-NEXT:    [[C:%[0-9a-z_]+]] = hfusion.cast %m {round_mode = "rint"} : (tensor<4096xi1>) -> tensor<4096xi64>
// CHECK-NEXT:    [[F:%[0-9a-z_]+]] = hfusion.cast %m {round_mode = "rint"} : (tensor<4096xi1>) -> tensor<4096xf32>
// CHECK-NEXT:    [[S:%[0-9a-z_]+]] = hfusion.reduce [[F]] {dims = [0], kind = "sum"} : (tensor<4096xf32>) -> tensor<f32>
// CHECK-NEXT:    [[I:%[0-9a-z_]+]] = hfusion.cast [[S]] {round_mode = "rint"} : (tensor<f32>) -> tensor<i64>
// CHECK-NEXT:    func.return [[I]]
module {
  func.func @count(%m: tensor<4096xi1>) -> (tensor<i64>) {
    %0 = hfusion.cast %m : (tensor<4096xi1>) -> tensor<4096xi64>
    %1 = hfusion.reduce %0 {dims = [0], kind = "sum"} : (tensor<4096xi64>) -> tensor<i64>
    func.return %1 : tensor<i64>
  }
}

// -----

// i8 rows of s0 <= 1024 summed along them: 1024 * 128 <= 2^24 (a dynamic dim with a small enough upper bound).
// CHECK-LABEL: func.func @bounded_rows(
// CHECK:         hfusion.reduce {{.*}} : (tensor<8xs0xf32>) -> tensor<8xf32>
// CHECK-NEXT:    hfusion.cast {{.*}} : (tensor<8xf32>) -> tensor<8xi32>
module attributes {symbols = {s0 = [1, 1024]}} {
  func.func @bounded_rows(%x: tensor<8xs0xi8>) -> (tensor<8xi32>) {
    %0 = hfusion.cast %x : (tensor<8xs0xi8>) -> tensor<8xs0xi32>
    %1 = hfusion.reduce %0 {dims = [1], kind = "sum"} : (tensor<8xs0xi32>) -> tensor<8xi32>
    func.return %1 : tensor<8xi32>
  }
}

// -----

// Not exact in f32, or not a sum of small integers: unchanged. 2^24 + 1 bools; a symbol with no upper bound; i16
// over 1024 elements (2^25); an i32 source; a max.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT:     f32
// CHECK:         func.return
module attributes {symbols = {s0 = [2, 9223372036854775807]}} {
  func.func @kept(%a: tensor<16777217xi1>, %b: tensor<s0xi1>, %c: tensor<1024xi16>, %d: tensor<8xi32>, %e: tensor<8xi1>) -> (tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>) {
    %0 = hfusion.cast %a : (tensor<16777217xi1>) -> tensor<16777217xi64>
    %1 = hfusion.reduce %0 {dims = [0], kind = "sum"} : (tensor<16777217xi64>) -> tensor<i64>
    %2 = hfusion.cast %b : (tensor<s0xi1>) -> tensor<s0xi64>
    %3 = hfusion.reduce %2 {dims = [0], kind = "sum"} : (tensor<s0xi64>) -> tensor<i64>
    %4 = hfusion.cast %c : (tensor<1024xi16>) -> tensor<1024xi64>
    %5 = hfusion.reduce %4 {dims = [0], kind = "sum"} : (tensor<1024xi64>) -> tensor<i64>
    %6 = hfusion.cast %d : (tensor<8xi32>) -> tensor<8xi64>
    %7 = hfusion.reduce %6 {dims = [0], kind = "sum"} : (tensor<8xi64>) -> tensor<i64>
    %8 = hfusion.cast %e : (tensor<8xi1>) -> tensor<8xi64>
    %9 = hfusion.reduce %8 {dims = [0], kind = "max"} : (tensor<8xi64>) -> tensor<i64>
    func.return %1, %3, %5, %7, %9 : tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>
  }
}
