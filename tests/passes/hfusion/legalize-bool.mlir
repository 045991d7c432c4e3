// RUN: npu-opt %s -p hfusion-legalize-bool --split-input-file | filecheck %s

// A bool argument (behind flatten's boundary reshape) is read as bytes: bitcast to i8, 0/1 as f16, compared with
// 0 for the mask. Logical ops become bitwise ops on the masks; each i1 result is stored as bytes (select 1/0 in
// f16, cast to i8, bitcast to i1 under the boundary reshape).
// CHECK-LABEL: func.func @logical(
// CHECK-DAG:     [[ONE:%[0-9a-z_]+]] = arith.constant {value = 1.0} : () -> f16
// CHECK-DAG:     [[ZERO:%[0-9a-z_]+]] = arith.constant {value = 0.0} : () -> f16
// CHECK-DAG:     [[IZERO:%[0-9a-z_]+]] = arith.constant {value = 0} : () -> i32
// CHECK:         [[A:%[0-9a-z_]+]] = hfusion.reshape %a : (tensor<3x8xi1>) -> tensor<24xi1>
// CHECK-NEXT:    [[AB:%[0-9a-z_]+]] = hfusion.bitcast [[A]] : (tensor<24xi1>) -> tensor<24xi8>
// CHECK-NEXT:    [[AH:%[0-9a-z_]+]] = hfusion.cast [[AB]] {round_mode = "rint"} : (tensor<24xi8>) -> tensor<24xf16>
// CHECK-NEXT:    [[AM:%[0-9a-z_]+]] = hfusion.compare [[AH]], [[ZERO]] {predicate = "ne"} : (tensor<24xf16>, f16) -> tensor<24xi1>
// CHECK:         [[BM:%[0-9a-z_]+]] = hfusion.compare %{{.*}}, [[IZERO]] {predicate = "ne"} : (tensor<24xi32>, i32) -> tensor<24xi1>
// CHECK-NEXT:    [[AND:%[0-9a-z_]+]] = hfusion.elemwise_binary [[AM]], [[BM]] {fun = "bitwise_and"}
// CHECK-NEXT:    [[XOR:%[0-9a-z_]+]] = hfusion.elemwise_binary [[AM]], [[BM]] {fun = "bitwise_xor"}
// CHECK-NEXT:    [[NOT:%[0-9a-z_]+]] = hfusion.elemwise_unary [[AM]] {fun = "bitwise_not"}
// CHECK-NEXT:    [[S:%[0-9a-z_]+]] = hfusion.select [[AND]], [[ONE]], [[ZERO]] : (tensor<24xi1>, f16, f16) -> tensor<24xf16>
// CHECK-NEXT:    [[C:%[0-9a-z_]+]] = hfusion.cast [[S]] {round_mode = "rint"} : (tensor<24xf16>) -> tensor<24xi8>
// CHECK-NEXT:    [[O:%[0-9a-z_]+]] = hfusion.bitcast [[C]] : (tensor<24xi8>) -> tensor<24xi1>
// CHECK-NEXT:    hfusion.reshape [[O]] : (tensor<24xi1>) -> tensor<3x8xi1>
// CHECK:         hfusion.select [[XOR]], [[ONE]], [[ZERO]]
// CHECK:         hfusion.select [[NOT]], [[ONE]], [[ZERO]]
// CHECK:         func.return
module {
  func.func @logical(%a: tensor<3x8xi1>, %b: tensor<3x8xi32>, %o0: tensor<3x8xi1>, %o1: tensor<3x8xi1>, %o2: tensor<3x8xi1>) -> (tensor<3x8xi1>, tensor<3x8xi1>, tensor<3x8xi1>) attributes {kernel, fusion_kind = "PURE_ELEMWISE", output_args = [2, 3, 4]} {
    %0 = hfusion.reshape %a : (tensor<3x8xi1>) -> tensor<24xi1>
    %1 = hfusion.reshape %b : (tensor<3x8xi32>) -> tensor<24xi32>
    %2 = hfusion.cast %1 : (tensor<24xi32>) -> tensor<24xi1>
    %3 = hfusion.elemwise_binary %0, %2 {fun = "logical_and"} : (tensor<24xi1>, tensor<24xi1>) -> tensor<24xi1>
    %4 = hfusion.elemwise_binary %0, %2 {fun = "logical_xor"} : (tensor<24xi1>, tensor<24xi1>) -> tensor<24xi1>
    %5 = hfusion.elemwise_unary %0 {fun = "logical_not"} : (tensor<24xi1>) -> tensor<24xi1>
    %6 = hfusion.reshape %3 : (tensor<24xi1>) -> tensor<3x8xi1>
    %7 = hfusion.reshape %4 : (tensor<24xi1>) -> tensor<3x8xi1>
    %8 = hfusion.reshape %5 : (tensor<24xi1>) -> tensor<3x8xi1>
    func.return %6, %7, %8 : tensor<3x8xi1>, tensor<3x8xi1>, tensor<3x8xi1>
  }
}

