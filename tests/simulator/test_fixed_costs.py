"""Fixed costs (HARDWARE.md "Fixed costs"): launch overhead before the cores start, a fixed cost per DMA path
plus the bytes at their streaming rate, the cross-core flag hand-off; `fixed_costs=False` keeps the former timing."""
import json

import numpy as np
import pytest

from simulator import GlobalMemory, MixProgram, ProgramBuilder, get_chip, launch
from simulator.examples import run_vector_add
from helpers import event_cycles

CHIP = get_chip("ascend910b1")
OFF = CHIP.without_fixed_costs()


def _one_dma(emit, mnemonic, core_type="aiv", chip=CHIP):
    gm = GlobalMemory()
    b = ProgramBuilder("dma", core_type, [])
    emit(b, gm)
    res = launch(b.build(), chip=chip, block_dim=1, args={}, gm=gm)
    return event_cycles(res, mnemonic)[-1], res


@pytest.mark.parametrize("nbytes", [512, 4096, 32 * 1024])
def test_gm_to_ub_costs_fixed_plus_bytes_at_peak(nbytes):
    cyc, _ = _one_dma(lambda b, gm: b.copy_gm_to_ub(0, gm.alloc(nbytes), nbytes), "copy_gm_to_ub")
    assert cyc == pytest.approx(CHIP.dma_fixed_cycles["GM->UB"] + nbytes / CHIP.dma_peak_bpc)


def test_gm_to_l1_costs_its_own_fixed_cost():
    n = 8192
    cyc, _ = _one_dma(lambda b, gm: b.copy_gm_to_l1(0, gm.alloc(n), n), "copy_gm_to_l1", "aic")
    assert cyc == pytest.approx(67 + n / CHIP.dma_peak_bpc)


def test_ub_to_gm_costs_fixed_plus_bytes_at_the_path_rate():
    n = 8192
    cyc, _ = _one_dma(lambda b, gm: b.copy_ub_to_gm(gm.alloc(n), 0, n), "copy_ub_to_gm")
    assert cyc == pytest.approx(107 + n / CHIP.ub_to_gm_bpc)


def test_fixpipe_costs_fixed_plus_bytes_at_the_fixpipe_rate():
    def emit(b, gm):
        b.mmad(0, 0, 0, 16, 16, 16, "f16")
        b.set_flag("M", "FIX", 0)
        b.wait_flag("M", "FIX", 0)
        b.fixpipe(gm.alloc(16 * 16 * 4), 0, 16, 16, 16 * 4, src_dtype="f32", dst_dtype="f32")
    cyc, _ = _one_dma(emit, "fixpipe", "aic")
    assert cyc == pytest.approx(1216 + 16 * 16 * 4 / CHIP.l0c_to_gm_bpc)


@pytest.mark.parametrize("nbytes", [4096, 64 * 1024])
def test_without_fixed_costs_the_former_curve_is_charged(nbytes):
    cyc, _ = _one_dma(lambda b, gm: b.copy_gm_to_ub(0, gm.alloc(nbytes), nbytes), "copy_gm_to_ub", chip=OFF)
    assert cyc == pytest.approx((OFF.dma_half_bytes + nbytes) / OFF.dma_peak_bpc)


def test_launch_overhead_is_its_own_total_and_trace_slice(tmp_path):
    x = np.ones(16384 * 4, np.float16)
    _, on = run_vector_add(x, x, chip=CHIP, block_dim=4)
    _, off = run_vector_add(x, x, chip=OFF, block_dim=4)
    s = on.stats
    assert s.launch_cycles == 10905 and s.launch_us == pytest.approx(10905 / 1850)
    assert s.total_cycles == s.launch_cycles + s.cycles and s.total_us == pytest.approx(s.us + s.launch_us)
    assert s.efficiency == pytest.approx(s.roofline_cycles / s.cycles)  # the body against its roofline
    assert off.stats.launch_cycles == 0 and off.stats.total_cycles == off.stats.cycles
    assert "launch overhead (us)" in on.summary_table()
    on.write_trace(tmp_path / "t.json")
    ev = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    (slice_,) = [e for e in ev if e.get("ph") == "X" and e["name"] == "launch"]
    assert slice_["ts"] == 0 and slice_["dur"] == pytest.approx(10905 / 1850)
    first = min(e["ts"] for e in ev if e.get("ph") == "X" and e["name"] != "launch")
    assert first >= slice_["dur"]  # the cores start after the launch
    assert not any(e.get("name") == "launch" for e in off.trace_events())


def _handoff(chip):
    gm = GlobalMemory()
    aic = ProgramBuilder("mix_aic", "aic", [])
    aic.cross_set("M", 1)
    aiv = ProgramBuilder("mix_aiv", "aiv", [])
    aiv.cross_wait(1)
    aiv.vdup("f16", 0, 2.0)
    res = launch(MixProgram("mix", [], aic.build(), aiv.build()), chip=chip, block_dim=1, args={}, gm=gm)
    return min(t for _, _, m, t, _, _ in res.events if m == "vdup"), res


def test_cross_core_flag_costs_its_hand_off():
    t_on, res = _handoff(CHIP)
    t_off, _ = _handoff(OFF)
    assert t_on - t_off == pytest.approx(CHIP.cross_core_flag_cycles) and CHIP.cross_core_flag_cycles == 1000
    assert res.stats.launch_cycles == CHIP.launch_cycles  # a mix launch pays the launch once
