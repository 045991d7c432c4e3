// RUN: npu-opt %s -p hfusion-legalize-casts --split-input-file | filecheck %s

// f16 <-> bf16 go through f32 (the widening is exact, the narrowing rounds once); a vconv-able cast stays.
// CHECK-LABEL: func.func @through_f32(
// CHECK-NEXT:    [[W:%[0-9a-z_]+]] = hfusion.cast %h {round_mode = "rint"} : (tensor<s0x8xf16>) -> tensor<s0x8xf32>
// CHECK-NEXT:    [[B:%[0-9a-z_]+]] = hfusion.cast [[W]] {round_mode = "rint"} : (tensor<s0x8xf32>) -> tensor<s0x8xbf16>
// CHECK-NEXT:    [[V:%[0-9a-z_]+]] = hfusion.cast %b {round_mode = "rint"} : (tensor<s0x8xbf16>) -> tensor<s0x8xf32>
// CHECK-NEXT:    [[H:%[0-9a-z_]+]] = hfusion.cast [[V]] {round_mode = "rint"} : (tensor<s0x8xf32>) -> tensor<s0x8xf16>
// CHECK-NEXT:    [[F:%[0-9a-z_]+]] = hfusion.cast %h {round_mode = "rint"} : (tensor<s0x8xf16>) -> tensor<s0x8xf32>
// CHECK-NEXT:    [[I:%[0-9a-z_]+]] = hfusion.cast [[F]] {round_mode = "trunc"} : (tensor<s0x8xf32>) -> tensor<s0x8xi64>
// CHECK-NEXT:    [[K:%[0-9a-z_]+]] = hfusion.cast %h {{.*}}: (tensor<s0x8xf16>) -> tensor<s0x8xf32>
// CHECK-NEXT:    func.return [[B]], [[H]], [[I]], [[K]]
module attributes {symbols = {s0 = [1, 64]}} {
  func.func @through_f32(%h: tensor<s0x8xf16>, %b: tensor<s0x8xbf16>) -> (tensor<s0x8xbf16>, tensor<s0x8xf16>, tensor<s0x8xi64>, tensor<s0x8xf32>) {
    %0 = hfusion.cast %h : (tensor<s0x8xf16>) -> tensor<s0x8xbf16>
    %1 = hfusion.cast %b : (tensor<s0x8xbf16>) -> tensor<s0x8xf16>
    %2 = hfusion.cast %h {round_mode = "trunc"} : (tensor<s0x8xf16>) -> tensor<s0x8xi64>
    %3 = hfusion.cast %h : (tensor<s0x8xf16>) -> tensor<s0x8xf32>
    func.return %0, %1, %2, %3 : tensor<s0x8xbf16>, tensor<s0x8xf16>, tensor<s0x8xi64>, tensor<s0x8xf32>
  }
}

// -----

// i32 -> bf16 (nearest even): inexact ? round-half-away(t) : rint(t) with t = trunc_f32(x); inexact in f32
// exactly when floor_f32(x) != ceil_f32(x). The select runs on f32 (exact widenings of the two candidates).
// CHECK-LABEL: func.func @int_to_bf16(
// CHECK-NEXT:    [[T:%[0-9a-z_]+]] = hfusion.cast %x {round_mode = "trunc"} : (tensor<16xi32>) -> tensor<16xf32>
// CHECK-NEXT:    [[LO:%[0-9a-z_]+]] = hfusion.cast %x {round_mode = "floor"} : (tensor<16xi32>) -> tensor<16xf32>
// CHECK-NEXT:    [[HI:%[0-9a-z_]+]] = hfusion.cast %x {round_mode = "ceil"} : (tensor<16xi32>) -> tensor<16xf32>
// CHECK-NEXT:    [[NE:%[0-9a-z_]+]] = hfusion.compare [[LO]], [[HI]] {predicate = "ne"} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xi1>
// CHECK-NEXT:    [[A:%[0-9a-z_]+]] = hfusion.cast [[T]] {round_mode = "round"} : (tensor<16xf32>) -> tensor<16xbf16>
// CHECK-NEXT:    [[AW:%[0-9a-z_]+]] = hfusion.cast [[A]] {round_mode = "rint"} : (tensor<16xbf16>) -> tensor<16xf32>
// CHECK-NEXT:    [[E:%[0-9a-z_]+]] = hfusion.cast [[T]] {round_mode = "rint"} : (tensor<16xf32>) -> tensor<16xbf16>
// CHECK-NEXT:    [[EW:%[0-9a-z_]+]] = hfusion.cast [[E]] {round_mode = "rint"} : (tensor<16xbf16>) -> tensor<16xf32>
// CHECK-NEXT:    [[S:%[0-9a-z_]+]] = hfusion.select [[NE]], [[AW]], [[EW]] : (tensor<16xi1>, tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
// CHECK-NEXT:    [[R:%[0-9a-z_]+]] = hfusion.cast [[S]] {round_mode = "rint"} : (tensor<16xf32>) -> tensor<16xbf16>
// Directed modes compose exactly through f32 with the same mode; half-away through f32 trunc.
// CHECK-NEXT:    [[FL:%[0-9a-z_]+]] = hfusion.cast %y {round_mode = "floor"} : (tensor<16xi64>) -> tensor<16xf32>
// CHECK-NEXT:    [[FB:%[0-9a-z_]+]] = hfusion.cast [[FL]] {round_mode = "floor"} : (tensor<16xf32>) -> tensor<16xbf16>
// CHECK-NEXT:    [[TR:%[0-9a-z_]+]] = hfusion.cast %y {round_mode = "trunc"} : (tensor<16xi64>) -> tensor<16xf32>
// CHECK-NEXT:    [[RB:%[0-9a-z_]+]] = hfusion.cast [[TR]] {round_mode = "round"} : (tensor<16xf32>) -> tensor<16xbf16>
// CHECK-NEXT:    func.return [[R]], [[FB]], [[RB]]
module {
  func.func @int_to_bf16(%x: tensor<16xi32>, %y: tensor<16xi64>) -> (tensor<16xbf16>, tensor<16xbf16>, tensor<16xbf16>) {
    %0 = hfusion.cast %x : (tensor<16xi32>) -> tensor<16xbf16>
    %1 = hfusion.cast %y {round_mode = "floor"} : (tensor<16xi64>) -> tensor<16xbf16>
    %2 = hfusion.cast %y {round_mode = "round"} : (tensor<16xi64>) -> tensor<16xbf16>
    func.return %0, %1, %2 : tensor<16xbf16>, tensor<16xbf16>, tensor<16xbf16>
  }
}
