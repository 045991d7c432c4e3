// RUN: npu-opt %s -p "hivm-mark-multi-buffer{depth=2},hivm-enable-multi-buffer,hivm-plan-memory,hivm-inject-sync" | filecheck %s

// hivm.embedding_gather reads its index on PIPE_S (the scalar unit's GetValue) and writes its rows on PIPE_MTE2:
// the index load is ordered before it by MTE2 -> S; the next-but-one iteration's index load into the same copy
// after it by S -> MTE2 (carried over the two copies); the gathered tile's vector reader after it by MTE2 -> V, and
// the MTE2 row copies into a copy of the tile after that copy's last vector read by V -> MTE2. Both buffers the DMAs
// feed rotate over two copies.
// CHECK:         %ui_0 = hivm.alloc {offsets = [{{[0-9]+}}]} : () -> memref<16x1xi64, ub>
// CHECK-NEXT:    %ui_1 = hivm.alloc
// CHECK-NEXT:    %ug_0 = hivm.alloc {offsets = [{{[0-9]+}}]} : () -> memref<16x64xf32, ub>
// CHECK-NEXT:    %ug_1 = hivm.alloc
// CHECK-DAG:     hivm.set_flag {dst_pipe = "PIPE_MTE2", event_ids = [0], src_pipe = "PIPE_S"}
// CHECK-DAG:     hivm.set_flag {dst_pipe = "PIPE_MTE2", event_ids = [1], src_pipe = "PIPE_S"}
// CHECK-DAG:     hivm.set_flag {dst_pipe = "PIPE_MTE2", event_ids = [0], src_pipe = "PIPE_V"}
// CHECK-DAG:     hivm.set_flag {dst_pipe = "PIPE_MTE2", event_ids = [1], src_pipe = "PIPE_V"}
// CHECK:         scf.for
// CHECK:           hivm.wait_flag %t {dst_pipe = "PIPE_MTE2", event_ids = [0, 1], src_pipe = "PIPE_S"}
// CHECK-NEXT:      hivm.load %i, [[I:%[a-z0-9_]+]]
// CHECK-NEXT:      hivm.set_flag %t {dst_pipe = "PIPE_S", event_ids = [0, 1], src_pipe = "PIPE_MTE2"}
// CHECK-NEXT:      hivm.wait_flag %t {dst_pipe = "PIPE_S", event_ids = [0, 1], src_pipe = "PIPE_MTE2"}
// CHECK-NEXT:      hivm.wait_flag %t {dst_pipe = "PIPE_MTE2", event_ids = [0, 1], src_pipe = "PIPE_V"}
// CHECK-NEXT:      hivm.embedding_gather %w, [[I]], [[G:%[a-z0-9_]+]],
// CHECK-NEXT:      hivm.set_flag %t {dst_pipe = "PIPE_V", event_ids = [0, 1], src_pipe = "PIPE_MTE2"}
// CHECK-NEXT:      hivm.set_flag %t {dst_pipe = "PIPE_MTE2", event_ids = [0, 1], src_pipe = "PIPE_S"}
// CHECK-NEXT:      hivm.wait_flag %t {dst_pipe = "PIPE_V", event_ids = [0, 1], src_pipe = "PIPE_MTE2"}
// CHECK-NEXT:      hivm.wait_flag %t {dst_pipe = "PIPE_V", event_ids = [0, 1], src_pipe = "PIPE_MTE3"}
// CHECK-NEXT:      hivm.vbinary [[G]], %c, %uo
// CHECK-NEXT:      hivm.set_flag %t {dst_pipe = "PIPE_MTE3", event_ids = [0, 1], src_pipe = "PIPE_V"}
// CHECK-NEXT:      hivm.set_flag %t {dst_pipe = "PIPE_MTE2", event_ids = [0, 1], src_pipe = "PIPE_V"}
// CHECK:         hivm.wait_flag {dst_pipe = "PIPE_MTE2", event_ids = [0], src_pipe = "PIPE_S"}
// CHECK:         hivm.wait_flag {dst_pipe = "PIPE_MTE2", event_ids = [1], src_pipe = "PIPE_S"}
module attributes {target = "ascend910b1"} {
  func.func @k(%i: memref<64x1xi64, gm>, %w: memref<100x64xf32, gm>, %out: memref<64x64xf32, gm>) attributes {kernel, output_args = [2]} {
    %c0 = arith.constant {value = 0} : () -> index
    %c1 = arith.constant {value = 1} : () -> index
    %c4 = arith.constant {value = 4} : () -> index
    %c16 = arith.constant {value = 16} : () -> index
    %c64 = arith.constant {value = 64} : () -> index
    %c = arith.constant {value = 2.0} : () -> f32
    %ui = hivm.alloc : () -> memref<16x1xi64, ub>
    %ug = hivm.alloc : () -> memref<16x64xf32, ub>
    %uo = hivm.alloc : () -> memref<16x64xf32, ub>
    scf.for %c0, %c4, %c1 ({
    ^bb0(%t: index):
      %off = arith.muli %t, %c16 : (index, index) -> index
      hivm.load %i, %ui, %off, %c0, %c16, %c1 : memref<64x1xi64, gm>, memref<16x1xi64, ub>, index, index, index, index
      hivm.embedding_gather %w, %ui, %ug, %c0, %c16, %c64 : memref<100x64xf32, gm>, memref<16x1xi64, ub>, memref<16x64xf32, ub>, index, index, index
      hivm.vbinary %ug, %c, %uo, %c16, %c64 {fun = "mul"} : memref<16x64xf32, ub>, f32, memref<16x64xf32, ub>, index, index
      hivm.store %uo, %out, %off, %c0, %c16, %c64 : memref<16x64xf32, ub>, memref<64x64xf32, gm>, index, index, index, index
      scf.yield
    }) : index, index, index
    func.return
  }
}
