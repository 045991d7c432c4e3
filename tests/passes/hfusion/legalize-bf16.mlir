// RUN: npu-opt %s -p hfusion-legalize-bf16 --split-input-file | filecheck %s
// RUN: npu-opt %s -p hfusion-legalize-bf16,canonicalize,cse --split-input-file | filecheck %s --check-prefix=CANON

// A chain of bf16 ops: each computes in f32 between casts; the result is rounded to bf16 after every op (torch
// eager does the same), so canonicalize keeps the f32 -> bf16 -> f32 pair between them.
// CHECK-LABEL: func.func @chain(
// CHECK-NEXT:    arith.constant {value = 2.0} : () -> bf16
// CHECK-NEXT:    [[X:%[0-9a-z_]+]] = hfusion.cast %x {{.*}}: (tensor<s0x8xbf16>) -> tensor<s0x8xf32>
// CHECK-NEXT:    [[E:%[0-9a-z_]+]] = hfusion.elemwise_unary [[X]] {fun = "exp"} : (tensor<s0x8xf32>) -> tensor<s0x8xf32>
// CHECK-NEXT:    [[EB:%[0-9a-z_]+]] = hfusion.cast [[E]] {round_mode = "rint"} : (tensor<s0x8xf32>) -> tensor<s0x8xbf16>
// CHECK-NEXT:    [[EF:%[0-9a-z_]+]] = hfusion.cast [[EB]] {{.*}}: (tensor<s0x8xbf16>) -> tensor<s0x8xf32>
// CHECK-NEXT:    [[C:%[0-9a-z_]+]] = arith.constant {value = 2.0} : () -> f32
// CHECK-NEXT:    [[M:%[0-9a-z_]+]] = hfusion.elemwise_binary [[EF]], [[C]] {fun = "mul"} : (tensor<s0x8xf32>, f32) -> tensor<s0x8xf32>
// CHECK-NEXT:    [[MB:%[0-9a-z_]+]] = hfusion.cast [[M]] {round_mode = "rint"} : (tensor<s0x8xf32>) -> tensor<s0x8xbf16>
// CHECK-NEXT:    [[MF:%[0-9a-z_]+]] = hfusion.cast [[MB]] {{.*}}: (tensor<s0x8xbf16>) -> tensor<s0x8xf32>
// CHECK-NEXT:    [[S:%[0-9a-z_]+]] = hfusion.reduce [[MF]] {dims = [1], kind = "sum"} : (tensor<s0x8xf32>) -> tensor<s0xf32>
// CHECK-NEXT:    [[SB:%[0-9a-z_]+]] = hfusion.cast [[S]] {round_mode = "rint"} : (tensor<s0xf32>) -> tensor<s0xbf16>
// Data movement stays bf16; compare computes in f32 and keeps its i1 result.
// CHECK-NEXT:    [[B:%[0-9a-z_]+]] = hfusion.broadcast [[SB]] {dims = [1]} : (tensor<s0xbf16>) -> tensor<s0x8xbf16>
// CHECK-NEXT:    [[BF:%[0-9a-z_]+]] = hfusion.cast [[B]] {{.*}}: (tensor<s0x8xbf16>) -> tensor<s0x8xf32>
// CHECK-NEXT:    [[YF:%[0-9a-z_]+]] = hfusion.cast %y {{.*}}: (tensor<s0x8xbf16>) -> tensor<s0x8xf32>
// CHECK-NEXT:    [[K:%[0-9a-z_]+]] = hfusion.compare [[BF]], [[YF]] {predicate = "gt"} : (tensor<s0x8xf32>, tensor<s0x8xf32>) -> tensor<s0x8xi1>
// CHECK-NEXT:    [[SEL:%[0-9a-z_]+]] = hfusion.select [[K]], [[MB]], %y : (tensor<s0x8xi1>, tensor<s0x8xbf16>, tensor<s0x8xbf16>) -> tensor<s0x8xbf16>
// CHECK-NEXT:    func.return [[SEL]], [[SB]] : tensor<s0x8xbf16>, tensor<s0xbf16>
// CANON-LABEL: func.func @chain(
// CANON:         hfusion.elemwise_unary
// CANON-NEXT:    hfusion.cast {{.*}}: (tensor<s0x8xf32>) -> tensor<s0x8xbf16>
// CANON-NEXT:    hfusion.cast {{.*}}: (tensor<s0x8xbf16>) -> tensor<s0x8xf32>
// CANON-NEXT:    arith.constant {value = 2.0} : () -> f32
// CANON-NEXT:    hfusion.elemwise_binary
module attributes {symbols = {s0 = [1, 64]}} {
  func.func @chain(%x: tensor<s0x8xbf16>, %y: tensor<s0x8xbf16>) -> (tensor<s0x8xbf16>, tensor<s0xbf16>) {
    %c = arith.constant {value = 2.0} : () -> bf16
    %e = hfusion.elemwise_unary %x {fun = "exp"} : (tensor<s0x8xbf16>) -> tensor<s0x8xbf16>
    %m = hfusion.elemwise_binary %e, %c {fun = "mul"} : (tensor<s0x8xbf16>, bf16) -> tensor<s0x8xbf16>
    %s = hfusion.reduce %m {dims = [1], kind = "sum"} : (tensor<s0x8xbf16>) -> tensor<s0xbf16>
    %b = hfusion.broadcast %s {dims = [1]} : (tensor<s0xbf16>) -> tensor<s0x8xbf16>
    %k = hfusion.compare %b, %y {predicate = "gt"} : (tensor<s0x8xbf16>, tensor<s0x8xbf16>) -> tensor<s0x8xi1>
    %sel = hfusion.select %k, %m, %y : (tensor<s0x8xi1>, tensor<s0x8xbf16>, tensor<s0x8xbf16>) -> tensor<s0x8xbf16>
    func.return %sel, %s : tensor<s0x8xbf16>, tensor<s0xbf16>
  }
}

