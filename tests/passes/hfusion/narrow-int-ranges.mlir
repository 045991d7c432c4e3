// RUN: npu-opt %s -p hfusion-narrow-int-ranges --split-input-file | filecheck %s

// The causal mask ones(T, T).tril(): the arange's offsets lie in [-127, 127]; the arange, both broadcasts, the
// sub and the compare (its constant too) run in i32. No i64 value is left.
// CHECK-LABEL: func.func @causal(
// CHECK-DAG:     [[Z:%[0-9a-z_]+]] = arith.constant {value = 0} : () -> i32
// CHECK-DAG:     [[A:%[0-9a-z_]+]] = hfusion.arange {start = 0, step = 1} : () -> tensor<128xi32>
// CHECK:         [[R:%[0-9a-z_]+]] = hfusion.broadcast [[A]] {dims = [0]} : (tensor<128xi32>) -> tensor<128x128xi32>
// CHECK-NEXT:    [[C:%[0-9a-z_]+]] = hfusion.broadcast [[A]] {dims = [1]} : (tensor<128xi32>) -> tensor<128x128xi32>
// CHECK-NEXT:    [[D:%[0-9a-z_]+]] = hfusion.elemwise_binary [[R]], [[C]] {fun = "sub"} : {{.*}} -> tensor<128x128xi32>
// CHECK-NEXT:    hfusion.compare [[D]], [[Z]] {predicate = "le"} : (tensor<128x128xi32>, i32) -> tensor<128x128xi1>
// CHECK-NOT:     i64
// CHECK:         func.return
module {
  func.func @causal(%x: tensor<128x128xf32>) -> (tensor<128x128xf32>) {
    %a = hfusion.arange {start = 0, step = 1} : () -> tensor<128xi64>
    %r = hfusion.broadcast %a {dims = [0]} : (tensor<128xi64>) -> tensor<128x128xi64>
    %c = hfusion.broadcast %a {dims = [1]} : (tensor<128xi64>) -> tensor<128x128xi64>
    %d = hfusion.elemwise_binary %r, %c {fun = "sub"} : (tensor<128x128xi64>, tensor<128x128xi64>) -> tensor<128x128xi64>
    %z = arith.constant {value = 0} : () -> i64
    %m = hfusion.compare %d, %z {predicate = "le"} : (tensor<128x128xi64>, i64) -> tensor<128x128xi1>
    %f = arith.constant {value = 0.0} : () -> f32
    %y = hfusion.select %m, %x, %f : (tensor<128x128xi1>, tensor<128x128xf32>, f32) -> tensor<128x128xf32>
    func.return %y : tensor<128x128xf32>
  }
}

// -----

// Left alone: an i64 argument (its values are unknown), so the add with it and the arange only it reads; an arange
// of s0 elements, s0 without a finite upper bound; arange(65536)² reaches 2^32 - 2^17 + 1, beyond i32; a fill
// broadcast into a column only read as i64 (by a select with an argument, as cross-entropy's backward has): it would
// only gain a cast back.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT:     i32
// CHECK:         func.return
module attributes {symbols = {s0 = [2, 9223372036854775807]}} {
  func.func @kept(%a: tensor<8xi64>, %b: tensor<s0xi64>, %t: tensor<8x1xi64>, %m: tensor<8x1xi1>) -> (tensor<8xi64>, tensor<s0xi1>, tensor<65536xi64>, tensor<8x1xi64>) {
    %0 = hfusion.arange {start = 0, step = 1} : () -> tensor<8xi64>
    %1 = hfusion.elemwise_binary %a, %0 {fun = "add"} : (tensor<8xi64>, tensor<8xi64>) -> tensor<8xi64>
    %2 = hfusion.arange {start = 0, step = 1} : () -> tensor<s0xi64>
    %3 = hfusion.compare %2, %b {predicate = "lt"} : (tensor<s0xi64>, tensor<s0xi64>) -> tensor<s0xi1>
    %4 = hfusion.arange {start = 0, step = 1} : () -> tensor<65536xi64>
    %5 = hfusion.elemwise_binary %4, %4 {fun = "mul"} : (tensor<65536xi64>, tensor<65536xi64>) -> tensor<65536xi64>
    %6 = hfusion.fill {value = 0} : () -> tensor<i64>
    %7 = hfusion.broadcast %6 {dims = [0, 1]} : (tensor<i64>) -> tensor<8x1xi64>
    %8 = hfusion.select %m, %t, %7 : (tensor<8x1xi1>, tensor<8x1xi64>, tensor<8x1xi64>) -> tensor<8x1xi64>
    func.return %1, %3, %5, %8 : tensor<8xi64>, tensor<s0xi1>, tensor<65536xi64>, tensor<8x1xi64>
  }
}

