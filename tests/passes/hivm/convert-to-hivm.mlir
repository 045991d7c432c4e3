// RUN: npu-opt %s -p convert-to-hivm --split-input-file | filecheck %s

// A scheduled elementwise kernel: gm arguments, tiling parameters (sorted by name), a loop over the tiles cyclic
// over the cores, a partial last tile, the loads grouped at the top of the body (the load stage), vector ops (the
// add in place into the product's buffer, a vector-scalar multiply), a store; the host call becomes hivm.launch.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    [[X:%[a-z0-9_]+]]: memref<(128*s0)xf16, gm>, [[Y:%[a-z0-9_]+]]: memref<(128*s0)xf16, gm>, [[Z:%[a-z0-9_]+]]: memref<(128*s0)xf16, gm>, [[OUT:%[a-z0-9_]+]]: memref<(128*s0)xf16, gm>
// CHECK-SAME:    [[BD:%block_dim]]: index, [[N:%n0]]: index, [[NT:%n_tiles]]: index, %tiles0: index)
// CHECK-DAG:     [[C2:%[a-z0-9_]+]] = arith.constant {value = 2.0} : () -> f16
// CHECK-DAG:     [[TILE:%[a-z0-9_]+]] = arith.constant {value = 12288} : () -> index
// CHECK:         [[BID:%[a-z0-9_]+]] = hivm.get_block_idx
// CHECK:         hivm.alloc {buffer = 0} : () -> memref<12288xf16>
// CHECK-NEXT:    hivm.alloc {buffer = 1} : () -> memref<12288xf16>
// CHECK-NEXT:    hivm.alloc {buffer = 2} : () -> memref<12288xf16>
// CHECK-NEXT:    hivm.alloc {buffer = 3} : () -> memref<12288xf16>
// CHECK:         scf.for [[BID]], [[NT]], [[BD]] ({
// CHECK-NEXT:    ^bb0([[T:%[a-z0-9_]+]]: index):
// CHECK-NEXT:      [[OFF:%[a-z0-9_]+]] = arith.muli [[T]], [[TILE]]
// CHECK-NEXT:      [[REM:%[a-z0-9_]+]] = arith.subi [[N]], [[OFF]]
// CHECK-NEXT:      [[LEN:%[a-z0-9_]+]] = arith.minsi [[REM]], [[TILE]]
// CHECK-NEXT:      hivm.load [[X]], [[UX:%[a-z0-9_]+]], [[OFF]], [[LEN]]
// CHECK-NEXT:      hivm.load [[Y]], [[UY:%[a-z0-9_]+]], [[OFF]], [[LEN]]
// CHECK-NEXT:      hivm.load [[Z]], [[UZ:%[a-z0-9_]+]], [[OFF]], [[LEN]]
// CHECK-NEXT:      hivm.vbinary [[UX]], [[UY]], [[UT:%[a-z0-9_]+]], [[LEN]] {fun = "mul"}
// CHECK-NEXT:      hivm.vbinary [[UT]], [[UZ]], [[UT]], [[LEN]] {fun = "add"}
// CHECK-NEXT:      hivm.vbinary [[UT]], [[C2]], [[UT]], [[LEN]] {fun = "mul"}
// CHECK-NEXT:      hivm.store [[UT]], [[OUT]], [[OFF]], [[LEN]]
// CHECK:       func.func @main(
// CHECK:         hivm.launch %a, %b, %c, %e {callee = "main_fused_0"}
// CHECK-NOT:     func.call
module attributes {symbols = {s0 = [1, 1000000]}, target = "ascend910b1"} {
  func.func @main_fused_0(%x: tensor<(128*s0)xf16>, %y: tensor<(128*s0)xf16>, %z: tensor<(128*s0)xf16>, %out: tensor<(128*s0)xf16>) -> (tensor<(128*s0)xf16>) attributes {fusion_kind = "PURE_ELEMWISE", kernel, output_args = [3], schedule = #hfusion.schedule<{kind = "PURE_ELEMWISE", tile = [12288], ub_bytes = 196608, buffers = [{dtype = "f16", dims = [0], values = ["a0"], copies = 2, loaded = true}, {dtype = "f16", dims = [0], values = ["a1"], copies = 2, loaded = true}, {dtype = "f16", dims = [0], values = ["a2"], copies = 2, loaded = true}, {dtype = "f16", dims = [0], values = ["o0", "o1", "o3"], copies = 2, stored = true}]}>, tiling = {block_dim = (Min(48,ceiling(s0/96))), n0 = (128*s0), n_tiles = (ceiling(s0/96)), tiles0 = (ceiling(s0/96))}} {
    %t = hfusion.elemwise_binary %x, %y {fun = "mul"} : (tensor<(128*s0)xf16>, tensor<(128*s0)xf16>) -> tensor<(128*s0)xf16>
    %u = hfusion.elemwise_binary %t, %z {fun = "add"} : (tensor<(128*s0)xf16>, tensor<(128*s0)xf16>) -> tensor<(128*s0)xf16>
    %c = arith.constant {value = 2.0} : () -> f16
    %r = hfusion.elemwise_binary %u, %c {fun = "mul"} : (tensor<(128*s0)xf16>, f16) -> tensor<(128*s0)xf16>
    func.return %r : tensor<(128*s0)xf16>
  }
  func.func @main(%a: tensor<(128*s0)xf16>, %b: tensor<(128*s0)xf16>, %c: tensor<(128*s0)xf16>) -> (tensor<(128*s0)xf16>) {
    %e = tensor.empty : () -> tensor<(128*s0)xf16>
    %r = func.call %a, %b, %c, %e {callee = "main_fused_0"} : (tensor<(128*s0)xf16>, tensor<(128*s0)xf16>, tensor<(128*s0)xf16>, tensor<(128*s0)xf16>) -> tensor<(128*s0)xf16>
    func.return %r : tensor<(128*s0)xf16>
  }
}

