"""The functional-only executor (functional.py) and the timing job (timing_job.py): the executor's GM equals a full
simulation's byte for byte (vector, cube, register-computed DMA addresses, cross-core flags); its recording replays;
a timing job is the full simulation (same stats) and raises the launch's errors."""
import copy
import pickle

import numpy as np
import pytest

from simulator import DeadlockError, GlobalMemory, MixProgram, ProgramBuilder, RaceError, functional, get_chip, launch
from simulator.examples.gemm import build_gemm
from simulator.examples.vector_add import build_vector_add
from simulator.timing_job import FunctionalMismatch, TimingJob, digest, run, snapshot

from test_isa_register_dma import ROW, D, V, _gather_program


def _vector_add(gm, rng, n_tiles=12):
    x, y = (rng.standard_normal(n_tiles * 1024).astype(np.float16) for _ in range(2))
    return build_vector_add("f16", 1024, 2), 4, dict(x=gm.put(x), y=gm.put(y), z=gm.alloc(x.nbytes), n_tiles=n_tiles)


def _gemm(gm, rng):
    a = rng.standard_normal((256, 256)).astype(np.float16)
    b = rng.standard_normal((256, 512)).astype(np.float16)
    return build_gemm(), 4, dict(a=gm.put(a), b=gm.put(b), c=gm.alloc(256 * 512 * 4), M=256, N=512, K=256)


def _gather(gm, rng):
    table = rng.standard_normal((V, D)).astype(np.float32)
    index = rng.integers(0, V, 16).astype(np.int64)
    return _gather_program(16), 1, dict(table=gm.put(table), index=gm.put(index), out=gm.alloc(16 * ROW))


def _mix(gm, rng):
    buf = gm.put(rng.standard_normal(256).astype(np.float16))
    aic = ProgramBuilder("mix_aic", "aic", ["buf"])
    aic.copy_gm_to_l1(0, aic.reg("buf"), 512)
    aic.cross_set("MTE2", 1)
    aiv = ProgramBuilder("mix_aiv", "aiv", ["buf"])
    aiv.cross_wait(1)
    aiv.vdup("f16", 0, 2.0)
    aiv.set_flag("V", "MTE3", 0)
    aiv.wait_flag("V", "MTE3", 0)
    aiv.copy_ub_to_gm(aiv.reg("buf") + aiv.reg("subblock_idx") * 256, 0, 256)
    return MixProgram("mix", ["buf"], aic.build(), aiv.build()), 1, dict(buf=buf)


@pytest.mark.parametrize("build", [_vector_add, _gemm, _gather, _mix], ids=["vector_add", "gemm", "gather", "mix"])
def test_functional_execution_equals_full_simulation(build):
    rng = np.random.default_rng(0)
    gm = GlobalMemory()
    prog, block_dim, args = build(gm, rng)
    gm_full, gm_again = copy.deepcopy(gm), copy.deepcopy(gm)
    launch(prog, block_dim=block_dim, args=args, gm=gm_full)
    before = digest(gm)
    rec = functional.execute(prog, chip="ascend910b1", block_dim=block_dim, args=args, gm=gm, record=True)
    assert digest(gm) != before  # it wrote its outputs
    assert gm.data[:gm.top].tobytes() == gm_full.data[:gm_full.top].tobytes()
    rec.replay(gm_again)  # the functional run's recording replays to the same GM
    assert gm_again.data[:gm.top].tobytes() == gm_full.data[:gm.top].tobytes()


def test_functional_deadlock_names_the_blocked_instruction():
    b = ProgramBuilder("t", "aiv", [])
    b.wait_flag("MTE2", "V", 3)
    b.vdup("f16", 0, 1.0)
    with pytest.raises(DeadlockError, match=r"functional execution.*core aiv0 V: wait_flag \(pc 0\)"):
        functional.execute(b.build(), chip="ascend910b1", block_dim=1, args={}, gm=GlobalMemory())


def test_timing_job_is_the_full_simulation_and_pickles():
    rng = np.random.default_rng(1)
    gm = GlobalMemory()
    prog, block_dim, args = _vector_add(gm, rng)
    chip = get_chip("ascend910b1")
    job = pickle.loads(pickle.dumps(TimingJob(prog, chip, block_dim, args, snapshot(gm), True, False)))
    gm_full = copy.deepcopy(gm)
    want = launch(prog, chip=chip, block_dim=block_dim, args=args, gm=gm_full, trace=False)
    functional.execute(prog, chip=chip, block_dim=block_dim, args=args, gm=gm)
    out = run(job)
    assert out.result.stats.cycles == want.stats.cycles and out.result.stats.us == want.stats.us
    assert out.result.recording is None and out.gm_digest == digest(gm_full)
    out.check(digest(gm), prog.name)  # equal: no error
    with pytest.raises(FunctionalMismatch, match=r"vector_add.*differs from the full simulation's"):
        out.check("0" * 64, prog.name)


def test_timing_job_raises_the_race_the_launch_would():
    gm = GlobalMemory()
    d = gm.alloc(256)
    b = ProgramBuilder("t", "aiv", ["d"])
    b.vdup("f16", 0, 1.0)
    b.copy_ub_to_gm(b.reg("d"), 0, 256)  # no V->MTE3 flag
    prog = b.build()
    job = TimingJob(prog, get_chip("ascend910b1"), 1, dict(d=d), snapshot(gm))
    functional.execute(prog, chip="ascend910b1", block_dim=1, args=dict(d=d), gm=gm)  # runs: it checks nothing
    with pytest.raises(RaceError, match=r"copy_ub_to_gm \(MTE3, core aiv0, pc 1\) reads what vdup \(V"):
        run(job)
