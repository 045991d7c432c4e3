// RUN: npu-opt %s -p hfusion-auto-schedule,convert-to-hivm --split-input-file | filecheck %s

// x - max(x) over 4 rows of 4096 f32: 4 work items of one row, on 4 cores, compute longer than they stream DDR
// (cost.streams_ddr), so the schedule lets the subtraction read the row max as a scalar per row
// (buffers.scalar_column; codegen: ld_ub, then vadds): schedule.scalar_columns and the vbinary's scalar_column.
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-SAME:    scalar_columns = true
// CHECK:         hivm.vreduce {{.*}} {dims = [1], kind = "max"}
// CHECK-NEXT:    hivm.vbinary {{.*}} {fun = "sub", scalar_column = true}
module attributes {symbols = {}, target = "ascend910b1"} {
  func.func @main_fused_0(%x: tensor<4x4096xf32>, %out0: tensor<4x4096xf32>) -> (tensor<4x4096xf32>) attributes {fusion_kind = "LAST_AXIS_PBR", kernel, output_args = [1]} {
    %m = hfusion.reduce %x {dims = [1], kind = "max"} : (tensor<4x4096xf32>) -> tensor<4xf32>
    %b = hfusion.broadcast %m {dims = [1]} : (tensor<4xf32>) -> tensor<4x4096xf32>
    %d = hfusion.elemwise_binary %x, %b {fun = "sub"} : (tensor<4x4096xf32>, tensor<4x4096xf32>) -> tensor<4x4096xf32>
    func.return %d : tensor<4x4096xf32>
  }
}

// -----

// The same over 256 rows: 48 cores each stream 32 KiB a row at their share of DDR, longer than a row's vector
// work; reading scalars would hold the scalar unit — and the next row's load — until the vector pipe caught up,
// so the column stays a vbrcb'd operand (no scalar_columns, no scalar_column).
// CHECK-LABEL: func.func @main_fused_0(
// CHECK-NOT:     scalar_column
// CHECK:         hivm.vbinary {{.*}} {fun = "sub"}
// CHECK-NOT:     scalar_column
module attributes {symbols = {}, target = "ascend910b1"} {
  func.func @main_fused_0(%x: tensor<256x4096xf32>, %out0: tensor<256x4096xf32>) -> (tensor<256x4096xf32>) attributes {fusion_kind = "LAST_AXIS_PBR", kernel, output_args = [1]} {
    %m = hfusion.reduce %x {dims = [1], kind = "max"} : (tensor<256x4096xf32>) -> tensor<256xf32>
    %b = hfusion.broadcast %m {dims = [1]} : (tensor<256xf32>) -> tensor<256x4096xf32>
    %d = hfusion.elemwise_binary %x, %b {fun = "sub"} : (tensor<256x4096xf32>, tensor<256x4096xf32>) -> tensor<256x4096xf32>
    func.return %d : tensor<256x4096xf32>
  }
}

// -----

// x - sum(x) * (1/4096) over 4 rows of f32 (a layer norm's x − mean): the mean is read only as per-row scalars, so
// no vector op computes it; the subtraction reads the row sums with column_scale (codegen: the scalar unit
// multiplies each row's sum as it loads it).
// CHECK-LABEL: func.func @main_fused_0(
// CHECK:         hivm.vreduce [[X:%[a-z0-9_]+]], [[S:%[a-z0-9_]+]], {{.*}} {dims = [1], kind = "sum"}
// CHECK-NOT:     fun = "mul"
// CHECK-NEXT:    hivm.vbinary [[X]], [[S]], {{.*}} {column_scale = 0.000244140625, fun = "sub", scalar_column = true}
module attributes {symbols = {}, target = "ascend910b1"} {
  func.func @main_fused_0(%x: tensor<4x4096xf32>, %out0: tensor<4x4096xf32>) -> (tensor<4x4096xf32>) attributes {fusion_kind = "LAST_AXIS_PBR", kernel, output_args = [1]} {
    %k = arith.constant {value = 0.000244140625} : () -> f32
    %s = hfusion.reduce %x {dims = [1], kind = "sum"} : (tensor<4x4096xf32>) -> tensor<4xf32>
    %m = hfusion.elemwise_binary %s, %k {fun = "mul"} : (tensor<4xf32>, f32) -> tensor<4xf32>
    %b = hfusion.broadcast %m {dims = [1]} : (tensor<4xf32>) -> tensor<4x4096xf32>
    %d = hfusion.elemwise_binary %x, %b {fun = "sub"} : (tensor<4x4096xf32>, tensor<4x4096xf32>) -> tensor<4x4096xf32>
    func.return %d : tensor<4x4096xf32>
  }
}
