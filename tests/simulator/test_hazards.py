"""Hazard checker: races, deadlocks, event-id limits, cross-core ordering."""
import numpy as np
import pytest

from simulator import (DeadlockError, GlobalMemory, MixProgram, ProgramBuilder, RaceError, SyncError, launch)
from simulator.examples.vector_add import build_vector_add


def _add_args(gm, n_tiles, tile=1024):
    x = gm.put(np.ones(n_tiles * tile, np.float16))
    y = gm.put(np.ones(n_tiles * tile, np.float16))
    z = gm.alloc(n_tiles * tile * 2)
    return dict(x=x, y=y, z=z, n_tiles=n_tiles)


def test_correct_double_buffered_kernel_is_race_free():
    gm = GlobalMemory()
    res = launch(build_vector_add("f16", 1024, 2), block_dim=2, args=_add_args(gm, 6), gm=gm)
    assert res.stats.hazards_checked


def test_missing_wait_flag_is_a_race():
    gm = GlobalMemory()
    prog = build_vector_add("f16", 1024, 2, drop_wait="MTE2->V")
    with pytest.raises(RaceError, match=r"race on UB\[0x0000, 0x0800\) of core aiv0: vadd \(V, core aiv0, pc \d+\) "
                                        r"reads what copy_gm_to_ub \(MTE2, core aiv0, pc \d+\) writes"):
        launch(prog, block_dim=1, args=_add_args(gm, 2), gm=gm)


def test_missing_war_wait_is_a_race():
    gm = GlobalMemory()
    prog = build_vector_add("f16", 1024, 1, drop_wait="V->MTE2")
    # the next tile's load overtakes the add: reported at whichever access runs second in time
    with pytest.raises(RaceError, match=r"race on UB\[.*(vadd \(V.*copy_gm_to_ub \(MTE2|copy_gm_to_ub \(MTE2.*vadd \(V)"):
        launch(prog, block_dim=1, args=_add_args(gm, 3), gm=gm)


def test_hazard_check_can_be_disabled_and_says_so():
    def run(check):
        gm = GlobalMemory()
        d = gm.alloc(256)
        b = ProgramBuilder("t", "aiv", ["d"])
        b.vdup("f16", 0, 1.0)
        b.copy_ub_to_gm(b.reg("d"), 0, 256)     # no V->MTE3 flag
        return launch(b.build(), block_dim=1, args=dict(d=d), gm=gm, check_hazards=check)
    with pytest.raises(RaceError, match=r"copy_ub_to_gm \(MTE3, core aiv0, pc 1\) reads what vdup \(V"):
        run(True)
    res = run(False)
    assert not res.stats.hazards_checked
    assert "OFF" in res.summary_table()


def test_wait_without_set_is_a_deadlock():
    b = ProgramBuilder("t", "aiv", [])
    b.wait_flag("MTE2", "V", 3)
    b.vdup("f16", 0, 1.0)
    with pytest.raises(DeadlockError, match=r"core aiv0 V: wait_flag \(pc 0\) waits for set_flag MTE2->V event 3"):
        launch(b.build(), block_dim=1, args={}, gm=GlobalMemory())


def test_nine_outstanding_events_on_one_pipe_pair():
    b = ProgramBuilder("t", "aiv", [])
    for e in range(9):
        b.set_flag("MTE2", "V", e)
    for e in range(9):
        b.wait_flag("MTE2", "V", e)
    with pytest.raises(SyncError, match=r"set_flag \(pc 8\): event id 8 on MTE2->V exceeds the 8 event ids"):
        launch(b.build(), block_dim=1, args={}, gm=GlobalMemory())


def test_double_set_before_wait_is_an_error():
    b = ProgramBuilder("t", "aiv", [])
    b.set_flag("MTE2", "V", 0)
    b.set_flag("MTE2", "V", 0)
    b.wait_flag("MTE2", "V", 0)
    b.wait_flag("MTE2", "V", 0)
    with pytest.raises(SyncError, match="has not been waited for"):
        launch(b.build(), block_dim=1, args={}, gm=GlobalMemory())


def test_pipe_barrier_all_orders_everything():
    gm = GlobalMemory()
    src, dst = gm.put(np.arange(128, dtype=np.float16)), gm.alloc(256)
    b = ProgramBuilder("t", "aiv", ["s", "d"])
    b.copy_gm_to_ub(0, b.reg("s"), 256)
    b.pipe_barrier("ALL")
    b.vadds("f16", 256, 0, 1.0)
    b.pipe_barrier("ALL")
    b.copy_ub_to_gm(b.reg("d"), 256, 256)
    launch(b.build(), block_dim=1, args=dict(s=src, d=dst), gm=gm)
    np.testing.assert_array_equal(gm.read(dst, np.float16, (128,)), np.arange(128, dtype=np.float16) + 1)


def test_same_pipe_program_order_is_ordering():
    b = ProgramBuilder("t", "aiv", [])
    b.vdup("f16", 0, 1.0)
    b.vadds("f16", 256, 0, 1.0)   # RAW on V -> V: ordered by the in-order pipe
    launch(b.build(), block_dim=1, args={}, gm=GlobalMemory())


def _cross_core(with_wait: bool):
    gm = GlobalMemory()
    buf = gm.put(np.zeros(256, np.float16))
    aic = ProgramBuilder("mix_aic", "aic", ["buf"])
    aic.copy_gm_to_l1(0, aic.reg("buf"), 512)
    aic.cross_set("MTE2", 1)
    aiv = ProgramBuilder("mix_aiv", "aiv", ["buf"])
    if with_wait:
        aiv.cross_wait(1)
    aiv.vdup("f16", 0, 2.0)
    aiv.set_flag("V", "MTE3", 0)
    aiv.wait_flag("V", "MTE3", 0)
    aiv.copy_ub_to_gm(aiv.reg("buf") + aiv.reg("subblock_idx") * 256, 0, 256)  # overwrites what the AIC read
    prog = MixProgram("mix", ["buf"], aic.build(), aiv.build())
    return launch(prog, block_dim=1, args=dict(buf=buf), gm=gm)


def test_cross_core_flag_orders_gm_accesses():
    res = _cross_core(True)
    assert len(res.flows) >= 2 + 2  # two cross-core arrows and two V->MTE3 arrows


def test_cross_core_missing_wait_is_a_race():
    with pytest.raises(RaceError, match=r"race on GM.*copy_ub_to_gm \(MTE3, core aiv\d.*overwrites what copy_gm_to_l1 "
                                        r"\(MTE2, core aic0"):
        _cross_core(False)


def test_cross_wait_never_set_is_a_deadlock():
    b = ProgramBuilder("t", "aiv", [])
    b.cross_wait(2)
    with pytest.raises(DeadlockError, match="cross-core flag 2, which no core sets"):
        launch(b.build(), block_dim=1, args={}, gm=GlobalMemory())
