"""Device specs the passes read (after AscendNPU-IR's ``hacc-append-device-spec``).

A module names its chip in the ``target`` attribute; passes ask :func:`target_spec` for capacities, alignments and
core counts. This table is the compiler's view of the chip (as ``NPUTargetSpec.td`` is AscendNPU-IR's); the
simulator keeps its own presets with the same cited numbers, and neither package imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass

KIB = 1024


@dataclass(frozen=True)
class TargetSpec:
    name: str
    aic_cores: int  # cube cores                                                   [CANN-INI, NPUSPEC]
    aiv_cores: int  # vector cores (0 on coupled chips: vector work runs on the AI cores) [CANN-INI]
    coupled: bool  # one core holds Cube, Vector, UB, L1, L0 (910A)                 [CANN-INI, HC31]
    ub_bytes: int  # unified buffer per vector core                              [CANN-INI, NPUSPEC]
    l1_bytes: int  # L1 per cube core                                            [CANN-INI, NPUSPEC]
    l0a_bytes: int  # [CANN-INI, NPUSPEC]
    l0b_bytes: int  # [CANN-INI, NPUSPEC]
    l0c_bytes: int  # [CANN-INI, NPUSPEC]
    ub_align: int = 32  # bytes; compiler spec alignment (Ascend C's API says 64 B)   [NPUSPEC, ANIR-PM]
    l1_align: int = 32  # [NPUSPEC, ANIR-PM]
    l0_align: int = 512  # L0A/L0B/L0C                                               [NPUSPEC, ANIR-PM]
    event_ids_per_pipe_pair: int = 8  # set/wait flag ids per src→dst pipe pair on A2/A3  [ASCENDC, ANIR-PM]
    vector_bytes_per_repeat: int = 256  # one vector repeat covers 256 B             [ASCENDC]
    max_repeats: int = 255  # per vector instruction                                 [ASCENDC]
    # The schedule's estimates (graph_passes/schedule/cost.py), the same cited figures the simulator's presets use:
    # cycles per vector repeat by instruction class and the start-up (head + tail) a dependent vector instruction
    # pays after a pipe_barrier; DDR bandwidth per AI core (chip: x aic_cores) and the UB -> GM rate.
    vector_repeat_cycles: tuple = (("scalar", 1), ("binary", 2), ("transcendental", 2), ("div_f16", 8),
                                   ("div_f32", 4), ("cast", 2), ("reduce", 7),
                                   ("block_reduce", 1))  # [ASCENDC, PTO]
    vector_startup_cycles: int = 30  # [PTO: calibration rows, head + tail]
    ddr_bytes_per_cycle_per_core: int = 32  # [CANN-INI ddr_rate]
    ub_to_gm_bytes_per_cycle: int = 64  # [CANN-INI ub_to_ddr_rate]
    # A core's GM port and the per-transfer curve (fuse-ops weighs one-core kernels with them): reads through one
    # core's port at l2_read_rate; a GM transfer of B bytes takes (half + B) / peak (PTO's fit on a 910B3).
    gm_port_read_bytes_per_cycle: int = 110  # [CANN-INI l2_read_rate]
    dma_peak_gib_s: float = 247.0  # [PTO]
    dma_half_bytes: int = int(30.6 * KIB)  # [PTO]
    clock_mhz: int = 1850  # [CANN-INI cube_freq]
    # The cube schedule's estimates (graph_passes/schedule/cube.py), the simulator presets' cited figures: cycles per
    # 16 x k0 x 16 fractal by input dtype, the MTE1 and FixPipe rates, the per-DMA fixed costs of GM->L1 and L0C->GM.
    cube_fractal_cycles: tuple = (("f16", 1), ("bf16", 1), ("f32", 2))  # [HC31, CANN-INI DtypeMKN, PTO]
    l1_to_l0a_bytes_per_cycle: int = 512  # [CANN-INI l1_to_l0_a_rate]
    l1_to_l0b_bytes_per_cycle: int = 256  # [CANN-INI l1_to_l0_b_rate]
    l0c_to_gm_bytes_per_cycle: int = 40  # [CANN-INI, PTO]
    dma_fixed_gm_to_l1_cycles: int = 67  # [PTO arch_config.hpp fit]
    dma_fixed_l0c_to_gm_cycles: int = 1216  # [PTO arch_config.hpp fit]
    # What a kernel more costs (hfusion-split-k weighs its reduction kernel with them): the launch overhead and the
    # per-DMA fixed costs of GM->UB and UB->GM.
    launch_cycles: int = 10905  # [PTO fa_cost_model.py; CATLASS gives ~20 us, HARDWARE.md]
    dma_fixed_gm_to_ub_cycles: int = 214  # [PTO arch_config.hpp fit]
    dma_fixed_ub_to_gm_cycles: int = 107  # [PTO arch_config.hpp fit]

    def cube_cycles_per_fractal(self, dtype: str) -> int:
        return dict(self.cube_fractal_cycles)[dtype]

    @property
    def vector_cores(self) -> int:
        """Cores that run vector kernels (AIV on split chips, the AI cores on coupled ones)."""
        return self.aic_cores if self.coupled else self.aiv_cores

    @property
    def ddr_bytes_per_cycle(self) -> int:
        """Chip DDR bandwidth in bytes per cycle (derived: ddr_rate x AI cores)."""
        return self.ddr_bytes_per_cycle_per_core * self.aic_cores

    @property
    def dma_latency_cycles(self) -> float:
        """The fixed part of one GM transfer, half / peak, in cycles at this chip's clock (derived)."""
        return self.dma_half_bytes / (self.dma_peak_gib_s * (1 << 30) / (self.clock_mhz * 1e6))

    def repeat_cycles(self, cls: str) -> int:
        return dict(self.vector_repeat_cycles)[cls]

    def capacity(self, scope: str) -> int:
        return {"ub": self.ub_bytes, "l1": self.l1_bytes, "l0a": self.l0a_bytes, "l0b": self.l0b_bytes,
                "l0c": self.l0c_bytes}[scope]  # fmt: skip

    def alignment(self, scope: str) -> int:
        return {"ub": self.ub_align, "l1": self.l1_align, "l0a": self.l0_align, "l0b": self.l0_align,
                "l0c": self.l0_align}[scope]  # fmt: skip


