// RUN: npu-opt %s -p hfusion-decompose-divmod,canonicalize,cse --split-input-file | filecheck %s

// i32 floor division: a zero divisor is replaced by 1, two f32 quotient estimates (truncated, then floored, each
// clamped below 2^31 before the conversion) are accumulated with exact integer residuals, then one step down or up
// where the residual r/b is < 0 or >= 1; a zero divisor gives 0.
// CHECK-LABEL: func.func @int_floordiv(
// CHECK:         [[NZ:%[0-9a-z_]+]] = hfusion.compare %b, [[ZERO:%[0-9a-z_]+]] {predicate = "ne"}
// CHECK:         [[SAFE:%[0-9a-z_]+]] = hfusion.select [[NZ]], %b, [[ONE:%[0-9a-z_]+]] : (tensor<8xi1>, tensor<8xi32>, i32)
// CHECK-NEXT:    [[FB:%[0-9a-z_]+]] = hfusion.cast [[SAFE]] {round_mode = "rint"} : (tensor<8xi32>) -> tensor<8xf32>
// CHECK-NEXT:    [[FA:%[0-9a-z_]+]] = hfusion.cast %a {round_mode = "rint"} : (tensor<8xi32>) -> tensor<8xf32>
// CHECK-NEXT:    [[Z1:%[0-9a-z_]+]] = hfusion.elemwise_binary [[FA]], [[FB]] {fun = "div"}
// CHECK-NEXT:    [[LO:%[0-9a-z_]+]] = arith.constant {value = -2147483520.0} : () -> f32
// CHECK-NEXT:    [[Z1LO:%[0-9a-z_]+]] = hfusion.elemwise_binary [[Z1]], [[LO]] {fun = "max"}
// CHECK-NEXT:    [[HI:%[0-9a-z_]+]] = arith.constant {value = 2147483520.0} : () -> f32
// CHECK-NEXT:    [[Z1C:%[0-9a-z_]+]] = hfusion.elemwise_binary [[Z1LO]], [[HI]] {fun = "min"}
// CHECK-NEXT:    [[Q1:%[0-9a-z_]+]] = hfusion.cast [[Z1C]] {round_mode = "trunc"} : (tensor<8xf32>) -> tensor<8xi32>
// CHECK-NEXT:    [[P1:%[0-9a-z_]+]] = hfusion.elemwise_binary [[Q1]], [[SAFE]] {fun = "mul"}
// CHECK-NEXT:    [[R1:%[0-9a-z_]+]] = hfusion.elemwise_binary %a, [[P1]] {fun = "sub"}
// CHECK:         [[Q2:%[0-9a-z_]+]] = hfusion.cast {{%[0-9a-z_]+}} {round_mode = "floor"} : (tensor<8xf32>) -> tensor<8xi32>
// CHECK-NEXT:    [[T:%[0-9a-z_]+]] = hfusion.elemwise_binary [[Q1]], [[Q2]] {fun = "add"}
// CHECK-NEXT:    [[P2:%[0-9a-z_]+]] = hfusion.elemwise_binary [[Q2]], [[SAFE]] {fun = "mul"}
// CHECK-NEXT:    [[R2:%[0-9a-z_]+]] = hfusion.elemwise_binary [[R1]], [[P2]] {fun = "sub"}
// CHECK-NOT:     round_mode = "trunc"
// CHECK:         [[BELOW:%[0-9a-z_]+]] = hfusion.select {{.*}} -> tensor<8xi1>
// CHECK:         [[ABOVE:%[0-9a-z_]+]] = hfusion.select {{.*}} -> tensor<8xi1>
// CHECK:         [[DOWN:%[0-9a-z_]+]] = hfusion.elemwise_binary [[T]], [[ONE]] {fun = "sub"}
// CHECK-NEXT:    [[UP:%[0-9a-z_]+]] = hfusion.elemwise_binary [[T]], [[ONE]] {fun = "add"}
// CHECK-NEXT:    [[Q3:%[0-9a-z_]+]] = hfusion.select [[ABOVE]], [[UP]], [[T]]
// CHECK-NEXT:    [[Q:%[0-9a-z_]+]] = hfusion.select [[BELOW]], [[DOWN]], [[Q3]]
// CHECK-NEXT:    [[OUT:%[0-9a-z_]+]] = hfusion.select [[NZ]], [[Q]], [[ZERO]]
// CHECK-NEXT:    func.return [[OUT]]
// CHECK-NOT:     fun = "floordiv"
module {
  func.func @int_floordiv(%a: tensor<8xi32>, %b: tensor<8xi32>) -> tensor<8xi32> {
    %0 = hfusion.elemwise_binary %a, %b {fun = "floordiv"} : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
    func.return %0 : tensor<8xi32>
  }
}

