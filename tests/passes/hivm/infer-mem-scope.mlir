// RUN: npu-opt %s -p hivm-infer-mem-scope | filecheck %s

// Local buffers used by loads, stores and vector ops go to UB (through multi_buffer_select views too);
// arguments without a scope go to GM.
// CHECK-LABEL: func.func @vec(
// CHECK-SAME:    %x: memref<64xf32, gm>, %out: memref<64xf32, gm>
// CHECK:         hivm.alloc : () -> memref<64xf32, ub>
// CHECK:         hivm.alloc : () -> memref<64xf32, ub>
// CHECK:         hivm.multi_buffer_select {{.*}} -> memref<64xf32, ub>
module attributes {target = "ascend910b1"} {
  func.func @vec(%x: memref<64xf32>, %out: memref<64xf32, gm>) attributes {kernel, output_args = [1]} {
    %c64 = arith.constant {value = 64} : () -> index
    %c0 = arith.constant {value = 0} : () -> index
    %u0 = hivm.alloc : () -> memref<64xf32>
    %u1 = hivm.alloc : () -> memref<64xf32>
    %u = hivm.multi_buffer_select %c0, %u0, %u1 : (index, memref<64xf32>, memref<64xf32>) -> memref<64xf32>
    hivm.load %x, %u, %c0, %c64 : memref<64xf32>, memref<64xf32>, index, index
    hivm.vunary %u, %u, %c64 {fun = "exp"} : memref<64xf32>, memref<64xf32>, index
    hivm.store %u, %out, %c0, %c64 : memref<64xf32>, memref<64xf32, gm>, index, index
    func.return
  }
}

