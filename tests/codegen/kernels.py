"""Hand-written HIVM kernels in the docs/hivm.md forms, after hivm-inject-sync (allocs planned, flags placed)."""

# out = x * y + z over n elements (docs/hivm.md), single-buffered, tiles of TILE elements cyclic over the cores.
FMA_1D = """
module attributes {symbols = {s0 = [1, 100000]}} {
  func.func @fma(%x: memref<s0x{dt}, gm>, %y: memref<s0x{dt}, gm>, %z: memref<s0x{dt}, gm>, %out: memref<s0x{dt}, gm>, %block_dim: index, %n: index, %n_tiles: index) attributes {core_type = "AIV", fusion_kind = "PURE_ELEMWISE", kernel, output_args = [3], tiling = {block_dim = (Min(48,ceiling(s0/{tile}))), n = (s0), n_tiles = (ceiling(s0/{tile}))}} {
    %c{tile} = arith.constant {value = {tile}} : () -> index
    %bid = hivm.get_block_idx : () -> index
    %ubx = hivm.alloc {offsets = [0]} : () -> memref<{tile}x{dt}, ub>
    %uby = hivm.alloc {offsets = [{b1}]} : () -> memref<{tile}x{dt}, ub>
    %ubz = hivm.alloc {offsets = [{b2}]} : () -> memref<{tile}x{dt}, ub>
    %ubt = hivm.alloc {offsets = [{b3}]} : () -> memref<{tile}x{dt}, ub>
    hivm.set_flag {dst_pipe = "PIPE_MTE2", event_ids = [0], src_pipe = "PIPE_V"}
    hivm.set_flag {dst_pipe = "PIPE_V", event_ids = [0], src_pipe = "PIPE_MTE3"}
    scf.for %bid, %n_tiles, %block_dim ({
    ^bb0(%t: index):
      %off = arith.muli %t, %c{tile} : (index, index) -> index
      %rem = arith.subi %n, %off : (index, index) -> index
      %len = arith.minsi %rem, %c{tile} : (index, index) -> index
      hivm.wait_flag {dst_pipe = "PIPE_MTE2", event_ids = [0], src_pipe = "PIPE_V"}
      hivm.load %x, %ubx, %off, %len : memref<s0x{dt}, gm>, memref<{tile}x{dt}, ub>, index, index
      hivm.load %y, %uby, %off, %len : memref<s0x{dt}, gm>, memref<{tile}x{dt}, ub>, index, index
      hivm.load %z, %ubz, %off, %len : memref<s0x{dt}, gm>, memref<{tile}x{dt}, ub>, index, index
      hivm.set_flag {dst_pipe = "PIPE_V", event_ids = [0], src_pipe = "PIPE_MTE2"}
      hivm.wait_flag {dst_pipe = "PIPE_V", event_ids = [0], src_pipe = "PIPE_MTE2"}
      hivm.wait_flag {dst_pipe = "PIPE_V", event_ids = [0], src_pipe = "PIPE_MTE3"}
      hivm.vbinary %ubx, %uby, %ubt, %len {fun = "mul"} : memref<{tile}x{dt}, ub>, memref<{tile}x{dt}, ub>, memref<{tile}x{dt}, ub>, index
      hivm.pipe_barrier {pipe = "PIPE_V"}
      hivm.vbinary %ubt, %ubz, %ubt, %len {fun = "add"} : memref<{tile}x{dt}, ub>, memref<{tile}x{dt}, ub>, memref<{tile}x{dt}, ub>, index
      hivm.set_flag {dst_pipe = "PIPE_MTE2", event_ids = [0], src_pipe = "PIPE_V"}
      hivm.set_flag {dst_pipe = "PIPE_MTE3", event_ids = [0], src_pipe = "PIPE_V"}
      hivm.wait_flag {dst_pipe = "PIPE_MTE3", event_ids = [0], src_pipe = "PIPE_V"}
      hivm.store %ubt, %out, %off, %len : memref<{tile}x{dt}, ub>, memref<s0x{dt}, gm>, index, index
      hivm.set_flag {dst_pipe = "PIPE_V", event_ids = [0], src_pipe = "PIPE_MTE3"}
      scf.yield
    }) : index, index, index
    hivm.wait_flag {dst_pipe = "PIPE_MTE2", event_ids = [0], src_pipe = "PIPE_V"}
    hivm.wait_flag {dst_pipe = "PIPE_V", event_ids = [0], src_pipe = "PIPE_MTE3"}
    hivm.pipe_barrier {pipe = "PIPE_ALL"}
    func.return
  }
}
"""