// -----

// i64: three estimates (two truncated, the last floored). A constant divisor folds: no zero-divisor select, its
// sign known, so the correction compares the residual with constants only.
// CHECK-LABEL: func.func @i64_remainder_by_constant(
// CHECK-NOT:     hfusion.compare %a
// CHECK:         hfusion.cast {{.*}} {round_mode = "trunc"} : (tensor<8xf32>) -> tensor<8xi64>
// CHECK-NEXT:    [[B:%[0-9a-z_]+]] = arith.constant {value = -3} : () -> i64
// CHECK:         hfusion.cast {{.*}} {round_mode = "trunc"} : (tensor<8xf32>) -> tensor<8xi64>
// CHECK:         hfusion.cast {{.*}} {round_mode = "floor"} : (tensor<8xf32>) -> tensor<8xi64>
// CHECK:         [[R:%[0-9a-z_]+]] = hfusion.elemwise_binary {{.*}} {fun = "sub"} : (tensor<8xi64>, tensor<8xi64>)
// CHECK-NEXT:    [[Z:%[0-9a-z_]+]] = arith.constant {value = 0} : () -> i64
// CHECK-NEXT:    [[BELOW:%[0-9a-z_]+]] = hfusion.compare [[R]], [[Z]] {predicate = "gt"}
// CHECK-NEXT:    [[ABOVE:%[0-9a-z_]+]] = hfusion.compare [[R]], [[B]] {predicate = "le"}
// CHECK-NEXT:    [[UP:%[0-9a-z_]+]] = hfusion.elemwise_binary [[R]], [[B]] {fun = "add"}
// CHECK-NEXT:    [[DOWN:%[0-9a-z_]+]] = hfusion.elemwise_binary [[R]], [[B]] {fun = "sub"}
// CHECK-NEXT:    [[R3:%[0-9a-z_]+]] = hfusion.select [[ABOVE]], [[DOWN]], [[R]]
// CHECK-NEXT:    [[OUT:%[0-9a-z_]+]] = hfusion.select [[BELOW]], [[UP]], [[R3]]
// CHECK-NEXT:    func.return [[OUT]]
module {
  func.func @i64_remainder_by_constant(%a: tensor<8xi64>) -> tensor<8xi64> {
    %c = arith.constant {value = -3} : () -> i64
    %0 = hfusion.elemwise_binary %a, %c {fun = "remainder"} : (tensor<8xi64>, i64) -> tensor<8xi64>
    func.return %0 : tensor<8xi64>
  }
}

// -----

// f32 fmod by a constant: the divisor's Veltkamp split is two numbers (0.300048828125 + -4.88e-05 = 0.3 in f32),
// Dekker's error term of t·b from the split quotient, r = (a - p) - err, one step back where r passed zero, then
// the out-of-range, |a| < |b| and zero-sign selects; no zero-divisor select (b is not 0).
// CHECK-LABEL: func.func @f32_fmod_by_constant(
// CHECK:         [[B:%[0-9a-z_]+]] = arith.constant {value = 0.30000001192092896} : () -> f32
// CHECK-NEXT:    [[Q:%[0-9a-z_]+]] = hfusion.elemwise_binary %a, [[B]] {fun = "div"}
// CHECK-NEXT:    [[T:%[0-9a-z_]+]] = hfusion.elemwise_unary [[Q]] {fun = "trunc"}
// CHECK:         [[P:%[0-9a-z_]+]] = hfusion.elemwise_binary [[T]], [[B]] {fun = "mul"}
// CHECK-NEXT:    [[BH:%[0-9a-z_]+]] = arith.constant {value = 0.300048828125} : () -> f32
// CHECK:         [[BL:%[0-9a-z_]+]] = arith.constant {value = -4.881620407104492e-05} : () -> f32
// CHECK:         [[D:%[0-9a-z_]+]] = hfusion.elemwise_binary %a, [[P]] {fun = "sub"}
// CHECK-NEXT:    [[R:%[0-9a-z_]+]] = hfusion.elemwise_binary [[D]], {{%[0-9a-z_]+}} {fun = "sub"}
// CHECK:         hfusion.select {{.*}} : (tensor<8xi1>, f32, f32) -> tensor<8xf32>
// CHECK:         arith.constant {value = 16777216.0} : () -> f32
// CHECK-NOT:     value = nan
// CHECK:         func.return
module {
  func.func @f32_fmod_by_constant(%a: tensor<8xf32>) -> tensor<8xf32> {
    %c = arith.constant {value = 0.3} : () -> f32
    %0 = hfusion.elemwise_binary %a, %c {fun = "fmod"} : (tensor<8xf32>, f32) -> tensor<8xf32>
    func.return %0 : tensor<8xf32>
  }
}

