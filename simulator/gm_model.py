"""Global-memory timing: the PTO per-transfer curve, 512-B line granularity, L2 residency, shared DDR.

A DMA of B bytes touching `lines` distinct 512-B GM lines (ASCENDC: 512-B alignment runs fastest, so the
memory side moves whole lines; a misaligned or small-burst transfer pays for the lines it touches):

    curve  = (dma_half_bytes + lines*512) / dma_peak_bpc            # PTO fit, in cycles at the chip clock
    port   = misses*512 / ddr_share + hits*512 / l2_read_bpc         # reads  (CANN-INI ddr_rate, l2_rate)
           = lines*512 / min(l2_write_bpc, ddr_share)                # writes (drain to DDR eventually)
    end    = max(start + curve, port_start + port)

`ddr_share = ddr_bpc_per_core * aic_cores / active_cores` (chip DDR bandwidth split evenly between the
cores of the launch: the documented simplification of dynamic sharing). `port` is serialized per core
across its GM clients (MTE2, MTE3, FIX), so one core never exceeds its share. L2: a line becomes resident
on first touch in a launch (issue order is global time order, see launch.py); when the resident set
exceeds the L2 size the model flushes it (crude, documented).
"""
from __future__ import annotations

import numpy as np


class GmModel:
    def __init__(self, chip, active_cores: int, gm_size: int):
        self.chip = chip
        self.line = chip.gm_line_bytes
        self.resident = np.zeros(gm_size // self.line + 2, dtype=bool)
        self.n_resident = 0
        self.l2_lines = chip.l2_bytes // self.line
        self.ddr_share = chip.ddr_bpc_chip / max(1, active_cores)
        self.peak = chip.dma_peak_bpc
        self.ddr_bytes = 0
        self.l2_hit_bytes = 0
        self.gm_bytes = 0

    def lines(self, starts: np.ndarray, length: int) -> np.ndarray:
        lo = starts // self.line
        hi = (starts + (length - 1)) // self.line
        if len(starts) == 1:
            return np.arange(lo[0], hi[0] + 1)
        span = int((hi - lo).max()) + 1
        idx = lo[:, None] + np.arange(span)
        idx = idx[idx <= hi[:, None]]
        return np.unique(idx)

    def transfer(self, starts, length: int, write: bool, port_free: float, start: float,
                 path_cap_bpc: float | None = None) -> tuple[float, float]:
        """Return (end time, new port_free) of one DMA starting at `start`."""
        lines = self.lines(starts, length)
        nl = len(lines)
        nbytes = nl * self.line
        self.gm_bytes += len(starts) * length
        curve = (self.chip.dma_half_bytes + nbytes) / self.peak
        if path_cap_bpc:
            curve = max(curve, len(starts) * length / path_cap_bpc)
        res = self.resident[lines]
        if write:
            port = nbytes / min(self.chip.l2_write_bpc, self.ddr_share)
            self.ddr_bytes += nbytes
            new = nl - int(res.sum())
        else:
            hits = int(res.sum())
            new = nl - hits
            port = new * self.line / self.ddr_share + hits * self.line / self.chip.l2_read_bpc
            self.ddr_bytes += new * self.line
            self.l2_hit_bytes += hits * self.line
        if new:
            if self.n_resident + new > self.l2_lines:
                self.resident[:] = False
                self.n_resident = 0
            self.resident[lines] = True
            self.n_resident += new
        port_start = max(start, port_free)
        port_end = port_start + port
        return max(start + curve, port_end), port_end