// -----

// A cast of a bool argument reads its bytes (exact: 0 or 1), no mask: i8 -> f16 -> i32 (CANN has no i8 -> i32).
// CHECK-LABEL: func.func @bool_to_int(
// CHECK:         [[B:%[0-9a-z_]+]] = hfusion.bitcast %a : (tensor<24xi1>) -> tensor<24xi8>
// CHECK-NEXT:    [[H:%[0-9a-z_]+]] = hfusion.cast [[B]] {{.*}} -> tensor<24xf16>
// CHECK-NEXT:    [[I:%[0-9a-z_]+]] = hfusion.cast [[H]] {{.*}} -> tensor<24xi32>
// CHECK-NOT:     hfusion.compare
// CHECK:         hfusion.elemwise_binary [[I]], %x {fun = "add"}
module {
  func.func @bool_to_int(%a: tensor<24xi1>, %x: tensor<24xi32>, %o: tensor<24xi32>) -> (tensor<24xi32>) attributes {kernel, fusion_kind = "PURE_ELEMWISE", output_args = [2]} {
    %0 = hfusion.cast %a : (tensor<24xi1>) -> tensor<24xi32>
    %1 = hfusion.elemwise_binary %0, %x {fun = "add"} : (tensor<24xi32>, tensor<24xi32>) -> tensor<24xi32>
    func.return %1 : tensor<24xi32>
  }
}

// -----

