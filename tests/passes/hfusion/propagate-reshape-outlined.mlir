// RUN: npu-opt %s -p "hfusion-propagate-reshape{outlined=true}" | filecheck %s

// x[:, 1] * 3 + c: the squeeze of a computed column moves down to the return (a store); the op between is lifted
// to the column's shape and the rank-0 operand's broadcast takes the unit dim among its dims.
// CHECK-LABEL: func.func @squeeze_down(
// CHECK-SAME:    [[X:%[0-9a-z_]+]]: tensor<3x8xf32>, [[C:%[0-9a-z_]+]]: tensor<f32>
// CHECK:         [[S:%[0-9a-z_]+]] = hfusion.slice [[X]]
// CHECK-NEXT:    [[M:%[0-9a-z_]+]] = hfusion.elemwise_binary [[S]], {{%[0-9a-z_]+}} {fun = "mul"} : (tensor<3x1xf32>, f32) -> tensor<3x1xf32>
// CHECK-NEXT:    [[B:%[0-9a-z_]+]] = hfusion.broadcast [[C]] {dims = [0, 1]} : (tensor<f32>) -> tensor<3x1xf32>
// CHECK-NEXT:    [[A:%[0-9a-z_]+]] = hfusion.elemwise_binary [[M]], [[B]] {fun = "add"} : (tensor<3x1xf32>, tensor<3x1xf32>) -> tensor<3x1xf32>
// CHECK-NEXT:    [[R:%[0-9a-z_]+]] = hfusion.reshape [[A]] : (tensor<3x1xf32>) -> tensor<3xf32>
// CHECK-NEXT:    func.return [[R]] : tensor<3xf32>

// cross_entropy's picked log-probabilities: the gather's index column (an unsqueeze) moves up through the select
// and compare to the argument (a load, read once); the squeeze after the gather moves down through the selects
// into both reductions, which also reduce the unit dim. No reshape is left inside the body.
// CHECK-LABEL: func.func @gather_column(
// CHECK-SAME:    [[T:%[0-9a-z_]+]]: tensor<4xi64>, [[L:%[0-9a-z_]+]]: tensor<4x8xf32>
// CHECK:         [[TC:%[0-9a-z_]+]] = hfusion.reshape [[T]] : (tensor<4xi64>) -> tensor<4x1xi64>
// CHECK-NEXT:    [[NE:%[0-9a-z_]+]] = hfusion.compare [[TC]], {{%[0-9a-z_]+}} {predicate = "ne"} : (tensor<4x1xi64>, i64) -> tensor<4x1xi1>
// CHECK-NOT:     hfusion.reshape
// CHECK:         [[W:%[0-9a-z_]+]] = hfusion.select [[NE]], [[TC]], {{%[0-9a-z_]+}} : (tensor<4x1xi1>, tensor<4x1xi64>, tensor<4x1xi64>) -> tensor<4x1xi64>
// CHECK-NEXT:    [[G:%[0-9a-z_]+]] = hfusion.gather [[L]], [[W]] {dim = 1}
// CHECK-NEXT:    [[N:%[0-9a-z_]+]] = hfusion.elemwise_unary [[G]] {fun = "neg"} : (tensor<4x1xf32>) -> tensor<4x1xf32>
// CHECK-NOT:     hfusion.reshape
// CHECK:         hfusion.select [[NE]], [[N]], {{%[0-9a-z_]+}} : (tensor<4x1xi1>, tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
// CHECK-NOT:     hfusion.reshape
// CHECK:         hfusion.reduce {{%[0-9a-z_]+}} {dims = [0, 1], kind = "sum"} : (tensor<4x1xf32>) -> tensor<f32>
// CHECK-NOT:     hfusion.reshape
// CHECK:         hfusion.reduce {{%[0-9a-z_]+}} {dims = [0, 1], kind = "sum"} : (tensor<4x1xf32>) -> tensor<f32>
// CHECK-NOT:     hfusion.reshape
// CHECK:         func.return

