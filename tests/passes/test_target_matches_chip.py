"""The passes' target specs (graph_passes/target.py) restate the simulator presets' figures they need, since
graph_passes may not import the simulator: every restated figure must equal the preset's, for every chip."""

from __future__ import annotations

import pytest

from graph_passes.target import TARGETS
from simulator.presets import PRESETS


def test_the_same_chips():
    assert set(TARGETS) == set(PRESETS)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_target_spec_restates_the_preset(name):
    target, chip = TARGETS[name], PRESETS[name]
    for field in ("aic_cores", "aiv_cores", "coupled", "ub_bytes", "l1_bytes", "l0a_bytes", "l0b_bytes", "l0c_bytes"):
        assert getattr(target, field) == getattr(chip, field), field
    assert target.vector_bytes_per_repeat == chip.vector_repeat_bytes
    assert dict(target.vector_repeat_cycles) == chip.vector.per_repeat
    assert target.vector_startup_cycles == chip.vector.startup
    assert target.ddr_bytes_per_cycle_per_core == chip.ddr_bpc_per_core
    assert target.ddr_bytes_per_cycle == chip.ddr_bpc_chip
    assert target.ub_to_gm_bytes_per_cycle == chip.ub_to_gm_bpc
    assert target.gm_port_read_bytes_per_cycle == chip.l2_read_bpc
    assert target.dma_peak_gib_s == chip.dma_peak_gib_s
    assert target.dma_half_bytes == chip.dma_half_bytes
    assert target.clock_mhz == chip.clock_mhz


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_cube_figures_restate_the_preset(name):
    target, chip = TARGETS[name], PRESETS[name]
    for dtype, cycles in target.cube_fractal_cycles:
        assert chip.cube_fractal[dtype][3] == cycles, dtype
    assert target.l1_to_l0a_bytes_per_cycle == chip.l1_to_l0a_bpc
    assert target.l1_to_l0b_bytes_per_cycle == chip.l1_to_l0b_bpc
    assert target.l0c_to_gm_bytes_per_cycle == chip.l0c_to_gm_bpc
    assert target.dma_fixed_gm_to_l1_cycles == chip.dma_fixed_cycles["GM->L1"]
    assert target.dma_fixed_l0c_to_gm_cycles == chip.dma_fixed_cycles["L0C->GM"]
    assert target.launch_cycles == chip.launch_cycles
    assert target.dma_fixed_gm_to_ub_cycles == chip.dma_fixed_cycles["GM->UB"]
    assert target.dma_fixed_ub_to_gm_cycles == chip.dma_fixed_cycles["UB->GM"]
