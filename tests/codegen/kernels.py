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
