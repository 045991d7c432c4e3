"""Global-memory timing: the PTO per-transfer curve (a fixed cost per path plus the bytes at peak), L2
residency in 512-B lines, chip-shared DDR bandwidth.

A DMA of n bursts of L bytes (each burst rounded up to whole 32-B granules, the DMA unit: `gbytes`),
touching `lines` distinct 512-B GM lines, starts on the core's GM port at port_start = max(start, port free):

    curve    = fixed[path] + max(gbytes / dma_peak_bpc, n*L / path cap)   # PTO fit: time = K/peak + B/peak
               (fixed costs off: max((dma_half_bytes + gbytes) / dma_peak_bpc, n*L / path cap), the same
               fit with its fixed part K/peak = half/peak folded in; GM->UB/L1 have no cap)
    reads:   total = new_lines*512 + hit_bytes                     # a miss fills whole lines from DDR
             port  = total / l2_read_bpc                           # CANN-INI l2_read_rate, the core's port
             ddr   = DDR ledger: new_lines*512 bytes from port_start, at most l2_read_bpc * new/total B/cycle
             lines already in L2 but still being filled (by any core) are not ready before their fill time
    writes:  port  = gbytes / l2_write_bpc, ddr = DDR ledger: gbytes from port_start at most l2_write_bpc
    end      = max(start + curve, port_start + port, ddr end, fill time of the hit lines)

The fixed cost is charged once, in the curve: PTO's fit is the time of an isolated transfer on the real chip,
port and DDR included, so adding it to the port/DDR terms as well would count it twice. Under DDR contention
it overlaps the wait for the chip's bandwidth (the request is set up while other cores' bytes are served).

DDR ledger: HARDWARE.md ("treat GM bandwidth as a chip-level resource shared by all active cores"). The
chip's DDR bandwidth is CANN-INI `ddr_rate` x AI cores (768 B/cycle on 910B1, 1.42 TB/s). Time is cut into
slots of `SLOT` cycles, each holding at most 768 x SLOT DDR bytes; a transfer takes what is left in each
slot from its port start on, up to its own port rate, until its DDR bytes are served. Transfers reserve in
global start order (timing.py), so earlier requests are served first (first come, first served); the
chip never exceeds its DDR bandwidth, and a core gets more than 1/24 of it when other cores are not
transferring (dynamic sharing; the previous model split it evenly over the launch's cores).

Writes are charged to DDR when they happen (write-through accounting: an L2 write-back that defers the
drain past the kernel's end is not modelled), so a store-bound kernel cannot beat the DDR roofline.

Alignment penalty (ASCENDC: GM addresses aligned to 512 B run fastest): a read that misses L2 fills whole
512-B lines from DDR, so misaligned or narrow bursts pay DDR bandwidth for bytes they do not use, and a
burst that is not a multiple of 32 B pays for its last partial granule. `port` is serialized per core
across its GM clients (MTE2, MTE3, FIX). L2: a line becomes resident on first touch in a launch (in global
start order) and ready when its fill completes (lines of one transfer fill in address order, linearly over
the transfer); when the resident set would exceed the L2 size it is flushed (crude).
"""
from __future__ import annotations

import numpy as np

SLOT = 64  # model: DDR ledger resolution in cycles (a numerical resolution, not a hardware figure)


class GmModel:
    def __init__(self, chip, active_cores: int, gm_size: int):
        self.chip = chip
        self.active_cores = active_cores  # kept for callers; DDR sharing is dynamic (see the ledger)
        self.line = chip.gm_line_bytes
        self.resident = np.zeros(gm_size // self.line + 2, dtype=bool)
        self.ready = np.zeros(gm_size // self.line + 2, dtype=np.float64)  # fill completion per line
        self.n_resident = 0
        self.l2_lines = chip.l2_bytes // self.line
        self.slot_cap = float(chip.ddr_bpc_chip * SLOT)
        self.used = np.zeros(4096, dtype=np.float64)  # DDR bytes reserved per slot
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

    def reserve(self, t0: float, nbytes: float, rate: float) -> float:
        """Serve `nbytes` of DDR traffic from time t0 at most `rate` B/cycle, in what the chip has left;
        return the time the last byte is served. Slot by slot: in slot k (from t0's), min(rate x its cycles,
        what the slot has left), until the running sum reaches nbytes; the last slot's share is prorated."""
        if nbytes <= 0:
            return t0
        i0 = int(t0 // SLOT)
        used, cap = self.used, self.slot_cap
        takes = []
        cum = 0.0
        k = i0
        dur = (i0 + 1) * SLOT - t0
        while True:
            if k >= len(used):
                used = self.used = np.concatenate([used, np.zeros(max(len(used), k + 1), np.float64)])
            free = cap - used[k]
            take = rate * dur
            if free < take:
                take = free if free > 0.0 else 0.0
            prev = cum
            cum += take
            if cum >= nbytes:
                break
            takes.append(take)
            k += 1
            dur = float(SLOT)
        for i, tk in enumerate(takes):
            used[i0 + i] += tk
        need = nbytes - prev
        used[k] += need
        sj = t0 if k == i0 else k * SLOT
        return sj + need * dur / take

    def curve(self, path: str, gbytes: int, nbytes: int, path_cap_bpc: float | None = None) -> float:
        """Cycles of an isolated transfer of `gbytes` granule bytes (`nbytes` moved) on `path` (see above)."""
        if not self.chip.fixed_costs:
            t = (self.chip.dma_half_bytes + gbytes) / self.peak
            return max(t, nbytes / path_cap_bpc) if path_cap_bpc else t
        stream = gbytes / self.peak
        if path_cap_bpc:
            stream = max(stream, nbytes / path_cap_bpc)
        return self.chip.dma_fixed_cycles[path] + stream

    def transfer(self, starts, length: int, write: bool, port_free: float, start: float,
                 path_cap_bpc: float | None = None, path: str = "GM->UB") -> tuple[float, float]:
        """Return (end time, new port_free) of one DMA on `path` starting at `start`."""
        n = len(starts)
        gran = starts // 32
        gbytes = int(((starts + length + 31) // 32 - gran).sum()) * 32
        self.gm_bytes += n * length
        curve = self.curve(path, gbytes, n * length, path_cap_bpc)
        lines = self.lines(starts, length)
        nl = len(lines)
        res = self.resident[lines]
        hits = int(res.sum())
        new = nl - hits
        port_start = max(start, port_free)
        wait_fill = 0.0
        if write:
            rate = self.chip.l2_write_bpc
            port_end = max(port_start + gbytes / rate, self.reserve(port_start, gbytes, rate))
            self.ddr_bytes += gbytes
        else:
            hit_bytes = gbytes * hits / nl
            ddr = new * self.line
            total = ddr + hit_bytes
            rate = self.chip.l2_read_bpc
            port_end = port_start + total / rate
            if ddr:
                port_end = max(port_end, self.reserve(port_start, ddr, rate * ddr / total))
            if hits:
                wait_fill = float(self.ready[lines[res]].max())
            self.ddr_bytes += ddr
            self.l2_hit_bytes += int(hit_bytes)
        if new:
            if self.n_resident + new > self.l2_lines:
                self.resident[:] = False
                self.n_resident = 0
                res = np.zeros(nl, dtype=bool)
                new = nl
            fresh = lines[~res]
            self.resident[fresh] = True
            self.n_resident += new
            # lines of this transfer arrive in address order, linearly over its port time
            pos = np.nonzero(~res)[0] + 1
            self.ready[fresh] = port_start + (port_end - port_start) * pos / nl
        end = max(start + curve, port_end, wait_fill)
        return end, port_end