// An argument read whole (by a reduction) and through an unsqueeze: the reduction reads the unsqueezed view too,
// so the kernel loads the argument in one shape; the reshape of the reduction's result feeds the return (a store).
// CHECK-LABEL: func.func @argument_read_twice(
// CHECK-SAME:    [[G:%[0-9a-z_]+]]: tensor<3xf32>
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    [[V:%[0-9a-z_]+]] = hfusion.reshape [[G]] : (tensor<3xf32>) -> tensor<3x1xf32>
// CHECK-NEXT:    [[S:%[0-9a-z_]+]] = hfusion.reduce [[V]] {dims = [0, 1], kind = "sum"} : (tensor<3x1xf32>) -> tensor<f32>
// CHECK-NEXT:    [[RS:%[0-9a-z_]+]] = hfusion.reshape [[S]] : (tensor<f32>) -> tensor<1xf32>
// CHECK-NEXT:    [[M:%[0-9a-z_]+]] = hfusion.elemwise_binary [[V]], {{%[0-9a-z_]+}} {fun = "mul"} : (tensor<3x1xf32>, f32) -> tensor<3x1xf32>
// CHECK-NEXT:    func.return [[RS]], [[M]]

// Left alone: an unsqueeze read only by the return (a store already), and one of a reduction's result (a
// reduction is not lifted), which keeps the kernel unsupported.
// CHECK-LABEL: func.func @stays(
// CHECK:         [[S:%[0-9a-z_]+]] = hfusion.reduce
// CHECK-NEXT:    [[R:%[0-9a-z_]+]] = hfusion.reshape [[S]] : (tensor<6xf32>) -> tensor<6x1xf32>
// CHECK-NEXT:    [[E:%[0-9a-z_]+]] = hfusion.elemwise_unary [[R]] {fun = "exp"}
// CHECK-NEXT:    [[C:%[0-9a-z_]+]] = hfusion.cast [[S]]
// CHECK-NEXT:    [[RC:%[0-9a-z_]+]] = hfusion.reshape [[C]] : (tensor<6xf16>) -> tensor<6x1xf16>
// CHECK-NEXT:    func.return [[E]], [[RC]]

// A rotary table: cos and sin of a [1, T, D] argument, collapsed to [T, D] and broadcast over [B, H, T, D]; cos is
// also saved for the backward pass (an unsqueeze to the return). The collapse has no larger shape to lift to (the
// broadcast is not elementwise): cos and sin read the argument collapsed (a load at the boundary), the saved cos
// is the [T, D] one unsqueezed (a store), and the [1, T, D] ops go.
// CHECK-LABEL: func.func @rotary_table(
// CHECK-SAME:    [[A:%[0-9a-z_]+]]: tensor<1x4x8xf32>, [[Q:%[0-9a-z_]+]]: tensor<2x3x4x8xf32>
// CHECK-NEXT:    [[RA:%[0-9a-z_]+]] = hfusion.reshape [[A]] : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    [[C:%[0-9a-z_]+]] = hfusion.elemwise_unary [[RA]] {fun = "cos"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    [[SAVED:%[0-9a-z_]+]] = hfusion.reshape [[C]] : (tensor<4x8xf32>) -> tensor<1x1x4x8xf32>
// CHECK-NEXT:    [[B:%[0-9a-z_]+]] = hfusion.broadcast [[C]] {dims = [0, 1]}
// CHECK-NEXT:    hfusion.elemwise_binary [[Q]], [[B]] {fun = "mul"}
// CHECK-NEXT:    hfusion.elemwise_unary [[RA]] {fun = "sin"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NOT:     tensor<1x4x8xf32>)
// CHECK:         func.return {{%[0-9a-z_]+}}, [[SAVED]]

