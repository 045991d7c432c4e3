// RUN: npu-opt %s -p hfusion-propagate-reshape,canonicalize | filecheck %s

// RMS norm as imported: a keepdim reduction adds a unit dim (reshape [s0] -> [s0x1]), the elementwise ops run on
// [s0x1] (a scalar operand and a fill among their operands), and the expand drops it again before the broadcast.
// The first reshape sinks through the elementwise ops (the fill is re-created at [s0], the scalar is kept) until it
// meets its inverse; canonicalize cancels the pair (and turns the mean's / 16 into * 1/16).
// CHECK-LABEL: func.func @rms_norm(
// CHECK-SAME:    [[X:%[0-9a-z_]+]]: tensor<s0x16xf32>
// CHECK-NOT:     hfusion.reshape
// CHECK:         [[S:%[0-9a-z_]+]] = hfusion.reduce {{.*}} -> tensor<s0xf32>
// CHECK-NOT:     hfusion.reshape
// CHECK:         [[D:%[0-9a-z_]+]] = hfusion.elemwise_binary [[S]], {{%[0-9a-z_]+}} {fun = "mul"} : (tensor<s0xf32>, f32) -> tensor<s0xf32>
// CHECK:         [[E:%[0-9a-z_]+]] = hfusion.fill {value = 1e-06} : () -> tensor<s0xf32>
// CHECK-NEXT:    [[A:%[0-9a-z_]+]] = hfusion.elemwise_binary [[D]], [[E]] {fun = "add"} : (tensor<s0xf32>, tensor<s0xf32>) -> tensor<s0xf32>
// CHECK-NEXT:    [[R:%[0-9a-z_]+]] = hfusion.elemwise_unary [[A]] {fun = "rsqrt"} : (tensor<s0xf32>) -> tensor<s0xf32>
// CHECK-NEXT:    [[B:%[0-9a-z_]+]] = hfusion.broadcast [[R]] {dims = [1]} : (tensor<s0xf32>) -> tensor<s0x16xf32>
// CHECK-NEXT:    [[M:%[0-9a-z_]+]] = hfusion.elemwise_binary [[X]], [[B]] {fun = "mul"}
// CHECK-NEXT:    func.return [[M]] : tensor<s0x16xf32>

// A reshape feeding a broadcast that only adds unit dims folds into the broadcast's dims.
// CHECK-LABEL: func.func @unit_expand_into_broadcast(
// CHECK:         [[S:%[0-9a-z_]+]] = hfusion.reduce
// CHECK-NEXT:    [[B:%[0-9a-z_]+]] = hfusion.broadcast [[S]] {dims = [1, 2]} : (tensor<s0xf32>) -> tensor<s0x1x8xf32>
// CHECK-NEXT:    func.return [[B]] : tensor<s0x1x8xf32>

// With no inverse to meet, the reshape sinks to the end of the chain (the kernel's boundary, a store there).
// CHECK-LABEL: func.func @to_boundary(
// CHECK:         [[S:%[0-9a-z_]+]] = hfusion.reduce
// CHECK-NEXT:    arith.constant {value = 2.0} : () -> f32
// CHECK-NEXT:    [[M:%[0-9a-z_]+]] = hfusion.elemwise_binary [[S]], {{%[0-9a-z_]+}} {fun = "mul"} : (tensor<s0xf32>, f32) -> tensor<s0xf32>
// CHECK-NEXT:    [[N:%[0-9a-z_]+]] = hfusion.elemwise_unary [[M]] {fun = "exp"} : (tensor<s0xf32>) -> tensor<s0xf32>
// CHECK-NEXT:    [[R:%[0-9a-z_]+]] = hfusion.reshape [[N]] : (tensor<s0xf32>) -> tensor<s0x1xf32>
// CHECK-NEXT:    func.return [[R]] : tensor<s0x1xf32>

