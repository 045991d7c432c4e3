// RUN: npu-opt %s -p hfusion-fuse-ops --split-input-file | filecheck %s

// x*y+z: one PURE_ELEMWISE kernel; inputs first, then one out-parameter per result.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    [[X:%[0-9a-z_]+]]: tensor<s0x128xf32>, [[Y:%[0-9a-z_]+]]: tensor<s0x128xf32>, [[Z:%[0-9a-z_]+]]: tensor<s0x128xf32>, [[O:%[0-9a-z_]+]]: tensor<s0x128xf32>) -> (tensor<s0x128xf32>)
// CHECK-SAME:    attributes {fusion_kind = "PURE_ELEMWISE", kernel, output_args = [3]}
// CHECK-NEXT:    [[M:%[0-9a-z_]+]] = hfusion.elemwise_binary [[X]], [[Y]] {fun = "mul"}
// CHECK-NEXT:    [[A:%[0-9a-z_]+]] = hfusion.elemwise_binary [[M]], [[Z]] {fun = "add"}
// CHECK-NEXT:    func.return [[A]] :
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    [[HX:%[0-9a-z_]+]]: tensor<s0x128xf32>, [[HY:%[0-9a-z_]+]]: tensor<s0x128xf32>, [[HZ:%[0-9a-z_]+]]: tensor<s0x128xf32>)
// CHECK-NEXT:    [[E:%[0-9a-z_]+]] = tensor.empty : () -> tensor<s0x128xf32>
// CHECK-NEXT:    [[R:%[0-9a-z_]+]] = func.call [[HX]], [[HY]], [[HZ]], [[E]] {callee = "main_fused_0"}
// CHECK-NEXT:    func.return [[R]] :
module attributes {symbols = {s0 = [1, 64]}} {
  func.func @main(%x: tensor<s0x128xf32>, %y: tensor<s0x128xf32>, %z: tensor<s0x128xf32>) -> (tensor<s0x128xf32>) {
    %m = hfusion.elemwise_binary %x, %y {fun = "mul"} : (tensor<s0x128xf32>, tensor<s0x128xf32>) -> tensor<s0x128xf32>
    %a = hfusion.elemwise_binary %m, %z {fun = "add"} : (tensor<s0x128xf32>, tensor<s0x128xf32>) -> tensor<s0x128xf32>
    func.return %a : tensor<s0x128xf32>
  }
}

// -----

// Softmax as the importer emits it (keepdim through reshapes): one LAST_AXIS_PBR kernel with one result;
// scalar constants are cloned into the kernel.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    -> (tensor<4x32xf32>) attributes {fusion_kind = "LAST_AXIS_PBR", kernel, output_args = [1]}
// CHECK:         arith.constant
// CHECK:         hfusion.reduce {{.*}}kind = "max"
// CHECK:         hfusion.reduce {{.*}}kind = "sum"
// CHECK:         hfusion.elemwise_binary {{.*}}fun = "div"
// CHECK-NEXT:    func.return
// CHECK-NOT:   func.func @main_fused_1
// CHECK-LABEL: func.func @main(
// CHECK-NOT:     hfusion.
// CHECK-NOT:     arith.constant
// CHECK:         func.call {{.*}}callee = "main_fused_0"
module {
  func.func @main(%x: tensor<4x32xf32>) -> (tensor<4x32xf32>) {
    %t = arith.constant {value = 0.5} : () -> f32
    %xt = hfusion.elemwise_binary %x, %t {fun = "mul"} : (tensor<4x32xf32>, f32) -> tensor<4x32xf32>
    %max = hfusion.reduce %xt {dims = [1], kind = "max"} : (tensor<4x32xf32>) -> tensor<4xf32>
    %maxk = hfusion.reshape %max : (tensor<4xf32>) -> tensor<4x1xf32>
    %max2 = hfusion.reshape %maxk : (tensor<4x1xf32>) -> tensor<4xf32>
    %maxb = hfusion.broadcast %max2 {dims = [1]} : (tensor<4xf32>) -> tensor<4x32xf32>
    %sub = hfusion.elemwise_binary %xt, %maxb {fun = "sub"} : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
    %exp = hfusion.elemwise_unary %sub {fun = "exp"} : (tensor<4x32xf32>) -> tensor<4x32xf32>
    %sum = hfusion.reduce %exp {dims = [1], kind = "sum"} : (tensor<4x32xf32>) -> tensor<4xf32>
    %sumb = hfusion.broadcast %sum {dims = [1]} : (tensor<4xf32>) -> tensor<4x32xf32>
    %div = hfusion.elemwise_binary %exp, %sumb {fun = "div"} : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
    func.return %div : tensor<4x32xf32>
  }
}

