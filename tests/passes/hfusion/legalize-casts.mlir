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

// int -> bf16: through f32 — rint twice is torch's conversion bit for bit (c10::BFloat16 is built from a float);
// directed modes compose with the same mode; half-away goes through f32 trunc.
// CHECK-LABEL: func.func @int_to_bf16(
// CHECK-NEXT:    [[T:%[0-9a-z_]+]] = hfusion.cast %x {round_mode = "rint"} : (tensor<16xi32>) -> tensor<16xf32>
// CHECK-NEXT:    [[R:%[0-9a-z_]+]] = hfusion.cast [[T]] {round_mode = "rint"} : (tensor<16xf32>) -> tensor<16xbf16>
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