// Computed masks: a cast to f32 selects 1/0 in f32; a bool select is and/or/not; broadcast and any compute on f16
// 0/1 and compare with 0 again. Functions that are not kernels are left alone.
// CHECK-LABEL: func.func @computed(
// CHECK:         [[M:%[0-9a-z_]+]] = hfusion.compare %x, %{{.*}} {predicate = "gt"}
// CHECK:         hfusion.select [[M]], %{{.*}}, %{{.*}} : (tensor<4x8xi1>, f32, f32) -> tensor<4x8xf32>
// CHECK:         [[H:%[0-9a-z_]+]] = hfusion.select %{{.*}} : (tensor<8xi1>, f16, f16) -> tensor<8xf16>
// CHECK-NEXT:    [[BR:%[0-9a-z_]+]] = hfusion.broadcast [[H]] {dims = [0]} : (tensor<8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT:    [[N:%[0-9a-z_]+]] = hfusion.compare [[BR]], %{{.*}} {predicate = "ne"} : (tensor<4x8xf16>, f16) -> tensor<4x8xi1>
// CHECK-NEXT:    [[T:%[0-9a-z_]+]] = hfusion.elemwise_binary [[M]], [[N]] {fun = "bitwise_and"}
// CHECK-NEXT:    [[NC:%[0-9a-z_]+]] = hfusion.elemwise_unary [[M]] {fun = "bitwise_not"}
// CHECK-NEXT:    [[F:%[0-9a-z_]+]] = hfusion.elemwise_binary [[NC]], [[M]] {fun = "bitwise_and"}
// CHECK-NEXT:    hfusion.elemwise_binary [[T]], [[F]] {fun = "bitwise_or"}
// CHECK:         [[R:%[0-9a-z_]+]] = hfusion.reduce %{{.*}} {dims = [1], kind = "max"} : (tensor<4x8xf16>) -> tensor<4xf16>
// CHECK-NEXT:    hfusion.compare [[R]], %{{.*}} {predicate = "ne"} : (tensor<4xf16>, f16) -> tensor<4xi1>
// CHECK-LABEL: func.func @host(
// CHECK-NEXT:    hfusion.elemwise_unary %a {fun = "logical_not"}
module {
  func.func @computed(%x: tensor<4x8xf32>, %v: tensor<8xf32>, %o0: tensor<4x8xf32>, %o1: tensor<4x8xi1>, %o2: tensor<4xi1>) -> (tensor<4x8xf32>, tensor<4x8xi1>, tensor<4xi1>) attributes {kernel, fusion_kind = "ANY_PBR", output_args = [2, 3, 4]} {
    %c0 = arith.constant {value = 0.0} : () -> f32
    %m = hfusion.compare %x, %c0 {predicate = "gt"} : (tensor<4x8xf32>, f32) -> tensor<4x8xi1>
    %f = hfusion.cast %m : (tensor<4x8xi1>) -> tensor<4x8xf32>
    %vm = hfusion.compare %v, %c0 {predicate = "lt"} : (tensor<8xf32>, f32) -> tensor<8xi1>
    %n = hfusion.broadcast %vm {dims = [0]} : (tensor<8xi1>) -> tensor<4x8xi1>
    %s = hfusion.select %m, %n, %m : (tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
    %any = hfusion.reduce %s {dims = [1], kind = "any"} : (tensor<4x8xi1>) -> tensor<4xi1>
    func.return %f, %s, %any : tensor<4x8xf32>, tensor<4x8xi1>, tensor<4xi1>
  }
  func.func @host(%a: tensor<8xi1>) -> (tensor<8xi1>) {
    %0 = hfusion.elemwise_unary %a {fun = "logical_not"} : (tensor<8xi1>) -> tensor<8xi1>
    func.return %0 : tensor<8xi1>
  }
}

// -----

// A data-movement kernel (a transpose of a mask, scatter's one-hot along dim 0) copies the bool bytes as they are:
// no bitcast, no mask idiom (the movement schedule moves them through i8 buffers).
// CHECK-LABEL: func.func @transpose_mask(
// CHECK-NEXT:    [[T:%[0-9a-z_]+]] = hfusion.transpose %m {perm = [1, 0]} : (tensor<8x3xi1>) -> tensor<3x8xi1>
// CHECK-NEXT:    func.return [[T]] : tensor<3x8xi1>
module {
  func.func @transpose_mask(%m: tensor<8x3xi1>, %o: tensor<3x8xi1>) -> (tensor<3x8xi1>) attributes {kernel, fusion_kind = "PURE_ELEMWISE", output_args = [1]} {
    %t = hfusion.transpose %m {perm = [1, 0]} : (tensor<8x3xi1>) -> tensor<3x8xi1>
    func.return %t : tensor<3x8xi1>
  }
}

// -----

// Two bool arguments read whole: each one's bytes are read before the body's first op, after the constants the
// pass puts at the top (the second argument's mask compare reads the f16 zero made for the first).
// CHECK-LABEL: func.func @two_bool_arguments(
// CHECK:         [[ZERO:%[0-9a-z_]+]] = arith.constant {value = 0.0} : () -> f16
// CHECK:         hfusion.compare {{%[0-9a-z_]+}}, [[ZERO]] {predicate = "ne"}
// CHECK:         hfusion.compare {{%[0-9a-z_]+}}, [[ZERO]] {predicate = "ne"}
// CHECK:         arith.constant {value = 2.0} : () -> f32
// CHECK:         hfusion.elemwise_binary {{%[0-9a-z_]+}}, {{%[0-9a-z_]+}} {fun = "bitwise_and"}
// CHECK:         func.return
module {
  func.func @two_bool_arguments(%a: tensor<6xi1>, %b: tensor<6xi1>, %x: tensor<6xf32>, %o: tensor<6xf32>) -> (tensor<6xf32>) attributes {kernel, fusion_kind = "PURE_ELEMWISE", output_args = [3]} {
    %c = arith.constant {value = 2.0} : () -> f32
    %m = hfusion.elemwise_binary %a, %b {fun = "logical_and"} : (tensor<6xi1>, tensor<6xi1>) -> tensor<6xi1>
    %0 = hfusion.select %m, %x, %c : (tensor<6xi1>, tensor<6xf32>, f32) -> tensor<6xf32>
    %1 = hfusion.select %b, %0, %c : (tensor<6xi1>, tensor<6xf32>, f32) -> tensor<6xf32>
    func.return %1 : tensor<6xf32>
  }
}
