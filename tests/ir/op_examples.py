"""One complete, verifiable example module per registered op: ``OP_EXAMPLES[op_name] -> text``.

The round-trip test fails for an op without an example, so a new op cannot slip through without printer/parser
coverage. The interpreter tests may reuse these modules (every function is called ``@main``).
"""

from __future__ import annotations

SYMS = "module attributes {symbols = {s0 = [1, 9223372036854775807]}} {\n"


def _main(args: str, results: str, body: str, ret: str, ret_types: str, attrs: str = "") -> str:
    """A module with one function ``@main(args) -> (results)`` whose body ends with ``func.return ret``."""
    lines = "\n".join("    " + line for line in body.strip().splitlines())
    result_part = f" -> ({results})" if results else ""
    ret_line = f"    func.return {ret} : {ret_types}" if ret else "    func.return"
    return (
        SYMS
        + f"  func.func @main({args}){result_part}{attrs} {{\n{lines}\n{ret_line}\n  }}\n}}\n"
    )


T = "tensor<s0x16xf32>"


def _unary(op: str, attrs: str, in_t: str = T, out_t: str = T) -> str:
    return _main(f"%x: {in_t}", out_t, f"%0 = {op} %x {attrs} : ({in_t}) -> {out_t}", "%0", out_t)


def _binary_index(op: str) -> str:
    return _main(
        "%a: index, %b: index", "index", f"%0 = {op} %a, %b : (index, index) -> index", "%0", "index"
    )


def _hivm_kernel(body: str, attrs: str = " attributes {kernel}") -> str:
    args = "%gm: memref<64x16xf32, gm>, %s: f32, %n: index, %m: index"
    pre = (
        "%ub = hivm.alloc : () -> memref<64x16xf32, ub>\n"
        "%ub2 = hivm.alloc : () -> memref<64x16xf32, ub>\n"
        "%ub3 = hivm.alloc : () -> memref<8x64x8xf32, ub>\n"
        "%c0 = arith.constant {value = 0} : () -> index\n"
    )
    return _main(args, "", pre + body, "", "", attrs)