// -----

// A matmul between two elementwise chains: three kernels, the matmul alone (SINGLE_CUBE), called in order.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    fusion_kind = "PURE_ELEMWISE"
// CHECK-LABEL: func.func @main_fused_1(
// CHECK-SAME:    fusion_kind = "SINGLE_CUBE"
// CHECK-NEXT:    hfusion.matmul
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @main_fused_2(
// CHECK-SAME:    fusion_kind = "PURE_ELEMWISE"
// CHECK-LABEL: func.func @main(
// CHECK:         [[A:%[0-9a-z_]+]] = func.call {{.*}}callee = "main_fused_0"
// CHECK:         [[B:%[0-9a-z_]+]] = func.call [[A]], {{.*}}callee = "main_fused_1"
// CHECK:         func.call [[B]], {{.*}}callee = "main_fused_2"
module {
  func.func @main(%x: tensor<8x32xf32>, %w: tensor<32x48xf32>) -> (tensor<8x48xf32>) {
    %xs = hfusion.elemwise_unary %x {fun = "sigmoid"} : (tensor<8x32xf32>) -> tensor<8x32xf32>
    %xm = hfusion.elemwise_binary %x, %xs {fun = "mul"} : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    %mm = hfusion.matmul %xm, %w : (tensor<8x32xf32>, tensor<32x48xf32>) -> tensor<8x48xf32>
    %t = hfusion.elemwise_unary %mm {fun = "tanh"} : (tensor<8x48xf32>) -> tensor<8x48xf32>
    %y = hfusion.elemwise_unary %t {fun = "relu"} : (tensor<8x48xf32>) -> tensor<8x48xf32>
    func.return %y : tensor<8x48xf32>
  }
}

// -----

// A reshape next to a group is absorbed; %a, used only inside the group, is no result (it never touches GM).
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    -> (tensor<8x32xf32>, tensor<256xf32>) attributes {fusion_kind = "PURE_ELEMWISE", kernel, output_args = [1, 2]}
// CHECK:         func.return [[B:%[0-9a-z_]+]], [[R:%[0-9a-z_]+]] : tensor<8x32xf32>, tensor<256xf32>
// CHECK-LABEL: func.func @main(
// CHECK:         [[C:%[0-9a-z_]+]]:2 = func.call
// CHECK-NEXT:    func.return [[C]]#0, [[C]]#1
module {
  func.func @main(%x: tensor<8x32xf32>) -> (tensor<8x32xf32>, tensor<256xf32>) {
    %a = hfusion.elemwise_unary %x {fun = "exp"} : (tensor<8x32xf32>) -> tensor<8x32xf32>
    %b = hfusion.elemwise_unary %a {fun = "abs"} : (tensor<8x32xf32>) -> tensor<8x32xf32>
    %r = hfusion.reshape %a : (tensor<8x32xf32>) -> tensor<256xf32>
    func.return %b, %r : tensor<8x32xf32>, tensor<256xf32>
  }
}

// -----

// Reductions over different dims of one input (a full sum, row sums) read it horizontally but are not one domain:
// one kernel each; the two row sums (same dims) share one.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK:         hfusion.reduce {{%[0-9a-z_]+}} {dims = [0, 1], kind = "sum"}
// CHECK-NOT:     hfusion.reduce
// CHECK:         func.return
// CHECK-LABEL: func.func @main_fused_1(
// CHECK:         hfusion.reduce {{%[0-9a-z_]+}} {dims = [1], kind = "sum"}
// CHECK-NEXT:    hfusion.reduce {{%[0-9a-z_]+}} {dims = [1], kind = "max"}
// CHECK-NEXT:    func.return
module {
  func.func @main(%x: tensor<8x32xf32>) -> (tensor<f32>, tensor<8xf32>, tensor<8xf32>) {
    %all = hfusion.reduce %x {dims = [0, 1], kind = "sum"} : (tensor<8x32xf32>) -> tensor<f32>
    %rows = hfusion.reduce %x {dims = [1], kind = "sum"} : (tensor<8x32xf32>) -> tensor<8xf32>
    %rmax = hfusion.reduce %x {dims = [1], kind = "max"} : (tensor<8x32xf32>) -> tensor<8xf32>
    func.return %all, %rows, %rmax : tensor<f32>, tensor<8xf32>, tensor<8xf32>
  }
}

// -----

// Two slices of one input of different shapes (6x5, 6x1) are read horizontally, but their loop nests of the
// domain's rank differ (not one domain): one kernel each.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    -> (tensor<6x5xf32>)
// CHECK-LABEL: func.func @main_fused_1(
// CHECK-SAME:    -> (tensor<6x1xf32>)
module {
  func.func @main(%x: tensor<6x8xf32>) -> (tensor<6x5xf32>, tensor<6x1xf32>) {
    %a = hfusion.slice %x {offsets = [0, 2], sizes = [6, 5], strides = [1, 1]} : (tensor<6x8xf32>) -> tensor<6x5xf32>
    %b = hfusion.slice %x {offsets = [0, 7], sizes = [6, 1], strides = [1, 1]} : (tensor<6x8xf32>) -> tensor<6x1xf32>
    %two = arith.constant {value = 2.0} : () -> f32
    %a2 = hfusion.elemwise_binary %a, %two {fun = "mul"} : (tensor<6x5xf32>, f32) -> tensor<6x5xf32>
    %b2 = hfusion.elemwise_binary %b, %two {fun = "mul"} : (tensor<6x1xf32>, f32) -> tensor<6x1xf32>
    func.return %a2, %b2 : tensor<6x5xf32>, tensor<6x1xf32>
  }
}

// -----

// A value stored and also summed over its rows: with a compare (i1: column strips of 32) and 256 rows the buffers
// of one pass would not fit UB, so the gradient stays a kernel over every core and the column sum one of its own; over 64
// rows they fit, and the two fuse (the sum reads the gradient from UB).
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    -> (tensor<256x512xf32>) attributes {fusion_kind = "ANY_PB"
// CHECK:         hfusion.compare
// CHECK-NOT:     hfusion.reduce
// CHECK:       func.return
// CHECK-LABEL: func.func @main_fused_1(
// CHECK-SAME:    -> (tensor<512xf32>) attributes {fusion_kind = "ANY_PBR"
// CHECK-NOT:     hfusion.compare
// CHECK:         hfusion.reduce
// CHECK-LABEL: func.func @main_fused_2(
// CHECK-SAME:    -> (tensor<64x512xf32>, tensor<512xf32>) attributes {fusion_kind = "ANY_PBR"
// CHECK:         hfusion.compare
// CHECK:         hfusion.reduce
module {
  func.func @main(%i: tensor<256xi32>, %e: tensor<256x512xf32>, %s: tensor<256xf32>, %j: tensor<64xi32>, %f: tensor<64x512xf32>) -> (tensor<256x512xf32>, tensor<512xf32>, tensor<64x512xf32>, tensor<512xf32>) {
    %c = arith.constant {value = -1.0} : () -> f32
    %zero = arith.constant {value = 0.0} : () -> f32
    %a = hfusion.arange {start = 0, step = 1} : () -> tensor<512xi32>
    %p = hfusion.broadcast %a {dims = [0]} : (tensor<512xi32>) -> tensor<256x512xi32>
    %ib = hfusion.broadcast %i {dims = [1]} : (tensor<256xi32>) -> tensor<256x512xi32>
    %h = hfusion.compare %ib, %p {predicate = "eq"} : (tensor<256x512xi32>, tensor<256x512xi32>) -> tensor<256x512xi1>
    %o = hfusion.select %h, %c, %zero : (tensor<256x512xi1>, f32, f32) -> tensor<256x512xf32>
    %x = hfusion.elemwise_unary %e {fun = "exp"} : (tensor<256x512xf32>) -> tensor<256x512xf32>
    %sb = hfusion.broadcast %s {dims = [1]} : (tensor<256xf32>) -> tensor<256x512xf32>
    %m = hfusion.elemwise_binary %x, %sb {fun = "mul"} : (tensor<256x512xf32>, tensor<256x512xf32>) -> tensor<256x512xf32>
    %g = hfusion.elemwise_binary %o, %m {fun = "sub"} : (tensor<256x512xf32>, tensor<256x512xf32>) -> tensor<256x512xf32>
    %r = hfusion.reduce %g {dims = [0], kind = "sum"} : (tensor<256x512xf32>) -> tensor<512xf32>
    %a2 = hfusion.arange {start = 0, step = 1} : () -> tensor<512xi32>
    %p2 = hfusion.broadcast %a2 {dims = [0]} : (tensor<512xi32>) -> tensor<64x512xi32>
    %jb = hfusion.broadcast %j {dims = [1]} : (tensor<64xi32>) -> tensor<64x512xi32>
    %h2 = hfusion.compare %jb, %p2 {predicate = "eq"} : (tensor<64x512xi32>, tensor<64x512xi32>) -> tensor<64x512xi1>
    %o2 = hfusion.select %h2, %c, %zero : (tensor<64x512xi1>, f32, f32) -> tensor<64x512xf32>
    %x2 = hfusion.elemwise_unary %f {fun = "exp"} : (tensor<64x512xf32>) -> tensor<64x512xf32>
    %g2 = hfusion.elemwise_binary %o2, %x2 {fun = "sub"} : (tensor<64x512xf32>, tensor<64x512xf32>) -> tensor<64x512xf32>
    %r2 = hfusion.reduce %g2 {dims = [0], kind = "sum"} : (tensor<64x512xf32>) -> tensor<512xf32>
    func.return %g, %r, %g2, %r2 : tensor<256x512xf32>, tensor<512xf32>, tensor<64x512xf32>, tensor<512xf32>
  }
}

// -----

// A reduction of [16, 64] partial sums beside elementwise work over [16, 64, 256] (a batch norm's final sum and
// its normalisation): a kernel's domain is its largest tensors' shape and the reduction's input has no place in
// it, so they stay two kernels.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    -> (tensor<64xf32>) attributes {fusion_kind = "ANY_PBR"
// CHECK-LABEL: func.func @main_fused_1(
// CHECK-SAME:    -> (tensor<16x64x256xf32>) attributes {fusion_kind = "ANY_PB"
module {
  func.func @main(%p: tensor<16x64xf32>, %x: tensor<16x64x256xf32>) -> (tensor<16x64x256xf32>) {
    %0 = hfusion.reduce %p {dims = [0], kind = "sum"} : (tensor<16x64xf32>) -> tensor<64xf32>
    %1 = hfusion.broadcast %0 {dims = [0, 2]} : (tensor<64xf32>) -> tensor<16x64x256xf32>
    %2 = hfusion.elemwise_binary %x, %1 {fun = "sub"} : (tensor<16x64x256xf32>, tensor<16x64x256xf32>) -> tensor<16x64x256xf32>
    func.return %2 : tensor<16x64x256xf32>
  }
}

// -----

// A position-embedding lookup [16, 8] broadcast over the batch of a [2, 16, 8] row sum (GPT-2's wpe beside its
// first layer norm): a gather's source and result have the kernel's domain rank, so the lookup is a kernel of its
// own and the sum reads it broadcast.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    -> (tensor<16x8xf32>) attributes {fusion_kind = "ANY_PB"
// CHECK:         hfusion.gather
// CHECK-LABEL: func.func @main_fused_1(
// CHECK-SAME:    -> (tensor<2x16xf32>) attributes {fusion_kind = "LAST_AXIS_PBR"
// CHECK-NOT:     hfusion.gather
// CHECK:         func.return
module {
  func.func @main(%wpe: tensor<64x8xf32>, %x: tensor<2x16x8xf32>) -> (tensor<2x16xf32>) {
    %p = hfusion.arange {start = 0, step = 1} : () -> tensor<16xi64>
    %pb = hfusion.broadcast %p {dims = [1]} : (tensor<16xi64>) -> tensor<16x8xi64>
    %e = hfusion.gather %wpe, %pb {dim = 0} : (tensor<64x8xf32>, tensor<16x8xi64>) -> tensor<16x8xf32>
    %eb = hfusion.broadcast %e {dims = [0]} : (tensor<16x8xf32>) -> tensor<2x16x8xf32>
    %a = hfusion.elemwise_binary %x, %eb {fun = "add"} : (tensor<2x16x8xf32>, tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
    %s = hfusion.reduce %a {dims = [2], kind = "sum"} : (tensor<2x16x8xf32>) -> tensor<2x16xf32>
    func.return %s : tensor<2x16xf32>
  }
}
