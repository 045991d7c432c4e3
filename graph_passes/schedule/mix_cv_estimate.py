"""Whether cv-pipelining pays for a MIX_CV kernel (schedule/mix_cv.py, docs/cube.md *cv-pipelining*): an estimate
of one group's time with the tile's accumulator parts drained as the cube tile's K loop ends (the cube schedule's
``acc_parts``) against pieces of ``W`` columns, each its own K loop with the A rows resident.

An estimate, not a simulation, from the cube tile estimate's figures (the core's GM port, the FixPipe drain with its
fixed cost, the cube's fractal cycles) and the epilogue's vector estimate (schedule/cost.py) on one vector core's
half of a part. A part ``i`` is *ready* when its drain ends; the group ends at
``max_i(ready_i + the vector time of parts i, i + 1, …)`` (the vector cores take the parts in order)::

    not pipelined   every part's B and A columns over all of K are loaded before any part's last L1 step:
                    ready_0 = load(A + B) + mmads of a part's last L1 step + drain, ready_i = ready_0 + i · drain
    pipelined       piece i needs A and the B columns of pieces 0..i, and its K loop of mmads after piece i - 1's:
                    ready_i = max(ready_{i-1}, load(A + (i + 1) · B piece), mmads of i + 1 pieces) + drain

The hand-off of each part (a cross-core flag) is the same in both and left out.
"""

from __future__ import annotations

from ..intmath import ceil_div
from .cost import values_estimate
from .cube import FRACTAL
from .software_pipeline import compute_order


def _group_end(ready: list, vector: float) -> float:
    return max(r + vector * (len(ready) - i) for i, r in enumerate(ready))


def pipelining_pays(em: int, k: int, es: int, k0: int, base_n: int, parts: int, l1_k: int, pieces: int,
                    epilogue_time, target) -> bool:
    """True when ``pieces`` cv-pipelined pieces are estimated to end a group's tile of ``em`` × ``base_n`` (K =
    ``k``, ``es`` bytes an operand element) before its ``parts`` accumulator parts drained at the K loop's end;
    ``epilogue_time(cols)``: one vector core's cycles for half a part of ``cols`` columns."""
    port = target.gm_port_read_bytes_per_cycle
    frac = target.cube_cycles_per_fractal("f16" if es == 2 else "f32")

    def drain(cols):
        return em * cols * 4 / target.l0c_to_gm_bytes_per_cycle + target.dma_fixed_l0c_to_gm_cycles

    def mmads(cols, depth):
        return ceil_div(em, FRACTAL) * ceil_div(depth, k0) * ceil_div(cols, FRACTAL) * frac

    width = base_n // parts
    first = (em + base_n) * k * es / port + mmads(width, min(l1_k, k)) + drain(width)
    plain = [first + i * drain(width) for i in range(parts)]
    piece = base_n // pieces
    piped, ready = [], 0.0
    for i in range(pieces):
        ready = max(ready, (em + (i + 1) * piece) * k * es / port, (i + 1) * mmads(piece, k)) + drain(piece)
        piped.append(ready)
    return _group_end(piped, epilogue_time(piece)) < _group_end(plain, epilogue_time(width))


def epilogue_time(info, plan, half_rows: int, target):
    """One vector core's estimated cycles for ``half_rows`` rows of a part ``cols`` wide (a function of ``cols``)."""
    order = compute_order(info, plan)
    return lambda cols: values_estimate(order, plan, [half_rows, cols], target).time(target)
