"""Integer helpers shared by the passes and codegen: ceiling division, rounding up to a multiple, products.

Each works on ints and on sympy size expressions alike (``//`` on sympy is floor division).
"""

from __future__ import annotations

from typing import Iterable


def ceil_div(n: int, k: int) -> int:
    """The smallest integer q with q·k >= n (k > 0)."""
    return -(-n // k)


def align_up(n: int, k: int) -> int:
    """``n`` rounded up to a multiple of ``k`` (k > 0)."""
    return ceil_div(n, k) * k


def prod(xs: Iterable[int]) -> int:
    """The product of ``xs`` (1 when empty)."""
    p = 1
    for x in xs:
        p *= x
    return p