// -----

// Every intermediate is checked: (arange(65536) + 1) fits and is narrowed; times 65536 it reaches 2^32, so the mul
// stays i64 and reads an exact cast of the narrowed sum. A bounded symbol (s0 <= 4096) narrows at its upper bound
// (5 - 3·4095 = -12280); the compare with an argument stays i64 and reads a cast.
// CHECK-LABEL: func.func @partial(
// CHECK:         [[A:%[0-9a-z_]+]] = hfusion.arange {start = 0, step = 1} : () -> tensor<65536xi32>
// CHECK:         [[S:%[0-9a-z_]+]] = hfusion.elemwise_binary [[A]], {{%[0-9a-z_]+}} {fun = "add"} : (tensor<65536xi32>, i32) -> tensor<65536xi32>
// CHECK-NEXT:    [[W:%[0-9a-z_]+]] = hfusion.cast [[S]] {round_mode = "rint"} : (tensor<65536xi32>) -> tensor<65536xi64>
// CHECK-NEXT:    [[M:%[0-9a-z_]+]] = hfusion.elemwise_binary [[W]], %big {fun = "mul"} : (tensor<65536xi64>, i64) -> tensor<65536xi64>
// CHECK:         [[B:%[0-9a-z_]+]] = hfusion.arange {start = 5, step = -3} : () -> tensor<s0xi32>
// CHECK-NEXT:    [[N:%[0-9a-z_]+]] = hfusion.elemwise_unary [[B]] {fun = "neg"} : (tensor<s0xi32>) -> tensor<s0xi32>
// CHECK-NEXT:    [[NW:%[0-9a-z_]+]] = hfusion.cast [[N]] {round_mode = "rint"} : (tensor<s0xi32>) -> tensor<s0xi64>
// CHECK-NEXT:    hfusion.compare [[NW]], %arg {predicate = "lt"} : (tensor<s0xi64>, tensor<s0xi64>) -> tensor<s0xi1>
// CHECK:         func.return [[M]],
module attributes {symbols = {s0 = [1, 4096]}} {
  func.func @partial(%arg: tensor<s0xi64>) -> (tensor<65536xi64>, tensor<s0xi1>) {
    %one = arith.constant {value = 1} : () -> i64
    %big = arith.constant {value = 65536} : () -> i64
    %a = hfusion.arange {start = 0, step = 1} : () -> tensor<65536xi64>
    %s = hfusion.elemwise_binary %a, %one {fun = "add"} : (tensor<65536xi64>, i64) -> tensor<65536xi64>
    %m = hfusion.elemwise_binary %s, %big {fun = "mul"} : (tensor<65536xi64>, i64) -> tensor<65536xi64>
    %b = hfusion.arange {start = 5, step = -3} : () -> tensor<s0xi64>
    %n = hfusion.elemwise_unary %b {fun = "neg"} : (tensor<s0xi64>) -> tensor<s0xi64>
    %lt = hfusion.compare %n, %arg {predicate = "lt"} : (tensor<s0xi64>, tensor<s0xi64>) -> tensor<s0xi1>
    func.return %m, %lt : tensor<65536xi64>, tensor<s0xi1>
  }
}

// -----

