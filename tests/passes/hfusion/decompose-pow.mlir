// RUN: npu-opt %s -p hfusion-decompose-pow --split-input-file | filecheck %s

// x ** y = exp(y·ln|x|)·(1 + e), e = y·ln|x| − p exactly (Dekker: Veltkamp splits by 4097), p and e forced to 0
// where |x| = 1 or y = 0; for x < 0: −r when y is odd, NaN (sqrt of a negative) when y is not an integer.
// CHECK-LABEL: func.func @pow_tensor(
// CHECK:         [[ZERO:%[0-9a-z_]+]] = arith.constant {value = 0.0} : () -> f32
// CHECK-NEXT:    [[A:%[0-9a-z_]+]] = hfusion.elemwise_unary %x {fun = "abs"}
// CHECK-NEXT:    [[L:%[0-9a-z_]+]] = hfusion.elemwise_unary [[A]] {fun = "log"}
// CHECK-NEXT:    [[P:%[0-9a-z_]+]] = hfusion.elemwise_binary %y, [[L]] {fun = "mul"}
// CHECK:         arith.constant {value = 4097.0}
// CHECK:         [[ONE:%[0-9a-z_]+]] = hfusion.compare [[L]], [[ZERO]] {predicate = "eq"}
// CHECK-NEXT:    [[Y0:%[0-9a-z_]+]] = hfusion.compare %y, [[ZERO]] {predicate = "eq"}
// CHECK-NEXT:    [[P1:%[0-9a-z_]+]] = hfusion.select [[ONE]], [[ZERO]], [[P]]
// CHECK-NEXT:    [[E1:%[0-9a-z_]+]] = hfusion.select [[ONE]], [[ZERO]], {{%[0-9a-z_]+}}
// CHECK-NEXT:    [[P2:%[0-9a-z_]+]] = hfusion.select [[Y0]], [[ZERO]], [[P1]]
// CHECK-NEXT:    [[E2:%[0-9a-z_]+]] = hfusion.select [[Y0]], [[ZERO]], [[E1]]
// CHECK-NEXT:    [[EXP:%[0-9a-z_]+]] = hfusion.elemwise_unary [[P2]] {fun = "exp"}
// CHECK-NEXT:    [[FIX:%[0-9a-z_]+]] = hfusion.elemwise_binary [[EXP]], [[E2]] {fun = "mul"}
// CHECK-NEXT:    [[OK:%[0-9a-z_]+]] = hfusion.compare [[FIX]], [[FIX]] {predicate = "eq"}
// CHECK-NEXT:    [[SUM:%[0-9a-z_]+]] = hfusion.elemwise_binary [[EXP]], [[FIX]] {fun = "add"}
// CHECK-NEXT:    [[R:%[0-9a-z_]+]] = hfusion.select [[OK]], [[SUM]], [[EXP]]
// CHECK:         [[ODD:%[0-9a-z_]+]] = hfusion.compare {{.*}} {predicate = "ne"}
// CHECK:         [[NAN:%[0-9a-z_]+]] = hfusion.elemwise_unary {{.*}} {fun = "sqrt"}
// CHECK:         [[NEG:%[0-9a-z_]+]] = hfusion.compare %x, [[ZERO]] {predicate = "lt"}
// CHECK-NEXT:    [[OUT:%[0-9a-z_]+]] = hfusion.select [[NEG]], {{.*}}, [[R]] : (tensor<s0x8xi1>, tensor<s0x8xf32>, tensor<s0x8xf32>) -> tensor<s0x8xf32>
// CHECK-NEXT:    func.return [[OUT]]
// CHECK-NOT:     fun = "pow"
module attributes {symbols = {s0 = [1, 64]}} {
  func.func @pow_tensor(%x: tensor<s0x8xf32>, %y: tensor<s0x8xf32>) -> tensor<s0x8xf32> {
    %0 = hfusion.elemwise_binary %x, %y {fun = "pow"} : (tensor<s0x8xf32>, tensor<s0x8xf32>) -> tensor<s0x8xf32>
    func.return %0 : tensor<s0x8xf32>
  }
}

// -----

// f16 computes in f32 between casts; a constant exponent stays a pow (codegen's sequences).
// CHECK-LABEL: func.func @pow_f16(
// CHECK-NEXT:    %c = arith.constant
// CHECK-NEXT:    [[XW:%[0-9a-z_]+]] = hfusion.cast %x {round_mode = "rint"} : (tensor<16xf16>) -> tensor<16xf32>
// CHECK-NEXT:    [[YW:%[0-9a-z_]+]] = hfusion.cast %y {round_mode = "rint"} : (tensor<16xf16>) -> tensor<16xf32>
// CHECK:         [[OUT:%[0-9a-z_]+]] = hfusion.cast {{.*}} {round_mode = "rint"} : (tensor<16xf32>) -> tensor<16xf16>
// CHECK-NEXT:    [[C:%[0-9a-z_]+]] = hfusion.elemwise_binary [[OUT]], %c {fun = "pow"} : (tensor<16xf16>, f16) -> tensor<16xf16>
// CHECK-NEXT:    func.return [[C]]
module {
  func.func @pow_f16(%x: tensor<16xf16>, %y: tensor<16xf16>) -> tensor<16xf16> {
    %c = arith.constant {value = 3.0} : () -> f16
    %0 = hfusion.elemwise_binary %x, %y {fun = "pow"} : (tensor<16xf16>, tensor<16xf16>) -> tensor<16xf16>
    %1 = hfusion.elemwise_binary %0, %c {fun = "pow"} : (tensor<16xf16>, f16) -> tensor<16xf16>
    func.return %1 : tensor<16xf16>
  }
}
