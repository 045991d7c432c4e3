"""Undo dynamo's split of ``torch.addcdiv(x, t1, t2, value=v)`` into ``torch.add(x, torch.mul(torch.div(t1, t2),
v))``, on the graph dynamo hands the backend, before AOTAutograd.

Dynamo splits the call (``handle_addcdiv`` in ``torch/_dynamo/variables/torch.py``: ``value`` as a graph input would
break the graph) into three ops, each rounding to the dtype. Eager's kernel computes ``x + v·t1/t2`` in f32 for
f16/bf16 and rounds once (its opmath type), and multiplies before dividing in f32: one ``aten.addcdiv`` node gives
both (its core-aten decomposition, ``torch._refs.addcdiv``, computes in the opmath type). Found by the OpInfo sweep:
``addcdiv`` at f16, 1 ulp off on 4 of 25 elements.

Note: the three nodes dynamo emits carry the stack trace of the one ``torch.addcdiv`` call (the same text, caret
and all), which user code written as three ops cannot give (each op's caret spans its own expression, or its own
line; an inlined Python function adds its own frames): that and the chain's shape (each intermediate read once)
identify the split. The call's name need not be on the trace (``fn = torch.addcdiv; fn(x, t1, t2, value=v)``).
"""

from __future__ import annotations

import torch


def _single_call(node, target) -> bool:
    return node.op == "call_function" and node.target is target and len(node.users) == 1 and not node.kwargs


def _from_addcdiv(*nodes) -> bool:
    traces = {n.meta.get("stack_trace") for n in nodes}
    return len(traces) == 1 and bool(traces.pop())


def regroup_addcdiv(gm: torch.fx.GraphModule) -> int:
    """Replace each ``add(x, mul(div(t1, t2), v))`` chain split from one ``torch.addcdiv`` call by
    ``torch.addcdiv(x, t1, t2, value=v)``; returns how many were regrouped."""
    count = 0
    for add in list(gm.graph.nodes):
        if not (add.op == "call_function" and add.target is torch.add and len(add.args) == 2 and not add.kwargs):
            continue
        x, mul = add.args
        if not (isinstance(mul, torch.fx.Node) and _single_call(mul, torch.mul) and len(mul.args) == 2):
            continue
        div, value = mul.args
        if not (isinstance(div, torch.fx.Node) and _single_call(div, torch.div) and len(div.args) == 2):
            continue
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not _from_addcdiv(div, mul, add):
            continue
        with gm.graph.inserting_before(add):
            fused = gm.graph.call_function(torch.addcdiv, (x, *div.args), {"value": value})
        fused.meta = dict(add.meta)
        add.replace_all_uses_with(fused)
        for dead in (add, mul, div):
            gm.graph.erase_node(dead)
        count += 1
    if count:
        gm.recompile()
    return count
