"""``hfusion-fuse-ops``: group fusible ops of each host function and outline every group into a device kernel.

After AscendNPU-IR's ``hfusion-fuse-ops`` in multi-kernel mode. Grouping is :mod:`graph_passes.analysis.fusion_groups`
(legality ``can_fuse`` apart from benefit ``score``); this module builds the kernels.

An outlined kernel, for a group with inputs ``x, y`` and results ``r0, r1``::

    func.func @main_fused_0(%x, %y, %out0, %out1) -> (r0 type, r1 type)
        attributes {kernel, fusion_kind = "LAST_AXIS_PBR", output_args = [2, 3]}
    // host:
    %e0 = tensor.empty : () -> <r0 type>
    %e1 = tensor.empty : () -> <r1 type>
    %r:2 = func.call %x, %y, %e0, %e1 {callee = "main_fused_0"}

Arguments are the group's inputs in order of first use, then one out-parameter per result (``output_args`` lists
their indices); the body returns the results (value semantics, so the reference interpreter runs the module as is;
a later pass turns the call into ``hivm.launch`` writing into the out-parameters). Scalar constants the group uses
are cloned into the kernel. Values used only inside a group are never results: they never touch GM.

Decisions:

- Host functions are the functions without the ``kernel`` attribute (the importer's ``@main``); kernels are named
  ``<host>_fused_<i>``.
- ``hfusion.reshape`` is metadata: it never makes a kernel of its own and stays on the host unless it sits next to
  a group, which then absorbs it; a group result that is a reshape of a kernel input or of another result is
  the host's reshape of that value (no second copy in GM). ``hfusion.slice`` is a compute op (AscendNPU-IR's
  kExtractSlice: an ANY_PB copy).
- ``output-mode=single``: a group with several results becomes one kernel per result, each holding the ops its
  result depends on (shared producers are duplicated, AscendNPU-IR's ``single-aggr``).
- ``gm-bytes-saved`` is the sum of the scores of the merges made, at every shape symbol's lower bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from ...analysis.fusion_groups import FusionGraph, Group
from ...analysis.fusion_kind import group_kind, is_important
from ...dialects.func import CallOp, FuncOp, ReturnOp
from ...dialects.tensor import EmptyOp
from ...ir.core import Block, Constant, Operation, Value
from ...ir.sizes import SizeVars
from ...ir.types import TensorType
from ...target import module_target
from .. import ModulePass, PassContext, register_pass


@register_pass
@dataclass(frozen=True)
class FuseOps(ModulePass):
    """Group fusible ops of each host function and outline each group into a device kernel function."""

    name: ClassVar[str] = "hfusion-fuse-ops"
    output_mode: Literal["multi", "single"] = "multi"
    max_horizontal_fusion_size: int = -1
    outline_single_op: bool = True
    fuse: bool = True  # false: every compute op becomes its own kernel (the unfused baseline)

    def run(self, module: Operation, ctx: PassContext) -> None:
        sizes = module.size_vars()
        ctx.count("kernels-outlined", 0)
        ctx.count("ops-fused", 0)
        ctx.count("gm-bytes-saved", 0)
        for host in [f for f in module.functions if not f.attributes.get("kernel")]:
            self.fuse_function(module, host, sizes, ctx)

    def fuse_function(self, module: Operation, host: Operation, sizes: SizeVars, ctx: PassContext) -> None:
        block = host.body
        _own_gather_indices(block)
        graph = FusionGraph(list(block.ops), sizes, self.max_horizontal_fusion_size, module_target(module))
        groups = graph.run() if self.fuse else graph.groups()
        minimum = 1 if self.outline_single_op else 2
        kernels: list[tuple[Group, list[Operation], list[Value]]] = []
        for g in groups:
            if g.num_important < minimum:
                continue
            for ops, outputs in self._split(g):
                if sum(1 for op in ops if is_important(op)) >= minimum:
                    kernels.append((g, ops, outputs))
        if not kernels:
            return
        names = {f.sym_name for f in module.functions}
        outlined_groups = []
        for group, ops, outputs in kernels:
            name = _fresh_name(f"{host.sym_name}_fused_", names)
            kernel = outline(host, group, ops, outputs, name, sizes)
            module.body.insert_before(host, kernel)
            ctx.count("kernels-outlined")
            if len(ops) > 1:
                ctx.count("ops-fused", len(ops))
            if group not in outlined_groups:
                outlined_groups.append(group)
        for group in outlined_groups:
            for op in reversed(group.ops):
                if all(not r.uses for r in op.results):
                    op.erase()
        for op in list(block.ops):  # scalar constants now cloned into the kernels
            if op.has_trait(Constant) and op.results and all(not r.uses for r in op.results):
                op.erase()
        topo_sort_block(block)
        ctx.count("gm-bytes-saved", graph.bytes_saved)

    def _split(self, g: Group) -> list[tuple[list[Operation], list[Value]]]:
        members = set(g.ops)
        outputs = [r for op in g.ops for r in op.results if any(u not in members for u in r.users)]
        if self.output_mode == "multi" or len(outputs) <= 1:
            return [(g.ops, outputs)]
        parts = []
        for out in outputs:
            cone, stack = set(), [out.op]
            while stack:
                op = stack.pop()
                if op in cone:
                    continue
                cone.add(op)
                stack.extend(v.op for v in op.operands if getattr(v, "op", None) in members)
            parts.append(([op for op in g.ops if op in cone], [out]))
        return parts


def _own_gather_indices(block: Block) -> None:
    """Give every gather its own index broadcast when it shares one (cse merged the equal index rows of two flips
    of one shape): a gather's lowering reads the index before its broadcast (schedule/kernel_info.gather_index), so
    a shared broadcast, stored by one kernel and read whole by another, left the second gather without a schedule.
    The broadcast (and an arange or fill under it) is copied next to each gather: computed, never read from GM."""
    for op in list(block.ops):
        if op.name != "hfusion.gather":
            continue
        idx = op.operand("index")
        bcast = getattr(idx, "op", None)
        if bcast is None or bcast.name != "hfusion.broadcast" or len(idx.uses) == 1:
            continue
        mapping = {}
        row = getattr(bcast.operand("input"), "op", None)
        if row is not None and row.name in ("hfusion.arange", "hfusion.fill"):
            block.insert_before(op, row.clone(mapping))
        copy = bcast.clone(mapping)
        block.insert_before(op, copy)
        op.set_operand(1, copy.result)


def _fresh_name(prefix: str, taken: set[str]) -> str:
    i = 0
    while f"{prefix}{i}" in taken:
        i += 1
    taken.add(f"{prefix}{i}")
    return f"{prefix}{i}"


def outline(host: Operation, group: Group, ops: list[Operation], outputs: list[Value], name: str,
            sizes: SizeVars) -> Operation:  # fmt: skip
    """Build kernel ``name`` from ``ops``; call it on the host after the group's last op; reroute ``outputs``.

    An output that is a reshape of a kernel input or of another output is not stored by the kernel: the host
    reshapes that input or the call's result (metadata, ``_host_reshapes``)."""
    outputs, on_host = _host_reshapes(ops, outputs)
    members = set(ops)
    ops = [op for op in ops if not (op.results and op.result in on_host
                                    and all(u not in members for u in op.result.users))]
    members = set(ops)
    inputs: list[Value] = []
    constants: list[Operation] = []
    for op in ops:
        for v in op.operands:
            owner = getattr(v, "op", None)
            if owner in members or v in inputs or owner in constants:
                continue
            if owner is not None and owner.has_trait(Constant) and not isinstance(v.type, TensorType):
                constants.append(owner)
            else:
                inputs.append(v)
    out_types = [v.type for v in outputs]
    in_names = [getattr(v, "name_hint", None) for v in inputs]
    kernel = FuncOp.build(
        name,
        [v.type for v in inputs] + out_types,
        out_types,
        in_names + [f"out{i}" for i in range(len(outputs))],
        kernel=True,
        fusion_kind=group_kind(ops, sizes).name,
        output_args=list(range(len(inputs), len(inputs) + len(outputs))),
    )
    body = kernel.body
    mapping = dict(zip(inputs, body.args))
    for c in constants:
        body.append(c.clone(mapping))
    for op in ops:
        body.append(op.clone(mapping))
    body.append(ReturnOp([mapping[v] for v in outputs], [], {}, [], host.loc))

    # host side: tensor.empty per out-parameter, then the call, after the group's last op
    block = host.body
    anchor = group.ops[-1]
    index = block.ops.index(anchor) + 1
    empties = []
    for t in out_types:
        e = EmptyOp([], [t], {}, [], anchor.loc)
        block.insert(index, e)
        index += 1
        empties.append(e.result)
    call = CallOp(inputs + empties, out_types, {"callee": name}, [], anchor.loc)
    block.insert(index, call)
    group_ops = set(group.ops)
    on_host_values = dict(zip(outputs, call.results))
    for r in on_host:
        source = r.op.operand("input")
        view = r.op.clone({source: on_host_values.get(source, source)})
        index += 1
        block.insert(index, view)
        on_host_values[r] = view.result
    for old, new in on_host_values.items():
        new.name_hint = old.name_hint
        for use in list(old.uses):
            if use.op not in group_ops:
                use.op.set_operand(use.index, new)
    return kernel


