"""Hand-written HIVM elementwise kernels (docs/hivm.md, after inject-sync) compiled and run on the simulator."""

import numpy as np
import pytest

from codegen import CodegenError, EMITTERS, HOST_ONLY, compile_module
from graph_passes.ir.core import OP_REGISTRY
from graph_passes.ir.parser import parse_module
from simulator import RaceError, parse, to_text

from .helpers import drop_one_sync, run_kernel
from .kernels import fma_1d


def test_every_hivm_op_has_an_emitter():
    hivm_ops = sorted(n for n in OP_REGISTRY if n.startswith("hivm.") and n not in HOST_ONLY)
    assert hivm_ops and [n for n in hivm_ops if n not in EMITTERS] == []


@pytest.mark.parametrize("dt", ["f16", "f32"])
def test_fma_dynamic_size_one_program(dt):
    module = parse_module(fma_1d(dt, 4096))
    ck = compile_module(module)["fma"]
    rng = np.random.default_rng(0)
    for n in (5, 4096, 3 * 4096 + 1000):  # partial single tile, one full tile, several tiles with a partial last
        x, y, z = (rng.standard_normal(n).astype(dt.replace("f", "float")) for _ in range(3))
        (out,), res = run_kernel(ck, [x, y, z], {"s0": n})
        ref = (x * y) + z  # numpy rounds each op to the dtype, as the vector unit does
        np.testing.assert_array_equal(out, ref)
        assert res.stats.hazards_checked and res.stats.cycles > 0
        assert res.stats.block_dim == min(48, -(-n // 4096))


def test_dropped_wait_is_a_race():
    module = parse_module(fma_1d("f32", 4096))
    ck = compile_module(module)["fma"]
    broken = drop_one_sync(ck, module)
    x = np.ones(5000, np.float32)
    with pytest.raises(RaceError, match="race"):
        run_kernel(broken, [x, x, x], {"s0": 5000})


def test_assembly_prints_and_parses_back():
    module = parse_module(fma_1d("f16", 4096))
    ck = compile_module(module)["fma"]
    text = ck.assembly()
    assert text.startswith("# kernel @fma (AIV)")
    assert "hivm.load x3" in text and "# hivm.vbinary {fun = mul}" in text
    back = parse(text)
    assert to_text(back) == to_text(ck.program)


def test_unsupported_op_names_op_and_location():
    text = fma_1d("f32", 4096).replace('{fun = "mul"}', '{fun = "pow"}')
    module = parse_module(text)
    with pytest.raises(CodegenError, match=r"hivm.vbinary.*pow"):
        compile_module(module)


def test_unplanned_alloc_is_an_error():
    text = fma_1d("f32", 4096).replace("hivm.alloc {offsets = [0]}", "hivm.alloc")
    with pytest.raises(CodegenError, match="plan-memory"):
        compile_module(parse_module(text))


def test_rotating_event_ids_any_list():
    text = fma_1d("f32", 4096)
    for kind in ("set_flag", "wait_flag"):
        text = text.replace(f'hivm.{kind} {{dst_pipe = "PIPE_V", event_ids = [0], src_pipe = "PIPE_MTE2"}}',
                            f'hivm.{kind} %t {{dst_pipe = "PIPE_V", event_ids = [1, 4], src_pipe = "PIPE_MTE2"}} : index')
    ck = compile_module(parse_module(text))["fma"]
    assert "event=((((t%2)==0)*1)+(((t%2)==1)*4))" in ck.assembly()
    x = np.arange(9000, dtype=np.float32)
    (out,), _ = run_kernel(ck, [x, x, x], {"s0": 9000})
    np.testing.assert_array_equal(out, x * x + x)


def test_not_in_place_funs_are_the_sequences_rereading_the_source():
    """The passes keep exactly the funs whose sequence reads the source after writing dst out of place."""
    from codegen.vector_ops import COMPOSITE
    from graph_passes.dialects.hfusion import NOT_IN_PLACE_FUNS

    rereading = {fun for fun, steps in COMPOSITE.items() if any(st[0].startswith("x") for st in steps[1:])}
    assert rereading == set(NOT_IN_PLACE_FUNS)
