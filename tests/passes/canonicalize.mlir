// RUN: npu-opt %s -p canonicalize --split-input-file | filecheck %s

// x+0 with a fill and 0+x on the left: both fold to x; the dead fill goes too.
// CHECK-LABEL: func.func @add_zero(
// CHECK-SAME:    [[X:%[0-9a-z_]+]]: tensor<s0x16xf32>
// CHECK-NOT:     hfusion.elemwise_binary
// CHECK-NOT:     hfusion.fill
// CHECK:         func.return [[X]], [[X]] :
module attributes {symbols = {s0 = [1, 64]}} {
  func.func @add_zero(%x: tensor<s0x16xf32>) -> (tensor<s0x16xf32>, tensor<s0x16xf32>) {
    %z = hfusion.fill {value = 0.0} : () -> tensor<s0x16xf32>
    %0 = hfusion.elemwise_binary %x, %z {fun = "add"} : (tensor<s0x16xf32>, tensor<s0x16xf32>) -> tensor<s0x16xf32>
    %1 = hfusion.elemwise_binary %z, %x {fun = "add"} : (tensor<s0x16xf32>, tensor<s0x16xf32>) -> tensor<s0x16xf32>
    func.return %0, %1 : tensor<s0x16xf32>, tensor<s0x16xf32>
  }
}

// -----

// x*1, x-0, x/1 with scalar constants.
// CHECK-LABEL: func.func @identities(
// CHECK-SAME:    [[X:%[0-9a-z_]+]]: tensor<8xf16>
// CHECK-NOT:     hfusion.elemwise_binary
// CHECK-NOT:     arith.constant
// CHECK:         func.return [[X]] :
module {
  func.func @identities(%x: tensor<8xf16>) -> (tensor<8xf16>) {
    %one = arith.constant {value = 1.0} : () -> f16
    %zero = arith.constant {value = 0.0} : () -> f16
    %0 = hfusion.elemwise_binary %x, %one {fun = "mul"} : (tensor<8xf16>, f16) -> tensor<8xf16>
    %1 = hfusion.elemwise_binary %0, %zero {fun = "sub"} : (tensor<8xf16>, f16) -> tensor<8xf16>
    %2 = hfusion.elemwise_binary %1, %one {fun = "div"} : (tensor<8xf16>, f16) -> tensor<8xf16>
    func.return %2 : tensor<8xf16>
  }
}

// -----

// x*2 and 0-x are not identities: kept. 0-x keeps the constant on the left (sub is not commutative).
// CHECK-LABEL: func.func @not_identities(
// CHECK:         hfusion.elemwise_binary %{{.*}} {fun = "mul"}
// CHECK:         hfusion.elemwise_binary %{{.*}} {fun = "sub"}
module {
  func.func @not_identities(%x: tensor<8xf32>) -> (tensor<8xf32>) {
    %two = arith.constant {value = 2.0} : () -> f32
    %zero = arith.constant {value = 0.0} : () -> f32
    %0 = hfusion.elemwise_binary %x, %two {fun = "mul"} : (tensor<8xf32>, f32) -> tensor<8xf32>
    %1 = hfusion.elemwise_binary %zero, %0 {fun = "sub"} : (f32, tensor<8xf32>) -> tensor<8xf32>
    func.return %1 : tensor<8xf32>
  }
}

// -----

// Constants go to the right of commutative ops; compare mirrors its predicate.
// CHECK-LABEL: func.func @constants_right(
// CHECK-SAME:    [[X:%[0-9a-z_]+]]: tensor<8xf32>
// CHECK:         [[C:%[0-9a-z_]+]] = arith.constant {value = 3.0}
// CHECK:         hfusion.elemwise_binary [[X]], [[C]] {fun = "mul"}
// CHECK:         hfusion.compare [[X]], [[C]] {predicate = "gt"}
module {
  func.func @constants_right(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xi1>) {
    %c = arith.constant {value = 3.0} : () -> f32
    %0 = hfusion.elemwise_binary %c, %x {fun = "mul"} : (f32, tensor<8xf32>) -> tensor<8xf32>
    %1 = hfusion.compare %c, %x {predicate = "lt"} : (f32, tensor<8xf32>) -> tensor<8xi1>
    func.return %0, %1 : tensor<8xf32>, tensor<8xi1>
  }
}

