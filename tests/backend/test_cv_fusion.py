"""Cube–vector fusion (hfusion-fuse-mix-cv, docs/cube.md): a matmul and its elementwise epilogue run as one MIX_CV
launch — the cube core of each group writes its tiles to a GM workspace and raises a cross-core flag per tile, the
group's two vector cores each take half of the tile's rows — against eager, with the hazard checker on."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import torch_npu_backend
from simulator import RaceError

from ..codegen.helpers import lower, run_kernel
from ..helpers import check_model

F16, F32 = torch.float16, torch.float32


def _randn(*shape, dtype=F32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=g) * 0.5).to(dtype)


def _run(fn, inputs, **options):
    with torch_npu_backend.profile() as prof:
        check_model(fn, inputs, options=options or None)
    return prof


@pytest.mark.parametrize("dtype", [F16, F32], ids=["f16", "f32"])
def test_linear_gelu_is_one_mix_launch(fresh_dynamo, dtype):
    x, w, b = _randn(64, 96, dtype=dtype), _randn(128, 96, dtype=dtype, seed=1), _randn(128, dtype=dtype, seed=2)
    prof = _run(lambda x, w, b: F.gelu(F.linear(x, w, b)), [x, w, b])
    (rec,) = prof.records
    assert (rec.fusion_kind, rec.core_type, rec.executed) == ("MIX_CV", "MIX", "simulator"), rec
    assert "gelu" in rec.source and "addmm" in rec.source, rec.source


def test_x_wt_plus_b_is_one_launch_without_transpose(fresh_dynamo):
    """``x @ w.t() + b``: the cube reads ``w`` transposed in place, the bias add is the epilogue: one launch."""
    x, w, b = _randn(48, 64, dtype=F16), _randn(80, 64, dtype=F16, seed=1), _randn(80, dtype=F16, seed=2)
    prof = _run(lambda x, w, b: x @ w.t() + b, [x, w, b])
    assert [r.fusion_kind for r in prof.records] == ["MIX_CV"]
    assert not any("transpose" in s or "permute" in s for r in prof.records for s in r.source)


@pytest.mark.parametrize("epilogue", [
    lambda y, r: torch.relu(y),
    lambda y, r: F.silu(y),
    lambda y, r: y * 0.125 + r,  # a scale and a residual add
    lambda y, r: (y + r).to(F16),  # a cast
], ids=["relu", "silu", "scale_residual", "cast"])
def test_epilogues(fresh_dynamo, epilogue):
    # 200 rows: the last tile's rows are partial, and its second vector core gets fewer (or none)
    x, w, r = _randn(200, 64), _randn(64, 96, seed=1), _randn(200, 96, seed=2)
    prof = _run(lambda x, w, r: epilogue(x @ w, r), [x, w, r])
    assert [r.fusion_kind for r in prof.records] == ["MIX_CV"], [(r.fusion_kind, r.source) for r in prof.records]


def test_cv_fusion_off_keeps_two_kernels(fresh_dynamo):
    x, w, b = _randn(64, 96, dtype=F16), _randn(128, 96, dtype=F16, seed=1), _randn(128, dtype=F16, seed=2)
    prof = _run(lambda x, w, b: F.gelu(F.linear(x, w, b)), [x, w, b], cv_fusion=False)
    assert sorted(r.fusion_kind for r in prof.records) == ["ANY_PB", "SINGLE_CUBE"]


MIX_TEXT = """module attributes {target = "ascend910b1"} {
  func.func @main(%x: tensor<256x128xf16>, %w: tensor<128x256xf16>, %b: tensor<256xf32>) -> (tensor<256x256xf16>) {
    %p = hfusion.matmul %x, %w : (tensor<256x128xf16>, tensor<128x256xf16>) -> tensor<256x256xf32>
    %bb = hfusion.broadcast %b {dims = [0]} : (tensor<256xf32>) -> tensor<256x256xf32>
    %s = hfusion.elemwise_binary %p, %bb {fun = "add"} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
    %r = hfusion.elemwise_unary %s {fun = "relu"} : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %h = hfusion.cast %r {round_mode = "rint"} : (tensor<256x256xf32>) -> tensor<256x256xf16>
    func.return %h : tensor<256x256xf16>
  }
}"""


def _mix_kernel():
    from codegen import compile_module

    module = lower(MIX_TEXT)
    (name,) = [f.sym_name for f in module.functions if f.attributes.get("mix_part") == "aic"]
    return module, name, compile_module(module)[name]


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((256, 128)).astype(np.float16), rng.standard_normal((128, 256)).astype(np.float16),
            rng.standard_normal(256).astype(np.float32)]  # fmt: skip


def test_mix_program_halves_each_tile_between_the_vector_cores():
    module, name, ck = _mix_kernel()
    aiv = module.lookup(f"{name}_aiv")
    assert ck.core_type == "MIX" and type(ck.program).__name__ == "MixProgram"
    assert any(op.name == "hivm.get_sub_block_idx" for op in aiv.walk())
    x, w, b = _inputs()
    ws = np.zeros((256, 256), np.float32)
    (out,), res = run_kernel(ck, [x, w, ws, b], {})
    ref = np.maximum(x.astype(np.float32) @ w.astype(np.float32) + b, 0).astype(np.float16)
    np.testing.assert_allclose(out.astype(np.float32), ref.astype(np.float32), rtol=2e-3, atol=2e-2)
    assert res.stats.hazards_checked
    names = {n for n in res.core_names if n.startswith("aiv")}
    assert len(names) == 2 * len({n for n in res.core_names if n.startswith("aic")})  # two vector cores a group


def test_dropped_cross_core_wait_is_a_race():
    """Without the vector cores' wait on the tile flag, their workspace reads are unordered against the cube's
    FixPipe writes: the hazard checker reports the race."""
    from codegen import compile_kernel

    module, name, _ = _mix_kernel()
    aiv = module.lookup(f"{name}_aiv")
    waits = [op for op in aiv.walk() if op.name == "hivm.sync_block_wait"]
    assert waits
    for op in waits:
        op.erase()
    ck = compile_kernel(module.lookup(name), module)
    x, w, b = _inputs()
    with pytest.raises(RaceError, match="GM|gm"):
        run_kernel(ck, [x, w, np.zeros((256, 256), np.float32), b], {})


# cv-pipelining (docs/cube.md): 4 accumulator parts of 64 columns per 96 x 256 tile, a ring of 2 slots per group, so
# each group's ring wraps twice; a bias add, GELU and a cast are the epilogue (its vector time makes pipelining pay)
RING = (512, 512, 1024)  # M, K, N


def _ring_text(m, k, n):
    return f"""module attributes {{target = "ascend910b1"}} {{
  func.func @main(%x: tensor<{m}x{k}xf16>, %w: tensor<{k}x{n}xf16>, %b: tensor<{n}xf32>) -> (tensor<{m}x{n}xf16>) {{
    %p = hfusion.matmul %x, %w : (tensor<{m}x{k}xf16>, tensor<{k}x{n}xf16>) -> tensor<{m}x{n}xf32>
    %bb = hfusion.broadcast %b {{dims = [0]}} : (tensor<{n}xf32>) -> tensor<{m}x{n}xf32>
    %s = hfusion.elemwise_binary %p, %bb {{fun = "add"}} : (tensor<{m}x{n}xf32>, tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
    %g = hfusion.elemwise_unary %s {{fun = "gelu_erf"}} : (tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
    %h = hfusion.cast %g {{round_mode = "rint"}} : (tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf16>
    func.return %h : tensor<{m}x{n}xf16>
  }}
}}"""


def _ring_kernel(cv_pipelining=True):
    from codegen import compile_module

    module = lower(_ring_text(*RING), cv_pipelining=cv_pipelining)
    (name,) = [f.sym_name for f in module.functions if f.attributes.get("mix_part") == "aic"]
    return module, name, compile_module(module)[name]


def _ring_inputs():
    m, k, n = RING
    rng = np.random.default_rng(3)
    return [rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(np.float16),
            rng.standard_normal(n).astype(np.float32)]  # fmt: skip


def _run_ring(ck, **kw):
    x, w, b = _ring_inputs()
    ws = ck.arg_layout[2]
    return run_kernel(ck, [x, w, np.zeros(ws.evaluate_shape(ck.tiling.sizes, {}), np.float32), b], {}, **kw)


def test_pipelined_mix_kernel_uses_a_ring_workspace_of_two_slots():
    """The workspace is ``block_dim`` groups × 2 slots of one drained part (96 × 64 f32), smaller than the 512 × 1024
    product; each drain waits for both vector cores' slot flags; the result equals the reference, race-free."""
    module, name, ck = _ring_kernel()
    aic = module.lookup(name)
    s, tiling = aic.attributes["schedule"], aic.attributes["tiling"]
    assert (s.resident_a, s.ws_slots, s.acc_parts) == (True, 2, 4), s
    ws = aic.args[list(aic.attributes["workspace_args"])[0]].type
    assert ws.shape == (tiling["block_dim"] * 2 * s.base_m, s.base_n // s.acc_parts)
    assert ws.shape[0] * ws.shape[1] < RING[0] * RING[2]
    waits = [op.attributes["flag"] for op in aic.walk() if op.name == "hivm.sync_block_wait"]
    assert sorted(set(waits)) == [1, 2], waits  # SLOT_FREE of vector core 0 and 1
    (out,), res = _run_ring(ck)
    x, w, b = _ring_inputs()
    s = torch.from_numpy(x.astype(np.float32) @ w.astype(np.float32) + b)
    ref = F.gelu(s).numpy().astype(np.float16)
    np.testing.assert_allclose(out.astype(np.float32), ref.astype(np.float32), rtol=2e-3, atol=6e-2)
    assert res.stats.hazards_checked



def test_dropped_slot_free_wait_is_a_race():
    """Without the cube's wait for the vector cores' SLOT_FREE flags, the drain of part 2 refills slot 0 unordered
    against the vector cores' reads of part 0: the hazard checker reports the race on the workspace."""
    from codegen import compile_kernel

    module, name, _ = _ring_kernel()
    aic = module.lookup(name)
    for op in [op for op in aic.walk() if op.name == "hivm.sync_block_wait"]:
        op.erase()
    ck = compile_kernel(aic, module)
    with pytest.raises(RaceError, match="GM|gm"):
        _run_ring(ck)


def _body_cycles(prof) -> int:
    return sum(r.cycles for r in prof.simulated())


@pytest.mark.slow
def test_pipelined_linear_gelu_beats_unfused_and_unpipelined(fresh_dynamo):
    """linear + GELU, 256 x 1024 x 1024 f16 (benchmarks/matmul.py; one 96 x 128 tile per group, 2 parts): equal to
    eager with cv-pipelining, and its simulated body cycles (deterministic) at most 0.9x the unfused two kernels'
    and below the fused kernel without cv-pipelining (its first part reaches the vector cores before the second
    part's B columns load)."""
    x, w, b = _randn(256, 1024, dtype=F16), _randn(1024, 1024, dtype=F16, seed=1), _randn(1024, dtype=F16, seed=2)
    fn = lambda x, w, b: F.gelu(F.linear(x, w, b))  # noqa: E731
    piped = _run(fn, [x, w, b])
    plain = _run(fn, [x, w, b], cv_pipelining=False)
    apart = _run(fn, [x, w, b], cv_fusion=False)
    (rec,) = piped.records
    assert (rec.fusion_kind, rec.schedule.resident_a, rec.schedule.ws_slots) == ("MIX_CV", True, 2), rec.schedule
    assert not plain.records[0].schedule.resident_a
    fused, unpiped, unfused = _body_cycles(piped), _body_cycles(plain), _body_cycles(apart)
    assert fused <= 0.9 * unfused, (fused, unfused)
    assert fused < unpiped, (fused, unpiped)


def test_cv_pipelining_cuts_the_kernels_cycles():
    """The same kernel without cv-pipelining (the tile's K loop holds its parts, the workspace the whole product):
    its simulated cycles (deterministic) are at least 10% more."""
    _, _, piped = _ring_kernel()
    _, _, plain = _ring_kernel(cv_pipelining=False)
    assert plain.program is not None
    (out_p,), res_p = _run_ring(piped)
    (out_q,), res_q = _run_ring(plain)
    np.testing.assert_array_equal(out_p, out_q)
    assert res_p.stats.cycles <= 0.9 * res_q.stats.cycles, (res_p.stats.cycles, res_q.stats.cycles)
