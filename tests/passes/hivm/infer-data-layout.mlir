// RUN: npu-opt %s -p hivm-infer-data-layout --pass-statistics 2>&1 | filecheck %s
// RUN: npu-opt %s -p hivm-infer-data-layout | npu-opt - -p hivm-infer-data-layout,hivm-enable-multi-buffer --pass-statistics 2>&1 | filecheck %s --check-prefix=AGAIN

// An f16 product with A transposed (a.t() @ b, A read in place) and an f32 one. Each cube buffer gets the layout its
// ops need: the L1 boxes ND rows (A's transposed, as the MTE1 load reads it), L0A zZ and L0B nZ fractals of 16 x k0
// and k0 x 16 (k0 = 32 B / element: 16 for f16, 8 for f32), the L0C accumulator zN fractals of 16 x 16. The MTE1
// loads and the fixpipe are the conversions: each records its source and destination layouts.
//
// Ten buffers laid out; per kernel one conversion of each of three kinds (A's transposed in the first).
// CHECK:       hivm-infer-data-layout {{.*}} buffers-laid-out=10, layout-conversions=6, layout-conversions-DN_to_zZ=1, layout-conversions-ND_to_nZ=2, layout-conversions-ND_to_zZ=1, layout-conversions-zN_to_ND=2
// CHECK-LABEL: func.func @mm_f16(
// CHECK:         %a_l1 = hivm.alloc {layout = #hivm.data_layout<ND, transpose = true>, multi_buffer = 2}
// CHECK:         %b_l1 = hivm.alloc {layout = #hivm.data_layout<ND>}
// CHECK:         %a_l0 = hivm.alloc {layout = #hivm.data_layout<zZ, fractal = [16, 16]>}
// CHECK:         %b_l0 = hivm.alloc {layout = #hivm.data_layout<nZ, fractal = [16, 16]>}
// CHECK:         %c_l0 = hivm.alloc {layout = #hivm.data_layout<zN, fractal = [16, 16]>}
// CHECK:         hivm.load_l0a %a_l1, %a_l0, {{.*}} {dst_layout = #hivm.data_layout<zZ, fractal = [16, 16]>, src_layout = #hivm.data_layout<ND, transpose = true>, transpose = true}
// CHECK:         hivm.load_l0b %b_l1, %b_l0, {{.*}} {dst_layout = #hivm.data_layout<nZ, fractal = [16, 16]>, src_layout = #hivm.data_layout<ND>, transpose = false}
// CHECK:         hivm.mmad %a_l0, %b_l0, %c_l0
// CHECK:         hivm.fixpipe %c_l0, %out, {{.*}} {dst_layout = #hivm.data_layout<ND>, relu = false, src_layout = #hivm.data_layout<zN, fractal = [16, 16]>}
// CHECK-LABEL: func.func @mm_f32(
// CHECK:         hivm.alloc {layout = #hivm.data_layout<ND>}
// CHECK:         hivm.alloc {layout = #hivm.data_layout<ND>}
// CHECK:         hivm.alloc {layout = #hivm.data_layout<zZ, fractal = [16, 8]>}
// CHECK:         hivm.alloc {layout = #hivm.data_layout<nZ, fractal = [8, 16]>}
// CHECK:         hivm.alloc {layout = #hivm.data_layout<zN, fractal = [16, 16]>}
// A vector kernel has no cube path: its UB buffer and its ops are left alone.
// CHECK-LABEL: func.func @vec(
// CHECK-NOT:     layout
// CHECK:         func.return

