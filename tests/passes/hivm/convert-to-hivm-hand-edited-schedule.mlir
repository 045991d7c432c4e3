// RUN: npu-opt %s -p "convert-to-hivm,hivm-mark-multi-buffer" | filecheck %s

// npu-opt replays the lowering from a hand-edited schedule, as written: tiles of 4096, the inputs single-buffered,
// three copies of the output, and the exp no longer in place over the product (its own buffer, o1): four buffers.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK:         hivm.alloc {buffer = 0} : () -> memref<4096xf16>
// CHECK-NEXT:    hivm.alloc {buffer = 1} : () -> memref<4096xf16>
// CHECK-NEXT:    hivm.alloc {buffer = 2} : () -> memref<4096xf16>
// CHECK-NEXT:    hivm.alloc {buffer = 3, multi_buffer = 3} : () -> memref<4096xf16>
// CHECK:         hivm.vbinary {{%[a-z0-9_]+}}, {{%[a-z0-9_]+}}, [[T:%ub2]], {{%[a-z0-9_]+}} {fun = "mul"}
// CHECK-NEXT:    hivm.vunary [[T]], [[R:%ub3]], {{%[a-z0-9_]+}} {fun = "exp"}
// CHECK-NEXT:    hivm.store [[R]], %out
module attributes {symbols = {s0 = [1, 1000000]}, target = "ascend910b1"} {
  func.func @main_fused_0(%x: tensor<(128*s0)xf16>, %y: tensor<(128*s0)xf16>, %out: tensor<(128*s0)xf16>) -> (tensor<(128*s0)xf16>) attributes {fusion_kind = "PURE_ELEMWISE", kernel, output_args = [2], schedule = #hfusion.schedule<{kind = "PURE_ELEMWISE", tile = [4096], ub_bytes = 40960, buffers = [{dtype = "f16", dims = [0], values = ["a0"], loaded = true}, {dtype = "f16", dims = [0], values = ["a1"], loaded = true}, {dtype = "f16", dims = [0], values = ["o0"]}, {dtype = "f16", dims = [0], values = ["o1"], copies = 3, stored = true}]}>, tiling = {block_dim = (Min(48,ceiling(s0/32))), n0 = (128*s0), n_tiles = (ceiling(s0/32)), tiles0 = (ceiling(s0/32))}} {
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
