"""Chip presets: every number the simulator uses, each citing its source tag from HARDWARE.md.

Tags: CANN-INI (hicann/runtime platform .ini), NPUSPEC (AscendNPU-IR NPUTargetSpec.td), ASCENDC (Ascend C
guide), PTO (pto-isa cost model and its tests), HC31 (Hot Chips 31), ANIR-PM (AscendNPU-IR PlanMemory /
InjectSync), CATLASS (hicann/catlass docs). "derived" = arithmetic on cited numbers. "model" = a modelling
assumption with no published figure; those are few and each says so.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

KIB = 1024
MIB = 1024 * 1024


@dataclass(frozen=True)
class VectorCosts:
    """Vector cost: cycles = startup (only when the V pipe was idle) + repeats * per_repeat[class]."""

    # Note: the 4 vector calibration rows (PTO tests) fit slope 2 cycles/repeat with a mean residual of
    # 30.5 cycles (add f32 64 rep: 160, add f16 32 rep: 92, exp f16 32 rep: 95, exp f16 8 rep: 47). PTO's
    # own model is head + slope*repeat + tail (cce_costmodel_core.hpp: EstimateLinearCycles, vconv head 14 +
    # tail 18 = 32). HARDWARE.md's "start-up a few to ~20" counts the head only; we charge head + tail = 30.
    startup: int = 30  # PTO (calibration rows, head + tail)
    per_repeat: dict = field(default_factory=lambda: {  # cycles per repeat by class (ASCENDC, PTO)
        "scalar": 1,   # ASCENDC, PTO: vector-scalar ops ~1 cycle/repeat; also vdup/vbrcb/copy/abs/relu/neg
        "binary": 2,   # ASCENDC, PTO: vector-vector binary ~2 (also compare, select, transpose per 256 B)
        # Note: HARDWARE.md's summary says exp/ln/sqrt 4 (fp16) / 2 (fp32), but the PTO calibration rows for
        # fp16 exp (32 rep -> 95, 8 rep -> 47) give a slope of exactly 2; we keep the measured rows.
        "transcendental": 2,  # PTO (calibration rows): exp, ln, sqrt, rsqrt, rec
        "div_f16": 8,  # ASCENDC, PTO
        "div_f32": 4,  # ASCENDC, PTO
        "cast": 2,     # ASCENDC, PTO: f16->f32 cast 2 (used for every cast; PTO vconv slope is 2)
        "reduce": 7,   # ASCENDC, PTO: reductions ~7
        # PTO cce_costmodel_vector_compute.hpp: vcgadd (head 14, slope 1, tail 24), vcgmax/vcgmin (14, 1, 17)
        "block_reduce": 1,
    })


@dataclass(frozen=True)
class ChipSpec:
    """One chip. Sizes in bytes, rates in bytes per cycle per core unless noted."""

    name: str                     # CANN-INI SoC_version, lower-cased
    coupled: bool                 # CANN-INI cube_vector_combine (910B: split; 910A: one AICore holds all)
    aic_cores: int                # CANN-INI cube_core_cnt / ai_core_cnt
    aiv_cores: int                # CANN-INI vector_core_cnt (0 when coupled)
    clock_mhz: int                # CANN-INI cube_freq
    ub_bytes: int                 # CANN-INI ub_size, NPUSPEC
    l1_bytes: int                 # CANN-INI l1_size, NPUSPEC
    l0a_bytes: int                # CANN-INI l0_a_size
    l0b_bytes: int                # CANN-INI l0_b_size
    l0c_bytes: int                # CANN-INI l0_c_size
    l2_bytes: int                 # CANN-INI l2_size
    gm_bytes: int                 # CANN-INI memory_size (host-side allocation limit)
    # Note: NPUSPEC/ANIR-PM align L0A/L0B/L0C to 512 B; the Ascend C API says 64 B. We follow the compiler
    # spec (512 B) because the simulator runs what our AscendNPU-IR-like compiler emits.
    align: dict = field(default_factory=lambda: {  # NPUSPEC, ANIR-PM; GM: DMA takes any byte address
        "UB": 32, "L1": 32, "L0A": 512, "L0B": 512, "L0C": 512, "GM": 1})
    # --- cube -----------------------------------------------------------------------------------------
    cube_head: int = 6            # HC31, PTO: ~6 cycles head latency when the cube queue was idle
    # (m0, k0, n0, cycles) per input dtype: one fractal per `cycles`.  HC31, CANN-INI [DtypeMKN], PTO
    cube_fractal: dict = field(default_factory=lambda: {  # HC31, CANN-INI [DtypeMKN], PTO
        "f16": (16, 16, 16, 1), "bf16": (16, 16, 16, 1), "i8": (16, 32, 16, 1), "f32": (16, 8, 16, 2)})
    # --- vector ---------------------------------------------------------------------------------------
    vector: VectorCosts = field(default_factory=VectorCosts)  # ASCENDC, PTO (see VectorCosts)
    vector_repeat_bytes: int = 256   # ASCENDC, CANN-INI vec_calc_size=128 fp16 lanes
    max_repeat: int = 255            # ASCENDC
    # --- data paths -----------------------------------------------------------------------------------
    # Note: CANN-INI gives L1->L0A 512 and L1->L0B 256 B/cycle; PTO's fitted table gives half of that. We
    # take CANN-INI (the vendor's platform description) and note PTO's fit may include issue overheads.
    l1_to_l0a_bpc: int = 512         # CANN-INI l1_to_l0_a_rate
    l1_to_l0b_bpc: int = 256         # CANN-INI l1_to_l0_b_rate
    l0c_to_gm_bpc: int = 40          # CANN-INI, PTO (HARDWARE.md: FixPipe L0C->GM ~40 B/cycle)
    l0c_to_ub_bpc: int = 256         # CANN-INI l0_c_to_ub_rate (coupled chips only)
    ub_to_gm_bpc: int = 64           # CANN-INI ub_to_ddr_rate (HARDWARE.md: 64-109; we take the INI figure)
    # GM transfer curve (PTO fit on a real 910B3): bw(B) = peak * B / (half + B), i.e. a transfer of B bytes
    # takes (half + B) / peak = half / peak + B / peak: a fixed cost plus the bytes at peak. Converted to
    # cycles at this chip's clock. With fixed costs on, the fixed part is `dma_fixed_cycles` (per path) and
    # `dma_half_bytes` is unused; with them off the whole curve (half + B) / peak is charged, as before.
    dma_peak_gib_s: float = 247.0    # PTO
    dma_half_bytes: int = int(30.6 * KIB)  # PTO ("30.6 KB", taken as KiB); fixed_costs=False only
    # --- fixed costs (HARDWARE.md "Fixed costs") ------------------------------------------------------
    # Per-DMA fixed cost implied by PTO's fits, time = K / peak + B / peak (arch_config.hpp, 910B3), in
    # cycles as HARDWARE.md gives them (GM->UB: 30.6 KB / 143.4 B/cycle = 214). No source publishes a DMA
    # latency directly; the same cycles are used on every preset. A transfer costs fixed + B / rate, rate
    # the path's streaming rate (GM->UB/L1: dma_peak; UB->GM: ub_to_gm_bpc; L0C->GM: l0c_to_gm_bpc).
    dma_fixed_cycles: dict = field(default_factory=lambda: {  # PTO arch_config.hpp fit (HARDWARE.md)
        "GM->UB": 214, "GM->L1": 67, "UB->GM": 107, "L0C->GM": 1216})
    # Note: the sources disagree on the launch overhead. CATLASS's bottleneck analysis gives a ~20-21 us head
    # overhead for a full-core launch on A2 (~37,000-38,850 cycles at 1850 MHz); PTO's FlashAttention cost
    # model charges 10,905 cycles (~5.9 us at 1850 MHz). We take PTO's: a cycle figure from the same cost
    # model the instruction costs are calibrated against, and the smaller one (it cannot overstate what
    # fusion saves). A mix launch (AIC + AIV groups) is one launch and pays it once.
    launch_cycles: int = 10905       # PTO fa_cost_model.py launch overhead
    # Note: PTO's FlashAttention model charges 220 cycles per tile-to-tile sync in its simulator and corrects
    # it to ~1,000 on board; the simulator models the board: a cross-core flag reaches the waiting core
    # this many cycles after its set.
    cross_core_flag_cycles: int = 1000  # PTO fa_cost_model.py onboard correction
    # model switch: False drops the launch, per-DMA fixed and hand-off costs and charges the GM curve as
    # (half + B) / peak; it reproduces the cycles of the simulator without fixed costs, for before/after
    # tables only (`without_fixed_costs()`).
    fixed_costs: bool = True        # model switch (see the note above)
    gm_line_bytes: int = 512         # ASCENDC: GM addresses aligned to 512 B run fastest (L2 line)
    ddr_bpc_per_core: int = 32       # CANN-INI ddr_rate (per AI core; chip DDR bw = this * aic_cores)
    l2_read_bpc: int = 110           # CANN-INI l2_read_rate
    l2_write_bpc: int = 86           # CANN-INI l2_write_rate
    # --- sync -----------------------------------------------------------------------------------------
    event_ids: int = 8               # ASCENDC, ANIR-PM: 8 event ids per src->dst pipe pair
    cross_core_flag_ids: int = 11    # ASCENDC: flag ids 0-10 (AscendNPU-IR reserves 16, 14/15 internal)
    # --- scalar unit ----------------------------------------------------------------------------------
    # model: no source gives scalar costs; we assume an in-order scalar unit retiring one scalar op or one
    # issue per cycle, and two cycles of loop control (increment + compare-and-branch) per iteration.
    scalar_op_cycles: int = 1        # model
    issue_cycles: int = 1            # model
    loop_iter_cycles: int = 2        # model

    # ---- derived -----------------------------------------------------------------------------------
    @property
    def dma_peak_bpc(self) -> float:
        """PTO peak (GiB/s) in bytes per cycle at this clock (derived)."""
        return self.dma_peak_gib_s * (1 << 30) / (self.clock_mhz * 1e6)

    @property
    def launch_overhead_cycles(self) -> int:
        """Cycles charged before the cores start, per launch (0 without fixed costs)."""
        return self.launch_cycles if self.fixed_costs else 0

    @property
    def cross_core_handoff_cycles(self) -> int:
        """Cycles from a cross-core set to its flag being visible to the waiting core (0 without fixed costs)."""
        return self.cross_core_flag_cycles if self.fixed_costs else 0

    def without_fixed_costs(self) -> "ChipSpec":
        """This chip with fixed costs off (the before column of the benchmarks' before/after tables)."""
        return replace(self, fixed_costs=False)

    @property
    def ddr_bpc_chip(self) -> int:
        """Chip DDR bandwidth in B/cycle: ddr_rate x AI cores (derived; 1.42 TB/s on 910B1)."""
        return self.ddr_bpc_per_core * self.aic_cores

    @property
    def l2_bpc_chip(self) -> int:
        """Chip L2 read bandwidth in B/cycle: l2_read_rate x AI cores (derived)."""
        return self.l2_read_bpc * self.aic_cores

    def peak_macs_per_cycle(self, dtype: str) -> float:
        """MACs per cycle per cube core (derived from cube_fractal)."""
        m0, k0, n0, cyc = self.cube_fractal[dtype]
        return m0 * k0 * n0 / cyc

    @property
    def peak_f16_tflops(self) -> float:
        """cores x 4096 MAC x 2 x clock (derived; 363.7 on 910B1)."""
        return self.aic_cores * self.peak_macs_per_cycle("f16") * 2 * self.clock_mhz * 1e6 / 1e12

    def capacity(self, scope: str) -> int:
        return {"UB": self.ub_bytes, "L1": self.l1_bytes, "L0A": self.l0a_bytes, "L0B": self.l0b_bytes,
                "L0C": self.l0c_bytes}[scope]


ASCEND910B1 = ChipSpec(
    name="ascend910b1", coupled=False,
    aic_cores=24, aiv_cores=48,      # CANN-INI Ascend910B1.ini cube_core_cnt/vector_core_cnt, NPUSPEC
    clock_mhz=1850,                  # CANN-INI cube_freq
    ub_bytes=192 * KIB, l1_bytes=512 * KIB, l0a_bytes=64 * KIB, l0b_bytes=64 * KIB,  # CANN-INI, NPUSPEC
    l0c_bytes=128 * KIB,             # CANN-INI, NPUSPEC
    l2_bytes=192 * MIB,              # CANN-INI l2_size
    gm_bytes=64 * 1024 * MIB,        # CANN-INI memory_size
)

ASCEND910B4 = ChipSpec(
    name="ascend910b4", coupled=False,
    aic_cores=20, aiv_cores=40,      # CANN-INI Ascend910B4.ini
    clock_mhz=1500,                  # CANN-INI cube_freq
    ub_bytes=192 * KIB, l1_bytes=512 * KIB, l0a_bytes=64 * KIB, l0b_bytes=64 * KIB,  # CANN-INI, NPUSPEC
    l0c_bytes=128 * KIB,             # CANN-INI
    l2_bytes=96 * MIB,               # CANN-INI l2_size
    gm_bytes=32 * 1024 * MIB,        # CANN-INI memory_size
)

ASCEND910A = ChipSpec(
    name="ascend910a", coupled=True,
    aic_cores=32, aiv_cores=0,       # CANN-INI Ascend910A.ini ai_core_cnt=32, vector_core_cnt=0 (coupled)
    clock_mhz=1000,                  # CANN-INI cube_freq
    ub_bytes=256 * KIB, l1_bytes=1024 * KIB, l0a_bytes=64 * KIB, l0b_bytes=64 * KIB,  # CANN-INI, NPUSPEC
    l0c_bytes=256 * KIB,             # CANN-INI
    l2_bytes=32 * MIB,               # CANN-INI l2_size
    gm_bytes=32 * 1024 * MIB,        # model: the 910A ini leaves memory_size empty; 32 GiB HBM per HC31
)

PRESETS = {c.name: c for c in (ASCEND910B1, ASCEND910B4, ASCEND910A)}


def get_chip(name: "str | ChipSpec" = "ascend910b1") -> ChipSpec:
    """Return a preset by name (or pass a ChipSpec through)."""
    if isinstance(name, ChipSpec):
        return name
    try:
        return PRESETS[name.lower()]
    except KeyError:
        raise KeyError(f"unknown chip {name!r}; presets: {sorted(PRESETS)}") from None
