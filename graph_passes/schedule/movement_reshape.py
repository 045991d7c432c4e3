"""Reshapes inside data-movement kernels: every piece of the operand re-expressed over the result's dims.

A reshape pairs runs of the operand's dims with runs of the result's dims of the same element count
(:func:`reshape_groups`: ``2x4x8x8 -> 8x64`` is ``[0, 1] -> [0]`` and ``[2, 3] -> [1]``; a unit dim is a run of
its own). Inside a run a piece's source dims (GM dim ``g``, step ``st``, extent ``n``) merge into one linear walk
and split again into the result's dims::

    merge   (g, st, n) ∘ (g', st', n') -> (g', st', n·n')    when  stride(g)·st == n'·stride(g')·st'
    split   (g, st, n0·n1)             -> (g, st·n1, n0), (g, st, n1)          (n1 a constant)

``stride(g)`` is GM dim g's row-major stride in the argument. A merged walk may run past GM dim g' into the dims
outside it and a split leaves two dims walking one GM dim: the GM address of a load is linear (docs/hivm.md).
A piece must cover a run whole unless the run is one dim on both sides; a fill reshapes freely. Anything else
(a transposed pair of dims merged, a split with a symbolic inner size) is :class:`Unsupported`: such a reshape
can still be the kernel's last op, stored through a view of its output (``analyze_movement``).
"""

from __future__ import annotations

import math

import sympy

from ..ir.sizes import SizeVars, as_expr
from .kernel_info import Unsupported


def reshape_groups(old: list, new: list, sizes: SizeVars) -> list[tuple[list[int], list[int]]]:
    """Runs ``(old dims, new dims)`` of equal element counts, in order; a unit dim alone is a run of its own."""
    unit = lambda n: sizes.statically_known_equal(n, 1)  # noqa: E731
    out, i, j = [], 0, 0
    while i < len(old) or j < len(new):
        if i < len(old) and unit(old[i]):
            out.append(([i], []))
            i += 1
            continue
        if j < len(new) and unit(new[j]):
            out.append(([], [j]))
            j += 1
            continue
        if i == len(old) or j == len(new):
            raise Unsupported("hfusion.reshape", f"reshapes {old} to {new}: the element counts differ")
        gi, gj, po, pn = [i], [j], as_expr(old[i]), as_expr(new[j])
        i, j = i + 1, j + 1
        while not sizes.statically_known_equal(po, pn):
            ratio = sympy.simplify(pn / po)
            if ratio.is_Integer and ratio > 1 and i < len(old):
                po, i = po * as_expr(old[i]), i + 1
                gi.append(i - 1)
            elif (1 / ratio).is_Integer and ratio < 1 and j < len(new):
                pn, j = pn * as_expr(new[j]), j + 1
                gj.append(j - 1)
            else:
                raise Unsupported("hfusion.reshape", f"reshapes {old} to {new}: dims {gi} and {gj} do not pair "
                                                     f"up into runs of equal size")
        out.append((gi, gj))
    return out


def reshape_pieces(pieces: list, old: list, new: list, sizes: SizeVars) -> list:
    """Per piece of a value of shape ``old``, its box and source walk ``(off, size, dims, steps)`` in the
    reshape to ``new``."""
    groups = reshape_groups(old, new, sizes)
    out = []
    for p in pieces:
        off, size, dims, steps = [None] * len(new), [None] * len(new), [-1] * len(new), [1] * len(new)
        for gi, gj in groups:
            if len(gi) == 1 and len(gj) == 1:
                i, j = gi[0], gj[0]
                off[j], size[j], dims[j], steps[j] = p.off[i], p.size[i], p.src.dims[i], p.src.steps[i]
                continue
            for i in gi:
                if not (_zero(p.off[i]) and sizes.statically_known_equal(p.size[i], old[i])):
                    raise Unsupported("hfusion.reshape", f"reshapes {old} to {new}, merging or splitting dims {gi} "
                                                         f"of which a piece covers only part")
            walk = None if p.src.arg is None else _merge([(p.src.dims[i], p.src.steps[i], old[i]) for i in gi],
                                                          p.src.shape, sizes, old, new)
            inner = 1
            for j in reversed(gj):
                off[j], size[j] = as_expr(0), as_expr(new[j])
                if walk is None or sizes.statically_known_equal(new[j], 1):
                    continue
                if not as_expr(inner).is_Integer:
                    raise Unsupported("hfusion.reshape", f"reshapes {old} to {new}: splits a dim into parts of "
                                                         f"symbolic size {inner} (a step must be a constant)")
                dims[j], steps[j] = walk[0], walk[1] * int(inner)
                inner = as_expr(inner) * as_expr(new[j])
        out.append((off, size, dims, steps))
    return out


def _merge(walks: list, gm_shape: list, sizes: SizeVars, old, new) -> tuple[int, int] | None:
    """One linear walk ``(GM dim, step)`` for the source dims ``walks`` ``(g, st, n)`` of a run, outermost first
    (None when every one has extent 1)."""
    stride = lambda g: math.prod(gm_shape[g + 1:], start=sympy.Integer(1))  # noqa: E731
    acc = None  # (g, st, extent so far) of the inner dims merged
    for g, st, n in reversed(walks):
        if sizes.statically_known_equal(n, 1):
            continue
        if acc is not None and not sizes.statically_known_equal(stride(g) * st, acc[2] * stride(acc[0]) * acc[1]):
            raise Unsupported("hfusion.reshape", f"reshapes {old} to {new}, merging dims that are not one linear "
                                                 f"walk of the source (a transpose before the reshape)")
        acc = (g, st, as_expr(n)) if acc is None else (acc[0], acc[1], acc[2] * as_expr(n))
    return None if acc is None else (acc[0], acc[1])


def _zero(e) -> bool:
    e = as_expr(e)
    return e.is_Integer and int(e) == 0