// Operands reshaped consistently (both from [s0]) sink together; a function argument beside them is read through
// a reshape to [s0] (a load at the boundary); an op whose only reshaped operand is a function argument's (already
// a load at the boundary) stays where it is.
// CHECK-LABEL: func.func @operands(
// CHECK-SAME:    [[X:%[0-9a-z_]+]]: tensor<s0x8xf32>, [[Y:%[0-9a-z_]+]]: tensor<s0x1xf32>, [[Z:%[0-9a-z_]+]]: tensor<s0xf32>
// CHECK:         [[S:%[0-9a-z_]+]] = hfusion.reduce {{.*}}kind = "sum"
// CHECK-NEXT:    [[T:%[0-9a-z_]+]] = hfusion.reduce {{.*}}kind = "max"
// CHECK-NEXT:    [[A:%[0-9a-z_]+]] = hfusion.elemwise_binary [[S]], [[T]] {fun = "sub"} : (tensor<s0xf32>, tensor<s0xf32>) -> tensor<s0xf32>
// CHECK-NEXT:    [[RY:%[0-9a-z_]+]] = hfusion.reshape [[Y]] : (tensor<s0x1xf32>) -> tensor<s0xf32>
// CHECK-NEXT:    [[B:%[0-9a-z_]+]] = hfusion.elemwise_binary [[A]], [[RY]] {fun = "add"} : (tensor<s0xf32>, tensor<s0xf32>) -> tensor<s0xf32>
// CHECK-NEXT:    [[RB:%[0-9a-z_]+]] = hfusion.reshape [[B]] : (tensor<s0xf32>) -> tensor<s0x1xf32>
// CHECK-NEXT:    [[RZ:%[0-9a-z_]+]] = hfusion.reshape [[Z]] : (tensor<s0xf32>) -> tensor<s0x1xf32>
// CHECK-NEXT:    [[C:%[0-9a-z_]+]] = hfusion.elemwise_unary [[RZ]] {fun = "exp"} : (tensor<s0x1xf32>) -> tensor<s0x1xf32>
// CHECK-NEXT:    func.return [[RB]], [[C]] : tensor<s0x1xf32>, tensor<s0x1xf32>
// A reshape of a fill (or of a tensor constant) is the constant at the new shape.
// CHECK-LABEL: func.func @reshape_of_constant(
// CHECK-NEXT:    [[F:%[0-9a-z_]+]] = hfusion.fill {value = 1.0} : () -> tensor<3xf32>
// CHECK-NEXT:    [[B:%[0-9a-z_]+]] = hfusion.broadcast [[F]] {dims = [1]} : (tensor<3xf32>) -> tensor<3x8xf32>
// CHECK-NEXT:    [[C:%[0-9a-z_]+]] = arith.constant {value = [1, 2, 3, 4]} : () -> tensor<4xi32>
// CHECK-NEXT:    func.return [[B]], [[C]] :
// A keepdim statistic scaled before its broadcast: the reshape moves onto the argument (a boundary load).
// CHECK-LABEL: func.func @hoist_to_argument(
// CHECK-SAME:    [[R:%[0-9a-z_]+]]: tensor<s0x1x1xf32>
// CHECK:         [[RR:%[0-9a-z_]+]] = hfusion.reshape [[R]] : (tensor<s0x1x1xf32>) -> tensor<s0xf32>
// CHECK-NEXT:    [[D:%[0-9a-z_]+]] = hfusion.elemwise_binary [[RR]], {{%[0-9a-z_]+}} {fun = "div"} : (tensor<s0xf32>, f32) -> tensor<s0xf32>
// CHECK-NEXT:    hfusion.broadcast [[D]] {dims = [1]}
// A full reduction kept as 1x1 (rank 0 <-> unit dims), and a broadcast adding only unit dims (a reshape): the
// division runs on rank-0 tensors, no reshape is left.
// CHECK-LABEL: func.func @full_reduction(
// CHECK-SAME:    [[X:%[0-9a-z_]+]]: tensor<s0x8xf32>, [[G:%[0-9a-z_]+]]: tensor<f32>
// CHECK:         [[S:%[0-9a-z_]+]] = hfusion.reduce [[X]]
// CHECK-NEXT:    [[D:%[0-9a-z_]+]] = hfusion.elemwise_binary [[G]], [[S]] {fun = "div"} : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT:    func.return [[D]] : tensor<f32>
module attributes {symbols = {s0 = [1, 64]}} {
  func.func @rms_norm(%x: tensor<s0x16xf32>) -> (tensor<s0x16xf32>) {
    %two = arith.constant {value = 2.0} : () -> f32
    %p = hfusion.elemwise_binary %x, %two {fun = "pow"} : (tensor<s0x16xf32>, f32) -> tensor<s0x16xf32>
    %s = hfusion.reduce %p {dims = [1], kind = "sum"} : (tensor<s0x16xf32>) -> tensor<s0xf32>
    %k = hfusion.reshape %s : (tensor<s0xf32>) -> tensor<s0x1xf32>
    %n = arith.constant {value = 16.0} : () -> f32
    %d = hfusion.elemwise_binary %k, %n {fun = "div"} : (tensor<s0x1xf32>, f32) -> tensor<s0x1xf32>
    %eps = hfusion.fill {value = 1e-06} : () -> tensor<s0x1xf32>
    %a = hfusion.elemwise_binary %d, %eps {fun = "add"} : (tensor<s0x1xf32>, tensor<s0x1xf32>) -> tensor<s0x1xf32>
    %r = hfusion.elemwise_unary %a {fun = "rsqrt"} : (tensor<s0x1xf32>) -> tensor<s0x1xf32>
    %u = hfusion.reshape %r : (tensor<s0x1xf32>) -> tensor<s0xf32>
    %b = hfusion.broadcast %u {dims = [1]} : (tensor<s0xf32>) -> tensor<s0x16xf32>
    %m = hfusion.elemwise_binary %x, %b {fun = "mul"} : (tensor<s0x16xf32>, tensor<s0x16xf32>) -> tensor<s0x16xf32>
    func.return %m : tensor<s0x16xf32>
  }
  func.func @unit_expand_into_broadcast(%x: tensor<s0x8xf32>) -> (tensor<s0x1x8xf32>) {
    %s = hfusion.reduce %x {dims = [1], kind = "max"} : (tensor<s0x8xf32>) -> tensor<s0xf32>
    %k = hfusion.reshape %s : (tensor<s0xf32>) -> tensor<s0x1xf32>
    %b = hfusion.broadcast %k {dims = [2]} : (tensor<s0x1xf32>) -> tensor<s0x1x8xf32>
    func.return %b : tensor<s0x1x8xf32>
  }
  func.func @to_boundary(%x: tensor<s0x8xf32>) -> (tensor<s0x1xf32>) {
    %s = hfusion.reduce %x {dims = [1], kind = "sum"} : (tensor<s0x8xf32>) -> tensor<s0xf32>
    %k = hfusion.reshape %s : (tensor<s0xf32>) -> tensor<s0x1xf32>
    %two = arith.constant {value = 2.0} : () -> f32
    %m = hfusion.elemwise_binary %k, %two {fun = "mul"} : (tensor<s0x1xf32>, f32) -> tensor<s0x1xf32>
    %e = hfusion.elemwise_unary %m {fun = "exp"} : (tensor<s0x1xf32>) -> tensor<s0x1xf32>
    func.return %e : tensor<s0x1xf32>
  }
  func.func @operands(%x: tensor<s0x8xf32>, %y: tensor<s0x1xf32>, %z: tensor<s0xf32>) -> (tensor<s0x1xf32>, tensor<s0x1xf32>) {
    %s = hfusion.reduce %x {dims = [1], kind = "sum"} : (tensor<s0x8xf32>) -> tensor<s0xf32>
    %t = hfusion.reduce %x {dims = [1], kind = "max"} : (tensor<s0x8xf32>) -> tensor<s0xf32>
    %ks = hfusion.reshape %s : (tensor<s0xf32>) -> tensor<s0x1xf32>
    %kt = hfusion.reshape %t : (tensor<s0xf32>) -> tensor<s0x1xf32>
    %a = hfusion.elemwise_binary %ks, %kt {fun = "sub"} : (tensor<s0x1xf32>, tensor<s0x1xf32>) -> tensor<s0x1xf32>
    %b = hfusion.elemwise_binary %a, %y {fun = "add"} : (tensor<s0x1xf32>, tensor<s0x1xf32>) -> tensor<s0x1xf32>
    %kz = hfusion.reshape %z : (tensor<s0xf32>) -> tensor<s0x1xf32>
    %c = hfusion.elemwise_unary %kz {fun = "exp"} : (tensor<s0x1xf32>) -> tensor<s0x1xf32>
    func.return %b, %c : tensor<s0x1xf32>, tensor<s0x1xf32>
  }
  func.func @reshape_of_constant() -> (tensor<3x8xf32>, tensor<4xi32>) {
    %f = hfusion.fill {value = 1.0} : () -> tensor<3x1xf32>
    %r = hfusion.reshape %f : (tensor<3x1xf32>) -> tensor<3xf32>
    %b = hfusion.broadcast %r {dims = [1]} : (tensor<3xf32>) -> tensor<3x8xf32>
    %c = arith.constant {value = [[1, 2], [3, 4]]} : () -> tensor<2x2xi32>
    %rc = hfusion.reshape %c : (tensor<2x2xi32>) -> tensor<4xi32>
    func.return %b, %rc : tensor<3x8xf32>, tensor<4xi32>
  }
  func.func @hoist_to_argument(%r: tensor<s0x1x1xf32>) -> (tensor<s0x8xf32>) {
    %c = arith.constant {value = 3.0} : () -> f32
    %d = hfusion.elemwise_binary %r, %c {fun = "div"} : (tensor<s0x1x1xf32>, f32) -> tensor<s0x1x1xf32>
    %u = hfusion.reshape %d : (tensor<s0x1x1xf32>) -> tensor<s0xf32>
    %b = hfusion.broadcast %u {dims = [1]} : (tensor<s0xf32>) -> tensor<s0x8xf32>
    func.return %b : tensor<s0x8xf32>
  }
  func.func @full_reduction(%x: tensor<s0x8xf32>, %g: tensor<f32>) -> (tensor<f32>) {
    %s = hfusion.reduce %x {dims = [0, 1], kind = "sum"} : (tensor<s0x8xf32>) -> tensor<f32>
    %k = hfusion.reshape %s : (tensor<f32>) -> tensor<1x1xf32>
    %gb = hfusion.broadcast %g {dims = [0, 1]} : (tensor<f32>) -> tensor<1x1xf32>
    %d = hfusion.elemwise_binary %gb, %k {fun = "div"} : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
    %u = hfusion.reshape %d : (tensor<1x1xf32>) -> tensor<f32>
    func.return %u : tensor<f32>
  }
}
