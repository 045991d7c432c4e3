// RUN: npu-opt %s -p "hivm-mark-multi-buffer{depth=2},hivm-plan-memory" | filecheck %s
// RUN: npu-opt %s -p hivm-plan-memory | filecheck %s --check-prefix=INPLACE

// Every alloc gets one 32-B aligned UB offset per copy; copies of one buffer are live together.
// CHECK:      %ubx = hivm.alloc {multi_buffer = 2, offsets = [0, 1536]} : () -> memref<256xf16, ub>
// CHECK-NEXT: %ube = hivm.alloc {offsets = [512]} : () -> memref<256xf16, ub>
// CHECK-NEXT: %ubo = hivm.alloc {multi_buffer = 2, offsets = [1024, 2048]} : () -> memref<256xf16, ub>

// Single-buffered, exp writes in place into %ubx (its last use) and abs into that same buffer: one alloc is left.
// INPLACE:      %ubx = hivm.alloc {offsets = [0]} : () -> memref<256xf16, ub>
// INPLACE-NOT:  hivm.alloc
// INPLACE:      hivm.vunary %ubx, %ubx, %c256 {fun = "exp"}
// INPLACE-NEXT: hivm.vunary %ubx, %ubx, %c256 {fun = "abs"}
// INPLACE-NEXT: hivm.store %ubx, %out,

// gelu_tanh reads its source after writing dst (NOT_IN_PLACE_FUNS): exp goes in place, gelu_tanh keeps its buffer.
// INPLACE-LABEL: func.func @k_gelu
// INPLACE:       hivm.vunary %ubx, %ubx, %c256 {fun = "exp"}
// INPLACE-NEXT:  hivm.vunary %ubx, %ubg, %c256 {fun = "gelu_tanh"}
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
  func.func @k_gelu(%x: memref<256xf32, gm>, %out: memref<256xf32, gm>) attributes {kernel, output_args = [1]} {
    %c0 = arith.constant {value = 0} : () -> index
    %c256 = arith.constant {value = 256} : () -> index
    %ubx = hivm.alloc : () -> memref<256xf32, ub>
    %ube = hivm.alloc : () -> memref<256xf32, ub>
    %ubg = hivm.alloc : () -> memref<256xf32, ub>
    hivm.load %x, %ubx, %c0, %c256 : memref<256xf32, gm>, memref<256xf32, ub>, index, index
    hivm.vunary %ubx, %ube, %c256 {fun = "exp"} : memref<256xf32, ub>, memref<256xf32, ub>, index
    hivm.vunary %ube, %ubg, %c256 {fun = "gelu_tanh"} : memref<256xf32, ub>, memref<256xf32, ub>, index
    hivm.store %ubg, %out, %c0, %c256 : memref<256xf32, ub>, memref<256xf32, gm>, index, index
    func.return
  }
}
