// RUN: npu-opt %s -p hfusion-auto-schedule --split-input-file | filecheck %s

// Dynamic elementwise kernel: a static capacity-driven tile; dim sizes, trip counts and the block dim are
// expressions of s0. Four buffers (x, y, z, and t reused in place by the add), each double-buffered, fill UB. Its
// one symbolic dim is split per launch (split_dims): work items step by 32-B granules spread over the 48 cores,
// at most the tile (a short input no longer runs as one work item on one core). The schedule is a typed attribute:
// each buffer names the body values it holds (a<i>: argument i, o<j>: the result of body op j; the add writes in
// place over the product) and its copies, the multi-buffer depth decided here.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    schedule = #hfusion.schedule<{kind = "PURE_ELEMWISE", tile = [12288], ub_bytes = 196608, buffers = [{dtype = "f16", dims = [0], values = ["a0"], copies = 2, loaded = true}, {dtype = "f16", dims = [0], values = ["a1"], copies = 2, loaded = true}, {dtype = "f16", dims = [0], values = ["a2"], copies = 2, loaded = true}, {dtype = "f16", dims = [0], values = ["o0", "o1"], copies = 2, stored = true}], split_dims = [0]}>
// CHECK-SAME:    tiling = {block_dim = (Min(48,ceiling(128*s0/Min(12288,16*ceiling(s0/6))))), n0 = (128*s0), n_tiles = (ceiling(128*s0/Min(12288,16*ceiling(s0/6)))), step0 = (Min(12288,16*ceiling(s0/6))), tiles0 = (ceiling(128*s0/Min(12288,16*ceiling(s0/6))))}
// CHECK:       func.func @main(
// CHECK-NOT:     schedule
// A requested tile (tile-elems) is honoured exactly, past UB: 65536 elements × 4 buffers × 2 copies is 1 MiB;
// hivm-plan-memory overflows and the retry ladder retries (multi-buffer 1, then halved requests). No balancing:
// the static 3000-element kernel gets one tile (its input, the same in every work item, is loaded once before the
// loop: one copy). A request is rounded down to whole 256-B repeats (f16: 128).
// RUN: npu-opt %s -p "hfusion-auto-schedule{tile-elems=65536}" --split-input-file | filecheck %s --check-prefix=REQ
// REQ:       tile = [65536], ub_bytes = 1048576, buffers = [{dtype = "f16", dims = [0], values = ["a0"], copies = 2, loaded = true}
// REQ:       tile = [3000], ub_bytes = 36000, buffers = [{dtype = "f32", dims = [0], values = ["a0"], loaded = true}, {dtype = "f32", dims = [0], values = ["o0"], copies = 2, stored = true}]}>
// REQ-SAME:  tiling = {block_dim = 1, n0 = 3000, n_tiles = 1}
// REQ:       tile = [1, 65536]
// REQ-SAME:  reduce_looped = true, passes = 3, scratch_bytes = 4096
// RUN: npu-opt %s -p "hfusion-auto-schedule{tile-elems=1000}" --split-input-file | filecheck %s --check-prefix=REQR
// REQR:      tile = [896], ub_bytes = 14336,
module attributes {symbols = {s0 = [1, 1000000]}, target = "ascend910b1"} {
  func.func @main_fused_0(%x: tensor<(128*s0)xf16>, %y: tensor<(128*s0)xf16>, %z: tensor<(128*s0)xf16>, %out: tensor<(128*s0)xf16>) -> (tensor<(128*s0)xf16>) attributes {fusion_kind = "PURE_ELEMWISE", kernel, output_args = [3]} {
    %t = hfusion.elemwise_binary %x, %y {fun = "mul"} : (tensor<(128*s0)xf16>, tensor<(128*s0)xf16>) -> tensor<(128*s0)xf16>
    %r = hfusion.elemwise_binary %t, %z {fun = "add"} : (tensor<(128*s0)xf16>, tensor<(128*s0)xf16>) -> tensor<(128*s0)xf16>
    func.return %r : tensor<(128*s0)xf16>
  }
  func.func @main(%a: tensor<(128*s0)xf16>, %b: tensor<(128*s0)xf16>, %c: tensor<(128*s0)xf16>) -> (tensor<(128*s0)xf16>) {
    %e = tensor.empty : () -> tensor<(128*s0)xf16>
    %r = func.call %a, %b, %c, %e {callee = "main_fused_0"} : (tensor<(128*s0)xf16>, tensor<(128*s0)xf16>, tensor<(128*s0)xf16>, tensor<(128*s0)xf16>) -> tensor<(128*s0)xf16>
    func.return %r : tensor<(128*s0)xf16>
  }
}

