"""The schedule as a typed attribute: it prints and parses back, a wrong field is a located parse error, and a
schedule that names values the body does not have is a verifier error (not a crash in convert-to-hivm)."""

from __future__ import annotations

import dataclasses
import re

import pytest

from graph_passes.dialects.hivm_layout import DataLayout
from graph_passes.dialects.schedule_attrs import BufferDecl, MovementSchedule, VectorSchedule
from graph_passes.ir.core import VerifyError
from graph_passes.ir.parser import ParseError, parse_attr, parse_module
from graph_passes.ir.printer import format_attr, print_module
from graph_passes.ir.verifier import verify
from graph_passes.passes import PassManager

SCHEDULE = VectorSchedule(
    kind="LAST_AXIS_PBR", tile=(8, 1024), ub_bytes=65536, reduce_dims=(1,), stage_split=3, scalar_columns=True,
    buffers=(BufferDecl("f32", (0, 1), ("a0",), copies=2, loaded=True), BufferDecl("f32", (0,), ("o0",)),
             BufferDecl("f32", (0,), role="partial", of="o0", lanes=(64,), fixed=((1, 37),))),
    inlined=("o1",), block_folds=("o0",))

KERNEL = """module attributes {target = "ascend910b1"} {
  func.func @k(%x: tensor<64x256xf32>, %out: tensor<64xf32>) -> (tensor<64xf32>) attributes {fusion_kind = "LAST_AXIS_PBR", kernel, output_args = [1], schedule = SCHEDULE, tiling = {block_dim = 48, n0 = 64, n1 = 256, n_tiles = 64, tiles0 = 64}} {
    %r = hfusion.reduce %x {dims = [1], kind = "sum"} : (tensor<64x256xf32>) -> tensor<64xf32>
    func.return %r : tensor<64xf32>
  }
}"""

GOOD = ('#hfusion.schedule<{kind = "LAST_AXIS_PBR", tile = [64, 256], ub_bytes = 1024, buffers = ['
        '{dtype = "f32", dims = [0, 1], values = ["a0"], copies = 2, loaded = true}, '
        '{dtype = "f32", dims = [0], values = ["o0"], stored = true}], reduce_dims = [1]}>')


@pytest.mark.parametrize("attr", [SCHEDULE, MovementSchedule(tiles=((1, 8), (4,)), ub_bytes=512, multi_buffer=3)])
def test_typed_attribute_round_trips(attr):
    text = format_attr(attr)
    assert text.startswith(f"#{attr.mnemonic}<{{") and parse_attr(text) == attr


def test_defaults_are_not_printed():
    text = format_attr(VectorSchedule(kind="PURE_ELEMWISE", tile=(64,), ub_bytes=512))
    assert text == '#hfusion.schedule<{kind = "PURE_ELEMWISE", tile = [64], ub_bytes = 512}>'


@pytest.mark.parametrize("text, message", [
    ('#hfusion.schedule<{kind = "X", tile = [8]}>', "missing field 'ub_bytes'"),
    ('#hfusion.schedule<{kind = "X", tile = [8], ub_bytes = 4, tiles = [1]}>', "unknown field 'tiles'"),
    ('#hfusion.schedule<{kind = "X", tile = 8, ub_bytes = 4}>', "tile: expected a list"),
    ('#hfusion.schedule<{kind = "X", tile = [0], ub_bytes = 4}>', "tile sizes must be >= 1"),
    ('#hfusion.schedule<{kind = "X", tile = [8], ub_bytes = 4, distribution = "round-robin"}>', "distribution must"),
    ('#hfusion.schedule<{kind = "X", tile = [8], ub_bytes = 4, buffers = [{dtype = "f32", dims = [0], '
     'values = ["%x"]}]}>', "value reference '%x'"),
    ('#hfusion.schedule<{kind = "X", tile = [8], ub_bytes = 4, buffers = [{dtype = "f32", dims = [0], '
     'copies = 0}]}>', "copies must be >= 1"),
    ('#hfusion.tiling<{}>', "unknown typed attribute '#hfusion.tiling'"),
])
def test_bad_typed_attribute_is_a_parse_error(text, message):
    with pytest.raises(ParseError, match=message):
        parse_attr(text)


def test_kernel_with_schedule_verifies_and_round_trips():
    module = parse_module(KERNEL.replace("SCHEDULE", GOOD))
    verify(module)
    schedule = module.lookup("k").attributes["schedule"]
    assert isinstance(schedule, VectorSchedule) and format_attr(schedule) == GOOD
    assert parse_module(print_module(module)).lookup("k").attributes["schedule"] == schedule


@pytest.mark.parametrize("edit, message", [
    (('values = ["o0"]', 'values = ["o7"]'), "names 'o7', which is not a tensor value"),
    (('dtype = "f32", dims = [0], values', 'dtype = "f16", dims = [0], values'), "is f16 but holds 'o0' of f32"),
    (('dims = [0], values = ["o0"]', 'dims = [3], values = ["o0"]'), "spans dims \\[3\\] of a rank-2 tile"),
])
def test_schedule_of_another_body_is_a_verifier_error(edit, message):
    module = parse_module(KERNEL.replace("SCHEDULE", GOOD.replace(*edit)))
    with pytest.raises(VerifyError, match=message):
        verify(module)


def test_mark_multi_buffer_reads_the_schedule_copies():
    """The multi-buffer depth is the schedule's: editing a buffer's copies changes the marked alloc, and the pass
    has no depth of its own for a scheduled kernel."""
    module = parse_module(KERNEL.replace("SCHEDULE", GOOD.replace("copies = 2", "copies = 3")))
    PassManager.from_pipeline("convert-to-hivm,hivm-mark-multi-buffer", verify=True).run(module)
    allocs = [op for op in module.lookup("k").walk() if op.name == "hivm.alloc"]
    assert [(a.attributes.get("buffer"), a.attributes.get("multi_buffer")) for a in allocs] == [(0, 3), (1, None)]


def test_schedule_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        SCHEDULE.tile = (1, 1)


@pytest.mark.parametrize("text,attr", [
    ("#hivm.data_layout<ND>", DataLayout("ND")),
    ("#hivm.data_layout<ND, transpose = true>", DataLayout("ND", transpose=True)),
    ("#hivm.data_layout<zZ, fractal = [16, 8]>", DataLayout("zZ", fractal=(16, 8))),
])
def test_positional_fields_print_bare_and_parse_back(text, attr):
    assert format_attr(attr) == text and parse_attr(text) == attr
    assert parse_attr(text.replace(" = ", "=").replace(", ", ",")) == attr


@pytest.mark.parametrize("text,message", [
    ("#hivm.data_layout<>", "expected the kind of '#hivm.data_layout'"),
    ("#hivm.data_layout<{kind = \"ND\"}>", "expected the kind of '#hivm.data_layout'"),
    ("#hivm.data_layout<nZ, fractal = [16, 16], fractal = [16, 16]>", "field 'fractal' given twice"),
    ("#hivm.data_layout<nZ, tile = [16, 16]>", "unknown field 'tile'"),
    ("#hivm.data_layout<zN>", "a zN layout needs fractal = [rows, cols] of positive sizes, got []"),
    ("#hivm.data_layout<zZ, fractal = [16, 16], transpose = true>", "transpose applies to ND layouts only, got zZ"),
])
def test_bad_positional_attribute_is_a_parse_error(text, message):
    with pytest.raises(ParseError, match=re.escape(message)):
        parse_attr(text)
