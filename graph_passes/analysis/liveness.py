"""Buffer lifetimes over the structured program (for hivm-plan-memory).

Ops of a function are numbered in pre-order; a loop spans the numbers of everything inside it. A buffer is live
from its first use to its last use (uses through ``hivm.multi_buffer_select`` count for every copy), and a use
inside a loop that does not contain the alloc makes the buffer live across that whole loop (the next iteration
uses it again). The copies of one multi-buffered buffer are therefore live together. A ``scratch = true`` alloc
(the code generator's temporary UB, which no op names) is live for the whole kernel; an unused one at its own
position (:func:`buffer_lifetime`, what hivm-plan-memory places and hivm-verify-memory-plan checks).
"""

from __future__ import annotations

from ..ir.core import Operation
from .loops import buffer_users, enclosing_loops


class ProgramOrder:
    """Pre-order positions of a function's ops; ``span(op)`` is [first, last] position of the op and its regions."""

    def __init__(self, func: Operation):
        self.pos: dict[int, int] = {}
        self.last: dict[int, int] = {}
        counter = 0
        def visit(op):  # noqa: E306
            nonlocal counter
            self.pos[id(op)] = counter
            counter += 1
            for r in op.regions:
                for b in r.blocks:
                    for inner in b.ops:
                        visit(inner)
            self.last[id(op)] = counter - 1
        for op in func.body.ops:
            visit(op)

    def span(self, op: Operation) -> tuple[int, int]:
        return self.pos[id(op)], self.last[id(op)]


def live_interval(alloc: Operation, order: ProgramOrder) -> tuple[int, int] | None:
    """[start, end] positions during which ``alloc``'s buffer holds live data (None if unused)."""
    alloc_loops = enclosing_loops(alloc)
    lo, hi = None, None
    for user in buffer_users(alloc.result):
        if user.name == "hivm.multi_buffer_select":
            continue  # a view: its users count
        start, end = order.span(user)
        for lp in enclosing_loops(user):
            if not any(lp is a for a in alloc_loops):
                start, end = order.span(lp)  # the outermost loop not holding the alloc
                break
        lo = start if lo is None else min(lo, start)
        hi = end if hi is None else max(hi, end)
    return None if lo is None else (lo, hi)


def buffer_lifetime(alloc: Operation, order: ProgramOrder) -> tuple[int, int]:
    """The positions over which ``alloc``'s bytes must not be shared with another live buffer."""
    if alloc.attributes.get("scratch"):
        return 0, max(order.last.values(), default=0)
    return live_interval(alloc, order) or (order.pos[id(alloc)],) * 2
