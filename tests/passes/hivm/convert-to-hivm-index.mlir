// RUN: npu-opt %s -p hfusion-auto-schedule,convert-to-hivm --split-input-file | filecheck %s

// An arange row broadcast over the rows it scales (the mul reads the row in place), and returned: hivm.varange
// counts from the tile's offset along
// its dim (the row dim is never tiled: offset 0); the returned row is the same in every work item, so only the
// tile at offset 0 stores it (a loop of 0 or 1 iterations).
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    %x: memref<s0x8xf32, gm>, %out0: memref<1x8xf32, gm>, %out1: memref<s0x8xf32, gm>
// CHECK:         scf.for
// CHECK:           [[OFF:%off0]] = arith.muli
// CHECK:           hivm.varange [[A:%[a-z0-9_]+]], %c0, %c1, %n1 {start = 1, step = 2} : memref<1x8xf32>, index, index, index
// CHECK-NEXT:      [[M:%[a-z0-9_]+]] = arith.minsi [[OFF]], %c1
// CHECK-NEXT:      [[ONCE:%once]] = arith.subi %c1, [[M]]
// CHECK-NEXT:      scf.for %c0, [[ONCE]], %c1 ({
// CHECK-NEXT:      ^bb0(%first_tile: index):
// CHECK-NEXT:        hivm.store [[A]], %out0, %c0, %c0, %c1, %n1
// CHECK:           hivm.vbinary {{%[a-z0-9_]+}}, [[A]], {{.*}} {fun = "mul"}
module attributes {symbols = {s0 = [1, 100000]}, target = "ascend910b1"} {
  func.func @main_fused_0(%x: tensor<s0x8xf32>, %out0: tensor<8xf32>, %out1: tensor<s0x8xf32>) -> (tensor<8xf32>, tensor<s0x8xf32>) attributes {fusion_kind = "ANY_PB", kernel, output_args = [1, 2]} {
    %a = hfusion.arange {start = 1, step = 2} : () -> tensor<8xf32>
    %b = hfusion.broadcast %a {dims = [0]} : (tensor<8xf32>) -> tensor<s0x8xf32>
    %m = hfusion.elemwise_binary %x, %b {fun = "mul"} : (tensor<s0x8xf32>, tensor<s0x8xf32>) -> tensor<s0x8xf32>
    func.return %a, %m : tensor<8xf32>, tensor<s0x8xf32>
  }
}

// -----

// An arange along a tiled dim (one value per row): it counts from the work item's row offset; the add reads the
// column in place (an inlined column broadcast).
// CHECK-LABEL: func.func @main_fused_0(
// CHECK:         scf.for
// CHECK:           [[OFF:%off0]] = arith.muli
// CHECK:           hivm.varange [[A:%[a-z0-9_]+]], [[OFF]], [[LEN:%len0]], %c1 {start = 0, step = 1} : memref<{{[0-9]+}}x1xi32>
// CHECK-NEXT:      hivm.vbinary {{%[a-z0-9_]+}}, [[A]], {{.*}}, [[LEN]], %n1 {fun = "add"}
module attributes {symbols = {s0 = [1, 100000]}, target = "ascend910b1"} {
  func.func @main_fused_0(%x: tensor<s0x64xi32>, %out0: tensor<s0x64xi32>) -> (tensor<s0x64xi32>) attributes {fusion_kind = "ANY_PB", kernel, output_args = [1]} {
    %a = hfusion.arange {start = 0, step = 1} : () -> tensor<s0xi32>
    %b = hfusion.broadcast %a {dims = [1]} : (tensor<s0xi32>) -> tensor<s0x64xi32>
    %m = hfusion.elemwise_binary %x, %b {fun = "add"} : (tensor<s0x64xi32>, tensor<s0x64xi32>) -> tensor<s0x64xi32>
    func.return %m : tensor<s0x64xi32>
  }
}

// -----

// Values that are not all exact in the dtype (a fractional step; 1 + 2·4097 > 2^11 in f16) keep the kernel at tensor
// level.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    hivm.unsupported = "hfusion.arange"
// CHECK:         hfusion.arange {start = 0, step = 0.5}
// CHECK-LABEL: func.func @main_fused_1(
// CHECK-SAME:    hivm.unsupported = "hfusion.arange"
module attributes {target = "ascend910b1"} {
  func.func @main_fused_0(%out0: tensor<8xf32>) -> (tensor<8xf32>) attributes {fusion_kind = "PURE_ELEMWISE", kernel, output_args = [0]} {
    %a = hfusion.arange {start = 0, step = 0.5} : () -> tensor<8xf32>
    func.return %a : tensor<8xf32>
  }
  func.func @main_fused_1(%out0: tensor<4098xf16>) -> (tensor<4098xf16>) attributes {fusion_kind = "PURE_ELEMWISE", kernel, output_args = [0]} {
    %a = hfusion.arange {start = 1, step = 2} : () -> tensor<4098xf16>
    func.return %a : tensor<4098xf16>
  }
}

// -----

