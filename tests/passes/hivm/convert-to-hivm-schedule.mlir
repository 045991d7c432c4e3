// RUN: npu-opt %s -p "hfusion-auto-schedule,convert-to-hivm,hivm-mark-multi-buffer" --mlir-print-ir-after-all 2>&1 | filecheck %s

// The schedule travels in the IR: hfusion-auto-schedule records it as a typed attribute (its buffer plan names
// the values each buffer holds — a<i> the kernel's argument i, o<j> the result of its j-th body op: the exp
// writes in place over the product — and each buffer's copies); convert-to-hivm allocates exactly those buffers,
// each tagged with its index in the plan; hivm-mark-multi-buffer gives each the copies the schedule decided.
// CHECK-LABEL: IR Dump After AutoSchedule (hfusion-auto-schedule)
// CHECK:       func.func @main_fused_0(
// CHECK-SAME:    schedule = #hfusion.schedule<{kind = "PURE_ELEMWISE", tile = [16384], ub_bytes = 196608, buffers = [{dtype = "f16", dims = [0], values = ["a0"], copies = 2, loaded = true}, {dtype = "f16", dims = [0], values = ["a1"], copies = 2, loaded = true}, {dtype = "f16", dims = [0], values = ["o0", "o1"], copies = 2, stored = true}], split_dims = [0]}>
// CHECK-LABEL: IR Dump After ConvertToHIVM (convert-to-hivm)
// CHECK:         hivm.alloc {buffer = 0} : () -> memref<16384xf16>
// CHECK-NEXT:    hivm.alloc {buffer = 1} : () -> memref<16384xf16>
// CHECK-NEXT:    hivm.alloc {buffer = 2} : () -> memref<16384xf16>
// CHECK:         hivm.vbinary [[X:%[a-z0-9_]+]], [[Y:%[a-z0-9_]+]], [[T:%ub2]], {{%[a-z0-9_]+}} {fun = "mul"}
// CHECK-NEXT:    hivm.vunary [[T]], [[T]], {{%[a-z0-9_]+}} {fun = "exp"}
// CHECK-LABEL: IR Dump After MarkMultiBuffer (hivm-mark-multi-buffer)
// CHECK:         hivm.alloc {buffer = 0, multi_buffer = 2} : () -> memref<16384xf16>
// CHECK-NEXT:    hivm.alloc {buffer = 1, multi_buffer = 2} : () -> memref<16384xf16>
// CHECK-NEXT:    hivm.alloc {buffer = 2, multi_buffer = 2} : () -> memref<16384xf16>
module attributes {symbols = {s0 = [1, 1000000]}, target = "ascend910b1"} {
  func.func @main_fused_0(%x: tensor<(128*s0)xf16>, %y: tensor<(128*s0)xf16>, %out: tensor<(128*s0)xf16>) -> (tensor<(128*s0)xf16>) attributes {fusion_kind = "PURE_ELEMWISE", kernel, output_args = [2]} {
    %t = hfusion.elemwise_binary %x, %y {fun = "mul"} : (tensor<(128*s0)xf16>, tensor<(128*s0)xf16>) -> tensor<(128*s0)xf16>
    %r = hfusion.elemwise_unary %t {fun = "exp"} : (tensor<(128*s0)xf16>) -> tensor<(128*s0)xf16>
    func.return %r : tensor<(128*s0)xf16>
  }
  func.func @main(%a: tensor<(128*s0)xf16>, %b: tensor<(128*s0)xf16>) -> (tensor<(128*s0)xf16>) {
    %e = tensor.empty : () -> tensor<(128*s0)xf16>
    %r = func.call %a, %b, %e {callee = "main_fused_0"} : (tensor<(128*s0)xf16>, tensor<(128*s0)xf16>, tensor<(128*s0)xf16>) -> tensor<(128*s0)xf16>
    func.return %r : tensor<(128*s0)xf16>
  }
}
