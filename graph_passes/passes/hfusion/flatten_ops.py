"""``hfusion-flatten-ops``: inside vector kernels, collapse contiguous loop dims into one, keeping the interface.

After AscendNPU-IR's ``hfusion-flatten-ops``. Every tensor dim in the kernel body belongs to one *loop dim*:
elementwise ops tie operand dim k to result dim k, a broadcast ties its input dims to the kept result dims, a
reduce its result dims to the kept input dims, a reshape that only adds or drops unit dims ties the remaining dims
in order (unit dims belong to no loop dim and vanish: a value holds one dim per group of its loop dims). Two loop
dims next to each other (in the one order every value agrees on) collapse when every value holds both or neither —
so broadcast and reduce dims stay distinct::

    PURE_ELEMWISE over s0x4x128             → 1-D (512*s0)
    LAST_AXIS_PBR over AxBxC, reducing C    → (A*B)xC

The kernel's arguments and results keep their shapes: ``hfusion.reshape`` at entry and before the return.
Kernels holding other ops (transpose, slice, concat, gather, matmul, general reshapes) are left alone.
Counter ``dims-collapsed``: loop dims removed, summed over kernels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import sympy

from ...analysis.union_find import UnionFind
from ...dialects.func import FuncOp, ReturnOp
from ...dialects.hfusion import ReshapeOp
from ...ir.core import Broadcast, Constant, Elementwise, Operation, Reduction, Value
from ...ir.sizes import SizeVars
from ...ir.types import TensorType
from ...ir.verifier import VerifyError, verify
from .. import ModulePass, PassContext, register_pass

FLATTENED_KINDS = ("PURE_ELEMWISE", "ANY_PB", "LAST_AXIS_PBR", "ANY_PBR")
UNIT = -1  # a unit dim: belongs to no loop dim


@register_pass
@dataclass(frozen=True)
class FlattenOps(ModulePass):
    """Collapse contiguous loop dims of vector kernels, with reshapes at the kernel boundary."""

    name: ClassVar[str] = "hfusion-flatten-ops"

    def run(self, module: Operation, ctx: PassContext) -> None:
        sizes = module.size_vars()
        ctx.count("dims-collapsed", 0)
        for func in list(module.functions):
            if not func.attributes.get("kernel") or func.attributes.get("fusion_kind") not in FLATTENED_KINDS:
                continue
            plan = LoopDims.analyse(func, sizes)
            if plan is None or plan.removed == 0:
                continue
            new = plan.rewrite(func)
            try:
                verify(new)
            except VerifyError as e:  # a flattening bug: name the kernel, never hand on invalid IR
                raise RuntimeError(f"hfusion-flatten-ops produced invalid @{func.sym_name}: {e}") from e
            module.body.insert_before(func, new)
            func.erase()
            ctx.count("dims-collapsed", plan.removed)


def _tensor(v: Value) -> bool:
    return isinstance(v.type, TensorType)


class LoopDims:
    """Loop dims of a kernel body and the collapse plan."""

    def __init__(self, dims: dict[Value, list[int]], groups: list[list[int]], sizes: SizeVars):
        self.dims = dims  # value → loop dim per tensor dim (UNIT for unit dims)
        self.groups = groups  # collapsed loop dims: runs of loop dims, in order
        self.group_of = {d: i for i, g in enumerate(groups) for d in g}
        self.sizes = sizes
        self.removed = sum(len(g) - 1 for g in groups)

    @classmethod
    def analyse(cls, func: Operation, sizes: SizeVars) -> "LoopDims | None":
        ops = [op for op in func.body.ops if op.name != "func.return"]
        uf = UnionFind()
        values: list[Value] = []
        unit = {}

        def track(v: Value) -> None:
            if _tensor(v) and v not in unit:
                values.append(v)
                unit[v] = [sizes.statically_known_equal(d, 1) for d in v.type.shape]

        def tie(a: Value, i: int, b: Value, j: int) -> None:
            if not unit[a][i] and not unit[b][j]:
                uf.union((a, i), (b, j))

        for op in ops:
            if op.has_trait(Constant) and not any(_tensor(r) for r in op.results):
                continue
            for v in list(op.operands) + list(op.results):
                track(v)
            if op.has_trait(Elementwise) or op.name == "hfusion.fill":
                out = op.results[0]
                for v in op.operands:
                    if _tensor(v):
                        for k in range(out.type.rank):
                            tie(v, k, out, k)
            elif op.has_trait(Broadcast) or op.has_trait(Reduction):
                src, out = op.operand("input"), op.results[0]
                big, small = (out, src) if op.has_trait(Broadcast) else (src, out)
                kept = [k for k in range(big.type.rank) if k not in op.attributes["dims"]]
                for j, k in enumerate(kept):
                    tie(small, j, big, k)
            elif op.name == "hfusion.reshape":
                src, out = op.operand("input"), op.results[0]
                a = [k for k in range(src.type.rank) if not unit[src][k]]
                b = [k for k in range(out.type.rank) if not unit[out][k]]
                if len(a) != len(b) or not all(
                    sizes.statically_known_equal(src.type.shape[i], out.type.shape[j]) for i, j in zip(a, b)
                ):
                    return None
                for i, j in zip(a, b):
                    tie(src, i, out, j)
            else:
                return None
        # number the loop dims and give every value its list
        ids: dict = {}
        dims: dict[Value, list[int]] = {}
        for v in values:
            row = []
            for k in range(v.type.rank):
                row.append(UNIT if unit[v][k] else ids.setdefault(uf.find((v, k)), len(ids)))
            dims[v] = row
        order = _order(dims, len(ids))
        if order is None:
            return None
        groups: list[list[int]] = []
        for d in order:
            if groups and _mergeable(groups[-1][-1], d, dims):
                groups[-1].append(d)
            else:
                groups.append([d])
        return cls(dims, groups, sizes)

    # -- new shapes ---------------------------------------------------------------------------------------------
    def entries(self, v: Value) -> list[tuple[int, list[int]]]:
        """The dims of ``v`` after collapsing: (group, old dim positions), one per group ``v`` holds, in order.

        Unit dims belong to no loop dim and leave no dim of their own: each joins the entry before it (the first
        entry when it leads). Every value then holds exactly its groups, so a broadcast's or reduction's operand
        and result agree outside its dims whichever unit dims either had (``amin`` over dims 0 and 2 of
        ``2x1x64x33`` to ``1x33`` is ``128x33`` to ``33``); a value holding no loop dim is 0-d."""
        out: list[tuple[int, list[int]]] = []
        leading: list[int] = []  # unit dims before the first entry
        for k, d in enumerate(self.dims[v]):
            if d == UNIT:
                (out[-1][1] if out else leading).append(k)
                continue
            g = self.group_of[d]
            if out and out[-1][0] == g:
                out[-1][1].append(k)
            else:
                out.append((g, leading + [k]))
                leading = []
        return out

    def new_type(self, v: Value) -> TensorType:
        t = v.type
        shape = [sympy.Mul(*[t.shape[k] for k in ks]) for _, ks in self.entries(v)]
        return t.with_shape([self.sizes.simplify(d) for d in shape])

    def _collapsed_dims(self, small: Value, big: Value) -> list[int]:
        """New ``dims`` of a broadcast/reduce: the entries of ``big`` whose group ``small`` does not hold."""
        present = {g for g, _ in self.entries(small)}
        return [i for i, (g, _) in enumerate(self.entries(big)) if g not in present]

    # -- rewrite ------------------------------------------------------------------------------------------------
    def rewrite(self, func: Operation) -> Operation:
        ftype = func.function_type
        names = [a.name_hint for a in func.args]
        attrs = {k: v for k, v in func.attributes.items() if k not in ("sym_name", "function_type")}
        new = FuncOp.build(func.sym_name, ftype.inputs, ftype.results, names, **attrs)
        new.loc = func.loc
        body = new.body
        mapping: dict[Value, Value] = {}
        for old, arg in zip(func.args, new.args):
            mapping[old] = arg
            if old in self.dims and self.new_type(old) != old.type:
                mapping[old] = body.append(ReshapeOp([arg], [self.new_type(old)], {}, [], func.loc)).result
        for op in func.body.ops:
            if op.name == "func.return":
                outs = []
                for v, t in zip(op.operands, ftype.results):
                    nv = mapping[v]
                    if nv.type != t:
                        nv = body.append(ReshapeOp([nv], [t], {}, [], op.loc)).result
                    outs.append(nv)
                body.append(ReturnOp(outs, [], {}, [], op.loc))
                continue
            attrs = dict(op.attributes)
            if op.has_trait(Broadcast):
                attrs["dims"] = self._collapsed_dims(op.operand("input"), op.results[0])
            elif op.has_trait(Reduction):
                attrs["dims"] = self._collapsed_dims(op.results[0], op.operand("input"))
            if (op.has_trait(Broadcast) or op.has_trait(Reduction)) and not attrs["dims"]:
                mapping[op.results[0]] = mapping[op.operand("input")]  # only along unit dims: the value itself
                continue
            types = [self.new_type(r) if r in self.dims else r.type for r in op.results]
            clone = Operation.create(op.name, [mapping[v] for v in op.operands], types, attrs, [], op.loc)
            for r, nr in zip(op.results, clone.results):
                nr.name_hint = r.name_hint
                mapping[r] = nr
            body.append(clone)
        return new


def _order(dims: dict[Value, list[int]], n: int) -> list[int] | None:
    """One order of the loop dims that every value's dims follow (None when values disagree, e.g. a transpose)."""
    after: dict[int, set[int]] = {d: set() for d in range(n)}
    for row in dims.values():
        seq = [d for d in row if d != UNIT]
        if len(set(seq)) != len(seq):
            return None
        for a, b in zip(seq, seq[1:]):
            after[a].add(b)
    indegree = {d: 0 for d in range(n)}
    for a in after:
        for b in after[a]:
            indegree[b] += 1
    ready = sorted(d for d in range(n) if indegree[d] == 0)
    order = []
    while ready:
        d = ready.pop(0)
        order.append(d)
        for b in sorted(after[d]):
            indegree[b] -= 1
            if indegree[b] == 0:
                ready.append(b)
    return order if len(order) == n else None


def _mergeable(a: int, b: int, dims: dict[Value, list[int]]) -> bool:
    """Loop dims ``a`` then ``b`` collapse when every value holds both (next to each other) or neither."""
    for row in dims.values():
        seq = [d for d in row if d != UNIT]
        if (a in seq) != (b in seq):
            return False
        if a in seq and seq.index(b) != seq.index(a) + 1:
            return False
    return True
