"""IR of the fusion cases the hfusion pass tests share, as the importer emits them (explicit broadcasts,
keepdim through reshapes)."""

SYMBOLS = "module attributes {symbols = {s0 = [1, 64]}} {"

ELEMWISE = SYMBOLS + """
  func.func @main(%x: tensor<s0x4x128xf32>, %y: tensor<s0x4x128xf32>, %z: tensor<s0x4x128xf32>) -> (tensor<s0x4x128xf32>) {
    %m = hfusion.elemwise_binary %x, %y {fun = "mul"} : (tensor<s0x4x128xf32>, tensor<s0x4x128xf32>) -> tensor<s0x4x128xf32>
    %a = hfusion.elemwise_binary %m, %z {fun = "add"} : (tensor<s0x4x128xf32>, tensor<s0x4x128xf32>) -> tensor<s0x4x128xf32>
    func.return %a : tensor<s0x4x128xf32>
  }
}
"""

SOFTMAX = SYMBOLS + """
  func.func @main(%x: tensor<s0x8x32xf32>) -> (tensor<s0x8x32xf32>) {
    %max = hfusion.reduce %x {dims = [2], kind = "max"} : (tensor<s0x8x32xf32>) -> tensor<s0x8xf32>
    %maxk = hfusion.reshape %max : (tensor<s0x8xf32>) -> tensor<s0x8x1xf32>
    %max2 = hfusion.reshape %maxk : (tensor<s0x8x1xf32>) -> tensor<s0x8xf32>
    %maxb = hfusion.broadcast %max2 {dims = [2]} : (tensor<s0x8xf32>) -> tensor<s0x8x32xf32>
    %sub = hfusion.elemwise_binary %x, %maxb {fun = "sub"} : (tensor<s0x8x32xf32>, tensor<s0x8x32xf32>) -> tensor<s0x8x32xf32>
    %exp = hfusion.elemwise_unary %sub {fun = "exp"} : (tensor<s0x8x32xf32>) -> tensor<s0x8x32xf32>
    %sum = hfusion.reduce %exp {dims = [2], kind = "sum"} : (tensor<s0x8x32xf32>) -> tensor<s0x8xf32>
    %sumk = hfusion.reshape %sum : (tensor<s0x8xf32>) -> tensor<s0x8x1xf32>
    %sum2 = hfusion.reshape %sumk : (tensor<s0x8x1xf32>) -> tensor<s0x8xf32>
    %sumb = hfusion.broadcast %sum2 {dims = [2]} : (tensor<s0x8xf32>) -> tensor<s0x8x32xf32>
    %div = hfusion.elemwise_binary %exp, %sumb {fun = "div"} : (tensor<s0x8x32xf32>, tensor<s0x8x32xf32>) -> tensor<s0x8x32xf32>
    func.return %div : tensor<s0x8x32xf32>
  }
}
"""

LAYER_NORM = SYMBOLS + """
  func.func @main(%x: tensor<s0x16x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>) -> (tensor<s0x16x64xf32>) {
    %inv_n = arith.constant {value = 0.015625} : () -> f32
    %eps = arith.constant {value = 1e-05} : () -> f32
    %s = hfusion.reduce %x {dims = [2], kind = "sum"} : (tensor<s0x16x64xf32>) -> tensor<s0x16xf32>
    %mean = hfusion.elemwise_binary %s, %inv_n {fun = "mul"} : (tensor<s0x16xf32>, f32) -> tensor<s0x16xf32>
    %meanb = hfusion.broadcast %mean {dims = [2]} : (tensor<s0x16xf32>) -> tensor<s0x16x64xf32>
    %xc = hfusion.elemwise_binary %x, %meanb {fun = "sub"} : (tensor<s0x16x64xf32>, tensor<s0x16x64xf32>) -> tensor<s0x16x64xf32>
    %sq = hfusion.elemwise_binary %xc, %xc {fun = "mul"} : (tensor<s0x16x64xf32>, tensor<s0x16x64xf32>) -> tensor<s0x16x64xf32>
    %ss = hfusion.reduce %sq {dims = [2], kind = "sum"} : (tensor<s0x16x64xf32>) -> tensor<s0x16xf32>
    %var = hfusion.elemwise_binary %ss, %inv_n {fun = "mul"} : (tensor<s0x16xf32>, f32) -> tensor<s0x16xf32>
    %ve = hfusion.elemwise_binary %var, %eps {fun = "add"} : (tensor<s0x16xf32>, f32) -> tensor<s0x16xf32>
    %rstd = hfusion.elemwise_unary %ve {fun = "rsqrt"} : (tensor<s0x16xf32>) -> tensor<s0x16xf32>
    %rstdb = hfusion.broadcast %rstd {dims = [2]} : (tensor<s0x16xf32>) -> tensor<s0x16x64xf32>
    %xn = hfusion.elemwise_binary %xc, %rstdb {fun = "mul"} : (tensor<s0x16x64xf32>, tensor<s0x16x64xf32>) -> tensor<s0x16x64xf32>
    %wb = hfusion.broadcast %w {dims = [0, 1]} : (tensor<64xf32>) -> tensor<s0x16x64xf32>
    %xw = hfusion.elemwise_binary %xn, %wb {fun = "mul"} : (tensor<s0x16x64xf32>, tensor<s0x16x64xf32>) -> tensor<s0x16x64xf32>
    %bb = hfusion.broadcast %b {dims = [0, 1]} : (tensor<64xf32>) -> tensor<s0x16x64xf32>
    %y = hfusion.elemwise_binary %xw, %bb {fun = "add"} : (tensor<s0x16x64xf32>, tensor<s0x16x64xf32>) -> tensor<s0x16x64xf32>
    func.return %y : tensor<s0x16x64xf32>
  }
}
"""

BIAS_RELU = SYMBOLS + """
  func.func @main(%x: tensor<s0x96xf32>, %bias: tensor<96xf32>) -> (tensor<s0x96xf32>) {
    %bb = hfusion.broadcast %bias {dims = [0]} : (tensor<96xf32>) -> tensor<s0x96xf32>
    %a = hfusion.elemwise_binary %x, %bb {fun = "add"} : (tensor<s0x96xf32>, tensor<s0x96xf32>) -> tensor<s0x96xf32>
    %r = hfusion.elemwise_unary %a {fun = "relu"} : (tensor<s0x96xf32>) -> tensor<s0x96xf32>
    func.return %r : tensor<s0x96xf32>
  }
}
"""

MATMUL_CHAIN = SYMBOLS + """
  func.func @main(%x: tensor<s0x32xf32>, %w: tensor<32x48xf32>, %c: tensor<s0x48xf32>) -> (tensor<s0x48xf32>) {
    %xs = hfusion.elemwise_unary %x {fun = "sigmoid"} : (tensor<s0x32xf32>) -> tensor<s0x32xf32>
    %xm = hfusion.elemwise_binary %x, %xs {fun = "mul"} : (tensor<s0x32xf32>, tensor<s0x32xf32>) -> tensor<s0x32xf32>
    %mm = hfusion.matmul %xm, %w : (tensor<s0x32xf32>, tensor<32x48xf32>) -> tensor<s0x48xf32>
    %t = hfusion.elemwise_unary %mm {fun = "tanh"} : (tensor<s0x48xf32>) -> tensor<s0x48xf32>
    %y = hfusion.elemwise_binary %t, %c {fun = "add"} : (tensor<s0x48xf32>, tensor<s0x48xf32>) -> tensor<s0x48xf32>
    func.return %y : tensor<s0x48xf32>
  }
}
"""
