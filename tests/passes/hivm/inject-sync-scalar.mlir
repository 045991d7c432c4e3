// RUN: npu-opt %s -p hivm-inject-sync | filecheck %s

// An i64 vbinary runs as a scalar loop (PIPE_S): its load is ordered by MTE2 -> S, the vector cast reading its
// result by S -> V (no pipe_barrier: S runs in order), and the cast's store by V -> MTE3.
// CHECK:      hivm.load
// CHECK-NEXT: hivm.set_flag {dst_pipe = "PIPE_S", event_ids = [0], src_pipe = "PIPE_MTE2"}
// CHECK-NEXT: hivm.wait_flag {dst_pipe = "PIPE_S", event_ids = [0], src_pipe = "PIPE_MTE2"}
// CHECK-NEXT: hivm.vbinary {{.*}} {fun = "mul"} : memref<256xi64, ub>, i64, memref<256xi64, ub>, index
// CHECK-NEXT: hivm.set_flag {dst_pipe = "PIPE_V", event_ids = [0], src_pipe = "PIPE_S"}
// CHECK-NEXT: hivm.wait_flag {dst_pipe = "PIPE_V", event_ids = [0], src_pipe = "PIPE_S"}
// CHECK-NEXT: hivm.vcast
// CHECK-NEXT: hivm.set_flag {dst_pipe = "PIPE_MTE3", event_ids = [0], src_pipe = "PIPE_V"}
// CHECK-NEXT: hivm.wait_flag {dst_pipe = "PIPE_MTE3", event_ids = [0], src_pipe = "PIPE_V"}
// CHECK-NEXT: hivm.store
module attributes {target = "ascend910b1"} {
  func.func @k(%x: memref<256xi64, gm>, %out: memref<256xf32, gm>, %n: index) attributes {kernel, output_args = [1]} {
    %c0 = arith.constant {value = 0} : () -> index
    %s = arith.constant {value = 3} : () -> i64
    %ubx = hivm.alloc : () -> memref<256xi64, ub>
    %uby = hivm.alloc : () -> memref<256xi64, ub>
    %ubo = hivm.alloc : () -> memref<256xf32, ub>
    hivm.load %x, %ubx, %c0, %n : memref<256xi64, gm>, memref<256xi64, ub>, index, index
    hivm.vbinary %ubx, %s, %uby, %n {fun = "mul"} : memref<256xi64, ub>, i64, memref<256xi64, ub>, index
    hivm.vcast %uby, %ubo, %n : memref<256xi64, ub>, memref<256xf32, ub>, index
    hivm.store %ubo, %out, %c0, %n : memref<256xf32, ub>, memref<256xf32, gm>, index, index
    func.return
  }
}