TARGETS = {
    "ascend910b1": TargetSpec("ascend910b1", 24, 48, False, 192 * KIB, 512 * KIB, 64 * KIB, 64 * KIB, 128 * KIB),
    "ascend910b4": TargetSpec("ascend910b4", 20, 40, False, 192 * KIB, 512 * KIB, 64 * KIB, 64 * KIB, 128 * KIB,
                              clock_mhz=1500),
    "ascend910a": TargetSpec("ascend910a", 32, 0, True, 256 * KIB, 1024 * KIB, 64 * KIB, 64 * KIB, 256 * KIB,
                             clock_mhz=1000),
}
DEFAULT_TARGET = "ascend910b1"


class UnknownTargetError(ValueError):
    """A chip name this table does not know; the message lists the known ones."""


def target_spec(name: str | None) -> TargetSpec:
    """The spec of chip ``name`` (the default chip when None); an unknown name is an :class:`UnknownTargetError`."""
    name = name or DEFAULT_TARGET
    if name not in TARGETS:
        raise UnknownTargetError(f"unknown target {name!r}; known targets: {', '.join(sorted(TARGETS))}")
    return TARGETS[name]


def module_target(module) -> TargetSpec:
    """The spec named by a module's ``target`` attribute; an unknown name is the module's ``VerifyError`` (with its
    location), as the verifier reports it."""
    try:
        return target_spec(module.attributes.get("target"))
    except UnknownTargetError as e:
        raise module.error(f"attribute 'target': {e}") from None