def _host_reshapes(ops: list[Operation], outputs: list[Value]) -> tuple[list[Value], list[Value]]:
    """Split ``outputs`` into those the kernel stores and those the host derives: an ``hfusion.reshape`` of a value
    the host has — a kernel input, an output stored, or one derived before (in dependency order). Stored, such an
    output would be a second copy of bytes already in GM (an embedding kernel stored its rows as ``256x128`` and as
    ``2x128x128``, and copied its index input as ``256``, for the views FX took of them)."""
    members, outs = set(ops), set(outputs)

    def derived(r: Value) -> bool:  # every output is stored or derived: the host has each one
        source = r.op.operand("input") if r.op.name == "hfusion.reshape" else None
        return source is not None and (getattr(source, "op", None) not in members or source in outs)

    stored, on_host = [r for r in outputs if not derived(r)], [r for r in outputs if derived(r)]
    position = {op: i for i, op in enumerate(ops)}
    return stored, sorted(on_host, key=lambda r: position[r.op])  # sources first: the host reshapes them in order


def topo_sort_block(block: Block) -> None:
    """Reorder ``block`` so every op follows its operands' definitions, keeping the current order otherwise."""
    ops = [op for op in block.ops if op is not block.terminator]
    position = {op: i for i, op in enumerate(ops)}
    placed, order = set(), []

    def place(op: Operation) -> None:
        if op in placed:
            return
        placed.add(op)
        for v in op.operands:
            owner = getattr(v, "op", None)
            if owner in position:
                place(owner)
        order.append(op)

    for op in ops:
        place(op)
    term = block.terminator
    block.ops = order + ([term] if term is not None else [])
