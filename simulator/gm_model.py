"""Global-memory timing: the PTO per-transfer curve, L2 residency in 512-B lines, shared DDR bandwidth.

A DMA of n bursts of L bytes (each burst rounded up to whole 32-B granules, the DMA unit: `gbytes`),
touching `lines` distinct 512-B GM lines:

    curve  = (dma_half_bytes + gbytes) / dma_peak_bpc                 # PTO fit, cycles at the chip clock
    port   = new_lines*512 / ddr_share + hit_gbytes / l2_read_bpc      # reads  (CANN-INI ddr_rate, l2_rate)
           = gbytes / min(l2_write_bpc, ddr_share)                      # writes (drain to DDR eventually)
    end    = max(start + curve, port_start + port)

Alignment penalty (ASCENDC: GM addresses aligned to 512 B run fastest): a read that misses L2 fills whole
512-B lines from DDR, so misaligned or narrow bursts pay DDR bandwidth for bytes they do not use, and a
burst that is not a multiple of 32 B pays for its last partial granule. `ddr_share = ddr_bpc_per_core *
aic_cores / active_cores`: the chip DDR bandwidth split evenly between the cores of the launch (the
documented simplification of dynamic sharing). `port` is serialized per core across its GM clients (MTE2,
MTE3, FIX), so a core never exceeds its share. L2: a line becomes resident on first touch in a launch (in
global start order, see schedule.py); when the resident set would exceed the L2 size it is flushed (crude).
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
        n = len(starts)
        gran = starts // 32
        gbytes = int(((starts + length + 31) // 32 - gran).sum()) * 32
        self.gm_bytes += n * length
        curve = (self.chip.dma_half_bytes + gbytes) / self.peak
        if path_cap_bpc:
            curve = max(curve, n * length / path_cap_bpc)
        lines = self.lines(starts, length)
        nl = len(lines)
        res = self.resident[lines]
        hits = int(res.sum())
        new = nl - hits
        if write:
            port = gbytes / min(self.chip.l2_write_bpc, self.ddr_share)
            self.ddr_bytes += gbytes
        else:
            hit_bytes = gbytes * hits / nl
            port = new * self.line / self.ddr_share + hit_bytes / self.chip.l2_read_bpc
            self.ddr_bytes += new * self.line
            self.l2_hit_bytes += int(hit_bytes)
        if new:
            if self.n_resident + new > self.l2_lines:
                self.resident[:] = False
                self.n_resident = 0
                new = nl
            self.resident[lines] = True
            self.n_resident += new
        port_start = max(start, port_free)
        port_end = port_start + port
        return max(start + curve, port_end), port_end