// -----

// f16 floor division: the exact fmod in f32 (the divisor scaled when it is past 2^100), narrowed exactly to f16,
// then ATen's steps each in f16 ((a - mod) / b, the step down, floor, the step up past .5, the zero sign, b = 0).
// CHECK-LABEL: func.func @f16_floordiv(
// CHECK:         [[BW:%[0-9a-z_]+]] = hfusion.cast %b {round_mode = "rint"} : (tensor<8xf16>) -> tensor<8xf32>
// CHECK-NEXT:    [[AW:%[0-9a-z_]+]] = hfusion.cast %a {round_mode = "rint"} : (tensor<8xf16>) -> tensor<8xf32>
// CHECK:         arith.constant {value = 1.2676506002282294e+30} : () -> f32
// CHECK:         [[MOD:%[0-9a-z_]+]] = hfusion.cast {{%[0-9a-z_]+}} {round_mode = "rint"} : (tensor<8xf32>) -> tensor<8xf16>
// CHECK-NEXT:    [[NUM:%[0-9a-z_]+]] = hfusion.elemwise_binary %a, [[MOD]] {fun = "sub"} : (tensor<8xf16>, tensor<8xf16>) -> tensor<8xf16>
// CHECK-NEXT:    [[DIV:%[0-9a-z_]+]] = hfusion.elemwise_binary [[NUM]], %b {fun = "div"} : (tensor<8xf16>, tensor<8xf16>) -> tensor<8xf16>
// CHECK:         hfusion.elemwise_unary {{%[0-9a-z_]+}} {fun = "floor"} : (tensor<8xf16>) -> tensor<8xf16>
// CHECK:         [[BASIC:%[0-9a-z_]+]] = hfusion.elemwise_binary %a, %b {fun = "div"} : (tensor<8xf16>, tensor<8xf16>) -> tensor<8xf16>
// CHECK:         [[B0:%[0-9a-z_]+]] = hfusion.compare %b, {{%[0-9a-z_]+}} {predicate = "eq"}
// CHECK-NEXT:    [[OUT:%[0-9a-z_]+]] = hfusion.select [[B0]], [[BASIC]], {{%[0-9a-z_]+}} : (tensor<8xi1>, tensor<8xf16>, tensor<8xf16>) -> tensor<8xf16>
// CHECK-NEXT:    func.return [[OUT]]
module {
  func.func @f16_floordiv(%a: tensor<8xf16>, %b: tensor<8xf16>) -> tensor<8xf16> {
    %0 = hfusion.elemwise_binary %a, %b {fun = "floordiv"} : (tensor<8xf16>, tensor<8xf16>) -> tensor<8xf16>
    func.return %0 : tensor<8xf16>
  }
}

// -----

// Float truncation division is trunc(a / b) in the dtype.
// CHECK-LABEL: func.func @f32_truncdiv(
// CHECK-NEXT:    [[Q:%[0-9a-z_]+]] = hfusion.elemwise_binary %a, %b {fun = "div"}
// CHECK-NEXT:    [[T:%[0-9a-z_]+]] = hfusion.elemwise_unary [[Q]] {fun = "trunc"}
// CHECK-NEXT:    func.return [[T]]
module {
  func.func @f32_truncdiv(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
    %0 = hfusion.elemwise_binary %a, %b {fun = "truncdiv"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    func.return %0 : tensor<8xf32>
  }
}
