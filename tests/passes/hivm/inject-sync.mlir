// RUN: npu-opt %s -p "hivm-mark-multi-buffer{depth=2},hivm-enable-multi-buffer,hivm-plan-memory,hivm-inject-sync" | filecheck %s
// RUN: npu-opt %s -p "hivm-inject-sync{mode=barrier-all}" | filecheck %s --check-prefix=ALL

// Loop-carried WARs (next load into a copy V still reads; next V write into a copy MTE3 still stores) are
// pre-armed as early as possible (no pipe op before the loop: right before it), waited at the top of the body with
// rotating ids, and drained as late as possible (no loop after it: before the end).
// CHECK:      hivm.set_flag {dst_pipe = "PIPE_MTE2", event_ids = [0], src_pipe = "PIPE_V"}
// CHECK-NEXT: hivm.set_flag {dst_pipe = "PIPE_MTE2", event_ids = [1], src_pipe = "PIPE_V"}
// CHECK-NEXT: hivm.set_flag {dst_pipe = "PIPE_V", event_ids = [0], src_pipe = "PIPE_MTE3"}
// CHECK-NEXT: hivm.set_flag {dst_pipe = "PIPE_V", event_ids = [1], src_pipe = "PIPE_MTE3"}
// CHECK-NEXT: scf.for
// CHECK:      [[K:%[a-z0-9_]+]] = arith.floordivsi
// CHECK:      hivm.wait_flag [[K]] {dst_pipe = "PIPE_MTE2", event_ids = [0, 1], src_pipe = "PIPE_V"}
// CHECK-NEXT: hivm.load
// CHECK-NEXT: hivm.set_flag [[K]] {dst_pipe = "PIPE_V", event_ids = [0, 1], src_pipe = "PIPE_MTE2"}
// CHECK-NEXT: hivm.wait_flag [[K]] {dst_pipe = "PIPE_V", event_ids = [0, 1], src_pipe = "PIPE_MTE2"}
// CHECK:      hivm.vunary {{.*}} {fun = "exp"}
// CHECK-NEXT: hivm.set_flag [[K]] {dst_pipe = "PIPE_MTE2", event_ids = [0, 1], src_pipe = "PIPE_V"}
// CHECK:      hivm.pipe_barrier {pipe = "PIPE_V"}
// CHECK-NEXT: hivm.vunary {{.*}} {fun = "abs"}
// CHECK-NEXT: hivm.set_flag [[K]] {dst_pipe = "PIPE_MTE3", event_ids = [0, 1], src_pipe = "PIPE_V"}
// CHECK-NEXT: hivm.wait_flag [[K]] {dst_pipe = "PIPE_MTE3", event_ids = [0, 1], src_pipe = "PIPE_V"}
// CHECK-NEXT: hivm.store
// CHECK-NEXT: hivm.set_flag [[K]] {dst_pipe = "PIPE_V", event_ids = [0, 1], src_pipe = "PIPE_MTE3"}
// CHECK-NEXT: scf.yield
// CHECK:      hivm.wait_flag {dst_pipe = "PIPE_MTE2", event_ids = [0], src_pipe = "PIPE_V"}
// CHECK-NEXT: hivm.wait_flag {dst_pipe = "PIPE_MTE2", event_ids = [1], src_pipe = "PIPE_V"}
// CHECK-NEXT: hivm.wait_flag {dst_pipe = "PIPE_V", event_ids = [0], src_pipe = "PIPE_MTE3"}
// CHECK-NEXT: hivm.wait_flag {dst_pipe = "PIPE_V", event_ids = [1], src_pipe = "PIPE_MTE3"}
// CHECK-NEXT: hivm.pipe_barrier {pipe = "PIPE_ALL"}
// CHECK-NEXT: func.return

// ALL-NOT:    set_flag
// ALL:        hivm.load
// ALL-NEXT:   hivm.pipe_barrier {pipe = "PIPE_ALL"}
// ALL-NEXT:   hivm.vunary
// ALL-NEXT:   hivm.pipe_barrier {pipe = "PIPE_ALL"}
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
