// RUN: npu-opt %s -p "hivm-mark-multi-buffer{depth=2}" | filecheck %s
// RUN: npu-opt %s -p "hivm-mark-multi-buffer{depth=3}" | filecheck %s --check-prefix=DEPTH3
// RUN: npu-opt %s -p "hivm-mark-multi-buffer{depth=1}" | filecheck %s --check-prefix=OFF

// The buffer a loop loads into and the one it stores from get two copies; the vector-only one stays single.
// CHECK:      %ubx = hivm.alloc {multi_buffer = 2} : () -> memref<256xf16, ub>
// CHECK-NEXT: %ube = hivm.alloc : () -> memref<256xf16, ub>
// CHECK-NEXT: %ubo = hivm.alloc {multi_buffer = 2} : () -> memref<256xf16, ub>
// DEPTH3:     %ubx = hivm.alloc {multi_buffer = 3}
// DEPTH3:     %ubo = hivm.alloc {multi_buffer = 3}
// OFF-NOT:    multi_buffer
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
