// RUN: npu-opt %s -p hfusion-rematerialize-layouts --split-input-file | filecheck %s

// A causal mask: one arange broadcast as a row (along domain dim 1) and as a column (along dim 0). Each broadcast
// gets its own arange; the fill, used in one layout, stays one op.
// CHECK-LABEL: func.func @causal(
// CHECK:         [[ROW:%[0-9a-z_]+]] = hfusion.arange {start = 0, step = 1} : () -> tensor<8xi64>
// CHECK-NEXT:    [[COL:%[0-9a-z_]+]] = hfusion.arange {start = 0, step = 1} : () -> tensor<8xi64>
// CHECK-NOT:     hfusion.arange
// CHECK:         hfusion.broadcast [[ROW]] {dims = [0]}
// CHECK:         hfusion.broadcast [[COL]] {dims = [1]}
// CHECK-COUNT-1: hfusion.fill
// CHECK-NOT:     hfusion.fill
// CHECK:         func.return
module {
  func.func @causal(%x: tensor<8x8xf32>, %out0: tensor<8x8xf32>) -> (tensor<8x8xf32>) attributes {kernel, fusion_kind = "ANY_PB", output_args = [1]} {
    %zero = arith.constant {value = 0.0} : () -> f32
    %a = hfusion.arange {start = 0, step = 1} : () -> tensor<8xi64>
    %r = hfusion.broadcast %a {dims = [0]} : (tensor<8xi64>) -> tensor<8x8xi64>
    %c = hfusion.broadcast %a {dims = [1]} : (tensor<8xi64>) -> tensor<8x8xi64>
    %le = hfusion.compare %r, %c {predicate = "le"} : (tensor<8x8xi64>, tensor<8x8xi64>) -> tensor<8x8xi1>
    %f = hfusion.fill {value = 0.0} : () -> tensor<8x8xf32>
    %m = hfusion.select %le, %x, %f : (tensor<8x8xi1>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    func.return %m : tensor<8x8xf32>
  }
}

// -----

// A chain over the arange (cast, scale) needed along dims 2 and 1 of a rank-3 domain, and again along dim 2: the
// whole chain is copied once, for the column; both row uses share the first copy.
// CHECK-LABEL: func.func @chain(
// CHECK-COUNT-2: hfusion.arange
// CHECK-NOT:     hfusion.arange
// CHECK-COUNT-2: hfusion.cast
// CHECK-NOT:     hfusion.cast
// CHECK:         func.return
module {
  func.func @chain(%x: tensor<2x8x8xf32>, %out0: tensor<2x8x8xf32>, %out1: tensor<2x8x8xf32>) -> (tensor<2x8x8xf32>, tensor<2x8x8xf32>) attributes {kernel, fusion_kind = "ANY_PB", output_args = [1, 2]} {
    %half = arith.constant {value = 0.5} : () -> f32
    %a = hfusion.arange {start = 0, step = 1} : () -> tensor<8xi32>
    %f = hfusion.cast %a {round_mode = "rint"} : (tensor<8xi32>) -> tensor<8xf32>
    %s = hfusion.elemwise_binary %f, %half {fun = "mul"} : (tensor<8xf32>, f32) -> tensor<8xf32>
    %row = hfusion.broadcast %s {dims = [0, 1]} : (tensor<8xf32>) -> tensor<2x8x8xf32>
    %col = hfusion.broadcast %s {dims = [0, 2]} : (tensor<8xf32>) -> tensor<2x8x8xf32>
    %row2 = hfusion.broadcast %s {dims = [0, 1]} : (tensor<8xf32>) -> tensor<2x8x8xf32>
    %p = hfusion.elemwise_binary %x, %row {fun = "add"} : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
    %q = hfusion.elemwise_binary %p, %col {fun = "mul"} : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
    %w = hfusion.elemwise_binary %x, %row2 {fun = "sub"} : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
    func.return %q, %w : tensor<2x8x8xf32>, tensor<2x8x8xf32>
  }
}

// -----

// The mask is also returned (a store: no layout of its own). The returned value keeps the layout of its broadcast
// use: two aranges, one mask, no third copy.
// CHECK-LABEL: func.func @returned_mask(
// CHECK-COUNT-2: hfusion.arange
// CHECK-NOT:     hfusion.arange
// CHECK:         [[MASK:%[0-9a-z_]+]] = hfusion.compare
// CHECK-NOT:     hfusion.compare
// CHECK:         hfusion.broadcast [[MASK]] {dims = [0]}
// CHECK:         func.return [[MASK]],
module {
  func.func @returned_mask(%x: tensor<4x8x8xf32>, %out0: tensor<8x8xi1>, %out1: tensor<4x8x8xf32>) -> (tensor<8x8xi1>, tensor<4x8x8xf32>) attributes {kernel, fusion_kind = "ANY_PB", output_args = [1, 2]} {
    %zero = arith.constant {value = 0.0} : () -> f32
    %a = hfusion.arange {start = 0, step = 1} : () -> tensor<8xi64>
    %r = hfusion.broadcast %a {dims = [0]} : (tensor<8xi64>) -> tensor<8x8xi64>
    %c = hfusion.broadcast %a {dims = [1]} : (tensor<8xi64>) -> tensor<8x8xi64>
    %le = hfusion.compare %r, %c {predicate = "le"} : (tensor<8x8xi64>, tensor<8x8xi64>) -> tensor<8x8xi1>
    %b = hfusion.broadcast %le {dims = [0]} : (tensor<8x8xi1>) -> tensor<4x8x8xi1>
    %m = hfusion.select %b, %x, %zero : (tensor<4x8x8xi1>, tensor<4x8x8xf32>, f32) -> tensor<4x8x8xf32>
    func.return %le, %m : tensor<8x8xi1>, tensor<4x8x8xf32>
  }
}

// -----

// A kernel argument needed as a row and as a column is read from GM: each layout gets its own parameter (appended
// after the out-parameters), loaded into its own buffer, and the host passes the same value again.
// CHECK-LABEL: func.func @outer(
// CHECK-SAME:    [[V:%[0-9a-z_]+]]: tensor<8xf32>, [[OUT:%[0-9a-z_]+]]: tensor<8x8xf32>, [[V2:%[0-9a-z_]+]]: tensor<8xf32>)
// CHECK-NEXT:    hfusion.broadcast [[V]] {dims = [0]}
// CHECK-NEXT:    hfusion.broadcast [[V2]] {dims = [1]}
// CHECK-NEXT:    hfusion.elemwise_binary
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @host(
// CHECK:         func.call [[X:%[0-9a-z_]+]], [[E:%[0-9a-z_]+]], [[X]] {callee = "outer"}
module {
  func.func @outer(%v: tensor<8xf32>, %out0: tensor<8x8xf32>) -> (tensor<8x8xf32>) attributes {kernel, fusion_kind = "ANY_PB", output_args = [1]} {
    %r = hfusion.broadcast %v {dims = [0]} : (tensor<8xf32>) -> tensor<8x8xf32>
    %c = hfusion.broadcast %v {dims = [1]} : (tensor<8xf32>) -> tensor<8x8xf32>
    %m = hfusion.elemwise_binary %r, %c {fun = "mul"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    func.return %m : tensor<8x8xf32>
  }
  func.func @host(%x: tensor<8xf32>) -> (tensor<8x8xf32>) {
    %e = tensor.empty : () -> tensor<8x8xf32>
    %y = func.call %x, %e {callee = "outer"} : (tensor<8xf32>, tensor<8x8xf32>) -> (tensor<8x8xf32>)
    func.return %y : tensor<8x8xf32>
  }
}
