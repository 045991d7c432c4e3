"""Broadcasts and reductions over several dims, and compare/select on rank-3 buffers, through the real pipeline on
the simulator (hazard checker on), against numpy."""

import numpy as np
import pytest

from .helpers import lower, only_kernel, run_kernel

HEAD = "module attributes {symbols = {s0 = [1, 4096]}} {"


def _inputs(ck, bindings, seed=0):
    rng = np.random.default_rng(seed)
    return {a.name: rng.standard_normal(a.evaluate_shape(ck.tiling.sizes, bindings)).astype(np.float32)
            for a in ck.arg_layout if not a.is_output}


@pytest.mark.parametrize("kind", ["sum", "max"])
def test_reduce_outer_and_last_dims(kind):
    """x.sum((0, 2)) of s0×3×40: dim 0 accumulated into a scratch stage, then the rows reduced."""
    ck = only_kernel(lower(HEAD + f"""
  func.func @main(%x: tensor<s0x3x40xf32>) -> (tensor<3xf32>) {{
    %s = hfusion.reduce %x {{dims = [0, 2], kind = "{kind}"}} : (tensor<s0x3x40xf32>) -> tensor<3xf32>
    func.return %s : tensor<3xf32>
  }}
}}"""))
    for s0 in (1, 5, 70):
        b = {"s0": s0}
        x = _inputs(ck, b)["x"]
        (out,), res = run_kernel(ck, [x], b)
        ref = x.sum((0, 2)) if kind == "sum" else x.max((0, 2))
        np.testing.assert_allclose(out.reshape(ref.shape), ref, rtol=1e-5, atol=1e-5)
        assert res.stats.hazards_checked


def test_broadcast_outer_and_last_dims():
    """x + b[None, :, None] and x * c over s0×3×40: a column broadcast into the slab at index 0 of dim 0, then a row
    broadcast of the slab; the rank-0 c along every dim."""
    t = "tensor<s0x3x40xf32>"
    ck = only_kernel(lower(HEAD + f"""
  func.func @main(%x: {t}, %b: tensor<3xf32>, %c: tensor<f32>) -> ({t}) {{
    %bb = hfusion.broadcast %b {{dims = [0, 2]}} : (tensor<3xf32>) -> {t}
    %a = hfusion.elemwise_binary %x, %bb {{fun = "add"}} : ({t}, {t}) -> {t}
    %cb = hfusion.broadcast %c {{dims = [0, 1, 2]}} : (tensor<f32>) -> {t}
    %m = hfusion.elemwise_binary %a, %cb {{fun = "mul"}} : ({t}, {t}) -> {t}
    func.return %m : {t}
  }}
}}"""))
    for s0 in (1, 9, 70):
        bind = {"s0": s0}
        args = _inputs(ck, bind)
        (out,), res = run_kernel(ck, list(args.values()), bind)
        x, b, c = args["x"], args["b"], args["c"]
        ref = (x.reshape(s0, 3, 40) + b.reshape(1, 3, 1)) * c.reshape(1, 1, 1)
        np.testing.assert_allclose(out.reshape(ref.shape), ref, rtol=1e-6, atol=1e-6)
        assert res.stats.hazards_checked


@pytest.mark.parametrize("shape", ["s0x40", "s0x3x40"])
def test_broadcast_of_one_element_into_columns(shape):
    """max over the last dim times a rank-0 c broadcast to the rows (x.amax(-1) * c): c's buffer is a column of
    one-element rows, not padded to 32 B; vbrcb puts c in a 32-B block of scratch, one vcopy (block stride 0) fills
    the column."""
    t, r = f"tensor<{shape}xf32>", f"tensor<{shape.rsplit('x', 1)[0]}xf32>"
    dims = "[0]" if shape == "s0x40" else "[0, 1]"
    ck = only_kernel(lower(HEAD + f"""
  func.func @main(%x: {t}, %c: tensor<f32>) -> ({r}) {{
    %m = hfusion.reduce %x {{dims = [{shape.count("x")}], kind = "max"}} : ({t}) -> {r}
    %cb = hfusion.broadcast %c {{dims = {dims}}} : (tensor<f32>) -> {r}
    %p = hfusion.elemwise_binary %m, %cb {{fun = "mul"}} : ({r}, {r}) -> {r}
    func.return %p : {r}
  }}
}}"""))
    assert "src_blk=0" in ck.assembly() and "vbrcb" in ck.assembly()
    for s0 in (1, 9, 70):
        bind = {"s0": s0}
        args = _inputs(ck, bind)
        (out,), res = run_kernel(ck, list(args.values()), bind)
        x, c = args["x"], args["c"]
        ref = x.reshape(s0, -1, 40).max(-1) * c.reshape(())
        np.testing.assert_allclose(out.reshape(ref.shape), ref, rtol=1e-6, atol=1e-6)
        assert res.stats.hazards_checked


def test_compare_select_on_rank3_buffers():
    """max(x, b[None, :, None]) as select(x > b, x, b): the mask rows of s0×3 rows flatten like the data's."""
    t = "tensor<s0x3x40xf32>"
    ck = only_kernel(lower(HEAD + f"""
  func.func @main(%x: {t}, %b: tensor<3xf32>) -> ({t}) {{
    %bb = hfusion.broadcast %b {{dims = [0, 2]}} : (tensor<3xf32>) -> {t}
    %m = hfusion.compare %x, %bb {{predicate = "gt"}} : ({t}, {t}) -> tensor<s0x3x40xi1>
    %s = hfusion.select %m, %x, %bb : (tensor<s0x3x40xi1>, {t}, {t}) -> {t}
    func.return %s : {t}
  }}
}}"""))
    assert ck.source_ops["hivm.vcmp"] == 1 and len(ck.hivm.body.args[0].type.shape) == 3  # rank-3 buffers
    for s0 in (1, 9, 70):
        bind = {"s0": s0}
        args = _inputs(ck, bind)
        (out,), res = run_kernel(ck, list(args.values()), bind)
        x, b = args["x"].reshape(s0, 3, 40), args["b"].reshape(1, 3, 1)
        np.testing.assert_array_equal(out.reshape(x.shape), np.maximum(x, b))
        assert res.stats.hazards_checked
