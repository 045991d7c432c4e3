"""Loop helpers for buffer passes: enclosing loops, the loop a multi-buffered buffer rotates in, iteration numbers.

A multi-buffered buffer rotates over the iterations of one ``scf.for``: iteration ``k`` (counted from 0) uses copy
``k % n``. For ``scf.for %lb, %ub, %step`` with induction variable ``%t`` the iteration number is
``k = (t - lb) floordiv step``; :func:`iteration_number` finds it at the top of the loop body or creates it there,
so every pass that needs ``k`` (enable-multi-buffer, inject-sync) shares one value.
"""

from __future__ import annotations

from ..dialects.arith import BINARY_OPS
from ..ir.core import Constant, Operation, Value
from ..ir.types import IndexType

FOR = "scf.for"


def enclosing_loops(op: Operation) -> list[Operation]:
    """The ``scf.for`` ops around ``op``, outermost first (stops at the enclosing function)."""
    loops = []
    p = op.parent_op()
    while p is not None and p.name != "func.func":
        if p.name == FOR:
            loops.append(p)
        p = p.parent_op()
    return loops[::-1]


def buffer_users(value: Value) -> list[Operation]:
    """Ops that use ``value`` directly or through view results (``hivm.multi_buffer_select``)."""
    out, stack, seen = [], [value], set()
    while stack:
        v = stack.pop()
        for user in v.users:
            if id(user) in seen:
                continue
            seen.add(id(user))
            out.append(user)
            if user.name == "hivm.multi_buffer_select":
                stack.extend(user.results)
    return out


def multi_buffer_loop(alloc: Operation) -> Operation | None:
    """The innermost loop that holds every use of ``alloc``'s buffer and not the alloc itself (None if none)."""
    users = buffer_users(alloc.result)
    if not users:
        return None
    common = None
    for u in users:
        loops = enclosing_loops(u)
        common = loops if common is None else [a for a, b in zip(common, loops) if a is b]
    outer = enclosing_loops(alloc)
    candidates = [lp for lp in common or [] if not any(lp is o for o in outer) and not lp.is_ancestor_of(alloc)]
    return candidates[-1] if candidates else None


def _const_value(v: Value):
    op = getattr(v, "op", None)
    if op is not None and op.has_trait(Constant):
        return op.attributes.get("value")
    return None


def is_iteration_number(v: Value, loop: Operation) -> bool:
    """Whether ``v`` is ``(iv - lb) floordiv step`` of ``loop`` (or ``iv`` itself when lb = 0 and step = 1)."""
    lb, step = loop.operand("lower"), loop.operand("step")
    iv = loop.body.args[0]
    if v is iv:
        return _const_value(lb) == 0 and _const_value(step) == 1
    op = getattr(v, "op", None)
    if op is None or op.name != "arith.floordivsi" or op.operand("rhs") is not step:
        return False
    num = op.operand("lhs")
    if num is iv:
        return _const_value(lb) == 0
    nop = getattr(num, "op", None)
    return nop is not None and nop.name == "arith.subi" and nop.operand("lhs") is iv and nop.operand("rhs") is lb


def iteration_number(loop: Operation) -> Value:
    """``k``, the 0-based iteration number of ``loop``: found at the top of its body or created there."""
    body = loop.body
    for op in body.ops:
        if op.results and is_iteration_number(op.result, loop):
            return op.result
    lb, step = loop.operand("lower"), loop.operand("step")
    iv = body.args[0]
    if _const_value(lb) == 0 and _const_value(step) == 1:
        return iv
    num = iv
    at = 0
    if _const_value(lb) != 0:
        sub = BINARY_OPS["arith.subi"]([iv, lb], [IndexType()], {}, [], loop.loc)
        body.insert(at, sub)
        at += 1
        num = sub.result
    div = BINARY_OPS["arith.floordivsi"]([num, step], [IndexType()], {}, [], loop.loc)
    body.insert(at, div)
    div.result.name_hint = "k"
    return div.result