// In bf16 the table is cast after cos: the collapse moves up through the cast, then through cos, to the argument.
// CHECK-LABEL: func.func @rotary_table_cast(
// CHECK-SAME:    [[A:%[0-9a-z_]+]]: tensor<1x4x8xf32>
// CHECK-NEXT:    [[RA:%[0-9a-z_]+]] = hfusion.reshape [[A]] : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    [[C:%[0-9a-z_]+]] = hfusion.elemwise_unary [[RA]] {fun = "cos"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    [[H:%[0-9a-z_]+]] = hfusion.cast [[C]] {round_mode = "rint"} : (tensor<4x8xf32>) -> tensor<4x8xbf16>
// CHECK-NEXT:    hfusion.broadcast [[H]] {dims = [0, 1]}
// CHECK-NOT:     tensor<1x4x8x
// CHECK:         func.return

// With dynamic=True the table is scaled by a host scalar (a rank-0 argument broadcast): the splat is broadcast
// again at the collapsed shape.
// CHECK-LABEL: func.func @rotary_table_scaled(
// CHECK-SAME:    [[A:%[0-9a-z_]+]]: tensor<1x4x8xf32>, [[S:%[0-9a-z_]+]]: tensor<f32>
// CHECK-NEXT:    [[RA:%[0-9a-z_]+]] = hfusion.reshape [[A]] : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    [[C:%[0-9a-z_]+]] = hfusion.elemwise_unary [[RA]] {fun = "cos"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    [[BS:%[0-9a-z_]+]] = hfusion.broadcast [[S]] {dims = [0, 1]} : (tensor<f32>) -> tensor<4x8xf32>
// CHECK-NEXT:    [[M:%[0-9a-z_]+]] = hfusion.elemwise_binary [[C]], [[BS]] {fun = "mul"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    hfusion.broadcast [[M]] {dims = [0, 1]}
// CHECK-NOT:     tensor<1x4x8x
// CHECK:         func.return

// Multi-query attention: one key head reads the [1, T, D] table broadcast over the batch only, the query heads read
// it collapsed. That broadcast reads cos collapsed too, the unit dim a broadcast dim of size 1; then cos's readers
// are all reshapes and cos reads the argument collapsed (no view of an argument that is also read whole).
// CHECK-LABEL: func.func @rotary_table_one_key_head(
// CHECK-SAME:    [[A:%[0-9a-z_]+]]: tensor<1x4x8xf32>, [[Q:%[0-9a-z_]+]]: tensor<2x3x4x8xf32>, [[K:%[0-9a-z_]+]]: tensor<2x1x4x8xf32>
// CHECK-NEXT:    [[RA:%[0-9a-z_]+]] = hfusion.reshape [[A]] : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    [[C:%[0-9a-z_]+]] = hfusion.elemwise_unary [[RA]] {fun = "cos"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    [[BQ:%[0-9a-z_]+]] = hfusion.broadcast [[C]] {dims = [0, 1]} : (tensor<4x8xf32>) -> tensor<2x3x4x8xf32>
// CHECK-NEXT:    hfusion.elemwise_binary [[Q]], [[BQ]] {fun = "mul"}
// CHECK-NEXT:    [[BK:%[0-9a-z_]+]] = hfusion.broadcast [[C]] {dims = [0, 1]} : (tensor<4x8xf32>) -> tensor<2x1x4x8xf32>
// CHECK-NEXT:    hfusion.elemwise_binary [[K]], [[BK]] {fun = "mul"}
// CHECK-NOT:     tensor<1x4x8xf32>)
// CHECK:         func.return

// Falcon's table: cos is also returned at [1, T, D] — the return reads it collapsed and expanded again (a store).
// CHECK-LABEL: func.func @rotary_table_returned(
// CHECK-SAME:    [[A:%[0-9a-z_]+]]: tensor<1x4x8xf32>
// CHECK-NEXT:    [[RA:%[0-9a-z_]+]] = hfusion.reshape [[A]] : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    [[C:%[0-9a-z_]+]] = hfusion.elemwise_unary [[RA]] {fun = "cos"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NOT:     tensor<1x4x8xf32>)
// CHECK:         [[S:%[0-9a-z_]+]] = hfusion.reshape [[C]] : (tensor<4x8xf32>) -> tensor<1x4x8xf32>
// CHECK-NEXT:    func.return {{%[0-9a-z_]+}}, [[S]] :

