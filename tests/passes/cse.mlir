// RUN: npu-opt %s -p cse --split-input-file | filecheck %s

// Identical pure ops merge; a different attribute or operand keeps them apart.
// CHECK-LABEL: func.func @merge(
// CHECK-SAME:    [[X:%[0-9a-z_]+]]: tensor<8xf32>
// CHECK:         [[E:%[0-9a-z_]+]] = hfusion.elemwise_unary [[X]] {fun = "exp"}
// CHECK-NEXT:    [[N:%[0-9a-z_]+]] = hfusion.elemwise_unary [[X]] {fun = "neg"}
// CHECK-NEXT:    [[S:%[0-9a-z_]+]] = hfusion.elemwise_binary [[E]], [[E]] {fun = "add"}
// CHECK-NEXT:    func.return [[S]], [[N]] :
module {
  func.func @merge(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
    %0 = hfusion.elemwise_unary %x {fun = "exp"} : (tensor<8xf32>) -> tensor<8xf32>
    %1 = hfusion.elemwise_unary %x {fun = "exp"} : (tensor<8xf32>) -> tensor<8xf32>
    %2 = hfusion.elemwise_unary %x {fun = "neg"} : (tensor<8xf32>) -> tensor<8xf32>
    %3 = hfusion.elemwise_binary %0, %1 {fun = "add"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    func.return %3, %2 : tensor<8xf32>, tensor<8xf32>
  }
}

// -----

// Constants merge; ops with memory effects do not.
// CHECK-LABEL: func.func @constants_and_effects(
// CHECK-COUNT-1: arith.constant
// CHECK-COUNT-2: annotation.mark
module {
  func.func @constants_and_effects(%x: tensor<8xf32>) -> (f32, f32) {
    %a = arith.constant {value = 1.5} : () -> f32
    %b = arith.constant {value = 1.5} : () -> f32
    annotation.mark %x {hint = 1} : tensor<8xf32>
    annotation.mark %x {hint = 1} : tensor<8xf32>
    func.return %a, %b : f32, f32
  }
}

// -----

// An op inside a loop body merges with a dominating one outside it; one inside does not leak out.
// CHECK-LABEL: func.func @nested(
// CHECK:         [[C:%[0-9a-z_]+]] = arith.constant {value = 2}
// CHECK:         scf.for
// CHECK-NOT:     arith.constant {value = 2}
// CHECK:         arith.addi %{{.*}}, [[C]]
// CHECK:         [[K:%[0-9a-z_]+]] = arith.constant {value = 5}
// CHECK:         scf.yield
// CHECK:         arith.constant {value = 5}
module {
  func.func @nested(%lb: index, %ub: index) -> (index, index) {
    %c = arith.constant {value = 2} : () -> index
    %r = scf.for %lb, %ub, %c, %lb ({
    ^bb0(%iv: index, %acc: index):
      %c2 = arith.constant {value = 2} : () -> index
      %s = arith.addi %acc, %c2 : (index, index) -> index
      %k = arith.constant {value = 5} : () -> index
      %t = arith.addi %s, %k : (index, index) -> index
      scf.yield %t : index
    }) : (index, index, index, index) -> index
    %k2 = arith.constant {value = 5} : () -> index
    func.return %r, %k2 : index, index
  }
}

// -----

// Host fallbacks never merge, even with equal attributes (hand-written: imported ones name distinct FX nodes): two
// draws of rand are two values.
// CHECK-LABEL: func.func @random_draws(
// CHECK:         [[A:%[0-9a-z_]+]] = host.fallback {{.*}}target = "aten.rand.default"
// CHECK-NEXT:    [[B:%[0-9a-z_]+]] = host.fallback {{.*}}target = "aten.rand.default"
// CHECK-NEXT:    hfusion.elemwise_binary [[A]], [[B]]
module {
  func.func @random_draws() -> tensor<8xf32> {
    %0 = host.fallback {target = "aten.rand.default", node = "rand", reason = "random op", args = [[8]], kwargs = {}} : () -> tensor<8xf32>
    %1 = host.fallback {target = "aten.rand.default", node = "rand", reason = "random op", args = [[8]], kwargs = {}} : () -> tensor<8xf32>
    %2 = hfusion.elemwise_binary %0, %1 {fun = "add"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    func.return %2 : tensor<8xf32>
  }
}
