// RUN: npu-opt %s -p hfusion-auto-schedule,convert-to-hivm --split-input-file | filecheck %s

// An arange row broadcast over the rows it scales, and returned: hivm.varange counts from the tile's offset along
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
// CHECK:           hivm.vbrc [[A]], {{.*}} {dims = [0]}
module attributes {symbols = {s0 = [1, 100000]}, target = "ascend910b1"} {
  func.func @main_fused_0(%x: tensor<s0x8xf32>, %out0: tensor<8xf32>, %out1: tensor<s0x8xf32>) -> (tensor<8xf32>, tensor<s0x8xf32>) attributes {fusion_kind = "ANY_PB", kernel, output_args = [1, 2]} {
    %a = hfusion.arange {start = 1, step = 2} : () -> tensor<8xf32>
    %b = hfusion.broadcast %a {dims = [0]} : (tensor<8xf32>) -> tensor<s0x8xf32>
    %m = hfusion.elemwise_binary %x, %b {fun = "mul"} : (tensor<s0x8xf32>, tensor<s0x8xf32>) -> tensor<s0x8xf32>
    func.return %a, %m : tensor<8xf32>, tensor<s0x8xf32>
  }
}

// -----

// An arange along a tiled dim (one value per row): it counts from the work item's row offset.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK:         scf.for
// CHECK:           [[OFF:%off0]] = arith.muli
// CHECK:           hivm.varange [[A:%[a-z0-9_]+]], [[OFF]], [[LEN:%len0]], %c1 {start = 0, step = 1} : memref<{{[0-9]+}}x1xi32>
// CHECK-NEXT:      hivm.vbrc [[A]], {{.*}}, [[LEN]], %n1 {dims = [1]}
module attributes {symbols = {s0 = [1, 100000]}, target = "ascend910b1"} {
  func.func @main_fused_0(%x: tensor<s0x64xi32>, %out0: tensor<s0x64xi32>) -> (tensor<s0x64xi32>) attributes {fusion_kind = "ANY_PB", kernel, output_args = [1]} {
    %a = hfusion.arange {start = 0, step = 1} : () -> tensor<s0xi32>
    %b = hfusion.broadcast %a {dims = [1]} : (tensor<s0xi32>) -> tensor<s0x64xi32>
    %m = hfusion.elemwise_binary %x, %b {fun = "add"} : (tensor<s0x64xi32>, tensor<s0x64xi32>) -> tensor<s0x64xi32>
    func.return %m : tensor<s0x64xi32>
  }
}

// -----

// Values that are not all exact in the dtype (a fractional step; 4097 > 2^11 in f16) keep the kernel at tensor
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
    %a = hfusion.arange {start = 1, step = 1} : () -> tensor<4098xf16>
    func.return %a : tensor<4098xf16>
  }
}