// -----

// Widening then narrowing back is exact and folds; the f32 -> f16 cast and f32/f16 ops are left alone.
// CHECK-LABEL: func.func @widened(
// CHECK:         hfusion.cast %x {{.*}}: (tensor<16xbf16>) -> tensor<16xf32>
// CHECK:         hfusion.elemwise_binary {{.*}} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
// CHECK:         hfusion.elemwise_unary {{.*}} : (tensor<16xf16>) -> tensor<16xf16>
// CANON-LABEL: func.func @widened(
// CANON-NEXT:    [[W:%[0-9a-z_]+]] = hfusion.cast %x {{.*}}: (tensor<16xbf16>) -> tensor<16xf32>
// CANON-NEXT:    [[A:%[0-9a-z_]+]] = hfusion.elemwise_binary [[W]], [[W]] {fun = "add"} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
// CANON-NEXT:    [[R:%[0-9a-z_]+]] = hfusion.cast [[A]] {round_mode = "rint"} : (tensor<16xf32>) -> tensor<16xbf16>
module {
  func.func @widened(%x: tensor<16xbf16>, %h: tensor<16xf16>) -> (tensor<16xbf16>, tensor<16xf16>) {
    %w = hfusion.cast %x : (tensor<16xbf16>) -> tensor<16xf32>
    %n = hfusion.cast %w : (tensor<16xf32>) -> tensor<16xbf16>
    %a = hfusion.elemwise_binary %n, %n {fun = "add"} : (tensor<16xbf16>, tensor<16xbf16>) -> tensor<16xbf16>
    %e = hfusion.elemwise_unary %h {fun = "exp"} : (tensor<16xf16>) -> tensor<16xf16>
    func.return %a, %e : tensor<16xbf16>, tensor<16xf16>
  }
}

// -----

