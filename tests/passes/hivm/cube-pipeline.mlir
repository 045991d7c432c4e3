// RUN: npu-opt %s -p "hfusion-auto-schedule,convert-to-hivm" | filecheck %s --check-prefix=CONV
// RUN: npu-opt %s -p "hfusion-auto-schedule,convert-to-hivm,hivm-infer-core-type,hivm-infer-mem-scope,hivm-mark-multi-buffer" | filecheck %s --check-prefix=SCOPE
// RUN: npu-opt %s -p "hfusion-auto-schedule,convert-to-hivm,hivm-infer-core-type,hivm-infer-mem-scope,hivm-mark-multi-buffer,hivm-enable-multi-buffer,hivm-plan-memory,hivm-verify-memory-plan,hivm-inject-sync" | filecheck %s --check-prefix=SYNC

// A 1024^3 f16 GEMM with B transposed (x @ w.t()), through the cube half of the HIVM pipeline (docs/cube.md).
//
// convert-to-hivm: one alloc per buffer of the cube schedule (tagged with its index), a loop over the work items
// (32 tiles of 128 x 256, cyclic over the 24 cores: the first 24 whole, the last 8 cut into 3 column strips each,
// so 48 work items), the K loop of L1 steps (both operand boxes in their GM orientation: B's is n x k, a strip's
// columns only), the accumulator's column parts (as many as the strip needs), the L0 steps (MTE1 loads, B's
// transposed in place, and mmad), the drain of each part through FixPipe in the last L1 step only (a loop of one
// trip there, none before).
// CONV-LABEL: func.func @mm(
// CONV:         %a_l1 = hivm.alloc {buffer = 0} : () -> memref<128x256xf16>
// CONV:         %b_l1 = hivm.alloc {buffer = 1} : () -> memref<256x256xf16>
// CONV:         %c_l0 = hivm.alloc {buffer = 4} : () -> memref<128x128xf32>
// CONV:         scf.for %bid, %c48, %block_dim
// CONV:           %late = arith.maxsi
// CONV:           %q = arith.addi
// CONV:           %strip_w = arith.muli
// CONV:           %mi = arith.floordivsi %q, %c4
// CONV:           %n0s = arith.addi %n0, %strip_off
// CONV:           scf.for %c0, %c1024, %c256
// CONV:             hivm.load %a, %a_l1, %m0, %kk, %c128, %c256
// CONV:             hivm.load %b, %b_l1, %n0s, %kk, %strip_w, %c256
// CONV:             %is_last = arith.subi
// CONV:             %parts = arith.ceildivsi %strip_w, %c128
// CONV:             scf.for %c0, %parts, %c1
// CONV:               scf.for %c0, %c256, %c128
// CONV:                 hivm.load_l0a %a_l1, %a_l0, %k0, %c128, %c128 {transpose = false}
// CONV:                 hivm.load_l0b %b_l1, %b_l0, %k0, %c_off, %c128, %en_h {transpose = true}
// CONV:                 hivm.mmad %a_l0, %b_l0, %c_l0, %init, %c128, %c128, %en_h
// CONV:               scf.for %c0, %is_last, %c1
// CONV:                 hivm.fixpipe %c_l0, %out, %m0, %{{.*}}, %c128, %en_h {relu = false}

// infer-core-type / infer-mem-scope / mark-multi-buffer: an AIC kernel; L1 boxes, L0A/L0B windows and L0C parts,
// two copies of each (ping-pong; the accumulator's copies are its two parts).
// SCOPE-LABEL: func.func @mm(
// SCOPE-SAME:    core_type = "AIC"
// SCOPE:         hivm.alloc {buffer = 0, multi_buffer = 2} : () -> memref<128x256xf16, l1>
// SCOPE:         hivm.alloc {buffer = 1, multi_buffer = 2} : () -> memref<256x256xf16, l1>
// SCOPE:         hivm.alloc {buffer = 2, multi_buffer = 2} : () -> memref<128x128xf16, l0a>
// SCOPE:         hivm.alloc {buffer = 3, multi_buffer = 2} : () -> memref<128x128xf16, l0b>
// SCOPE:         hivm.alloc {buffer = 4, multi_buffer = 2} : () -> memref<128x128xf32, l0c>

// inject-sync: every carried flag is pre-armed once before the work-item loop and drained once after it, so no
// pipe stops at the end of an inner loop: MTE1 loads the next part's first window while the cube finishes this
// part, and a part's drain (FIX) overlaps the other part's mmads (the FIX -> M ids follow the part).
// SYNC-LABEL: func.func @mm(
// SYNC:         hivm.set_flag {dst_pipe = "PIPE_MTE1", event_ids = [0], src_pipe = "PIPE_M"}
// SYNC:         hivm.set_flag {dst_pipe = "PIPE_M", event_ids = [0], src_pipe = "PIPE_FIX"}
// SYNC:         hivm.set_flag {dst_pipe = "PIPE_MTE2", event_ids = [1], src_pipe = "PIPE_MTE1"}
// SYNC-NEXT:    scf.for %bid, %c48, %block_dim
// SYNC-NOT:       hivm.wait_flag {
// SYNC:           hivm.wait_flag %k_1 {dst_pipe = "PIPE_MTE2", event_ids = [0, 1], src_pipe = "PIPE_MTE1"}
// SYNC:           hivm.load %a
// SYNC:           hivm.set_flag %k_1 {dst_pipe = "PIPE_MTE1", event_ids = [0, 1], src_pipe = "PIPE_MTE2"}
// SYNC:           hivm.wait_flag %h {dst_pipe = "PIPE_M", event_ids = [0, 1], src_pipe = "PIPE_FIX"}
// SYNC:             hivm.wait_flag %k_2 {dst_pipe = "PIPE_MTE1", event_ids = [0, 1], src_pipe = "PIPE_M"}
// SYNC:             hivm.load_l0a
// SYNC:             hivm.mmad
// SYNC-NEXT:        hivm.set_flag %k_2 {dst_pipe = "PIPE_MTE1", event_ids = [0, 1], src_pipe = "PIPE_M"}
// SYNC-NEXT:        scf.yield
// SYNC-NEXT:      }) : index, index, index
// SYNC-NEXT:      hivm.set_flag %h {dst_pipe = "PIPE_FIX", event_ids = [0, 1], src_pipe = "PIPE_M"}
// SYNC-NOT:       hivm.wait_flag {
// SYNC:           hivm.fixpipe
// SYNC:           hivm.set_flag %h {dst_pipe = "PIPE_M", event_ids = [0, 1], src_pipe = "PIPE_FIX"}
// SYNC:         hivm.wait_flag {dst_pipe = "PIPE_MTE1", event_ids = [0], src_pipe = "PIPE_M"}
// SYNC:         hivm.pipe_barrier {pipe = "PIPE_ALL"}
module attributes {target = "ascend910b1"} {
  func.func @mm(%a: tensor<1024x1024xf16>, %b: tensor<1024x1024xf16>, %out: tensor<1024x1024xf16>) -> (tensor<1024x1024xf16>) attributes {fusion_kind = "SINGLE_CUBE", kernel, output_args = [2]} {
    %r = hfusion.matmul %a, %b {transpose_b = true} : (tensor<1024x1024xf16>, tensor<1024x1024xf16>) -> tensor<1024x1024xf16>
    func.return %r : tensor<1024x1024xf16>
  }
}
