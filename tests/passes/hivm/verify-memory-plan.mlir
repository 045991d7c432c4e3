// RUN: not npu-opt %s --split-input-file -p hivm-verify-memory-plan 2>&1 | filecheck %s
// RUN: npu-opt %s --split-input-file -p hivm-plan-memory,hivm-verify-memory-plan | filecheck %s --check-prefix=REPLANNED

// A sound plan passes: %a and %b share bytes but are never live together (two loops in sequence), and the two
// copies of the multi-buffered %ubx lie apart. Each corrupted plan below is one line naming the kernel, both
// buffers (a multi-buffered one's copy), their byte ranges and their live ranges (pre-order op positions).
// CHECK-NOT: kernel good
// CHECK-DAG: error: hivm-verify-memory-plan: kernel equal_offsets: UB buffers %ubx bytes [0, 512) live [4, 9] and %ube bytes [0, 512) live [4, 9] share bytes while both live
// CHECK-DAG: error: hivm-verify-memory-plan: kernel copies_overlap: UB buffers %ubx (copy 0 of 2) bytes [0, 512) live [3, 7] and %ubx (copy 1 of 2) bytes [256, 768) live [3, 7] share bytes while both live
// CHECK-DAG: error: hivm-verify-memory-plan: kernel past_capacity: L1 buffer %l1x bytes [524032, 524544) live [3, 3] lies outside [0, 524288)
// CHECK-DAG: error: hivm-verify-memory-plan: kernel unplanned: local buffer %ubx has no offsets (run hivm-plan-memory)

// hivm-plan-memory gives every chunk a sound plan again.
// REPLANNED-LABEL: func.func @good
// REPLANNED-LABEL: func.func @equal_offsets
// REPLANNED:       %ubx = hivm.alloc {offsets = [0]}
// REPLANNED-NEXT:  %ube = hivm.alloc {offsets = [512]}
module attributes {target = "ascend910b1"} {
  func.func @good(%x: memref<1024xf16, gm>, %out: memref<1024xf16, gm>, %n_tiles: index, %block_dim: index) attributes {kernel, output_args = [1]} {
    %c256 = arith.constant {value = 256} : () -> index
    %bid = hivm.get_block_idx : () -> index
    %ubx = hivm.alloc {multi_buffer = 2, offsets = [0, 512]} : () -> memref<256xf16, ub>
    %a = hivm.alloc {offsets = [1024]} : () -> memref<256xf16, ub>
    %b = hivm.alloc {offsets = [1024]} : () -> memref<256xf16, ub>
    scf.for %bid, %n_tiles, %block_dim ({
    ^bb0(%t: index):
      %off = arith.muli %t, %c256 : (index, index) -> index
      hivm.load %x, %ubx, %off, %c256 : memref<1024xf16, gm>, memref<256xf16, ub>, index, index
      hivm.vunary %ubx, %a, %c256 {fun = "exp"} : memref<256xf16, ub>, memref<256xf16, ub>, index
      hivm.store %a, %out, %off, %c256 : memref<256xf16, ub>, memref<1024xf16, gm>, index, index
      scf.yield
    }) : (index, index, index) -> ()
    scf.for %bid, %n_tiles, %block_dim ({
    ^bb0(%t: index):
      %off = arith.muli %t, %c256 : (index, index) -> index
      hivm.load %out, %b, %off, %c256 : memref<1024xf16, gm>, memref<256xf16, ub>, index, index
      hivm.store %b, %x, %off, %c256 : memref<256xf16, ub>, memref<1024xf16, gm>, index, index
      scf.yield
    }) : (index, index, index) -> ()
    func.return
  }
}
// -----
module attributes {target = "ascend910b1"} {
  func.func @equal_offsets(%x: memref<1024xf16, gm>, %out: memref<1024xf16, gm>, %n_tiles: index, %block_dim: index) attributes {kernel, output_args = [1]} {
    %c256 = arith.constant {value = 256} : () -> index
    %bid = hivm.get_block_idx : () -> index
    %ubx = hivm.alloc {offsets = [0]} : () -> memref<256xf16, ub>
    %ube = hivm.alloc {offsets = [0]} : () -> memref<256xf16, ub>
    scf.for %bid, %n_tiles, %block_dim ({
    ^bb0(%t: index):
      %off = arith.muli %t, %c256 : (index, index) -> index
      hivm.load %x, %ubx, %off, %c256 : memref<1024xf16, gm>, memref<256xf16, ub>, index, index
      hivm.vunary %ubx, %ube, %c256 {fun = "exp"} : memref<256xf16, ub>, memref<256xf16, ub>, index
      hivm.store %ube, %out, %off, %c256 : memref<256xf16, ub>, memref<1024xf16, gm>, index, index
      scf.yield
    }) : (index, index, index) -> ()
    func.return
  }
}
// -----
module attributes {target = "ascend910b1"} {
  func.func @copies_overlap(%x: memref<1024xf16, gm>, %out: memref<1024xf16, gm>, %n_tiles: index, %block_dim: index) attributes {kernel, output_args = [1]} {
    %c256 = arith.constant {value = 256} : () -> index
    %bid = hivm.get_block_idx : () -> index
    %ubx = hivm.alloc {multi_buffer = 2, offsets = [0, 256]} : () -> memref<256xf16, ub>
    scf.for %bid, %n_tiles, %block_dim ({
    ^bb0(%t: index):
      %off = arith.muli %t, %c256 : (index, index) -> index
      hivm.load %x, %ubx, %off, %c256 : memref<1024xf16, gm>, memref<256xf16, ub>, index, index
      hivm.store %ubx, %out, %off, %c256 : memref<256xf16, ub>, memref<1024xf16, gm>, index, index
      scf.yield
    }) : (index, index, index) -> ()
    func.return
  }
}
// -----
module attributes {target = "ascend910b1"} {
  func.func @past_capacity(%x: memref<256xf16, gm>) attributes {kernel} {
    %c0 = arith.constant {value = 0} : () -> index
    %c256 = arith.constant {value = 256} : () -> index
    %l1x = hivm.alloc {offsets = [524032]} : () -> memref<256xf16, l1>
    hivm.load %x, %l1x, %c0, %c256 : memref<256xf16, gm>, memref<256xf16, l1>, index, index
    func.return
  }
}
// -----
module attributes {target = "ascend910b1"} {
  func.func @unplanned(%x: memref<256xf16, gm>, %out: memref<256xf16, gm>) attributes {kernel, output_args = [1]} {
    %c0 = arith.constant {value = 0} : () -> index
    %c256 = arith.constant {value = 256} : () -> index
    %ubx = hivm.alloc : () -> memref<256xf16, ub>
    hivm.load %x, %ubx, %c0, %c256 : memref<256xf16, gm>, memref<256xf16, ub>, index, index
    hivm.store %ubx, %out, %c0, %c256 : memref<256xf16, ub>, memref<256xf16, gm>, index, index
    func.return
  }
}