// A bf16 arange (CreateVecIndex has no bf16) becomes an f32 arange rounded to bf16 once.
// CHECK-LABEL: func.func @arange(
// CHECK:         [[A:%[0-9a-z_]+]] = hfusion.arange {start = 0, step = 3} : () -> tensor<16xf32>
// CHECK-NEXT:    [[R:%[0-9a-z_]+]] = hfusion.cast [[A]] {round_mode = "rint"} : (tensor<16xf32>) -> tensor<16xbf16>
// CHECK-NEXT:    func.return [[R]]
module {
  func.func @arange() -> (tensor<16xbf16>) {
    %0 = hfusion.arange {start = 0, step = 3} : () -> tensor<16xbf16>
    func.return %0 : tensor<16xbf16>
  }
}

// -----

// f16 ops torch computes in f32 and rounds once widen too: a sum (torch accumulates half in float), gelu's tanh
// form (a composite sequence that would round each step in f16), floor (the rounding vconv is f32 -> f32 only).
// A max reduction and exp (exact / one instruction) stay f16.
// CHECK-LABEL: func.func @f16_in_f32(
// CHECK-NEXT:    [[X:%[0-9a-z_]+]] = hfusion.cast %x {{.*}}: (tensor<4x16xf16>) -> tensor<4x16xf32>
// CHECK-NEXT:    [[S:%[0-9a-z_]+]] = hfusion.reduce [[X]] {dims = [1], kind = "sum"} : (tensor<4x16xf32>) -> tensor<4xf32>
// CHECK-NEXT:    hfusion.cast [[S]] {round_mode = "rint"} : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-NEXT:    hfusion.reduce %x {dims = [1], kind = "max"} : (tensor<4x16xf16>) -> tensor<4xf16>
// CHECK-NEXT:    [[X2:%[0-9a-z_]+]] = hfusion.cast %x {{.*}}: (tensor<4x16xf16>) -> tensor<4x16xf32>
// CHECK-NEXT:    [[G:%[0-9a-z_]+]] = hfusion.elemwise_unary [[X2]] {fun = "gelu_tanh"} : (tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:    hfusion.cast [[G]] {round_mode = "rint"} : (tensor<4x16xf32>) -> tensor<4x16xf16>
// CHECK-NEXT:    [[X3:%[0-9a-z_]+]] = hfusion.cast %x {{.*}}: (tensor<4x16xf16>) -> tensor<4x16xf32>
// CHECK-NEXT:    [[F:%[0-9a-z_]+]] = hfusion.elemwise_unary [[X3]] {fun = "floor"} : (tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:    hfusion.cast [[F]] {round_mode = "rint"} : (tensor<4x16xf32>) -> tensor<4x16xf16>
// CHECK-NEXT:    hfusion.elemwise_unary %x {fun = "exp"} : (tensor<4x16xf16>) -> tensor<4x16xf16>
module {
  func.func @f16_in_f32(%x: tensor<4x16xf16>) -> (tensor<4xf16>, tensor<4xf16>, tensor<4x16xf16>, tensor<4x16xf16>, tensor<4x16xf16>) {
    %s = hfusion.reduce %x {dims = [1], kind = "sum"} : (tensor<4x16xf16>) -> tensor<4xf16>
    %m = hfusion.reduce %x {dims = [1], kind = "max"} : (tensor<4x16xf16>) -> tensor<4xf16>
    %g = hfusion.elemwise_unary %x {fun = "gelu_tanh"} : (tensor<4x16xf16>) -> tensor<4x16xf16>
    %f = hfusion.elemwise_unary %x {fun = "floor"} : (tensor<4x16xf16>) -> tensor<4x16xf16>
    %e = hfusion.elemwise_unary %x {fun = "exp"} : (tensor<4x16xf16>) -> tensor<4x16xf16>
    func.return %s, %m, %g, %f, %e : tensor<4xf16>, tensor<4xf16>, tensor<4x16xf16>, tensor<4x16xf16>, tensor<4x16xf16>
  }
}