// -----

// Inverse transposes cancel; others compose into one.
// CHECK-LABEL: func.func @transposes(
// CHECK-SAME:    [[X:%[0-9a-z_]+]]: tensor<2x3x4xf32>
// CHECK:         [[T:%[0-9a-z_]+]] = hfusion.transpose [[X]] {perm = [2, 0, 1]} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NOT:     hfusion.transpose
// CHECK:         func.return [[X]], [[T]] :
module {
  func.func @transposes(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x2x3xf32>) {
    %0 = hfusion.transpose %x {perm = [1, 0, 2]} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
    %1 = hfusion.transpose %0 {perm = [1, 0, 2]} : (tensor<3x2x4xf32>) -> tensor<2x3x4xf32>
    %2 = hfusion.transpose %0 {perm = [2, 1, 0]} : (tensor<3x2x4xf32>) -> tensor<4x2x3xf32>
    func.return %1, %2 : tensor<2x3x4xf32>, tensor<4x2x3xf32>
  }
}

// -----

// Reshape of reshape is one reshape; a reshape to the input's own type disappears.
// CHECK-LABEL: func.func @reshapes(
// CHECK-SAME:    [[X:%[0-9a-z_]+]]: tensor<s0x16xf32>
// CHECK:         [[R:%[0-9a-z_]+]] = hfusion.reshape [[X]] : (tensor<s0x16xf32>) -> tensor<s0x4x4xf32>
// CHECK-NOT:     hfusion.reshape
// CHECK:         func.return [[R]], [[X]] :
module attributes {symbols = {s0 = [1, 64]}} {
  func.func @reshapes(%x: tensor<s0x16xf32>) -> (tensor<s0x4x4xf32>, tensor<s0x16xf32>) {
    %0 = hfusion.reshape %x : (tensor<s0x16xf32>) -> tensor<(16*s0)xf32>
    %1 = hfusion.reshape %0 : (tensor<(16*s0)xf32>) -> tensor<s0x4x4xf32>
    %2 = hfusion.reshape %x : (tensor<s0x16xf32>) -> tensor<s0x16xf32>
    func.return %1, %2 : tensor<s0x4x4xf32>, tensor<s0x16xf32>
  }
}

// -----

// f16 -> f32 -> f16 is the input; f32 -> f16 -> f32 loses precision and is kept.
// CHECK-LABEL: func.func @casts(
// CHECK-SAME:    [[H:%[0-9a-z_]+]]: tensor<8xf16>, [[F:%[0-9a-z_]+]]: tensor<8xf32>
// CHECK:         [[N:%[0-9a-z_]+]] = hfusion.cast [[F]] {{.*}} -> tensor<8xf16>
// CHECK:         [[W:%[0-9a-z_]+]] = hfusion.cast [[N]] {{.*}} -> tensor<8xf32>
// CHECK:         func.return [[H]], [[W]] :
module {
  func.func @casts(%h: tensor<8xf16>, %f: tensor<8xf32>) -> (tensor<8xf16>, tensor<8xf32>) {
    %0 = hfusion.cast %h : (tensor<8xf16>) -> tensor<8xf32>
    %1 = hfusion.cast %0 : (tensor<8xf32>) -> tensor<8xf16>
    %2 = hfusion.cast %f : (tensor<8xf32>) -> tensor<8xf16>
    %3 = hfusion.cast %2 : (tensor<8xf16>) -> tensor<8xf32>
    func.return %1, %3 : tensor<8xf16>, tensor<8xf32>
  }
}

// -----

