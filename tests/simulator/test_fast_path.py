"""The launch's fast path (simulator/symmetry.py: local hazards checked once per class of cores with identical
streams) against the exact path: the same cycles, per-pipe busy per core, trace, flows and GM bytes on the example
kernels and on every launch of a small compiled model (vector, cube and mix kernels); races still reported, with the
exact path's message; ``NPU_SIM_EXACT=1`` forces the exact path."""
import sys

import numpy as np
import pytest

from simulator import GlobalMemory, ProgramBuilder, RaceError, launch, symmetry
from simulator.examples.gemm import build_gemm
from simulator.examples.vector_add import build_vector_add
from simulator.timing_job import digest, snapshot

launch_module = sys.modules["simulator.launch"]  # the module (``simulator.launch`` is the function)


def _same(program, block_dim, args, gm):
    """Launch on ``gm`` by the fast path and on a copy by the exact path; assert everything equal; return the
    fast path's representatives (how many cores the hazard checker looked at locally)."""
    gm2 = snapshot(gm)
    fast = launch(program, block_dim=block_dim, args=args, gm=gm, exact=False)
    exact = launch(program, block_dim=block_dim, args=args, gm=gm2, exact=True)
    a, b = fast.stats, exact.stats
    assert a.cycles == b.cycles
    assert a.busy_per_core == b.busy_per_core and a.busy == b.busy
    assert (a.bytes, a.gm_bytes, a.ddr_bytes, a.l2_hit_bytes) == (b.bytes, b.gm_bytes, b.ddr_bytes, b.l2_hit_bytes)
    assert fast.events == exact.events and fast.flows == exact.flows
    assert digest(gm) == digest(gm2)
    return symmetry.representatives(launch_module.issue(program, fast.chip, block_dim, args, snapshot(gm)))


def _add(gm, n_tiles, tile):
    x = gm.put((np.arange(n_tiles * tile) % 2048).astype(np.float16))
    y = gm.put(np.ones(n_tiles * tile, np.float16))
    return dict(x=x, y=y, z=gm.alloc(n_tiles * tile * 2), n_tiles=n_tiles)


@pytest.mark.parametrize("buffers", [1, 2])
@pytest.mark.parametrize("block_dim,n_tiles", [(8, 20), (48, 48), (48, 100)])
def test_vector_add_same_on_both_paths(buffers, block_dim, n_tiles):
    gm = GlobalMemory()
    reps = _same(build_vector_add("f16", 1024, buffers), block_dim, _add(gm, n_tiles, 1024), gm)
    # cores with the same tile count share a class: 20 tiles on 8 cores are 3 or 2 per core
    want = {(8, 20): 2, (48, 48): 1, (48, 100): 2}[(block_dim, n_tiles)]
    assert len(reps) == want


@pytest.mark.parametrize("balance", [True, False])
def test_gemm_same_on_both_paths(balance):
    rng = np.random.default_rng(0)
    m = k = n = 256
    gm = GlobalMemory()
    a = gm.put(rng.uniform(-1, 1, (m, k)).astype(np.float16))
    b = gm.put(rng.uniform(-1, 1, (k, n)).astype(np.float16))
    c = gm.alloc(m * n * 2)
    reps = _same(build_gemm(balance=balance), 24, dict(a=a, b=b, c=c, M=m, N=n, K=k), gm)
    assert reps is not None and len(reps) < 24


def test_env_forces_exact_path(monkeypatch):
    seen = []
    real = symmetry.representatives
    monkeypatch.setattr(symmetry, "representatives", lambda cores: seen.append(len(cores)) or real(cores))
    gm = GlobalMemory()
    launch(build_vector_add("f16", 1024, 2), block_dim=4, args=_add(gm, 8, 1024), gm=gm)
    assert seen == [4]
    monkeypatch.setenv(symmetry.ENV_EXACT, "1")
    launch(build_vector_add("f16", 1024, 2), block_dim=4, args=_add(gm, 8, 1024), gm=gm)
    assert seen == [4]  # not consulted: the exact path


def _race_message(program, block_dim, args_of, exact):
    gm = GlobalMemory()
    with pytest.raises(RaceError) as e:
        launch(program, block_dim=block_dim, args=args_of(gm), gm=gm, exact=exact)
    return str(e.value)


@pytest.mark.parametrize("drop", ["MTE2->V", "V->MTE2"])
def test_race_in_identical_streams_reported_as_the_exact_path_does(drop):
    prog = build_vector_add("f16", 1024, 1, drop_wait=drop)
    fast = _race_message(prog, 8, lambda gm: _add(gm, 24, 1024), exact=False)
    assert fast == _race_message(prog, 8, lambda gm: _add(gm, 24, 1024), exact=True)


def _one_core_racy():
    """Every core loads a tile, adds, stores; core 5 alone skips its MTE2->V wait (a local race on core 5 only)."""
    b = ProgramBuilder("racy5", "aiv", ["x", "z"])
    off = b.reg("block_idx") * 2048
    b.copy_gm_to_ub(0, b.reg("x") + off, 2048)
    b.set_flag("MTE2", "V", 0)
    with b.if_(b.reg("block_idx").eq(5)):
        b.mov("skip", 0)
    with b.else_():
        b.wait_flag("MTE2", "V", 0)
    b.vadd("f16", 2048, 0, 0, repeat=8)
    b.set_flag("V", "MTE3", 0)
    b.wait_flag("V", "MTE3", 0)
    b.copy_ub_to_gm(b.reg("z") + off, 2048, 2048)
    return b.build()


def test_race_on_one_core_of_many_is_reported():
    def args(gm):
        return dict(x=gm.put(np.ones(8 * 1024, np.float16)), z=gm.alloc(8 * 2048))
    prog = _one_core_racy()
    fast = _race_message(prog, 8, args, exact=False)
    assert "core aiv5" in fast and fast == _race_message(prog, 8, args, exact=True)


def test_cross_core_gm_race_is_reported():
    """Identical streams but one GM tile: every core stores to the same bytes (a WAW race between cores)."""
    b = ProgramBuilder("same_tile", "aiv", ["z"])
    b.vdup("f16", 0, 1.0, repeat=8)
    b.set_flag("V", "MTE3", 0)
    b.wait_flag("V", "MTE3", 0)
    b.copy_ub_to_gm(b.reg("z"), 0, 2048)
    prog = b.build()
    gm = GlobalMemory()
    z = gm.alloc(2048)
    with pytest.raises(RaceError, match=r"race on GM.*copy_ub_to_gm \(MTE3, core aiv\d.*overwrites what copy_ub_to_gm"):
        launch(prog, block_dim=4, args=dict(z=z), gm=gm, exact=False)


def test_fast_path_checks_local_accesses_on_representatives_only(monkeypatch):
    import simulator.timing as timing
    made = []
    real = timing.HazardChecker
    monkeypatch.setattr(timing, "HazardChecker", lambda *a: made.append(real(*a)) or made[-1])
    gm = GlobalMemory()
    launch(build_vector_add("f16", 1024, 2), block_dim=16, args=_add(gm, 40, 1024), gm=gm)
    # 40 tiles on 16 cores: cores 0-7 take 3, cores 8-15 take 2: two classes, two cores' UB shadows
    assert {ci for ci, _ in made[-1].local} == {0, 8}
    launch(build_vector_add("f16", 1024, 2), block_dim=16, args=_add(gm, 40, 1024), gm=gm, exact=True)
    assert {ci for ci, _ in made[-1].local} == set(range(16))
