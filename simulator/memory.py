"""Byte-addressed memories: the shared global memory (host API) and one core's local scratchpads.

Every access goes through `check_bursts`, which raises MemoryAccessError naming the instruction, the scope
and the numbers when a burst leaves the buffer or breaks the scope's alignment.
"""
from __future__ import annotations

import bisect

import numpy as np

from .dtypes import np_dtype
from .errors import MemoryAccessError
from .intmath import align_up


def check_bursts(what: str, scope: str, size: int, starts, length: int, align: int = 1,
                 stride_align: bool = True) -> None:
    """All bursts [s, s+length) must lie in [0, size) and start `align`-aligned."""
    if length <= 0:
        raise MemoryAccessError(f"{what}: {scope} access of {length} bytes (must be > 0)")
    lo = int(starts.min()) if hasattr(starts, "min") else int(starts)
    hi = (int(starts.max()) if hasattr(starts, "max") else int(starts)) + length
    if lo < 0 or hi > size:
        raise MemoryAccessError(f"{what}: {scope}[{lo:#x}, {hi:#x}) is outside {scope} of {size} bytes "
                                f"({size // 1024} KiB)")
    if align > 1:
        bad = np.asarray(starts) % align
        if bad.any():
            a = int(np.asarray(starts).reshape(-1)[np.flatnonzero(bad)[0]])
            raise MemoryAccessError(f"{what}: {scope} address {a:#x} is not {align}-byte aligned")


def byte_rows(data: np.ndarray, start: int, n: int, stride: int, length: int, write: bool = False):
    """The `n` rows of `length` bytes at ``start + i * stride`` of the byte array `data` as an (n, length) strided
    view — the same bytes as fancy indexing with ``start + i * stride + arange(length)``, without the index array —
    or None when a view cannot stand for it: a negative stride, or (``write``) rows that overlap, where fancy
    assignment's last-write-wins order decides. Bounds are the caller's (checked at issue)."""
    if stride < 0 or (write and n > 1 and stride < length) or start < 0 or start + (n - 1) * stride + length > data.size:
        return None
    if stride >= length and start + n * stride <= data.size:  # the cheap view: whole strides, reshaped, cut
        return data[start:start + n * stride].reshape(n, stride)[:, :length]
    return np.lib.stride_tricks.as_strided(data[start:], shape=(n, length), strides=(stride, 1), writeable=write)


class LocalMemory:
    """One scratchpad (UB, L1, L0A, L0B or L0C) of one core."""

    def __init__(self, scope: str, size: int, align: int, data: np.ndarray | None = None):
        self.scope, self.size, self.align = scope, size, align
        self.data = np.zeros(size, dtype=np.uint8) if data is None else data  # data: `size` zeroed bytes given
        self._views: dict = {}  # dtype name -> a view of data (data is never rebound)

    def view(self, dtype: str) -> np.ndarray:
        v = self._views.get(dtype)
        if v is None:
            v = self._views[dtype] = self.data.view(np_dtype(dtype))
        return v

    def check(self, what: str, starts, length: int, align: int | None = None) -> None:
        check_bursts(what, self.scope, self.size, starts, length, self.align if align is None else align)


class GlobalMemory:
    """Global memory shared by all cores. The host allocates buffers and places numpy arrays in them.

    >>> gm = GlobalMemory(); a = gm.put(np.arange(4, dtype=np.float32)); gm.read(a, "f32", (4,))
    """

    def __init__(self, capacity: int = 64 << 30, align: int = 512):
        self.capacity, self.default_align = capacity, align
        self.data = np.zeros(1 << 20, dtype=np.uint8)
        self.top = 0
        self._starts: list[int] = []
        self._ends: list[int] = []

    # ---- host API ----------------------------------------------------------------------------------
    def alloc(self, nbytes: int, align: int | None = None) -> int:
        """Reserve `nbytes` (aligned to 512 B by default, the fastest GM alignment) and return the address."""
        align = align or self.default_align
        addr = align_up(self.top, align)
        end = addr + int(nbytes)
        if end > self.capacity:
            raise MemoryAccessError(f"gm.alloc: {nbytes} bytes at {addr:#x} exceed GM capacity {self.capacity}")
        if end > self.data.size:
            new = np.zeros(max(end, 2 * self.data.size), dtype=np.uint8)
            new[: self.data.size] = self.data
            self.data = new
        self._starts.append(addr)
        self._ends.append(end)
        self.top = end
        return addr

    def write(self, addr: int, array: np.ndarray, check: bool = True) -> None:
        """``check=False``: the caller knows ``[addr, addr + nbytes)`` lies in one allocated buffer."""
        raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        if check:
            self.check("gm.write", np.array([addr]), raw.size)
        self.data[addr: addr + raw.size] = raw

    def put(self, array: np.ndarray, align: int | None = None) -> int:
        """alloc + write; returns the address."""
        addr = self.alloc(np.asarray(array).nbytes, align)
        self.write(addr, array)
        return addr

    def read(self, addr: int, dtype, shape, check: bool = True) -> np.ndarray:
        """A copy of the ``shape`` array of ``dtype`` at ``addr`` (``check=False``: as :meth:`write`)."""
        dt = np_dtype(dtype) if isinstance(dtype, str) else np.dtype(dtype)
        n = int(np.prod(shape)) * dt.itemsize
        if n == 0:
            return np.empty(shape, dt)  # an empty tensor: nothing to read
        if check:
            self.check("gm.read", np.array([addr]), n)
        return self.data[addr: addr + n].copy().view(dt).reshape(shape)

    # ---- simulator side ----------------------------------------------------------------------------
    def check(self, what: str, starts, length: int) -> None:
        """Every burst must lie inside one allocated buffer."""
        starts = np.asarray(starts)
        lo, hi = int(starts.min()), int(starts.max()) + length
        i = bisect.bisect_right(self._starts, lo) - 1
        if length <= 0 or i < 0 or hi > self._ends[i]:
            where = (f"buffer [{self._starts[i]:#x}, {self._ends[i]:#x})" if i >= 0
                     else "no allocated buffer")
            raise MemoryAccessError(f"{what}: GM[{lo:#x}, {hi:#x}) ({length} B bursts) is outside {where}")
