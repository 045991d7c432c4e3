"""Data-movement kernels (transposes, strided slices, concats) through the real pipeline, run on the simulator with
the hazard checker on, against numpy, for several sizes of one compiled program."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from codegen import compile_module
from graph_passes.ir.parser import parse_module
from graph_passes.passes import PassManager
from graph_passes.schedule import movement
from graph_passes.pipelines import PipelineOptions, default_pipeline
from tests.codegen.helpers import run_kernel

NP = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}


def _module(kernel: str, call_args: str, call_types: str, result: str, params: str) -> str:
    return (
        'module attributes {symbols = {s0 = [1, 100000]}, target = "ascend910b1"} {\n'
        f"  {kernel}\n"
        f"  func.func @main({params}) -> ({result}) {{\n"
        f"    %e = tensor.empty : () -> {result}\n"
        f'    %r = func.call {call_args}, %e {{callee = "k"}} : ({call_types}, {result}) -> {result}\n'
        f"    func.return %r : {result}\n  }}\n}}\n"
    )


def transpose(dt: str) -> str:
    kernel = (
        f"func.func @k(%x: tensor<s0x40x{dt}>, %out: tensor<40xs0x{dt}>) -> (tensor<40xs0x{dt}>) attributes "
        f'{{fusion_kind = "PURE_ELEMWISE", kernel, output_args = [1]}} {{\n'
        f"    %t = hfusion.transpose %x {{perm = [1, 0]}} : (tensor<s0x40x{dt}>) -> tensor<40xs0x{dt}>\n"
        f"    func.return %t : tensor<40xs0x{dt}>\n  }}"
    )
    return _module(kernel, "%x", f"tensor<s0x40x{dt}>", f"tensor<40xs0x{dt}>", f"%x: tensor<s0x40x{dt}>")


CONCAT = _module(
    "func.func @k(%a: tensor<s0x3xf32>, %b: tensor<s0x16xf32>, %out: tensor<s0x12xf32>) -> (tensor<s0x12xf32>) "
    'attributes {fusion_kind = "PURE_ELEMWISE", kernel, output_args = [2]} {\n'
    "    %z = hfusion.fill {value = 7.0} : () -> tensor<s0x3xf32>\n"
    "    %s = hfusion.slice %b {offsets = [0, 1], sizes = [s0, 3], strides = [1, 5]} : (tensor<s0x16xf32>) -> tensor<s0x3xf32>\n"
    "    %t = hfusion.slice %b {offsets = [0, 13], sizes = [s0, 3], strides = [1, 1]} : (tensor<s0x16xf32>) -> tensor<s0x3xf32>\n"
    "    %c = hfusion.concat %a, %s, %z, %t {dim = 1} : (tensor<s0x3xf32>, tensor<s0x3xf32>, tensor<s0x3xf32>, tensor<s0x3xf32>) -> tensor<s0x12xf32>\n"
    "    func.return %c : tensor<s0x12xf32>\n  }",
    "%a, %b", "tensor<s0x3xf32>, tensor<s0x16xf32>", "tensor<s0x12xf32>", "%a: tensor<s0x3xf32>, %b: tensor<s0x16xf32>",
)  # fmt: skip


def _kernel(text: str, max_tile_elems: int = 0):
    """The kernel as written (not re-fused: a concat of slices of other widths is not one fusion group), scheduled
    and lowered by the rest of the default pipeline."""
    pipeline = default_pipeline(PipelineOptions(max_tile_elems=max_tile_elems))
    module = parse_module(text)
    PassManager.from_pipeline(pipeline[pipeline.index("hfusion-auto-schedule"):], verify=True).run(module)
    return compile_module(module)["k"]


@pytest.mark.parametrize("dt", ["f32", "f16", "bf16"])
def test_transpose_dynamic(dt):
    ck = _kernel(transpose(dt))
    assert ("vtranspose" in ck.assembly()) == (dt != "f32")  # 2-byte elements: 16x16 blocks; f32: a vgather
    assert ("vgather" in ck.assembly()) == (dt == "f32")
    rng = np.random.default_rng(0)
    for s0 in (1, 37, 300):  # rows of s0 f16/f32 are not whole 32-B blocks: work items of 8/16 output rows
        x = rng.standard_normal((s0, 40)).astype(NP[dt])
        (out,), res = run_kernel(ck, [x], {"s0": s0})
        np.testing.assert_array_equal(out.reshape(40, s0), x.T)
        assert res.stats.hazards_checked


def test_concat_of_strided_slice_fill_and_columns():
    ck = _kernel(CONCAT, max_tile_elems=64)  # small tiles: several work items over the cores, partial last one
    rng = np.random.default_rng(1)
    for s0 in (1, 50):
        a = rng.standard_normal((s0, 3)).astype(np.float32)
        b = rng.standard_normal((s0, 16)).astype(np.float32)
        (out,), res = run_kernel(ck, [a, b], {"s0": s0})
        ref = np.concatenate([a, b[:, 1:16:5], np.full((s0, 3), 7.0, np.float32), b[:, 13:]], 1)
        np.testing.assert_array_equal(out.reshape(ref.shape), ref)
        assert res.stats.hazards_checked


BATCH_TRANSPOSE = _module(
    "func.func @k(%x: tensor<s0x40x24xf16>, %out: tensor<s0x24x40xf16>) -> (tensor<s0x24x40xf16>) attributes "
    '{fusion_kind = "PURE_ELEMWISE", kernel, output_args = [1]} {\n'
    "    %t = hfusion.transpose %x {perm = [0, 2, 1]} : (tensor<s0x40x24xf16>) -> tensor<s0x24x40xf16>\n"
    "    func.return %t : tensor<s0x24x40xf16>\n  }",
    "%x", "tensor<s0x40x24xf16>", "tensor<s0x24x40xf16>", "%x: tensor<s0x40x24xf16>",
)


def test_batch_transpose_blocks():
    """The last two dims swapped under a batch dim (a bmm operand): blocks of 16 rows of 24 (two row tiles, the
    second partial), 40 columns (three blocks, the last partial)."""
    ck = _kernel(BATCH_TRANSPOSE)
    assert "vtranspose" in ck.assembly()
    rng = np.random.default_rng(2)
    for s0 in (1, 5):
        x = rng.standard_normal((s0, 40, 24)).astype(np.float16)
        (out,), res = run_kernel(ck, [x], {"s0": s0})
        np.testing.assert_array_equal(out.reshape(s0, 24, 40), x.transpose(0, 2, 1))


def _kernel_module(body: str, arg_types: list[str], result: str) -> str:
    """A module with kernel ``@k`` (arguments ``%x0, %x1 …`` of ``arg_types``, out-parameter ``%out``) and a host
    function calling it."""
    args = ", ".join(f"%x{i}: {t}" for i, t in enumerate(arg_types))
    kernel = (f"func.func @k({args}, %out: {result}) -> ({result}) attributes "
              f'{{fusion_kind = "PURE_ELEMWISE", kernel, output_args = [{len(arg_types)}]}} {{\n{body}\n  }}')
    names = ", ".join(f"%x{i}" for i in range(len(arg_types)))
    return _module(kernel, names, ", ".join(arg_types), result, args)


HEADS = _kernel_module((
    "    %v = hfusion.reshape %x0 : (tensor<(8*s0)x32xf32>) -> tensor<s0x8x4x8xf32>\n"
    "    %t = hfusion.transpose %v {perm = [0, 2, 1, 3]} : (tensor<s0x8x4x8xf32>) -> tensor<s0x4x8x8xf32>\n"
    "    %r = hfusion.reshape %t : (tensor<s0x4x8x8xf32>) -> tensor<(4*s0)x8x8xf32>\n"
    "    func.return %r : tensor<(4*s0)x8x8xf32>"), ["tensor<(8*s0)x32xf32>"], "tensor<(4*s0)x8x8xf32>")


def test_attention_heads_split_through_reshapes():
    """``x.view(b, t, h, d/h).transpose(1, 2).reshape(b*h, t, d/h)``: the argument is viewed as ``s0x8x4x8`` (a
    split of the symbolic ``8*s0`` needs no symbolic step) and the output as ``s0x4x8x8`` (the transposed dims 0
    and 1 are no single walk of the source): rows of 8 contiguous elements, one DMA burst each."""
    ck = _kernel(HEADS)
    rng = np.random.default_rng(3)
    for s0 in (1, 2, 5):
        x = rng.standard_normal((8 * s0, 32)).astype(np.float32)
        (out,), res = run_kernel(ck, [x], {"s0": s0})
        np.testing.assert_array_equal(out.reshape(4 * s0, 8, 8),
                                      x.reshape(s0, 8, 4, 8).transpose(0, 2, 1, 3).reshape(4 * s0, 8, 8))
        assert res.stats.hazards_checked


CONCAT_MERGE = _kernel_module((
    "    %c = hfusion.concat %x0, %x1 {dim = 2} : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x64xf32>\n"
    "    %r = hfusion.reshape %c : (tensor<2x8x64xf32>) -> tensor<16x64xf32>\n"
    "    func.return %r : tensor<16x64xf32>"), ["tensor<2x8x32xf32>", "tensor<2x8x32xf32>"], "tensor<16x64xf32>")

TRANSPOSE_SPLIT = _kernel_module((
    "    %t = hfusion.transpose %x0 {perm = [1, 0]} : (tensor<32x16xf32>) -> tensor<16x32xf32>\n"
    "    %r = hfusion.reshape %t : (tensor<16x32xf32>) -> tensor<16x4x8xf32>\n"
    "    func.return %r : tensor<16x4x8xf32>"), ["tensor<32x16xf32>"], "tensor<16x4x8xf32>")


def test_reshape_merges_and_splits_source_walks():
    """A concat's ``2x8`` rows merged into 16 (one walk of GM dim 1 running past its 8 rows into dim 0) and a
    transposed dim of 32 split into ``4x8`` (two local dims walking GM dim 0 at strides 8 and 1)."""
    rng = np.random.default_rng(4)
    a, b = (rng.standard_normal((2, 8, 32)).astype(np.float32) for _ in range(2))
    (out,), res = run_kernel(_kernel(CONCAT_MERGE), [a, b], {})
    np.testing.assert_array_equal(out.reshape(16, 64), np.concatenate([a, b], 2).reshape(16, 64))
    x = rng.standard_normal((32, 16)).astype(np.float32)
    (out,), res = run_kernel(_kernel(TRANSPOSE_SPLIT), [x], {})
    np.testing.assert_array_equal(out.reshape(16, 4, 8), x.T.reshape(16, 4, 8))


KEYS = _kernel_module((
    "    %t = hfusion.transpose %x0 {perm = [0, 2, 3, 1]} : (tensor<s0x8x4x8xf32>) -> tensor<s0x4x8x8xf32>\n"
    "    func.return %t : tensor<s0x4x8x8xf32>"), ["tensor<s0x8x4x8xf32>"], "tensor<s0x4x8x8xf32>")


@pytest.mark.parametrize("text, shape, perm, speedup", [
    (KEYS, (256, 8, 4, 8), (0, 2, 3, 1), 20),  # attention keys transposed for q @ k^T: 87,991 -> 1,775 cycles
    # a 2-D f32 transpose: 6,095 -> 2,722 cycles (18,031 -> 4,172 before the launch took the columns of s0 as a
    # work dim, 2048 being whole blocks: both on more cores)
    (transpose("f32"), (2048, 40), (1, 0), 2),
])
def test_permutation_moves_rows_not_elements(monkeypatch, text, shape, perm, speedup):
    """f32 permutations load their box in the source's dim order (contiguous rows, one DMA burst each), permute it
    in UB (``hivm.vpermute``: vgather by a table of source offsets built once per kernel) and store rows. Against the
    same kernel with permutes switched off — every element a DMA burst and a 32-B granule of its own — the cycles
    fall by ``speedup``× and the DDR bytes written by 8×."""
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    runs = {}
    for permutes in (True, False):
        if not permutes:
            monkeypatch.setattr(movement, "PERMUTE_DTYPES", ())
        ck = _kernel(text)
        assert ("vgather" in ck.assembly()) == permutes
        (out,), res = run_kernel(ck, [x], {"s0": shape[0]})
        np.testing.assert_array_equal(out.reshape(x.transpose(perm).shape), x.transpose(perm))
        assert res.stats.hazards_checked
        runs[permutes] = res.stats
    assert runs[True].cycles * speedup < runs[False].cycles, (runs[True].cycles, runs[False].cycles)
    n = x.nbytes  # DDR bytes: the input read once, the output written in 32-B granules (4-B bursts pay 8x)
    assert runs[True].ddr_bytes <= 2.1 * n and runs[False].ddr_bytes >= 9 * n, (runs[True].ddr_bytes,
                                                                                 runs[False].ddr_bytes, n)


def test_transpose_over_column_tiles_syncs_across_nested_loops():
    """A 1300x400 f32 transpose: work items of 8 result rows, each copying two column tiles (an inner loop) through
    the vector unit. hivm-inject-sync puts the inner loop's drains before the sets that release the next work item
    (with the sets first, MTE2 re-armed an id V had not drained yet: a SyncError in the simulator)."""
    x = np.random.default_rng(6).standard_normal((1300, 400)).astype(np.float32)
    ck = _kernel(_kernel_module(
        "    %t = hfusion.transpose %x0 {perm = [1, 0]} : (tensor<1300x400xf32>) -> tensor<400x1300xf32>\n"
        "    func.return %t : tensor<400x1300xf32>", ["tensor<1300x400xf32>"], "tensor<400x1300xf32>"))
    assert ck.hivm.attributes["schedule"].tiles[0][1] < 1300  # several column tiles per work item
    (out,), res = run_kernel(ck, [x], {})
    np.testing.assert_array_equal(out.reshape(400, 1300), x.T)
    assert res.stats.hazards_checked


@pytest.mark.parametrize("shape, dt, tile", [
    ((1, 512, 12, 64), "f32", [1, 1, 128, 64]),  # dim 0 alone: 1 work item, 41,988 cycles (9.8% of the roofline)
    ((1, 512, 12, 64), "f16", [1, 1, 128, 64]),
    ((4, 128, 8, 64), "f32", [1, 1, 43, 64]),  # 96 work items, the last tile of each [b, h] 42 rows
])
def test_head_split_spreads_over_the_cores(shape, dt, tile):
    """The attention head split ``x.permute(0, 2, 1, 3)`` of [B, S, H, D] with a small batch: the work items are
    tiles of the result's dims 0-2 (rows of D elements are whole 32-B blocks), so every core gets work and the
    kernel runs near its roofline; the hazard checker sees no two cores write one GM block."""
    b, s, h, d = shape
    src, dst = f"tensor<{b}x{s}x{h}x{d}x{dt}>", f"tensor<{b}x{h}x{s}x{d}x{dt}>"
    ck = _kernel(_kernel_module(f"    %t = hfusion.transpose %x0 {{perm = [0, 2, 1, 3]}} : ({src}) -> {dst}\n"
                                f"    func.return %t : {dst}", [src], dst))
    assert list(ck.hivm.attributes["schedule"].tiles[0]) == tile
    x = np.random.default_rng(7).standard_normal(shape).astype(NP[dt])
    (out,), res = run_kernel(ck, [x], {})
    np.testing.assert_array_equal(out.reshape(b, h, s, d), x.transpose(0, 2, 1, 3))
    assert res.stats.hazards_checked and res.stats.block_dim == 48
    assert res.stats.efficiency >= 0.9, res.stats