// -----

// A row reduction whose rows fit one tile: a bias row is added to every row (the add reads the row in place: an
// inlined row broadcast; its gm view gains a unit dim), the row sums
// are reduced into a rows×1 buffer and stored into a rows×1 view of the result. The bias row is the same for every
// work item: it is loaded once, before the loop; the tile's rows are loaded at the top of the body.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    %x: memref<s0x64xf32, gm>, %bias: memref<1x64xf32, gm>, %out0: memref<s0x1xf32, gm>
// CHECK:         hivm.load %bias, [[UB:%[a-z0-9_]+]], %c0, %c0, %c1, %n1 : memref<1x64xf32, gm>, memref<1x64xf32>
// CHECK-NEXT:    scf.for
// CHECK-NOT:     hivm.load %bias
// CHECK:         hivm.load %x
// CHECK-NEXT:    hivm.vbinary {{%[a-z0-9_]+}}, [[UB]], [[B:%[a-z0-9_]+]], [[LEN:%[a-z0-9_]+]], %n1 {fun = "add"}
// CHECK:         hivm.vreduce [[S:%[a-z0-9_]+]], [[R:%[a-z0-9_]+]], [[LEN]], %n1 {dims = [1], kind = "sum"} : memref<{{[0-9]+}}x64xf32>, memref<{{[0-9]+}}x1xf32>
// CHECK-NEXT:    hivm.store [[R]], %out0, [[OFF:%[a-z0-9_]+]], %c0, [[LEN]], %c1
module attributes {symbols = {s0 = [1, 100000]}, target = "ascend910b1"} {
  func.func @main_fused_0(%x: tensor<s0x64xf32>, %bias: tensor<64xf32>, %out0: tensor<s0xf32>) -> (tensor<s0xf32>) attributes {fusion_kind = "LAST_AXIS_PBR", kernel, output_args = [2], schedule = #hfusion.schedule<{kind = "LAST_AXIS_PBR", tile = [128, 64], ub_bytes = 100000, buffers = [{dtype = "f32", dims = [0, 1], values = ["a0"], copies = 2, loaded = true}, {dtype = "f32", dims = [1], values = ["a1"], loaded = true}, {dtype = "f32", dims = [0, 1], values = ["o1"]}, {dtype = "f32", dims = [0], values = ["o2"], copies = 2, stored = true}], reduce_dims = [1], inlined = ["o0"], block_folds = ["o2"]}>, tiling = {block_dim = (Min(48,ceiling(s0/128))), n0 = s0, n1 = 64, n_tiles = (ceiling(s0/128)), tiles0 = (ceiling(s0/128))}} {
    %b = hfusion.broadcast %bias {dims = [0]} : (tensor<64xf32>) -> tensor<s0x64xf32>
    %s = hfusion.elemwise_binary %x, %b {fun = "add"} : (tensor<s0x64xf32>, tensor<s0x64xf32>) -> tensor<s0x64xf32>
    %r = hfusion.reduce %s {dims = [1], kind = "sum"} : (tensor<s0x64xf32>) -> tensor<s0xf32>
    func.return %r : tensor<s0xf32>
  }
}

// -----

// A kernel hfusion-auto-schedule found no vector schedule for (a gather along dim 0) stays at tensor level, marked
// with auto-schedule's reason, and stays called.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    hivm.unsupported = "hfusion.gather", hivm.unsupported_reason = "gathers along dim 0
// CHECK:         hfusion.gather
// CHECK:       func.func @main(
// CHECK:         func.call
module attributes {target = "ascend910b1"} {
  func.func @main_fused_0(%x: tensor<16x4xf32>, %i: tensor<8x4xi64>, %out: tensor<8x4xf32>) -> (tensor<8x4xf32>) attributes {fusion_kind = "ANY_PB", kernel, output_args = [2], schedule_unsupported = "hfusion.gather", schedule_unsupported_reason = "gathers along dim 0 by an index spanning domain dims [0, 1]"} {
    %r = hfusion.gather %x, %i {dim = 0} : (tensor<16x4xf32>, tensor<8x4xi64>) -> tensor<8x4xf32>
    func.return %r : tensor<8x4xf32>
  }
  func.func @main(%a: tensor<16x4xf32>, %b: tensor<8x4xi64>) -> (tensor<8x4xf32>) {
    %e = tensor.empty : () -> tensor<8x4xf32>
    %r = func.call %a, %b, %e {callee = "main_fused_0"} : (tensor<16x4xf32>, tensor<8x4xi64>, tensor<8x4xf32>) -> tensor<8x4xf32>
    func.return %r : tensor<8x4xf32>
  }
}
