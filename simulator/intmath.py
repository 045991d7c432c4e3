"""Integer helpers for the simulator: ceiling division and rounding up to a multiple."""

from __future__ import annotations


def ceil_div(n: int, k: int) -> int:
    """The smallest integer q with q·k >= n (k > 0)."""
    return -(-n // k)


def align_up(n: int, k: int) -> int:
    """``n`` rounded up to a multiple of ``k`` (k > 0)."""
    return ceil_div(n, k) * k