// index_select: a gather along the last dim by an index row broadcast over the rows. The source's rows are loaded
// whole (37 elements at column 0, whatever the result's columns); the broadcast is not computed: the index row
// (loop-invariant: loaded once, before the loop) is converted to byte offsets by hivm.vgather_offsets (4-B
// elements), which the hivm.vgather {converted} right after it reads.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    %i: memref<1x21xi64, gm>, %x: memref<s0x37xf32, gm>, %out0: memref<s0x21xf32, gm>
// CHECK-DAG:     [[ROW:%c37]] = arith.constant {value = 37}
// CHECK:         [[I:%[a-z0-9_]+]] = hivm.alloc {buffer = {{[0-9]+}}} : () -> memref<1x24xi64>
// CHECK:         [[X:%[a-z0-9_]+]] = hivm.alloc {buffer = {{[0-9]+}}} : () -> memref<{{[0-9]+}}x40xf32>
// CHECK:         hivm.alloc {scratch = true}
// CHECK:         hivm.load %i, [[I]], %c0, %c0, %c1, %n1
// CHECK-NEXT:    scf.for
// CHECK-NOT:     hivm.vbrc
// CHECK:           hivm.load %x, [[X]], [[OFF:%off0]], %c0, [[LEN:%len0]], [[ROW]]
// CHECK-NEXT:      hivm.vgather_offsets [[I]], [[ROW]] {es = 4}
// CHECK-NEXT:      hivm.vgather [[X]], [[I]], [[G:%[a-z0-9_]+]], [[ROW]], [[LEN]], %n1 {converted = true}
// CHECK-NEXT:      hivm.store [[G]], %out0, [[OFF]], %c0, [[LEN]], %n1
module attributes {symbols = {s0 = [1, 3000]}, target = "ascend910b1"} {
  func.func @main_fused_0(%i: tensor<21xi64>, %x: tensor<s0x37xf32>, %out0: tensor<s0x21xf32>) -> (tensor<s0x21xf32>) attributes {fusion_kind = "ANY_PB", kernel, output_args = [2]} {
    %j = hfusion.broadcast %i {dims = [0]} : (tensor<21xi64>) -> tensor<s0x21xi64>
    %g = hfusion.gather %x, %j {dim = 1} : (tensor<s0x37xf32>, tensor<s0x21xi64>) -> tensor<s0x21xf32>
    func.return %g : tensor<s0x21xf32>
  }
}

// -----

// Embedding rows (a gather along dim 0 by an index broadcast over the row): the table stays in GM (no load, no
// buffer; its rows s1 are dynamic), the index tile is loaded, and hivm.embedding_gather moves each row of the tile
// by its index, at the tile's column offset; the mul reads the gathered tile. The broadcast is not computed.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    %i: memref<s0x1xi64, gm>, %w: memref<s1x64xf32, gm>, %out0: memref<s0x64xf32, gm>
// CHECK-NOT:     hivm.load %w
// CHECK:         scf.for
// CHECK:           [[OFF:%off0]] = arith.muli
// CHECK:           [[LEN:%len0]] = arith.minsi
// CHECK-NEXT:      hivm.load %i, [[I:%[a-z0-9_]+]], [[OFF]], %c0, [[LEN]], %c1 : memref<s0x1xi64, gm>, memref<{{[0-9]+}}x1xi64>
// CHECK-NEXT:      hivm.embedding_gather %w, [[I]], [[G:%[a-z0-9_]+]], %c0, [[LEN]], %n1 : memref<s1x64xf32, gm>, memref<{{[0-9]+}}x1xi64>, memref<{{[0-9]+}}x64xf32>, index, index, index
// CHECK-NEXT:      hivm.vbinary [[G]], %c, [[M:%[a-z0-9_]+]], [[LEN]], %n1 {fun = "mul"}
// CHECK-NEXT:      hivm.store [[M]], %out0, [[OFF]], %c0, [[LEN]], %n1
// CHECK-NOT:     hivm.vbrc
module attributes {symbols = {s0 = [1, 5000], s1 = [1, 100000]}, target = "ascend910b1"} {
  func.func @main_fused_0(%i: tensor<s0xi64>, %w: tensor<s1x64xf32>, %out0: tensor<s0x64xf32>) -> (tensor<s0x64xf32>) attributes {fusion_kind = "ANY_PB", kernel, output_args = [2]} {
    %c = arith.constant {value = 2.0} : () -> f32
    %j = hfusion.broadcast %i {dims = [1]} : (tensor<s0xi64>) -> tensor<s0x64xi64>
    %g = hfusion.gather %w, %j {dim = 0} : (tensor<s1x64xf32>, tensor<s0x64xi64>) -> tensor<s0x64xf32>
    %m = hfusion.elemwise_binary %g, %c {fun = "mul"} : (tensor<s0x64xf32>, f32) -> tensor<s0x64xf32>
    func.return %m : tensor<s0x64xf32>
  }
}

// -----

// A gather along dim 0 by a full index (an element gather, not whole rows) or of a computed value stays at tensor
// level.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    hivm.unsupported = "hfusion.gather"
// CHECK-LABEL: func.func @main_fused_1(
// CHECK-SAME:    hivm.unsupported = "hfusion.gather"
module attributes {target = "ascend910b1"} {
  func.func @main_fused_0(%w: tensor<10x4xf32>, %i: tensor<6x4xi64>, %out0: tensor<6x4xf32>) -> (tensor<6x4xf32>) attributes {fusion_kind = "PURE_ELEMWISE", kernel, output_args = [2]} {
    %g = hfusion.gather %w, %i {dim = 0} : (tensor<10x4xf32>, tensor<6x4xi64>) -> tensor<6x4xf32>
    func.return %g : tensor<6x4xf32>
  }
  func.func @main_fused_1(%x: tensor<3x8xf32>, %i: tensor<3x5xi64>, %out0: tensor<3x5xf32>) -> (tensor<3x5xf32>) attributes {fusion_kind = "PURE_ELEMWISE", kernel, output_args = [2]} {
    %e = hfusion.elemwise_unary %x {fun = "exp"} : (tensor<3x8xf32>) -> tensor<3x8xf32>
    %g = hfusion.gather %e, %i {dim = 1} : (tensor<3x8xf32>, tensor<3x5xi64>) -> tensor<3x5xf32>
    func.return %g : tensor<3x5xf32>
  }
}
