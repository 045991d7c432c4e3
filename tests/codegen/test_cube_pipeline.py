"""Cube kernels from the real pipeline (tensor-level hfusion text → default_pipeline → codegen) on the simulator
with the hazard checker on, against numpy; a dropped cube-side wait is reported as a race."""

import numpy as np
import pytest

from simulator import RaceError
from simulator.errors import BufferTagError

from .helpers import lower, only_kernel, recompile_without, run_kernel


def _matmul(m: int, k: int, n: int, dt: str, ta: bool = False, tb: bool = False) -> str:
    a = f"{k}x{m}" if ta else f"{m}x{k}"
    b = f"{n}x{k}" if tb else f"{k}x{n}"
    attrs = f" {{transpose_a = {str(ta).lower()}, transpose_b = {str(tb).lower()}}}"
    return f"""module attributes {{target = "ascend910b1", symbols = {{s0 = [1, 4096]}}}} {{
  func.func @main(%a: tensor<{a}x{dt}>, %b: tensor<{b}x{dt}>) -> (tensor<{m}x{n}x{dt}>) {{
    %r = hfusion.matmul %a, %b{attrs} : (tensor<{a}x{dt}>, tensor<{b}x{dt}>) -> tensor<{m}x{n}x{dt}>
    func.return %r : tensor<{m}x{n}x{dt}>
  }}
}}"""


NP = {"f16": np.float16, "f32": np.float32}


def _inputs(ck, bindings, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(a.evaluate_shape(ck.tiling.sizes, bindings)).astype(NP[a.dtype])
            for a in ck.arg_layout if not a.is_output]  # fmt: skip


def _drop_flag_in_loops(ck, module, src: str, dst: str):
    """Recompile ``ck``'s kernel without the ``src`` -> ``dst`` set/wait pairs inside its loops (the pre-arms and
    drains outside stay, balanced), so only the ordering they gave is lost."""
    def doomed(clone):
        ops = [op for op in clone.walk() if op.name in ("hivm.set_flag", "hivm.wait_flag")
               and (op.attributes["src_pipe"], op.attributes["dst_pipe"]) == (src, dst)
               and op.parent_op() is not clone]  # fmt: skip
        assert ops, f"no {src} -> {dst} flag in a loop"
        return ops
    return recompile_without(ck, module, doomed)


def _reference(a, b, ta, tb, dt):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return ((a64.T if ta else a64) @ (b64.T if tb else b64)).astype(NP[dt])


@pytest.mark.parametrize("ta,tb", [(False, False), (False, True), (True, False), (True, True)])
def test_transposed_operands_are_read_in_place(ta, tb):
    module = lower(_matmul(48, 80, 96, "f16", ta, tb))
    ck = only_kernel(module)
    asm = ck.assembly()
    assert ("load_l1_to_l0a" in asm and "load_l1_to_l0b" in asm and "vtranspose" not in asm
            and ("transpose=1" in asm) == (ta or tb)), asm
    a, b = _inputs(ck, {})
    (out,), res = run_kernel(ck, [a, b], {})
    np.testing.assert_allclose(out.astype(np.float32), _reference(a, b, ta, tb, "f16").astype(np.float32),
                               rtol=2e-3, atol=2e-2)  # fmt: skip
    assert res.stats.hazards_checked


def test_symbolic_m_one_program():
    text = _matmul(48, 64, 80, "f32").replace("48x", "s0x")
    ck = only_kernel(lower(text))
    for rows in (1, 47, 300):
        b = {"s0": rows}
        a, w = _inputs(ck, b)
        (out,), _ = run_kernel(ck, [a, w], b)
        np.testing.assert_allclose(out, _reference(a, w, False, False, "f32"), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("src,dst,error", [
    ("PIPE_FIX", "PIPE_M", RaceError),  # the next tile's first mmad overwrites the part FixPipe still drains
    ("PIPE_M", "PIPE_MTE1", RaceError),  # MTE1 overwrites the L0A/L0B window an mmad still reads
    ("PIPE_MTE2", "PIPE_MTE1", RaceError),  # MTE1 reads an L1 box MTE2 is still loading
    # FixPipe drains the first tile's accumulator before any mmad wrote it: bytes never written (buffer-tag check)
    ("PIPE_M", "PIPE_FIX", BufferTagError),
    # the cube no longer waits for its windows: its first mmad reads an L0A window MTE1 has not loaded yet
    ("PIPE_MTE1", "PIPE_M", BufferTagError),
])
def test_dropping_a_cube_side_flag_is_reported(src, dst, error):
    """Each of the cube pipes' flags orders something: without it the hazard checker reports a race, or the
    buffer-tag check a read of bytes never written (several tiles and K steps a core, so the rotating buffers are
    reused)."""
    module = lower(_matmul(1024, 256, 1024, "f16"))
    ck = only_kernel(module)
    broken = _drop_flag_in_loops(ck, module, src, dst)
    with pytest.raises(error):
        run_kernel(broken, _inputs(broken, {}), {})