OP_EXAMPLES: dict[str, str] = {
    # -- builtin / func ---------------------------------------------------------------------------------------
    "builtin.module": SYMS + "}\n",
    "func.func": _main(f"%x: {T}", T, "", "%x", T, attrs=' attributes {fusion_kind = "PURE_ELEMWISE", kernel}'),
    "func.return": _main("%a: f32, %b: index", "f32, index", "", "%a, %b", "f32, index"),
    "func.call": SYMS
    + f"""  func.func @callee(%x: {T}) -> ({T}) {{
    func.return %x : {T}
  }}
  func.func @main(%x: {T}) -> ({T}) {{
    %0 = func.call %x {{callee = "callee"}} : ({T}) -> {T}
    func.return %0 : {T}
  }}
}}
""",
    # -- annotation ----------------------------------------------------------------------------------------------
    "annotation.mark": _main(
        f"%x: {T}", T, f'annotation.mark %x {{tile = [(s0*2), 16], note = "a \\"quoted\\" hint"}} : {T}', "%x", T
    ),
    # -- host ----------------------------------------------------------------------------------------------------
    "host.fallback": _main(
        f"%x: {T}", "tensor<s0xf32>, tensor<s0xi64>",
        f'%0:2 = host.fallback %x {{target = "aten.kthvalue.default", node = "kthvalue", reason = "no lowering", '
        f'args = [{{operand = 0}}, 2, 1], kwargs = {{keepdim = false}}}} : ({T}) -> (tensor<s0xf32>, tensor<s0xi64>)',
        "%0#0, %0#1", "tensor<s0xf32>, tensor<s0xi64>",
    ),
    # -- arith ---------------------------------------------------------------------------------------------------
    "arith.constant": _main(
        "",
        "f32, f32, index, tensor<2x2xf16>, i1",
        """%0 = arith.constant {value = 1e-05} : () -> f32
%1 = arith.constant {value = -inf} : () -> f32
%2 = arith.constant {value = 7} : () -> index
%3 = arith.constant {value = [[1.0, 2.5], [nan, inf]]} : () -> tensor<2x2xf16>
%4 = arith.constant {value = true} : () -> i1""",
        "%0, %1, %2, %3, %4",
        "f32, f32, index, tensor<2x2xf16>, i1",
    ),
    **{
        name: _binary_index(name)
        for name in (
            "arith.addi", "arith.subi", "arith.muli", "arith.floordivsi", "arith.ceildivsi", "arith.remsi",
            "arith.minsi", "arith.maxsi",
        )
    },  # fmt: skip
    "arith.index_cast": _main("%a: i64", "index", "%0 = arith.index_cast %a : (i64) -> index", "%0", "index"),
    "arith.cmpi": _main(
        "%a: index, %b: index", "i1", '%0 = arith.cmpi %a, %b {predicate = "lt"} : (index, index) -> i1', "%0", "i1"
    ),
    # -- scf -----------------------------------------------------------------------------------------------------
    "scf.for": _main(
        "%lb: index, %ub: index, %a: f32",
        "f32, f32",
        """%step = arith.constant {value = 1} : () -> index
%r:2 = scf.for %lb, %ub, %step, %a, %a ({
^bb0(%iv: index, %x: f32, %y: f32):
  scf.yield %y, %x : f32, f32
}) : (index, index, index, f32, f32) -> (f32, f32)""",
        "%r#0, %r#1",
        "f32, f32",
    ),
    "scf.yield": _main(
        "%lb: index, %ub: index",
        "",
        """scf.for %lb, %ub, %lb ({
^bb0(%iv: index):
  scf.yield
}) : (index, index, index) -> ()""",
        "",
        "",
    ),
    # -- tensor --------------------------------------------------------------------------------------------------
    "tensor.empty": _main("", "tensor<4x(s0*2)xbf16>", "%0 = tensor.empty : () -> tensor<4x(s0*2)xbf16>", "%0",
                          "tensor<4x(s0*2)xbf16>"),  # fmt: skip
    "tensor.dim": _main(f"%x: {T}", "index", f"%0 = tensor.dim %x {{index = 0}} : ({T}) -> index", "%0", "index"),
    # -- hfusion -------------------------------------------------------------------------------------------------
    "hfusion.elemwise_unary": _unary("hfusion.elemwise_unary", '{fun = "exp"}'),
    "hfusion.elemwise_binary": _main(
        f"%x: {T}, %y: {T}, %s: f32",
        T,
        f"""%0 = hfusion.elemwise_binary %x, %y {{fun = "add"}} : ({T}, {T}) -> {T} loc("add")
%1 = hfusion.elemwise_binary %0, %s {{fun = "mul"}} : ({T}, f32) -> {T}""",
        "%1",
        T,
    ),
    "hfusion.elemwise_ternary": _main(
        f"%x: {T}, %y: {T}, %z: {T}", T,
        f'%0 = hfusion.elemwise_ternary %x, %y, %z {{fun = "fma"}} : ({T}, {T}, {T}) -> {T}', "%0", T,
    ),  # fmt: skip
    "hfusion.compare": _main(
        f"%x: {T}, %y: {T}", "tensor<s0x16xi1>",
        f'%0 = hfusion.compare %x, %y {{predicate = "lt"}} : ({T}, {T}) -> tensor<s0x16xi1>', "%0",
        "tensor<s0x16xi1>",
    ),  # fmt: skip
    "hfusion.select": _main(
        f"%c: tensor<s0x16xi1>, %x: {T}, %y: {T}", T,
        f"%0 = hfusion.select %c, %x, %y : (tensor<s0x16xi1>, {T}, {T}) -> {T}", "%0", T,
    ),  # fmt: skip
    "hfusion.cast": _unary("hfusion.cast", '{round_mode = "rint"}', T, "tensor<s0x16xf16>"),
    "hfusion.broadcast": _unary("hfusion.broadcast", "{dims = [0]}", "tensor<16xf32>", T),
    "hfusion.reduce": _unary("hfusion.reduce", '{dims = [1], kind = "sum"}', T, "tensor<s0xf32>"),
    "hfusion.transpose": _unary("hfusion.transpose", "{perm = [1, 0]}", T, "tensor<16xs0xf32>"),
    "hfusion.matmul": _main(
        "%a: tensor<s0x32xf16>, %b: tensor<64x32xf16>", "tensor<s0x64xf16>",
        "%0 = hfusion.matmul %a, %b {transpose_a = false, transpose_b} : "
        "(tensor<s0x32xf16>, tensor<64x32xf16>) -> tensor<s0x64xf16>",
        "%0", "tensor<s0x64xf16>",
    ),  # fmt: skip
    "hfusion.batch_matmul": _main(
        "%a: tensor<4xs0x32xf16>, %b: tensor<4x32x64xf16>", "tensor<4xs0x64xf16>",
        "%0 = hfusion.batch_matmul %a, %b : (tensor<4xs0x32xf16>, tensor<4x32x64xf16>) -> tensor<4xs0x64xf16>",
        "%0", "tensor<4xs0x64xf16>",
    ),  # fmt: skip
    "hfusion.fill": _main("", T, f"%0 = hfusion.fill {{value = 0.5}} : () -> {T}", "%0", T),
    "hfusion.arange": _main(
        "", "tensor<s0xi64>", "%0 = hfusion.arange {start = 0, step = 2} : () -> tensor<s0xi64>", "%0",
        "tensor<s0xi64>",
    ),  # fmt: skip
    "hfusion.gather": _main(
        f"%x: {T}, %i: tensor<s0x4xi64>", "tensor<s0x4xf32>",
        f"%0 = hfusion.gather %x, %i {{dim = 1}} : ({T}, tensor<s0x4xi64>) -> tensor<s0x4xf32>", "%0",
        "tensor<s0x4xf32>",
    ),  # fmt: skip
    "hfusion.concat": _main(
        f"%x: {T}, %y: tensor<3x16xf32>", "tensor<(s0+3)x16xf32>",
        f"%0 = hfusion.concat %x, %y {{dim = 0}} : ({T}, tensor<3x16xf32>) -> tensor<(s0+3)x16xf32>", "%0",
        "tensor<(s0+3)x16xf32>",
    ),  # fmt: skip
    "hfusion.slice": _unary(
        "hfusion.slice", "{offsets = [1, 0], sizes = [(s0-1), 8], strides = [1, 2]}", T, "tensor<(s0-1)x8xf32>"
    ),
    "hfusion.reshape": _unary("hfusion.reshape", "", T, "tensor<(16*s0)xf32>"),
    "hfusion.bitcast": _main(
        "%b: tensor<s0x16xi1>", "tensor<s0x16xi8>",
        "%0 = hfusion.bitcast %b : (tensor<s0x16xi1>) -> tensor<s0x16xi8>", "%0", "tensor<s0x16xi8>",
    ),  # fmt: skip
    # -- hivm ----------------------------------------------------------------------------------------------------
    "hivm.get_block_idx": _main("", "index", "%0 = hivm.get_block_idx : () -> index", "%0", "index"),
    "hivm.get_sub_block_idx": _main("", "index", "%0 = hivm.get_sub_block_idx : () -> index", "%0", "index"),
    "hivm.alloc": _main(
        "", "", "%0 = hivm.alloc {multi_buffer = 2, offsets = [0, 4096]} : () -> memref<64x16xf32, ub>\n"
        "%1 = hivm.alloc : () -> memref<8xf16>\n"
        "%2 = hivm.alloc {offsets = [8192], scratch = true} : () -> memref<4096xi8, ub>", "", "",
    ),  # fmt: skip
    "hivm.multi_buffer_select": _hivm_kernel(
        "%0 = hivm.multi_buffer_select %n, %ub, %ub2 : (index, memref<64x16xf32, ub>, memref<64x16xf32, ub>) "
        "-> memref<64x16xf32, ub>"
    ),
    "hivm.load": _hivm_kernel(  # a transposed view of every other column, one element per 32-B block
        "hivm.load %gm, %ub3, %c0, %c0, %n, %m, %n {dims = [1, 0, -1], steps = [2, 1, 1]} : memref<64x16xf32, gm>, "
        "memref<8x64x8xf32, ub>, index, index, index, index, index\n"
        "hivm.load %gm, %ub, %c0, %c0, %n, %m : memref<64x16xf32, gm>, memref<64x16xf32, ub>, index, index, index, "
        "index"
    ),
    "hivm.load_l0a": _hivm_kernel(
        "%l1 = hivm.alloc : () -> memref<32x64xf16, l1>\n%l0a = hivm.alloc : () -> memref<32x64xf16, l0a>\n"
        "hivm.load_l0a %l1, %l0a, %c0, %n, %m {transpose = true} : memref<32x64xf16, l1>, memref<32x64xf16, l0a>, "
        "index, index, index"
    ),
    "hivm.load_l0b": _hivm_kernel(
        "%l1 = hivm.alloc : () -> memref<64x32xf16, l1>\n%l0b = hivm.alloc : () -> memref<64x32xf16, l0b>\n"
        "hivm.load_l0b %l1, %l0b, %c0, %c0, %n, %m : memref<64x32xf16, l1>, memref<64x32xf16, l0b>, index, index, "
        "index, index"
    ),
    "hivm.mmad": _hivm_kernel(
        "%a = hivm.alloc : () -> memref<32x64xf16, l0a>\n%b = hivm.alloc : () -> memref<64x32xf16, l0b>\n"
        "%c = hivm.alloc : () -> memref<32x32xf32, l0c>\n"
        "hivm.mmad %a, %b, %c, %c0, %n, %m, %n : memref<32x64xf16, l0a>, memref<64x32xf16, l0b>, "
        "memref<32x32xf32, l0c>, index, index, index, index"
    ),
    "hivm.fixpipe": _hivm_kernel(
        "%c = hivm.alloc : () -> memref<64x16xf32, l0c>\n"
        "hivm.fixpipe %c, %gm, %c0, %c0, %n, %m {relu = true} : memref<64x16xf32, l0c>, memref<64x16xf32, gm>, "
        "index, index, index, index"
    ),
    "hivm.store": _hivm_kernel(
        "hivm.store %ub, %gm, %c0, %c0, %n, %m : memref<64x16xf32, ub>, memref<64x16xf32, gm>, index, index, "
        "index, index"
    ),
    "hivm.copy": _hivm_kernel(
        "hivm.copy %ub, %ub2, %n, %m : memref<64x16xf32, ub>, memref<64x16xf32, ub>, index, index"
    ),
    "hivm.vunary": _hivm_kernel(
        'hivm.vunary %ub, %ub2, %n, %m {fun = "exp"} : memref<64x16xf32, ub>, memref<64x16xf32, ub>, index, index'
    ),
    "hivm.vbinary": _hivm_kernel(
        'hivm.vbinary %ub, %s, %ub2, %n, %m {fun = "add"} : memref<64x16xf32, ub>, f32, memref<64x16xf32, ub>, '
        "index, index"
    ),
    "hivm.vcmp": _hivm_kernel(
        "%mask = hivm.alloc : () -> memref<64x16xi1, ub>\n"
        'hivm.vcmp %ub, %ub2, %mask, %n, %m {predicate = "ge"} : memref<64x16xf32, ub>, memref<64x16xf32, ub>, '
        "memref<64x16xi1, ub>, index, index"
    ),
    "hivm.vsel": _hivm_kernel(
        "%mask = hivm.alloc : () -> memref<64x16xi1, ub>\n"
        "hivm.vsel %mask, %ub, %s, %ub2, %n, %m : memref<64x16xi1, ub>, memref<64x16xf32, ub>, f32, "
        "memref<64x16xf32, ub>, index, index"
    ),
    "hivm.vcast": _hivm_kernel(
        "%h = hivm.alloc : () -> memref<64x16xf16, ub>\n"
        'hivm.vcast %ub, %h, %n, %m {round_mode = "round"} : memref<64x16xf32, ub>, memref<64x16xf16, ub>, '
        "index, index"
    ),
    "hivm.vbrc": _hivm_kernel(
        "%row = hivm.alloc : () -> memref<1x16xf32, ub>\n"
        "hivm.vbrc %row, %ub, %n, %m {dims = [0]} : memref<1x16xf32, ub>, memref<64x16xf32, ub>, index, index"
    ),
    "hivm.vreduce": _hivm_kernel(
        "%col = hivm.alloc : () -> memref<64x1xf32, ub>\n"
        'hivm.vreduce %ub, %col, %n, %m {dims = [1], kind = "max"} : memref<64x16xf32, ub>, memref<64x1xf32, ub>, '
        "index, index"
    ),
    "hivm.vtranspose": _hivm_kernel(
        "%t = hivm.alloc : () -> memref<16x64xf32, ub>\n"
        "hivm.vtranspose %ub, %t, %m, %n {perm = [1, 0]} : memref<64x16xf32, ub>, memref<16x64xf32, ub>, index, "
        "index"
    ),
    "hivm.vindex": _hivm_kernel(
        "%tbl = hivm.alloc : () -> memref<20x16xi32, ub>\n"
        "hivm.vindex %tbl {clamp = 12, strides = [4, 256]} : memref<20x16xi32, ub>"
    ),
    "hivm.vpermute": _hivm_kernel(
        "%tbl = hivm.alloc : () -> memref<72x16xi32, ub>\n"
        "hivm.vpermute %ub3, %tbl, %ub, %n, %m : memref<8x64x8xf32, ub>, memref<72x16xi32, ub>, "
        "memref<64x16xf32, ub>, index, index"
    ),
    "hivm.vfill": _hivm_kernel("hivm.vfill %ub, %n, %m {value = -0.0} : memref<64x16xf32, ub>, index, index"),
    "hivm.varange": _hivm_kernel(
        "%col = hivm.alloc : () -> memref<64x1xi32, ub>\n"
        "hivm.varange %col, %m, %n, %c0 {start = 3, step = -2} : memref<64x1xi32, ub>, index, index, index"
    ),
    "hivm.vgather": _hivm_kernel(
        "%idx = hivm.alloc : () -> memref<1x16xi64, ub>\n"
        "hivm.vgather %ub, %idx, %ub2, %m, %n, %m : memref<64x16xf32, ub>, memref<1x16xi64, ub>, "
        "memref<64x16xf32, ub>, index, index, index"
    ),
    "hivm.vgather_offsets": _hivm_kernel(
        "%idx = hivm.alloc : () -> memref<1x16xi64, ub>\n"
        "hivm.vgather_offsets %idx, %m {es = 4} : memref<1x16xi64, ub>, index\n"
        "hivm.vgather %ub, %idx, %ub2, %m, %n, %m {converted = true} : memref<64x16xf32, ub>, memref<1x16xi64, ub>, "
        "memref<64x16xf32, ub>, index, index, index"
    ),
    "hivm.embedding_gather": _hivm_kernel(
        "%rows = hivm.alloc : () -> memref<64x1xi64, ub>\n"
        "hivm.embedding_gather %gm, %rows, %ub, %c0, %n, %m : memref<64x16xf32, gm>, memref<64x1xi64, ub>, "
        "memref<64x16xf32, ub>, index, index, index"
    ),
    "hivm.set_flag": _hivm_kernel(
        'hivm.set_flag %n {dst_pipe = "PIPE_V", event_ids = [0, 1], src_pipe = "PIPE_MTE2"} : index\n'
        'hivm.set_flag {dst_pipe = "PIPE_MTE3", event_ids = [2], src_pipe = "PIPE_V"}'
    ),
    "hivm.wait_flag": _hivm_kernel(
        'hivm.wait_flag {dst_pipe = "PIPE_V", event_ids = [0], src_pipe = "PIPE_MTE2"}'
    ),
    "hivm.pipe_barrier": _hivm_kernel('hivm.pipe_barrier {pipe = "PIPE_ALL"}'),
    "hivm.sync_block_set": _hivm_kernel('hivm.sync_block_set {flag = 0, pipe = "PIPE_FIX"}'),
    "hivm.sync_block_wait": _hivm_kernel('hivm.sync_block_wait {flag = 0}'),
    "hivm.launch": SYMS
    + """  func.func @k(%x: memref<s0x16xf32, gm>, %y: memref<s0x16xf32, gm>) attributes {kernel, tiling = {block_dim = 8}} {
    func.return
  }
  func.func @main(%x: tensor<s0x16xf32>, %y: tensor<s0x16xf32>) -> (tensor<s0x16xf32>) {
    %0 = hivm.launch %x, %y {callee = "k"} : (tensor<s0x16xf32>, tensor<s0x16xf32>) -> tensor<s0x16xf32>
    func.return %0 : tensor<s0x16xf32>
  }
}
""",
}
