// RUN: not npu-opt %s --split-input-file -p hivm-infer-data-layout 2>&1 | filecheck %s

// Inconsistent layouts are one-line errors naming the op (or the attribute), the layouts and the numbers: the
// verifier's on hand-written IR, the pass's when two ops need one buffer in different layouts.

// An unknown layout kind, and a fractal on an ND layout, do not parse.
// CHECK-DAG: error: #hivm.data_layout: layout must be one of ND, zZ, nZ, zN, got 'NZ'
// CHECK-DAG: error: #hivm.data_layout: an ND layout has no fractal, got fractal = [16, 16]
// L0A holds zZ fractals only; a zZ buffer of f32 has fractals of 16 x 8.
// CHECK-DAG: errors.mlir:{{[0-9]+}}:5: 'hivm.alloc' op a buffer in l0a holds zZ, not #hivm.data_layout<nZ, fractal = [16, 16]>
// CHECK-DAG: errors.mlir:{{[0-9]+}}:5: 'hivm.alloc' op a zZ buffer of f32 has fractals of [16, 8], not [16, 16]
// A conversion names both layouts; each is the one the op performs.
// CHECK-DAG: errors.mlir:{{[0-9]+}}:5: 'hivm.load_l0a' op has src_layout but no dst_layout: a conversion names both layouts
// CHECK-DAG: errors.mlir:{{[0-9]+}}:5: 'hivm.fixpipe' op dst_layout is #hivm.data_layout<zN, fractal = [16, 16]>, but the op converts #hivm.data_layout<zN, fractal = [16, 16]> to #hivm.data_layout<ND>
// A load that does not transpose reads a box laid out transposed.
// CHECK-DAG: errors.mlir:{{[0-9]+}}:5: 'hivm.load_l0b' op needs operand 0 (memref<64x16xf16, l1>) as #hivm.data_layout<ND>, but its buffer is laid out #hivm.data_layout<ND, transpose = true>
// The pass: one L1 box read transposed by one load and as it is by another.
// CHECK-DAG: error: hivm-infer-data-layout: {{.*}}'hivm.load_l0b' needs operand 0 as #hivm.data_layout<ND>, but 'hivm.load_l0a' at {{.*}} needs the same buffer (allocated at {{.*}}) as #hivm.data_layout<ND, transpose = true>
// CHECK-DAG: error: hivm-infer-data-layout: {{.*}} the buffer 'hivm.mmad' uses as operand 2 has no memory scope (run hivm-infer-mem-scope first)
module attributes {target = "ascend910b1"} {
  func.func @bad_kind() attributes {kernel} {
    %x = hivm.alloc {layout = #hivm.data_layout<NZ>} : () -> memref<16x16xf16, l1>
    func.return
  }
}
// -----
module attributes {target = "ascend910b1"} {
  func.func @nd_fractal() attributes {kernel} {
    %x = hivm.alloc {layout = #hivm.data_layout<ND, fractal = [16, 16]>} : () -> memref<16x16xf16, l1>
    func.return
  }
}
// -----
module attributes {target = "ascend910b1"} {
  func.func @l0a_nz() attributes {kernel} {
    %x = hivm.alloc {layout = #hivm.data_layout<nZ, fractal = [16, 16]>} : () -> memref<16x16xf16, l0a>
    func.return
  }
}
// -----
module attributes {target = "ascend910b1"} {
  func.func @f32_fractal() attributes {kernel} {
    %x = hivm.alloc {layout = #hivm.data_layout<zZ, fractal = [16, 16]>} : () -> memref<16x16xf32, l0a>
    func.return
  }
}
// -----
module attributes {target = "ascend910b1"} {
  func.func @half_conversion() attributes {kernel} {
    %c0 = arith.constant {value = 0} : () -> index
    %c16 = arith.constant {value = 16} : () -> index
    %l1 = hivm.alloc : () -> memref<16x16xf16, l1>
    %l0a = hivm.alloc : () -> memref<16x16xf16, l0a>
    hivm.load_l0a %l1, %l0a, %c0, %c16, %c16 {src_layout = #hivm.data_layout<ND>, transpose = false} : memref<16x16xf16, l1>, memref<16x16xf16, l0a>, index, index, index
    func.return
  }
}
// -----
module attributes {target = "ascend910b1"} {
  func.func @fixpipe_to_fractals(%out: memref<16x16xf32, gm>) attributes {kernel, output_args = [0]} {
    %c0 = arith.constant {value = 0} : () -> index
    %c16 = arith.constant {value = 16} : () -> index
    %l0c = hivm.alloc : () -> memref<16x16xf32, l0c>
    hivm.fixpipe %l0c, %out, %c0, %c0, %c16, %c16 {dst_layout = #hivm.data_layout<zN, fractal = [16, 16]>, relu = false, src_layout = #hivm.data_layout<zN, fractal = [16, 16]>} : memref<16x16xf32, l0c>, memref<16x16xf32, gm>, index, index, index, index
    func.return
  }
}
// -----
module attributes {target = "ascend910b1"} {
  func.func @transposed_box() attributes {kernel} {
    %c0 = arith.constant {value = 0} : () -> index
    %c16 = arith.constant {value = 16} : () -> index
    %c64 = arith.constant {value = 64} : () -> index
    %l1 = hivm.alloc {layout = #hivm.data_layout<ND, transpose = true>} : () -> memref<64x16xf16, l1>
    %l0b = hivm.alloc : () -> memref<64x16xf16, l0b>
    hivm.load_l0b %l1, %l0b, %c0, %c0, %c64, %c16 {transpose = false} : memref<64x16xf16, l1>, memref<64x16xf16, l0b>, index, index, index, index
    func.return
  }
}
// -----
module attributes {target = "ascend910b1"} {
  func.func @box_two_ways() attributes {kernel} {
    %c0 = arith.constant {value = 0} : () -> index
    %c16 = arith.constant {value = 16} : () -> index
    %l1 = hivm.alloc : () -> memref<16x16xf16, l1>
    %l0a = hivm.alloc : () -> memref<16x16xf16, l0a>
    %l0b = hivm.alloc : () -> memref<16x16xf16, l0b>
    hivm.load_l0a %l1, %l0a, %c0, %c16, %c16 {transpose = true} : memref<16x16xf16, l1>, memref<16x16xf16, l0a>, index, index, index
    hivm.load_l0b %l1, %l0b, %c0, %c0, %c16, %c16 {transpose = false} : memref<16x16xf16, l1>, memref<16x16xf16, l0b>, index, index, index, index
    func.return
  }
}
// -----
module attributes {target = "ascend910b1"} {
  func.func @unscoped() attributes {kernel} {
    %c0 = arith.constant {value = 0} : () -> index
    %c16 = arith.constant {value = 16} : () -> index
    %l0a = hivm.alloc : () -> memref<16x16xf16, l0a>
    %l0b = hivm.alloc : () -> memref<16x16xf16, l0b>
    %acc = hivm.alloc : () -> memref<16x16xf32>
    hivm.mmad %l0a, %l0b, %acc, %c0, %c16, %c16, %c16 : memref<16x16xf16, l0a>, memref<16x16xf16, l0b>, memref<16x16xf32>, index, index, index, index
    func.return
  }
}