// The layouts print and parse back, a second run finds every one in place and changes nothing, and
// hivm-enable-multi-buffer gives each copy of a multi-buffered box its alloc's layout.
// AGAIN:         hivm-infer-data-layout {{.*}} buffers-laid-out=0, layout-conversions=0
// AGAIN-LABEL: func.func @mm_f16(
// AGAIN:         %a_l1_0 = hivm.alloc {layout = #hivm.data_layout<ND, transpose = true>}
// AGAIN:         %a_l1_1 = hivm.alloc {layout = #hivm.data_layout<ND, transpose = true>}
// AGAIN:         hivm.multi_buffer_select
// AGAIN:         hivm.load_l0a %a_l1, %a_l0, {{.*}} {dst_layout = #hivm.data_layout<zZ, fractal = [16, 16]>, src_layout = #hivm.data_layout<ND, transpose = true>, transpose = true}
module attributes {target = "ascend910b1"} {
  func.func @mm_f16(%a: memref<64x32xf16, gm>, %b: memref<64x48xf16, gm>, %out: memref<32x48xf32, gm>) attributes {core_type = "AIC", kernel, output_args = [2]} {
    %c0 = arith.constant {value = 0} : () -> index
    %c1 = arith.constant {value = 1} : () -> index
    %c2 = arith.constant {value = 2} : () -> index
    %c16 = arith.constant {value = 16} : () -> index
    %c64 = arith.constant {value = 64} : () -> index
    %a_l1 = hivm.alloc {multi_buffer = 2} : () -> memref<64x16xf16, l1>
    %b_l1 = hivm.alloc : () -> memref<64x16xf16, l1>
    %a_l0 = hivm.alloc : () -> memref<16x64xf16, l0a>
    %b_l0 = hivm.alloc : () -> memref<64x16xf16, l0b>
    %c_l0 = hivm.alloc : () -> memref<16x16xf32, l0c>
    scf.for %c0, %c2, %c1 ({
    ^bb0(%mi: index):
      %m0 = arith.muli %mi, %c16 : (index, index) -> index
      hivm.load %a, %a_l1, %c0, %m0, %c64, %c16 : memref<64x32xf16, gm>, memref<64x16xf16, l1>, index, index, index, index
      hivm.load %b, %b_l1, %c0, %c0, %c64, %c16 : memref<64x48xf16, gm>, memref<64x16xf16, l1>, index, index, index, index
      hivm.load_l0a %a_l1, %a_l0, %c0, %c16, %c64 {transpose = true} : memref<64x16xf16, l1>, memref<16x64xf16, l0a>, index, index, index
      hivm.load_l0b %b_l1, %b_l0, %c0, %c0, %c64, %c16 {transpose = false} : memref<64x16xf16, l1>, memref<64x16xf16, l0b>, index, index, index, index
      hivm.mmad %a_l0, %b_l0, %c_l0, %c1, %c16, %c64, %c16 : memref<16x64xf16, l0a>, memref<64x16xf16, l0b>, memref<16x16xf32, l0c>, index, index, index, index
      hivm.fixpipe %c_l0, %out, %m0, %c0, %c16, %c16 {relu = false} : memref<16x16xf32, l0c>, memref<32x48xf32, gm>, index, index, index, index
      scf.yield
    }) : index, index, index
    func.return
  }
  func.func @mm_f32(%a: memref<16x32xf32, gm>, %b: memref<32x16xf32, gm>, %out: memref<16x16xf32, gm>) attributes {core_type = "AIC", kernel, output_args = [2]} {
    %c0 = arith.constant {value = 0} : () -> index
    %c1 = arith.constant {value = 1} : () -> index
    %c16 = arith.constant {value = 16} : () -> index
    %c32 = arith.constant {value = 32} : () -> index
    %a_l1 = hivm.alloc : () -> memref<16x32xf32, l1>
    %b_l1 = hivm.alloc : () -> memref<32x16xf32, l1>
    %a_l0 = hivm.alloc : () -> memref<16x32xf32, l0a>
    %b_l0 = hivm.alloc : () -> memref<32x16xf32, l0b>
    %c_l0 = hivm.alloc : () -> memref<16x16xf32, l0c>
    hivm.load %a, %a_l1, %c0, %c0, %c16, %c32 : memref<16x32xf32, gm>, memref<16x32xf32, l1>, index, index, index, index
    hivm.load %b, %b_l1, %c0, %c0, %c32, %c16 : memref<32x16xf32, gm>, memref<32x16xf32, l1>, index, index, index, index
    hivm.load_l0a %a_l1, %a_l0, %c0, %c16, %c32 {transpose = false} : memref<16x32xf32, l1>, memref<16x32xf32, l0a>, index, index, index
    hivm.load_l0b %b_l1, %b_l0, %c0, %c0, %c32, %c16 {transpose = false} : memref<32x16xf32, l1>, memref<32x16xf32, l0b>, index, index, index, index
    hivm.mmad %a_l0, %b_l0, %c_l0, %c1, %c16, %c32, %c16 : memref<16x32xf32, l0a>, memref<32x16xf32, l0b>, memref<16x16xf32, l0c>, index, index, index, index
    hivm.fixpipe %c_l0, %out, %c0, %c0, %c16, %c16 {relu = false} : memref<16x16xf32, l0c>, memref<16x16xf32, gm>, index, index, index, index
    func.return
  }
  func.func @vec(%x: memref<64xf32, gm>, %y: memref<64xf32, gm>) attributes {core_type = "AIV", kernel, output_args = [1]} {
    %c0 = arith.constant {value = 0} : () -> index
    %c64 = arith.constant {value = 64} : () -> index
    %u = hivm.alloc : () -> memref<64xf32, ub>
    hivm.load %x, %u, %c0, %c64 : memref<64xf32, gm>, memref<64xf32, ub>, index, index
    hivm.vunary %u, %u, %c64 {fun = "exp"} : memref<64xf32, ub>, memref<64xf32, ub>, index
    hivm.store %u, %y, %c0, %c64 : memref<64xf32, ub>, memref<64xf32, gm>, index, index
    func.return
  }
}
