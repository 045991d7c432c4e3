"""Codegen reads the cube buffers' data layouts from the IR (``hivm-infer-data-layout``) and refuses layouts the
simulated instructions do not implement, or none, with a CodegenError naming the op, the instruction and the
layouts (codegen/cube_layouts.py)."""

import dataclasses

import numpy as np
import pytest

from codegen.errors import CodegenError
from graph_passes.dialects.hivm_layout import DataLayout, nd

from .helpers import lower, only_kernel, recompile_edited, run_kernel
from .test_cube_pipeline import _inputs, _matmul, _reference

LAYOUT_KEYS = ("layout", "src_layout", "dst_layout")


@pytest.fixture(scope="module")
def lowered():
    """48 x 80 x 96 f16 with B transposed (x @ w.t(): its L1 box holds B^T), through the default pipeline."""
    module = lower(_matmul(48, 80, 96, "f16", tb=True))
    return module, only_kernel(module)


def _cube_ops(func):
    return [op for op in func.walk() if op.name in ("hivm.load_l0a", "hivm.load_l0b", "hivm.mmad", "hivm.fixpipe")]


def _replace(old: DataLayout, new: DataLayout):
    """An edit: every layout attribute equal to ``old`` (on allocs and on the conversions) becomes ``new``."""
    def edit(func):
        for op in func.walk():
            for key in LAYOUT_KEYS:
                if op.attributes.get(key) == old:
                    op.attributes[key] = new
    return edit


def test_the_pipeline_lays_out_every_cube_buffer(lowered):
    module, ck = lowered
    func = module.lookup(ck.name)
    allocs = [op for op in func.walk() if op.name == "hivm.alloc" and op.result.type.scope != "ub"]
    laid_out = {(op.result.type.scope, op.attributes["layout"]) for op in allocs}
    assert laid_out == {("l1", nd()), ("l1", nd(transpose=True)), ("l0a", DataLayout("zZ", fractal=(16, 16))),
                        ("l0b", DataLayout("nZ", fractal=(16, 16))), ("l0c", DataLayout("zN", fractal=(16, 16)))}
    convs = [op for op in _cube_ops(func) if op.name != "hivm.mmad"]
    assert convs and all("src_layout" in op.attributes and "dst_layout" in op.attributes for op in convs)
    a, b = _inputs(ck, {})
    (out,), _ = run_kernel(ck, [a, b], {})
    np.testing.assert_allclose(out.astype(np.float32), _reference(a, b, False, True, "f16").astype(np.float32),
                               rtol=2e-3, atol=2e-2)  # fmt: skip


def test_without_layouts_codegen_refuses(lowered):
    module, ck = lowered

    def strip(func):
        for op in func.walk():
            for key in LAYOUT_KEYS:
                op.attributes.pop(key, None)
    with pytest.raises(CodegenError, match=r"hivm.load_l0a.*has no src_layout \(run hivm-infer-data-layout\)"):
        recompile_edited(ck, module, strip)


@pytest.mark.parametrize("old,new,message", [
    # L0A fractals of 16 x 8 are f32's: load_l1_to_l0a writes f16 as 16 x 16
    (DataLayout("zZ", fractal=(16, 16)), DataLayout("zZ", fractal=(16, 8)),
     r"load_l1_to_l0a takes operand 1 \(memref<\d+x\d+xf16, l0a>\) as zZ fractals of 16 x 16 f16, the IR lays it "
     r"out #hivm.data_layout<zZ, fractal = \[16, 8\]>"),
    # an accumulator laid out as an A operand
    (DataLayout("zN", fractal=(16, 16)), DataLayout("nZ", fractal=(16, 16)),
     r"'hivm.mmad'.*mmad takes operand 2 \(memref<\d+x\d+xf32, l0c>\) as zN fractals of 16 x 16 f32"),
    # B's box said to hold B as it is, while the load still transposes it
    (nd(transpose=True), nd(),
     r"src_layout #hivm.data_layout<ND> and transpose = true disagree about the L1 box's orientation"),
])
def test_layouts_the_instructions_do_not_implement_are_refused(lowered, old, new, message):
    module, ck = lowered
    with pytest.raises(CodegenError, match=message):
        recompile_edited(ck, module, _replace(old, new))


def test_an_op_and_its_buffer_disagreeing_is_refused(lowered):
    module, ck = lowered

    def edit(func):
        load = next(op for op in func.walk() if op.name == "hivm.load_l0b")
        load.attributes["dst_layout"] = dataclasses.replace(load.attributes["dst_layout"], fractal=(16, 8))
    with pytest.raises(CodegenError, match=r"'hivm.load_l0b'.*dst_layout is #hivm.data_layout<nZ, fractal = \[16, "
                                           r"8\]>, but operand 1 \(memref<.*l0b>\) is laid out"):  # fmt: skip
        recompile_edited(ck, module, edit)