def fma_1d(dt: str = "f32", tile: int = 4096) -> str:
    nbytes = tile * {"f16": 2, "f32": 4}[dt]
    text = FMA_1D
    for k, v in {"{dt}": dt, "{tile}": str(tile), "{b1}": str(nbytes), "{b2}": str(2 * nbytes),
                 "{b3}": str(3 * nbytes)}.items():
        text = text.replace(k, v)
    return text


def single_tile(buffers: dict, body: list[str], outputs: list[str], inputs: list[str], cap: int = 4096,
                dims: int = 1, cols: int = 0, scratch: int = 8192) -> str:
    """A one-tile kernel in barrier-all form (hivm-inject-sync{mode=barrier-all}): load ``inputs``, run ``body``
    (HIVM op lines over %u_<name> buffers, extents %n [and %c]), store ``outputs``. ``buffers``: name -> dtype;
    GM arguments are ``s0`` elements (``s0 x cols`` when dims == 2), UB buffers ``cap`` (``cap x pad(cols)``);
    ``scratch`` bytes of codegen scratch (``hivm.alloc {scratch = true}``) at the top of UB (0: none)."""
    sizes = {"f16": 2, "f32": 4, "i1": 1, "i32": 4, "i16": 2}
    args, allocs, loads, stores, off = [], [], [], [], 0
    gshape = "s0" if dims == 1 else f"s0x{cols}"
    ext = "%n" if dims == 1 else "%n, %c"
    zeros = "%c0" if dims == 1 else "%c0, %c0"
    for name, dt in buffers.items():
        if dims == 1:
            ushape, nbytes = f"{cap}", cap * sizes[dt]
        else:
            pad = -(-cols * sizes[dt] // 32) * 32 // sizes[dt]
            ushape, nbytes = f"{cap}x{pad}", cap * pad * sizes[dt]
        u = f"memref<{ushape}x{dt}, ub>"
        allocs.append(f"    %u_{name} = hivm.alloc {{offsets = [{off}]}} : () -> {u}")
        off += -(-nbytes // 32) * 32
        g = f"memref<{gshape}x{dt}, gm>"
        idx = ", index" * (2 * dims)
        if name in inputs:
            args.append(f"%{name}: {g}")
            loads.append(f"    hivm.load %{name}, %u_{name}, {zeros}, {ext} : {g}, {u}{idx}")
        if name in outputs:
            args.append(f"%{name}: {g}")
            stores.append(f"    hivm.store %u_{name}, %{name}, {zeros}, {ext} : {u}, {g}{idx}")
    outs = [i for i, a in enumerate(args) if a.split(":")[0][1:] in outputs]
    barrier = '    hivm.pipe_barrier {pipe = "PIPE_ALL"}'
    tiling = "block_dim = 1, n = (s0)" + (f", c = {cols}" if dims == 2 else "")
    params = "%block_dim: index, %n: index" + (", %c: index" if dims == 2 else "")
    lines = [
        "module attributes {symbols = {s0 = [1, %d]}} {" % cap,
        f"  func.func @k({', '.join(args)}, {params}) attributes {{core_type = \"AIV\", kernel, "
        f"output_args = {outs}, tiling = {{{tiling}}}}} {{",
        "    %c0 = arith.constant {value = 0} : () -> index",
        *allocs,
        *([f"    %scratch = hivm.alloc {{offsets = [{192 * 1024 - scratch}], scratch = true}} : () -> "
           f"memref<{scratch}xi8, ub>"] if scratch else []),
        *loads, barrier,
    ]
    for line in body:
        lines += ["    " + line, barrier]
    lines += [*stores, barrier, "    func.return", "  }", "}"]
    return "\n".join(lines)