// Constant folding: splats fold to a fill of the (symbolic) result type, small dense tensors to a constant,
// index arithmetic to a constant.
// CHECK-LABEL: func.func @fold_constants(
// CHECK-DAG:     [[S:%[0-9a-z_]+]] = hfusion.fill {value = 7.0} : () -> tensor<s0x4xf32>
// CHECK-DAG:     [[D:%[0-9a-z_]+]] = arith.constant {value = [2.0, 4.0, 6.0, 8.0]} : () -> tensor<4xf32>
// CHECK-DAG:     [[I:%[0-9a-z_]+]] = arith.constant {value = 12} : () -> index
// CHECK-NOT:     hfusion.elemwise_binary
// CHECK-NOT:     arith.muli
// CHECK:         func.return [[S]], [[D]], [[I]] :
module attributes {symbols = {s0 = [1, 64]}} {
  func.func @fold_constants() -> (tensor<s0x4xf32>, tensor<4xf32>, index) {
    %a = hfusion.fill {value = 3.0} : () -> tensor<s0x4xf32>
    %b = arith.constant {value = 4.0} : () -> f32
    %0 = hfusion.elemwise_binary %a, %b {fun = "add"} : (tensor<s0x4xf32>, f32) -> tensor<s0x4xf32>
    %v = arith.constant {value = [1.0, 2.0, 3.0, 4.0]} : () -> tensor<4xf32>
    %1 = hfusion.elemwise_binary %v, %v {fun = "add"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %i = arith.constant {value = 3} : () -> index
    %j = arith.constant {value = 4} : () -> index
    %2 = arith.muli %i, %j : (index, index) -> index
    func.return %0, %1, %2 : tensor<s0x4xf32>, tensor<4xf32>, index
  }
}

// -----

// Dead pure ops are erased; ops with memory effects are kept.
// CHECK-LABEL: func.func @dead(
// CHECK-NOT:     hfusion.elemwise_unary
// CHECK-NOT:     tensor.empty
// CHECK:         annotation.mark
module {
  func.func @dead(%x: tensor<8xf32>) -> (tensor<8xf32>) {
    %0 = hfusion.elemwise_unary %x {fun = "exp"} : (tensor<8xf32>) -> tensor<8xf32>
    %1 = hfusion.elemwise_unary %0 {fun = "neg"} : (tensor<8xf32>) -> tensor<8xf32>
    %2 = tensor.empty : () -> tensor<8xf32>
    annotation.mark %x {hint = 1} : tensor<8xf32>
    func.return %x : tensor<8xf32>
  }
}

// -----

// cast(arange: i64) to a float dtype becomes an arange of that dtype when every value is an integer it holds
// exactly (static length); 1 + 2*2047 = 4095 > 2^11 is not exact in f16, so that cast stays.
// CHECK-LABEL: func.func @cast_of_arange(
// CHECK:         [[A:%[0-9a-z_]+]] = hfusion.arange {start = 1, step = 2} : () -> tensor<8xf32>
// CHECK:         [[I:%[0-9a-z_]+]] = hfusion.arange {start = 1, step = 2} : () -> tensor<2048xi64>
// CHECK-NEXT:    [[H:%[0-9a-z_]+]] = hfusion.cast [[I]]
// CHECK:         func.return [[A]], [[H]]
module {
  func.func @cast_of_arange() -> (tensor<8xf32>, tensor<2048xf16>) {
    %0 = hfusion.arange {start = 1, step = 2} : () -> tensor<8xi64>
    %1 = hfusion.cast %0 {round_mode = "rint"} : (tensor<8xi64>) -> tensor<8xf32>
    %2 = hfusion.arange {start = 1, step = 2} : () -> tensor<2048xi64>
    %3 = hfusion.cast %2 {round_mode = "rint"} : (tensor<2048xi64>) -> tensor<2048xf16>
    func.return %1, %3 : tensor<8xf32>, tensor<2048xf16>
  }
}

// -----

// max/min of an f16 -> f32 widening reduce the f16 values, then widen; a sum keeps reducing in f32.
// CHECK-LABEL: func.func @reduce_before_widening(
// CHECK-SAME:    [[H:%[0-9a-z_]+]]: tensor<s0x64xf16>
// CHECK:         [[W:%[0-9a-z_]+]] = hfusion.cast [[H]] {{.*}} -> tensor<s0x64xf32>
// CHECK-DAG:     [[M:%[0-9a-z_]+]] = hfusion.reduce [[H]] {dims = [1], kind = "max"} : (tensor<s0x64xf16>) -> tensor<s0xf16>
// CHECK-DAG:     hfusion.cast [[M]] {{.*}} -> tensor<s0xf32>
// CHECK-DAG:     hfusion.reduce [[W]] {dims = [1], kind = "sum"} : (tensor<s0x64xf32>) -> tensor<s0xf32>
module attributes {symbols = {s0 = [1, 64]}} {
  func.func @reduce_before_widening(%h: tensor<s0x64xf16>) -> (tensor<s0xf32>, tensor<s0xf32>) {
    %w = hfusion.cast %h : (tensor<s0x64xf16>) -> tensor<s0x64xf32>
    %m = hfusion.reduce %w {dims = [1], kind = "max"} : (tensor<s0x64xf32>) -> tensor<s0xf32>
    %s = hfusion.reduce %w {dims = [1], kind = "sum"} : (tensor<s0x64xf32>) -> tensor<s0xf32>
    func.return %m, %s : tensor<s0xf32>, tensor<s0xf32>
  }
}

// -----

// x / 4096 (a mean) -> x * 2^-12: exact; x / 3 is kept.
// CHECK-LABEL: func.func @div_by_power_of_two(
// CHECK:         [[C:%[0-9a-z_]+]] = arith.constant {value = 0.000244140625} : () -> f32
// CHECK:         hfusion.elemwise_binary {{%[0-9a-z_]+}}, [[C]] {fun = "mul"}
// CHECK:         hfusion.elemwise_binary {{%[0-9a-z_]+}}, {{%[0-9a-z_]+}} {fun = "div"}
module attributes {symbols = {s0 = [1, 64]}} {
  func.func @div_by_power_of_two(%x: tensor<s0xf32>) -> (tensor<s0xf32>, tensor<s0xf32>) {
    %n = arith.constant {value = 4096.0} : () -> f32
    %three = arith.constant {value = 3.0} : () -> f32
    %0 = hfusion.elemwise_binary %x, %n {fun = "div"} : (tensor<s0xf32>, f32) -> tensor<s0xf32>
    %1 = hfusion.elemwise_binary %x, %three {fun = "div"} : (tensor<s0xf32>, f32) -> tensor<s0xf32>
    func.return %0, %1 : tensor<s0xf32>, tensor<s0xf32>
  }
}

// -----

// The sum of a one-hot select times a per-row factor (a cross-entropy backward): one term per row, computed per
// row — the index in range, the select, the factor and + 0 * w; no reduction is left.
// CHECK-LABEL: func.func @sum_of_one_hot(
// CHECK-SAME:    [[I:%[0-9a-z_]+]]: tensor<s0xi32>, [[W:%[0-9a-z_]+]]: tensor<s0xf32>
// CHECK-NOT:     hfusion.reduce
// CHECK-DAG:     [[LO:%[0-9a-z_]+]] = hfusion.compare [[I]], {{%[0-9a-z_]+}} {predicate = "ge"} : (tensor<s0xi32>, i32) -> tensor<s0xi1>
// CHECK-DAG:     [[HI:%[0-9a-z_]+]] = hfusion.compare [[I]], {{%[0-9a-z_]+}} {predicate = "le"} : (tensor<s0xi32>, i32) -> tensor<s0xi1>
// CHECK:         [[IN:%[0-9a-z_]+]] = hfusion.elemwise_binary [[LO]], [[HI]] {fun = "logical_and"}
// CHECK:         [[S:%[0-9a-z_]+]] = hfusion.select [[IN]], {{%[0-9a-z_]+}}, {{%[0-9a-z_]+}} : (tensor<s0xi1>, f32, f32) -> tensor<s0xf32>
// CHECK:         [[P:%[0-9a-z_]+]] = hfusion.elemwise_binary [[S]], [[W]] {fun = "mul"}
// CHECK:         [[Z:%[0-9a-z_]+]] = hfusion.elemwise_binary [[W]], {{%[0-9a-z_]+}} {fun = "mul"}
// CHECK:         [[R:%[0-9a-z_]+]] = hfusion.elemwise_binary [[P]], [[Z]] {fun = "add"}
// CHECK-NOT:     hfusion.reduce
// CHECK:         func.return [[R]], {{%[0-9a-z_]+}} :
module attributes {symbols = {s0 = [1, 64]}} {
  func.func @sum_of_one_hot(%i: tensor<s0xi32>, %w: tensor<s0xf32>) -> (tensor<s0xf32>, tensor<s0x1000xf32>) {
    %a = hfusion.arange {start = 0, step = 1} : () -> tensor<1000xi32>
    %p = hfusion.broadcast %a {dims = [0]} : (tensor<1000xi32>) -> tensor<s0x1000xi32>
    %ib = hfusion.broadcast %i {dims = [1]} : (tensor<s0xi32>) -> tensor<s0x1000xi32>
    %h = hfusion.compare %ib, %p {predicate = "eq"} : (tensor<s0x1000xi32>, tensor<s0x1000xi32>) -> tensor<s0x1000xi1>
    %z = hfusion.fill {value = 0.0} : () -> tensor<s0x1000xf32>
    %c = arith.constant {value = -1.0} : () -> f32
    %s = hfusion.select %h, %c, %z : (tensor<s0x1000xi1>, f32, tensor<s0x1000xf32>) -> tensor<s0x1000xf32>
    %wb = hfusion.broadcast %w {dims = [1]} : (tensor<s0xf32>) -> tensor<s0x1000xf32>
    %m = hfusion.elemwise_binary %s, %wb {fun = "mul"} : (tensor<s0x1000xf32>, tensor<s0x1000xf32>) -> tensor<s0x1000xf32>
    %r = hfusion.reduce %m {dims = [1], kind = "sum"} : (tensor<s0x1000xf32>) -> tensor<s0xf32>
    func.return %r, %m : tensor<s0xf32>, tensor<s0x1000xf32>
  }
}

// -----

// Not the rule's form: positions from 1 (not 0..n-1), an else value that is not zero, an index that varies along
// the summed dim. Every reduction stays.
// CHECK-LABEL: func.func @sums_kept(
// CHECK-COUNT-3: hfusion.reduce
module attributes {symbols = {s0 = [1, 64]}} {
  func.func @sums_kept(%i: tensor<s0xi32>, %j: tensor<s0x1000xi32>) -> (tensor<s0xf32>, tensor<s0xf32>, tensor<s0xf32>) {
    %a1 = hfusion.arange {start = 1, step = 1} : () -> tensor<1000xi32>
    %p1 = hfusion.broadcast %a1 {dims = [0]} : (tensor<1000xi32>) -> tensor<s0x1000xi32>
    %a = hfusion.arange {start = 0, step = 1} : () -> tensor<1000xi32>
    %p = hfusion.broadcast %a {dims = [0]} : (tensor<1000xi32>) -> tensor<s0x1000xi32>
    %ib = hfusion.broadcast %i {dims = [1]} : (tensor<s0xi32>) -> tensor<s0x1000xi32>
    %z = hfusion.fill {value = 0.0} : () -> tensor<s0x1000xf32>
    %o = hfusion.fill {value = 0.5} : () -> tensor<s0x1000xf32>
    %c = arith.constant {value = -1.0} : () -> f32
    %h1 = hfusion.compare %ib, %p1 {predicate = "eq"} : (tensor<s0x1000xi32>, tensor<s0x1000xi32>) -> tensor<s0x1000xi1>
    %s1 = hfusion.select %h1, %c, %z : (tensor<s0x1000xi1>, f32, tensor<s0x1000xf32>) -> tensor<s0x1000xf32>
    %r1 = hfusion.reduce %s1 {dims = [1], kind = "sum"} : (tensor<s0x1000xf32>) -> tensor<s0xf32>
    %h2 = hfusion.compare %ib, %p {predicate = "eq"} : (tensor<s0x1000xi32>, tensor<s0x1000xi32>) -> tensor<s0x1000xi1>
    %s2 = hfusion.select %h2, %c, %o : (tensor<s0x1000xi1>, f32, tensor<s0x1000xf32>) -> tensor<s0x1000xf32>
    %r2 = hfusion.reduce %s2 {dims = [1], kind = "sum"} : (tensor<s0x1000xf32>) -> tensor<s0xf32>
    %h3 = hfusion.compare %j, %p {predicate = "eq"} : (tensor<s0x1000xi32>, tensor<s0x1000xi32>) -> tensor<s0x1000xi1>
    %s3 = hfusion.select %h3, %c, %z : (tensor<s0x1000xi1>, f32, tensor<s0x1000xf32>) -> tensor<s0x1000xf32>
    %r3 = hfusion.reduce %s3 {dims = [1], kind = "sum"} : (tensor<s0x1000xf32>) -> tensor<s0xf32>
    func.return %r1, %r2, %r3 : tensor<s0xf32>, tensor<s0xf32>, tensor<s0xf32>
  }
}

// -----

// reshape(cast(reshape(x))) whose reshapes add and remove unit dims (a batch norm's f16 weight unsqueezed,
// widened, squeezed back): the cast of x, no reshape left; a round trip that does not return to x's shape keeps its
// reshapes, and so does a flattened one (3x8 -> 24 -> 3x8: hfusion-flatten-ops' loop).
// CHECK-LABEL: func.func @unshape_cast(
// CHECK-SAME:    [[W:%[0-9a-z_]+]]: tensor<3xf16>
// CHECK:         [[C:%[0-9a-z_]+]] = hfusion.cast [[W]] {{.*}} : (tensor<3xf16>) -> tensor<3xf32>
// CHECK:         hfusion.reshape {{%[0-9a-z_]+}} : (tensor<3x1x1xf16>) -> tensor<3x1xf16>
// CHECK:         hfusion.reshape {{%[0-9a-z_]+}} : (tensor<3x8xf16>) -> tensor<24xf16>
// CHECK:         func.return [[C]],
module {
  func.func @unshape_cast(%w: tensor<3xf16>, %v: tensor<3x1x1xf16>, %u: tensor<3x8xf16>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3x8xf32>) {
    %0 = hfusion.reshape %w : (tensor<3xf16>) -> tensor<3x1x1xf16>
    %1 = hfusion.cast %0 {round_mode = "rint"} : (tensor<3x1x1xf16>) -> tensor<3x1x1xf32>
    %2 = hfusion.reshape %1 : (tensor<3x1x1xf32>) -> tensor<3xf32>
    %3 = hfusion.reshape %v : (tensor<3x1x1xf16>) -> tensor<3x1xf16>
    %4 = hfusion.cast %3 {round_mode = "rint"} : (tensor<3x1xf16>) -> tensor<3x1xf32>
    %5 = hfusion.reshape %4 : (tensor<3x1xf32>) -> tensor<3xf32>
    %6 = hfusion.reshape %u : (tensor<3x8xf16>) -> tensor<24xf16>
    %7 = hfusion.cast %6 {round_mode = "rint"} : (tensor<24xf16>) -> tensor<24xf32>
    %8 = hfusion.reshape %7 : (tensor<24xf32>) -> tensor<3x8xf32>
    func.return %2, %5, %8 : tensor<3xf32>, tensor<3xf32>, tensor<3x8xf32>
  }
}

// -----

// repeat's decomposition: a transpose of a broadcast that keeps x's own dims in order is a broadcast (the copies
// interleaved); one that reorders x's dims stays a transpose.
// CHECK-LABEL: func.func @transpose_of_broadcast(
// CHECK-SAME:    [[X:%[0-9a-z_]+]]: tensor<4x5xf32>
// CHECK:         [[B:%[0-9a-z_]+]] = hfusion.broadcast [[X]] {dims = [0, 2]} : (tensor<4x5xf32>) -> tensor<2x4x3x5xf32>
// CHECK:         [[T:%[0-9a-z_]+]] = hfusion.transpose {{%[0-9a-z_]+}} {perm = [0, 3, 1, 2]}
// CHECK:         func.return [[B]], [[T]] :
module {
  func.func @transpose_of_broadcast(%x: tensor<4x5xf32>) -> (tensor<2x4x3x5xf32>, tensor<2x5x3x4xf32>) {
    %0 = hfusion.broadcast %x {dims = [0, 1]} : (tensor<4x5xf32>) -> tensor<2x3x4x5xf32>
    %1 = hfusion.transpose %0 {perm = [0, 2, 1, 3]} : (tensor<2x3x4x5xf32>) -> tensor<2x4x3x5xf32>
    %2 = hfusion.transpose %0 {perm = [0, 3, 1, 2]} : (tensor<2x3x4x5xf32>) -> tensor<2x5x3x4xf32>
    func.return %1, %2 : tensor<2x4x3x5xf32>, tensor<2x5x3x4xf32>
  }
}

// -----

// A reshape dropping unit dims the broadcast added is a broadcast to the smaller shape; one dropping a unit dim of
// the source stays.
// CHECK-LABEL: func.func @squeeze_broadcast(
// CHECK-SAME:    [[X:%[0-9a-z_]+]]: tensor<16xi64>, [[Y:%[0-9a-z_]+]]: tensor<1x16xi64>
// CHECK:         [[B:%[0-9a-z_]+]] = hfusion.broadcast [[X]] {dims = [0, 2]} : (tensor<16xi64>) -> tensor<1x16x8xi64>
// CHECK:         hfusion.reshape {{%[0-9a-z_]+}} : (tensor<1x16x8xi64>) -> tensor<16x8xi64>
// CHECK:         func.return [[B]],
module {
  func.func @squeeze_broadcast(%x: tensor<16xi64>, %y: tensor<1x16xi64>) -> (tensor<1x16x8xi64>, tensor<16x8xi64>) {
    %0 = hfusion.broadcast %x {dims = [0, 1, 2, 4, 5]} : (tensor<16xi64>) -> tensor<1x1x1x16x8x1xi64>
    %1 = hfusion.reshape %0 : (tensor<1x1x1x16x8x1xi64>) -> tensor<1x16x8xi64>
    %2 = hfusion.broadcast %y {dims = [2]} : (tensor<1x16xi64>) -> tensor<1x16x8xi64>
    %3 = hfusion.reshape %2 : (tensor<1x16x8xi64>) -> tensor<16x8xi64>
    func.return %1, %3 : tensor<1x16x8xi64>, tensor<16x8xi64>
  }
}

// -----

// A gather along dim 1 of [1, P, D] (unit dims before it in input and index) is a gather along dim 0 of [P, D].
// CHECK-LABEL: func.func @gather_past_unit_dims(
// CHECK-SAME:    [[T:%[0-9a-z_]+]]: tensor<1x64x8xf32>, [[I:%[0-9a-z_]+]]: tensor<1x16x8xi64>
// CHECK:         [[T2:%[0-9a-z_]+]] = hfusion.reshape [[T]] : (tensor<1x64x8xf32>) -> tensor<64x8xf32>
// CHECK:         [[I2:%[0-9a-z_]+]] = hfusion.reshape [[I]] : (tensor<1x16x8xi64>) -> tensor<16x8xi64>
// CHECK:         [[G:%[0-9a-z_]+]] = hfusion.gather [[T2]], [[I2]] {dim = 0} : (tensor<64x8xf32>, tensor<16x8xi64>) -> tensor<16x8xf32>
// CHECK:         [[R:%[0-9a-z_]+]] = hfusion.reshape [[G]] : (tensor<16x8xf32>) -> tensor<1x16x8xf32>
// CHECK:         [[E:%[0-9a-z_]+]] = hfusion.gather {{%[0-9a-z_]+}}, {{%[0-9a-z_]+}} {dim = 1} : (tensor<1x512xi64>, tensor<1x16xi64>) -> tensor<1x16xi64>
// CHECK:         func.return [[R]], [[E]] :
// (Along the last dim it stays: a vgather of the rows as they are, BERT's token-type ids by position.)
module {
  func.func @gather_past_unit_dims(%t: tensor<1x64x8xf32>, %i: tensor<1x16x8xi64>, %u: tensor<1x512xi64>, %j: tensor<1x16xi64>) -> (tensor<1x16x8xf32>, tensor<1x16xi64>) {
    %0 = hfusion.gather %t, %i {dim = 1} : (tensor<1x64x8xf32>, tensor<1x16x8xi64>) -> tensor<1x16x8xf32>
    %1 = hfusion.gather %u, %j {dim = 1} : (tensor<1x512xi64>, tensor<1x16xi64>) -> tensor<1x16xi64>
    func.return %0, %1 : tensor<1x16x8xf32>, tensor<1x16xi64>
  }
}

// -----

// A squeeze of a slice, the dropped dim unit in the source too, slices a view of the source (a kernel loads it);
// a squeeze of a dim the slice narrowed to 1 stays.
// CHECK-LABEL: func.func @squeeze_slice(
// CHECK-SAME:    [[X:%[0-9a-z_]+]]: tensor<4x1x64xf32>
// CHECK:         [[V:%[0-9a-z_]+]] = hfusion.reshape [[X]] : (tensor<4x1x64xf32>) -> tensor<4x64xf32>
// CHECK:         [[S:%[0-9a-z_]+]] = hfusion.slice [[V]] {offsets = [0, 48], sizes = [4, 16], strides = [1, 1]} : (tensor<4x64xf32>) -> tensor<4x16xf32>
// CHECK:         hfusion.slice [[X]] {offsets = [1, 0, 0], sizes = [1, 1, 64], strides = [1, 1, 1]}
// CHECK:         hfusion.reshape {{%[0-9a-z_]+}} : (tensor<1x1x64xf32>) -> tensor<64xf32>
// CHECK:         func.return [[S]],
module {
  func.func @squeeze_slice(%x: tensor<4x1x64xf32>) -> (tensor<4x16xf32>, tensor<64xf32>) {
    %0 = hfusion.slice %x {offsets = [0, 0, 48], sizes = [4, 1, 16], strides = [1, 1, 1]} : (tensor<4x1x64xf32>) -> tensor<4x1x16xf32>
    %1 = hfusion.reshape %0 : (tensor<4x1x16xf32>) -> tensor<4x16xf32>
    %2 = hfusion.slice %x {offsets = [1, 0, 0], sizes = [1, 1, 64], strides = [1, 1, 1]} : (tensor<4x1x64xf32>) -> tensor<1x1x64xf32>
    %3 = hfusion.reshape %2 : (tensor<1x1x64xf32>) -> tensor<64xf32>
    func.return %1, %3 : tensor<4x16xf32>, tensor<64xf32>
  }
}

// -----

// A host fallback whose result is unused stays: it may draw from the generator (the next draw depends on it).
// CHECK-LABEL: func.func @unused_random_draw(
// CHECK:         host.fallback {{.*}}target = "aten.rand.default"
// CHECK:         func.return
module {
  func.func @unused_random_draw(%x: tensor<8xf32>) -> tensor<8xf32> {
    %0 = host.fallback {target = "aten.rand.default", node = "rand", reason = "random op", args = [[8]], kwargs = {}} : () -> tensor<8xf32>
    func.return %x : tensor<8xf32>
  }
}