// -----

// A static shape small enough that one tile would cover it is split so that every vector core gets work;
// multi-buffer=1 and a block-dim override.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    tile = [64]
// CHECK-SAME:    tiling = {block_dim = 47, n0 = 3000, n_tiles = 47, tiles0 = 47}
// RUN: npu-opt %s -p "hfusion-auto-schedule{multi-buffer=1 block-dim=8}" --split-input-file | filecheck %s --check-prefix=OPT
// OPT:       tile = [24576], ub_bytes = 196608, buffers = [{dtype = "f16", dims = [0], values = ["a0"], loaded = true}, {{.*}}], split_dims = [0]}>
// OPT-SAME:  block_dim = (Min(8,ceiling(128*s0/Min(24576,16*s0))))
// OPT:       tile = [64], ub_bytes = 512, buffers = [{dtype = "f32", dims = [0], values = ["a0"], loaded = true}, {dtype = "f32", dims = [0], values = ["o0"], stored = true}]}>
// OPT-SAME:  tiling = {block_dim = 8, n0 = 3000
module attributes {target = "ascend910b1"} {
  func.func @main_fused_0(%x: tensor<3000xf32>, %out: tensor<3000xf32>) -> (tensor<3000xf32>) attributes {fusion_kind = "PURE_ELEMWISE", kernel, output_args = [1]} {
    %r = hfusion.elemwise_unary %x {fun = "exp"} : (tensor<3000xf32>) -> tensor<3000xf32>
    func.return %r : tensor<3000xf32>
  }
}

// -----

// Softmax rows that do not fit UB: the reduced dim is tiled (reduce_looped), three passes over each row; the row
// reductions fold each tile's chunks into 16 partials of 256 B in the kernel's scratch.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    tile = [1, {{[0-9]+}}]
// CHECK-SAME:    {dtype = "f32", dims = [0], role = "partial", of = "o0"}
// CHECK-SAME:    reduce_dims = [1], reduce_looped = true, passes = 3, scratch_bytes = 4096, inlined = ["o1", "o5"]}>
// CHECK-SAME:    tiling = {block_dim = (Min(48,s0)), n0 = s0, n1 = 1000000, n_tiles = s0, tiles0 = s0, tiles1 = {{[0-9]+}}}
module attributes {symbols = {s0 = [1, 4096]}, target = "ascend910b1"} {
  func.func @main_fused_0(%x: tensor<s0x1000000xf32>, %out: tensor<s0x1000000xf32>) -> (tensor<s0x1000000xf32>) attributes {fusion_kind = "LAST_AXIS_PBR", kernel, output_args = [1]} {
    %m = hfusion.reduce %x {dims = [1], kind = "max"} : (tensor<s0x1000000xf32>) -> tensor<s0xf32>
    %mb = hfusion.broadcast %m {dims = [1]} : (tensor<s0xf32>) -> tensor<s0x1000000xf32>
    %d = hfusion.elemwise_binary %x, %mb {fun = "sub"} : (tensor<s0x1000000xf32>, tensor<s0x1000000xf32>) -> tensor<s0x1000000xf32>
    %e = hfusion.elemwise_unary %d {fun = "exp"} : (tensor<s0x1000000xf32>) -> tensor<s0x1000000xf32>
    %s = hfusion.reduce %e {dims = [1], kind = "sum"} : (tensor<s0x1000000xf32>) -> tensor<s0xf32>
    %sb = hfusion.broadcast %s {dims = [1]} : (tensor<s0xf32>) -> tensor<s0x1000000xf32>
    %r = hfusion.elemwise_binary %e, %sb {fun = "div"} : (tensor<s0x1000000xf32>, tensor<s0x1000000xf32>) -> tensor<s0x1000000xf32>
    func.return %r : tensor<s0x1000000xf32>
  }
}
