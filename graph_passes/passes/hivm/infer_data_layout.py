"""``hivm-infer-data-layout``: give every cube-path buffer its data layout and record the layout conversions.

After AscendNPU-IR's ``InferHIVMDataLayout``. Each cube op needs its buffers in one layout
(``graph_passes/dialects/hivm_layout.py``: :func:`required_layouts`): the MTE1 loads read an L1 box of ND rows
(transposed when the load is: the box holds a ``.t()`` operand as it lies in GM) and write L0A ``zZ`` / L0B
``nZ`` fractals, ``mmad`` reads those and accumulates into an L0C ``zN`` buffer, the fixpipe reads it and writes GM
rows (ND). The pass

- sets ``layout = #hivm.data_layout<…>`` on every ``hivm.alloc`` a cube op uses (counter ``buffers-laid-out``);
  a buffer two ops need in different layouts (one L1 box read both transposed and not) is an error naming both;
- places the conversions: each op that changes the layout (the MTE1 loads, the fixpipe) gets ``src_layout`` and
  ``dst_layout`` (counter ``layout-conversions``, and one per kind: ``layout-conversions-ND_to_zZ``,
  ``-DN_to_zZ``, ``-ND_to_nZ``, ``-DN_to_nZ``, ``-zN_to_ND``; DN: a transposed ND source).

It runs after ``hivm-infer-mem-scope`` (a layout is chosen per memory: an unscoped buffer is an error) and before
multi-buffering (``hivm-enable-multi-buffer`` gives each copy its alloc's layout). The verifier then rejects an
inconsistent hand edit, and codegen reads the layouts (``codegen/cube_layouts.py``) instead of assuming them.
Vector kernels have no cube ops and are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...dialects.hivm_layout import CONVERSIONS, DataLayout, conversion_kind, required_layouts
from ...ir.core import Operation, Value, ViewLike
from .. import ModulePass, PassContext, PassError, register_pass


@register_pass
@dataclass(frozen=True)
class InferDataLayout(ModulePass):
    """Set the data layout of every cube-path buffer and the src/dst layouts of the MTE1 loads and fixpipes."""

    name: ClassVar[str] = "hivm-infer-data-layout"

    def run(self, module: Operation, ctx: PassContext) -> None:
        ctx.count("buffers-laid-out", 0)
        ctx.count("layout-conversions", 0)
        for func in module.functions:
            if not func.attributes.get("kernel") or "hivm.unsupported" in func.attributes:
                continue
            self.lay_out_kernel(func, ctx)

    def lay_out_kernel(self, func: Operation, ctx: PassContext) -> None:
        chosen: dict[int, tuple[DataLayout, Operation]] = {}  # id(alloc) -> (layout, the first op that needed it)
        for op in func.walk():
            need = required_layouts(op)
            for index, layout in need.items():
                for alloc in _allocs(op.operands[index]):
                    self.lay_out(alloc, layout, op, index, chosen, ctx)
            if op.name in CONVERSIONS:
                self.place_conversion(op, need[0], need[1], ctx)

    def lay_out(self, alloc: Operation, layout: DataLayout, user: Operation, index: int,
                chosen: dict, ctx: PassContext) -> None:  # fmt: skip
        if alloc.result.type.scope is None:
            raise PassError(f"{self.name}: {alloc.loc}: the buffer '{user.name}' uses as operand {index} has no "
                            "memory scope (run hivm-infer-mem-scope first)")  # fmt: skip
        if id(alloc) in chosen:
            first_layout, first = chosen[id(alloc)]
            if first_layout != layout:
                raise PassError(f"{self.name}: {user.loc}: '{user.name}' needs operand {index} as {layout}, but "
                                f"'{first.name}' at {first.loc} needs the same buffer (allocated at {alloc.loc}) as "
                                f"{first_layout}")  # fmt: skip
            return
        chosen[id(alloc)] = (layout, user)
        held = alloc.attributes.get("layout")
        if held == layout:
            return
        if held is not None:
            raise PassError(f"{self.name}: {alloc.loc}: the buffer is laid out {held}, but '{user.name}' at "
                            f"{user.loc} needs it as {layout}")  # fmt: skip
        alloc.attributes["layout"] = layout
        ctx.count("buffers-laid-out")

    def place_conversion(self, op: Operation, src: DataLayout, dst: DataLayout, ctx: PassContext) -> None:
        if op.attributes.get("src_layout") == src and op.attributes.get("dst_layout") == dst:
            return
        op.attributes["src_layout"] = src
        op.attributes["dst_layout"] = dst
        ctx.count("layout-conversions")
        ctx.count(f"layout-conversions-{conversion_kind(src, dst)}")


def _allocs(v: Value) -> list[Operation]:
    """The ``hivm.alloc``s a buffer operand denotes (through views: every copy of a multi-buffered one); none for a
    kernel argument (GM, whose layout is ND by definition)."""
    op = getattr(v, "op", None)
    if op is None:
        return []
    if op.has_trait(ViewLike):
        return [a for s in op.operands for a in _allocs(s)]
    return [op] if op.name == "hivm.alloc" else []