// Ranges through casts of bools, select (the union), abs (max(x, -x): no i32 vabs), views and concat. A cast of a
// narrowed value to f32 reads it directly, one to i32 is the value itself; the returned i64 and a sum (a reduction
// is not in the table) read one exact cast, placed before the first of them.
// CHECK-LABEL: func.func @through(
// CHECK:         [[B:%[0-9a-z_]+]] = hfusion.cast %m {round_mode = "rint"} : (tensor<16xi1>) -> tensor<16xi32>
// CHECK:         [[SEL:%[0-9a-z_]+]] = hfusion.select %m, {{%[0-9a-z_]+}}, [[B]] : {{.*}} -> tensor<16xi32>
// CHECK-NEXT:    [[NEG:%[0-9a-z_]+]] = hfusion.elemwise_unary [[SEL]] {fun = "neg"} : (tensor<16xi32>) -> tensor<16xi32>
// CHECK-NEXT:    [[ABS:%[0-9a-z_]+]] = hfusion.elemwise_binary [[SEL]], [[NEG]] {fun = "max"} : {{.*}} -> tensor<16xi32>
// CHECK-NEXT:    [[R:%[0-9a-z_]+]] = hfusion.reshape [[ABS]] : (tensor<16xi32>) -> tensor<4x4xi32>
// CHECK-NEXT:    [[T:%[0-9a-z_]+]] = hfusion.transpose [[R]] {perm = [1, 0]} : (tensor<4x4xi32>) -> tensor<4x4xi32>
// CHECK-NEXT:    [[SL:%[0-9a-z_]+]] = hfusion.slice [[T]] {{.*}} : (tensor<4x4xi32>) -> tensor<2x4xi32>
// CHECK-NEXT:    [[CAT:%[0-9a-z_]+]] = hfusion.concat [[SL]], [[SL]] {dim = 0} : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<4x4xi32>
// CHECK-NEXT:    [[F:%[0-9a-z_]+]] = hfusion.cast [[CAT]] {round_mode = "rint"} : (tensor<4x4xi32>) -> tensor<4x4xf32>
// CHECK-NEXT:    [[WIDE:%[0-9a-z_]+]] = hfusion.cast [[CAT]] {round_mode = "rint"} : (tensor<4x4xi32>) -> tensor<4x4xi64>
// CHECK-NEXT:    [[SUM:%[0-9a-z_]+]] = hfusion.reduce [[WIDE]] {dims = [0], kind = "sum"} : (tensor<4x4xi64>) -> tensor<4xi64>
// CHECK-NEXT:    func.return [[WIDE]], [[F]], [[CAT]], [[SUM]] :
module {
  func.func @through(%m: tensor<16xi1>) -> (tensor<4x4xi64>, tensor<4x4xf32>, tensor<4x4xi32>, tensor<4xi64>) {
    %a = hfusion.arange {start = 10, step = -2} : () -> tensor<16xi64>
    %b = hfusion.cast %m : (tensor<16xi1>) -> tensor<16xi64>
    %sel = hfusion.select %m, %a, %b : (tensor<16xi1>, tensor<16xi64>, tensor<16xi64>) -> tensor<16xi64>
    %abs = hfusion.elemwise_unary %sel {fun = "abs"} : (tensor<16xi64>) -> tensor<16xi64>
    %r = hfusion.reshape %abs : (tensor<16xi64>) -> tensor<4x4xi64>
    %t = hfusion.transpose %r {perm = [1, 0]} : (tensor<4x4xi64>) -> tensor<4x4xi64>
    %sl = hfusion.slice %t {offsets = [0, 0], sizes = [2, 4], strides = [2, 1]} : (tensor<4x4xi64>) -> tensor<2x4xi64>
    %cat = hfusion.concat %sl, %sl {dim = 0} : (tensor<2x4xi64>, tensor<2x4xi64>) -> tensor<4x4xi64>
    %f = hfusion.cast %cat : (tensor<4x4xi64>) -> tensor<4x4xf32>
    %i = hfusion.cast %cat : (tensor<4x4xi64>) -> tensor<4x4xi32>
    %sum = hfusion.reduce %cat {dims = [0], kind = "sum"} : (tensor<4x4xi64>) -> tensor<4xi64>
    func.return %cat, %f, %i, %sum : tensor<4x4xi64>, tensor<4x4xf32>, tensor<4x4xi32>, tensor<4xi64>
  }
}
