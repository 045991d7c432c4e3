// RUN: npu-opt %s -p "hivm-mark-multi-buffer{depth=2},hivm-enable-multi-buffer" | filecheck %s

// Each marked buffer becomes its copies, hoisted above the loop; the loop body selects the copy of iteration
// k = (t - lb) floordiv step.
// CHECK:      %ube = hivm.alloc : () -> memref<256xf16, ub>
// CHECK-NEXT: [[X0:%[a-z0-9_]+]] = hivm.alloc : () -> memref<256xf16, ub>
// CHECK-NEXT: [[X1:%[a-z0-9_]+]] = hivm.alloc : () -> memref<256xf16, ub>
// CHECK-NEXT: [[O0:%[a-z0-9_]+]] = hivm.alloc : () -> memref<256xf16, ub>
// CHECK-NEXT: [[O1:%[a-z0-9_]+]] = hivm.alloc : () -> memref<256xf16, ub>
// CHECK-NEXT: scf.for [[LB:%[a-z0-9_]+]], %n_tiles, [[STEP:%[a-z0-9_]+]] ({
// CHECK-NEXT: ^bb0([[T:%[a-z0-9_]+]]: index):
// CHECK-NEXT: [[D:%[a-z0-9_]+]] = arith.subi [[T]], [[LB]]
// CHECK-NEXT: [[K:%[a-z0-9_]+]] = arith.floordivsi [[D]], [[STEP]]
// CHECK-NEXT: [[X:%[a-z0-9_]+]] = hivm.multi_buffer_select [[K]], [[X0]], [[X1]]
// CHECK-NEXT: [[O:%[a-z0-9_]+]] = hivm.multi_buffer_select [[K]], [[O0]], [[O1]]
// CHECK:      hivm.load %x, [[X]],
// CHECK:      hivm.store [[O]], %out,
// CHECK-NOT:  multi_buffer =
module attributes {target = "ascend910b1"} {
  func.func @k(%x: memref<1024xf16, gm>, %out: memref<1024xf16, gm>, %n: index, %n_tiles: index, %block_dim: index) attributes {kernel, output_args = [1]} {
    %c256 = arith.constant {value = 256} : () -> index
    %bid = hivm.get_block_idx : () -> index
    %ubx = hivm.alloc : () -> memref<256xf16, ub>
    %ube = hivm.alloc : () -> memref<256xf16, ub>
    %ubo = hivm.alloc : () -> memref<256xf16, ub>
    scf.for %bid, %n_tiles, %block_dim ({
    ^bb0(%t: index):
      %off = arith.muli %t, %c256 : (index, index) -> index
      hivm.load %x, %ubx, %off, %c256 : memref<1024xf16, gm>, memref<256xf16, ub>, index, index
      hivm.vunary %ubx, %ube, %c256 {fun = "exp"} : memref<256xf16, ub>, memref<256xf16, ub>, index
      hivm.vunary %ube, %ubo, %c256 {fun = "abs"} : memref<256xf16, ub>, memref<256xf16, ub>, index
      hivm.store %ubo, %out, %off, %c256 : memref<256xf16, ub>, memref<1024xf16, gm>, index, index
      scf.yield
    }) : (index, index, index) -> ()
    func.return
  }
}
