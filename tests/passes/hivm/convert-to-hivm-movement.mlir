// RUN: npu-opt %s -p hfusion-auto-schedule,convert-to-hivm | filecheck %s

// Data-movement kernels (graph_passes/schedule/movement.py): an f16 transpose, and a concat of an argument, a
// strided slice and a fill. Each result's work items are tiles of its work dims, cyclic over the cores; each piece
// meeting a work item's rows is loaded through a permuted, strided view of its argument (hivm.load {dims, steps})
// and stored at its offset in the result.

// The f16 transpose: output rows are input columns, so its last two dims are the input's swapped. Its work dims
// are dim 0 (whole 32-B GM blocks: 16 rows of s0 f16 elements; 128 rows are whole tiles, a static extent) and
// dim 1, whose rows of s0 elements are whole blocks only when 16 divides s0: the launch checks it — every core
// when they are or when the columns are one tile (s0 <= 1472), one core otherwise (launch_alignment.py). Source
// rows are loaded into [1472, 16], hivm.vtranspose turns them into the result's rows [16, 1472] (16x16 blocks
// through the kernel's scratch), rows are stored.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    %x: memref<s0x128xf16, gm>, %out: memref<128xs0xf16, gm>, %block_dim: index, %r0_n1: index, [[TILES:%r0_tiles]]: index, %r0_tiles0: index, [[TILES1:%r0_tiles1]]: index)
// CHECK-SAME:    schedule = #hfusion.movement_schedule<{tiles = [[16, 1472]], ub_bytes = 196608}>
// CHECK-SAME:    tiling = {block_dim = ((Min(48,8*ceiling(s0/1472))-1)*Max(1-Min(1,ceiling(s0/1472)-1),1-Min(1,2*(Mod(s0,16))))+1), r0_n1 = s0, r0_tiles = (8*ceiling(s0/1472)), r0_tiles0 = 8, r0_tiles1 = (ceiling(s0/1472))}
// CHECK:         [[SRC:%[a-z0-9_]+]] = hivm.alloc : () -> memref<1472x16xf16>
// CHECK:         [[DST:%[a-z0-9_]+]] = hivm.alloc : () -> memref<16x1472xf16>
// CHECK:         hivm.alloc {scratch = true} : () -> memref<8192xi8>
// CHECK:         scf.for %bid, [[TILES]], %block_dim ({
// CHECK-NEXT:    ^bb0(%t: index):
// CHECK-NEXT:      [[I1:%[a-z0-9_]+]] = arith.remsi %t, [[TILES1]]
// CHECK-NEXT:      [[I0:%[a-z0-9_]+]] = arith.floordivsi %t, [[TILES1]]
// CHECK-NEXT:      [[J:%[a-z0-9_]+]] = arith.muli [[I1]], %c1472
// CHECK:           [[R0:%[a-z0-9_]+]] = arith.muli [[I0]], %c16
// CHECK:           hivm.load %x, [[SRC]], [[J]], [[R0]], [[LEN1:%[a-z0-9_]+]], %c16 {dims = [0, 1], steps = [1, 1]}
// CHECK-NEXT:      hivm.vtranspose [[SRC]], [[DST]], %c16, [[LEN1]] {perm = [1, 0]}
// CHECK-NEXT:      hivm.store [[DST]], %out, [[R0]], [[J]], %c16, [[LEN1]] :