// Host functions are not touched in this mode.
// CHECK-LABEL: func.func @host(
// CHECK-NEXT:    hfusion.reshape
// CHECK-NEXT:    hfusion.elemwise_unary {{.*}} : (tensor<5x1xf32>) -> tensor<5x1xf32>
module {
  func.func @squeeze_down(%x: tensor<3x8xf32>, %c: tensor<f32>, %out0: tensor<3xf32>) -> (tensor<3xf32>) attributes {kernel, fusion_kind = "ANY_PB", output_args = [2]} {
    %three = arith.constant {value = 3.0} : () -> f32
    %s = hfusion.slice %x {offsets = [0, 1], sizes = [3, 1], strides = [1, 1]} : (tensor<3x8xf32>) -> tensor<3x1xf32>
    %m = hfusion.elemwise_binary %s, %three {fun = "mul"} : (tensor<3x1xf32>, f32) -> tensor<3x1xf32>
    %q = hfusion.reshape %m : (tensor<3x1xf32>) -> tensor<3xf32>
    %b = hfusion.broadcast %c {dims = [0]} : (tensor<f32>) -> tensor<3xf32>
    %a = hfusion.elemwise_binary %q, %b {fun = "add"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    func.return %a : tensor<3xf32>
  }
  func.func @gather_column(%t: tensor<4xi64>, %l: tensor<4x8xf32>, %out0: tensor<f32>, %out1: tensor<f32>) -> (tensor<f32>, tensor<f32>) attributes {kernel, fusion_kind = "LAST_AXIS_PBR", output_args = [2, 3]} {
    %zero = arith.constant {value = 0.0} : () -> f32
    %one = arith.constant {value = 1.0} : () -> f32
    %ignore = arith.constant {value = -100} : () -> i64
    %ne = hfusion.compare %t, %ignore {predicate = "ne"} : (tensor<4xi64>, i64) -> tensor<4xi1>
    %z = hfusion.fill {value = 0} : () -> tensor<i64>
    %zb = hfusion.broadcast %z {dims = [0]} : (tensor<i64>) -> tensor<4xi64>
    %w = hfusion.select %ne, %t, %zb : (tensor<4xi1>, tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
    %idx = hfusion.reshape %w : (tensor<4xi64>) -> tensor<4x1xi64>
    %g = hfusion.gather %l, %idx {dim = 1} : (tensor<4x8xf32>, tensor<4x1xi64>) -> tensor<4x1xf32>
    %n = hfusion.elemwise_unary %g {fun = "neg"} : (tensor<4x1xf32>) -> tensor<4x1xf32>
    %nq = hfusion.reshape %n : (tensor<4x1xf32>) -> tensor<4xf32>
    %f = hfusion.fill {value = 0.0} : () -> tensor<f32>
    %fb = hfusion.broadcast %f {dims = [0]} : (tensor<f32>) -> tensor<4xf32>
    %loss = hfusion.select %ne, %nq, %fb : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %cnt = hfusion.select %ne, %one, %zero : (tensor<4xi1>, f32, f32) -> tensor<4xf32>
    %sc = hfusion.reduce %cnt {dims = [0], kind = "sum"} : (tensor<4xf32>) -> tensor<f32>
    %sl = hfusion.reduce %loss {dims = [0], kind = "sum"} : (tensor<4xf32>) -> tensor<f32>
    func.return %sc, %sl : tensor<f32>, tensor<f32>
  }
  func.func @argument_read_twice(%g: tensor<3xf32>, %out0: tensor<1xf32>, %out1: tensor<3x1xf32>) -> (tensor<1xf32>, tensor<3x1xf32>) attributes {kernel, fusion_kind = "LAST_AXIS_PBR", output_args = [1, 2]} {
    %three = arith.constant {value = 3.0} : () -> f32
    %s = hfusion.reduce %g {dims = [0], kind = "sum"} : (tensor<3xf32>) -> tensor<f32>
    %rs = hfusion.reshape %s : (tensor<f32>) -> tensor<1xf32>
    %v = hfusion.reshape %g : (tensor<3xf32>) -> tensor<3x1xf32>
    %m = hfusion.elemwise_binary %v, %three {fun = "mul"} : (tensor<3x1xf32>, f32) -> tensor<3x1xf32>
    func.return %rs, %m : tensor<1xf32>, tensor<3x1xf32>
  }
  func.func @stays(%x: tensor<6x5xf32>, %out0: tensor<6x1xf32>, %out1: tensor<6x1xf16>) -> (tensor<6x1xf32>, tensor<6x1xf16>) attributes {kernel, fusion_kind = "LAST_AXIS_PBR", output_args = [1, 2]} {
    %s = hfusion.reduce %x {dims = [1], kind = "sum"} : (tensor<6x5xf32>) -> tensor<6xf32>
    %r = hfusion.reshape %s : (tensor<6xf32>) -> tensor<6x1xf32>
    %e = hfusion.elemwise_unary %r {fun = "exp"} : (tensor<6x1xf32>) -> tensor<6x1xf32>
    %c = hfusion.cast %s {round_mode = "rint"} : (tensor<6xf32>) -> tensor<6xf16>
    %rc = hfusion.reshape %c : (tensor<6xf16>) -> tensor<6x1xf16>
    func.return %e, %rc : tensor<6x1xf32>, tensor<6x1xf16>
  }
  func.func @rotary_table(%a: tensor<1x4x8xf32>, %q: tensor<2x3x4x8xf32>, %out0: tensor<2x3x4x8xf32>, %out1: tensor<1x1x4x8xf32>) -> (tensor<2x3x4x8xf32>, tensor<1x1x4x8xf32>) attributes {kernel, fusion_kind = "ANY_PB", output_args = [2, 3]} {
    %c = hfusion.elemwise_unary %a {fun = "cos"} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    %saved = hfusion.reshape %c : (tensor<1x4x8xf32>) -> tensor<1x1x4x8xf32>
    %s = hfusion.elemwise_unary %a {fun = "sin"} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    %rc = hfusion.reshape %c : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %bc = hfusion.broadcast %rc {dims = [0, 1]} : (tensor<4x8xf32>) -> tensor<2x3x4x8xf32>
    %qc = hfusion.elemwise_binary %q, %bc {fun = "mul"} : (tensor<2x3x4x8xf32>, tensor<2x3x4x8xf32>) -> tensor<2x3x4x8xf32>
    %rs = hfusion.reshape %s : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %bs = hfusion.broadcast %rs {dims = [0, 1]} : (tensor<4x8xf32>) -> tensor<2x3x4x8xf32>
    %qs = hfusion.elemwise_binary %q, %bs {fun = "mul"} : (tensor<2x3x4x8xf32>, tensor<2x3x4x8xf32>) -> tensor<2x3x4x8xf32>
    %r = hfusion.elemwise_binary %qc, %qs {fun = "add"} : (tensor<2x3x4x8xf32>, tensor<2x3x4x8xf32>) -> tensor<2x3x4x8xf32>
    func.return %r, %saved : tensor<2x3x4x8xf32>, tensor<1x1x4x8xf32>
  }
  func.func @rotary_table_cast(%a: tensor<1x4x8xf32>, %q: tensor<2x3x4x8xbf16>, %out0: tensor<2x3x4x8xbf16>) -> (tensor<2x3x4x8xbf16>) attributes {kernel, fusion_kind = "ANY_PB", output_args = [2]} {
    %c = hfusion.elemwise_unary %a {fun = "cos"} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    %h = hfusion.cast %c {round_mode = "rint"} : (tensor<1x4x8xf32>) -> tensor<1x4x8xbf16>
    %rh = hfusion.reshape %h : (tensor<1x4x8xbf16>) -> tensor<4x8xbf16>
    %bh = hfusion.broadcast %rh {dims = [0, 1]} : (tensor<4x8xbf16>) -> tensor<2x3x4x8xbf16>
    %r = hfusion.elemwise_binary %q, %bh {fun = "mul"} : (tensor<2x3x4x8xbf16>, tensor<2x3x4x8xbf16>) -> tensor<2x3x4x8xbf16>
    func.return %r : tensor<2x3x4x8xbf16>
  }
  func.func @rotary_table_scaled(%a: tensor<1x4x8xf32>, %s: tensor<f32>, %q: tensor<2x3x4x8xf32>, %out0: tensor<2x3x4x8xf32>) -> (tensor<2x3x4x8xf32>) attributes {kernel, fusion_kind = "ANY_PB", output_args = [3]} {
    %c = hfusion.elemwise_unary %a {fun = "cos"} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    %bs = hfusion.broadcast %s {dims = [0, 1, 2]} : (tensor<f32>) -> tensor<1x4x8xf32>
    %m = hfusion.elemwise_binary %c, %bs {fun = "mul"} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    %rm = hfusion.reshape %m : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %bm = hfusion.broadcast %rm {dims = [0, 1]} : (tensor<4x8xf32>) -> tensor<2x3x4x8xf32>
    %r = hfusion.elemwise_binary %q, %bm {fun = "mul"} : (tensor<2x3x4x8xf32>, tensor<2x3x4x8xf32>) -> tensor<2x3x4x8xf32>
    func.return %r : tensor<2x3x4x8xf32>
  }
  func.func @rotary_table_one_key_head(%a: tensor<1x4x8xf32>, %q: tensor<2x3x4x8xf32>, %k: tensor<2x1x4x8xf32>, %out0: tensor<2x3x4x8xf32>, %out1: tensor<2x1x4x8xf32>) -> (tensor<2x3x4x8xf32>, tensor<2x1x4x8xf32>) attributes {kernel, fusion_kind = "ANY_PB", output_args = [3, 4]} {
    %c = hfusion.elemwise_unary %a {fun = "cos"} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    %rc = hfusion.reshape %c : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %bq = hfusion.broadcast %rc {dims = [0, 1]} : (tensor<4x8xf32>) -> tensor<2x3x4x8xf32>
    %rq = hfusion.elemwise_binary %q, %bq {fun = "mul"} : (tensor<2x3x4x8xf32>, tensor<2x3x4x8xf32>) -> tensor<2x3x4x8xf32>
    %bk = hfusion.broadcast %c {dims = [0]} : (tensor<1x4x8xf32>) -> tensor<2x1x4x8xf32>
    %rk = hfusion.elemwise_binary %k, %bk {fun = "mul"} : (tensor<2x1x4x8xf32>, tensor<2x1x4x8xf32>) -> tensor<2x1x4x8xf32>
    func.return %rq, %rk : tensor<2x3x4x8xf32>, tensor<2x1x4x8xf32>
  }
  func.func @rotary_table_returned(%a: tensor<1x4x8xf32>, %q: tensor<2x3x4x8xf32>, %out0: tensor<2x3x4x8xf32>, %out1: tensor<1x4x8xf32>) -> (tensor<2x3x4x8xf32>, tensor<1x4x8xf32>) attributes {kernel, fusion_kind = "ANY_PB", output_args = [2, 3]} {
    %c = hfusion.elemwise_unary %a {fun = "cos"} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    %rc = hfusion.reshape %c : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %bq = hfusion.broadcast %rc {dims = [0, 1]} : (tensor<4x8xf32>) -> tensor<2x3x4x8xf32>
    %rq = hfusion.elemwise_binary %q, %bq {fun = "mul"} : (tensor<2x3x4x8xf32>, tensor<2x3x4x8xf32>) -> tensor<2x3x4x8xf32>
    func.return %rq, %c : tensor<2x3x4x8xf32>, tensor<1x4x8xf32>
  }
  func.func @host(%x: tensor<5xf32>) -> (tensor<5x1xf32>) {
    %r = hfusion.reshape %x : (tensor<5xf32>) -> tensor<5x1xf32>
    %e = hfusion.elemwise_unary %r {fun = "exp"} : (tensor<5x1xf32>) -> tensor<5x1xf32>
    func.return %e : tensor<5x1xf32>
  }
}