// The concat along dim 1: %a's rows are contiguous (a row buffer padded to 24 f32), the stride-2 slice of %b
// moves one element per block, the zeros are a vfill; each is stored at its column offset 0, 8, 16. The last work
// item's rows end at s0. The rows step per launch (r0_step0): whole 132-row tiles when there are many rows, else
// steps of 2 rows (80 B each: whole 32-B blocks) that give every core a work item.
// CHECK-LABEL: func.func @main_fused_1(
// CHECK-SAME:    tiling = {block_dim = (Min(48,ceiling(s0/Min(132,2*ceiling(s0/96))))), r0_n0 = s0, r0_step0 = (Min(132,2*ceiling(s0/96))), r0_tiles = (ceiling(s0/Min(132,2*ceiling(s0/96)))), r0_tiles0 = (ceiling(s0/Min(132,2*ceiling(s0/96))))}
// CHECK-DAG:     [[ROWS:%[a-z0-9_]+]] = hivm.alloc : () -> memref<132x24xf32>
// CHECK-DAG:     [[GATHER:%[a-z0-9_]+]] = hivm.alloc : () -> memref<132x20x8xf32>
// CHECK:         scf.for %bid, %r0_tiles0, %block_dim ({
// CHECK:           [[LO:%r0_lo]] = arith.muli %t, %r0_step0
// CHECK:           [[HI:%r0_hi]] = arith.minsi {{%[a-z0-9_]+}}, %r0_n0
// CHECK-NEXT:      [[L0:%[a-z0-9_]+]] = arith.subi [[HI]], [[LO]]
// CHECK-NEXT:      hivm.load %a, [[ROWS]], [[LO]], %c0, [[L0]], %c8 {dims = [0, 1], steps = [1, 1]}
// CHECK-NEXT:      hivm.store [[ROWS]], %out, [[LO]], %c0, [[L0]], %c8 :
// CHECK:           hivm.load %b, [[GATHER]], [[LO]], %c1, [[L1:%[a-z0-9_]+]], %c8, %c1 {dims = [0, 1, -1], steps = [1, 2, 1]}
// CHECK-NEXT:      hivm.store [[GATHER]], %out, [[LO]], %c8, [[L1]], %c8, %c1 {dims = [0, 1, -1]}
// CHECK:           hivm.vfill [[ROWS]], [[L2:%[a-z0-9_]+]], %c4 {value = 0.0}
// CHECK-NEXT:      hivm.store [[ROWS]], %out, [[LO]], %c16, [[L2]], %c4 :
// CHECK:       func.func @main(
// CHECK:         hivm.launch %x, %e {callee = "main_fused_0"}
// CHECK:         hivm.launch %a, %b, %f {callee = "main_fused_1"}
module attributes {symbols = {s0 = [1, 1000000]}, target = "ascend910b1"} {
  func.func @main_fused_0(%x: tensor<s0x128xf16>, %out: tensor<128xs0xf16>) -> (tensor<128xs0xf16>) attributes {fusion_kind = "PURE_ELEMWISE", kernel, output_args = [1]} {
    %t = hfusion.transpose %x {perm = [1, 0]} : (tensor<s0x128xf16>) -> tensor<128xs0xf16>
    func.return %t : tensor<128xs0xf16>
  }
  func.func @main_fused_1(%a: tensor<s0x8xf32>, %b: tensor<s0x16xf32>, %out: tensor<s0x20xf32>) -> (tensor<s0x20xf32>) attributes {fusion_kind = "PURE_ELEMWISE", kernel, output_args = [2]} {
    %z = hfusion.fill {value = 0.0} : () -> tensor<s0x4xf32>
    %s = hfusion.slice %b {offsets = [0, 1], sizes = [s0, 8], strides = [1, 2]} : (tensor<s0x16xf32>) -> tensor<s0x8xf32>
    %c = hfusion.concat %a, %s, %z {dim = 1} : (tensor<s0x8xf32>, tensor<s0x8xf32>, tensor<s0x4xf32>) -> tensor<s0x20xf32>
    func.return %c : tensor<s0x20xf32>
  }
  func.func @main(%x: tensor<s0x128xf16>, %a: tensor<s0x8xf32>, %b: tensor<s0x16xf32>) -> (tensor<128xs0xf16>, tensor<s0x20xf32>) {
    %e = tensor.empty : () -> tensor<128xs0xf16>
    %r = func.call %x, %e {callee = "main_fused_0"} : (tensor<s0x128xf16>, tensor<128xs0xf16>) -> tensor<128xs0xf16>
    %f = tensor.empty : () -> tensor<s0x20xf32>
    %q = func.call %a, %b, %f {callee = "main_fused_1"} : (tensor<s0x8xf32>, tensor<s0x16xf32>, tensor<s0x20xf32>) -> tensor<s0x20xf32>
    func.return %r, %q : tensor<128xs0xf16>, tensor<s0x20xf32>
  }
}
