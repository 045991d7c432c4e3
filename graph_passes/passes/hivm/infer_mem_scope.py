"""``hivm-infer-mem-scope``: decide the memory of every buffer of a HIVM kernel.

After AscendNPU-IR's ``InferHIVMMemScope``. Kernel arguments live in GM. A local buffer (``hivm.alloc``) gets the
scope its uses require (:data:`OPERAND_SCOPES`: operand positions of each op → scope): operands of vector ops and
the local side of loads/stores live in UB; cube operands live in L1 / L0A / L0B / L0C, and a load's local side
is in L1 when the MTE1 loads read it (else UB). A buffer whose uses require two different scopes is an error naming the op;
a buffer no op constrains stays in UB (vector kernels) — counted as ``buffers-defaulted``. Views of a buffer
(``ViewLike`` ops: ``hivm.multi_buffer_select``) take their source's scope. Counter ``buffers-scoped``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...ir.core import Operation, Value, Vector, ViewLike
from ...ir.types import MemRefType
from .. import ModulePass, PassContext, PassError, register_pass

LOCAL = "local"  # a DMA's local side: UB, unless the buffer's other uses put it in L1 (a cube operand's box)

OPERAND_SCOPES: dict[str, dict[int, str]] = {
    "hivm.load": {0: "gm", 1: LOCAL},
    "hivm.store": {0: "ub", 1: "gm"},
    "hivm.copy": {0: "ub", 1: "ub"},
    "hivm.embedding_gather": {0: "gm", 1: "ub", 2: "ub"},
    # cube side (operands by position): GM boxes land in L1 (a hivm.load whose buffer the MTE1 loads read)
    "hivm.load_l0a": {0: "l1", 1: "l0a"},
    "hivm.load_l0b": {0: "l1", 1: "l0b"},
    "hivm.mmad": {0: "l0a", 1: "l0b", 2: "l0c"},
    "hivm.fixpipe": {0: "l0c", 1: "gm"},
}
"""Op → {operand position: required scope}. Every buffer operand of a ``Vector`` op is in UB."""


def required_scope(op: Operation, index: int) -> str | None:
    table = OPERAND_SCOPES.get(op.name)
    if table is not None:
        return table.get(index)
    if op.has_trait(Vector):
        return "ub"
    return None


@register_pass
@dataclass(frozen=True)
class InferMemScope(ModulePass):
    """Assign gm to kernel arguments and ub / l1 / l0a / l0b / l0c to local buffers from their uses."""

    name: ClassVar[str] = "hivm-infer-mem-scope"

    def run(self, module: Operation, ctx: PassContext) -> None:
        ctx.count("buffers-scoped", 0)
        for func in module.functions:
            if not func.attributes.get("kernel") or "hivm.unsupported" in func.attributes:
                continue
            self.scope_kernel(func, ctx)

    def scope_kernel(self, func: Operation, ctx: PassContext) -> None:
        changed_args = False
        for a in func.body.args:
            if isinstance(a.type, MemRefType) and a.type.scope != "gm":
                if a.type.scope is not None:
                    raise PassError(f"{self.name}: @{func.sym_name}: argument {a.name_hint} is in {a.type.scope}, "
                                    "kernel arguments live in gm")  # fmt: skip
                a.type = a.type.with_scope("gm")
                changed_args = True
                ctx.count("buffers-scoped")
        if changed_args:
            func.set_function_type()
        for op in list(func.walk()):
            if op.name != "hivm.alloc":
                continue
            buf = op.result
            scope = self.scope_of(buf, op)
            if buf.type.scope == scope:
                continue
            if buf.type.scope is not None:
                raise PassError(f"{self.name}: {op.loc}: buffer in {buf.type.scope} is used as {scope}")
            _set_scope(buf, scope)
            ctx.count("buffers-scoped")

    def scope_of(self, buf: Value, alloc: Operation) -> str:
        scope, first, local = None, None, False
        for user, index in _uses(buf):
            want = required_scope(user, index)
            if want == LOCAL and user.name == "hivm.load":
                local = True
                continue
            if want is None:
                continue
            if want == "gm":
                raise PassError(f"{self.name}: {user.loc}: '{user.name}' uses a local buffer "
                                f"(allocated at {alloc.loc}) as its global-memory operand {index}")  # fmt: skip
            if scope is not None and want != scope:
                raise PassError(
                    f"{self.name}: {user.loc}: '{user.name}' needs its operand {index} in {want}, but the buffer "
                    f"allocated at {alloc.loc} is used in {scope} by '{first.name}'"
                )
            scope, first = want, user
        if local and scope not in (None, "ub", "l1"):
            raise PassError(f"{self.name}: {alloc.loc}: a GM load fills the buffer, which '{first.name}' needs in "
                            f"{scope}: loads fill UB or L1")
        return scope or "ub"


def _uses(buf: Value):
    """(op, operand index) of every use of ``buf``, looking through buffer views."""
    for use in buf.uses:
        if use.op.has_trait(ViewLike):
            yield from _uses(use.op.result)
        else:
            yield use.op, use.index


def _set_scope(buf: Value, scope: str) -> None:
    buf.type = buf.type.with_scope(scope)
    for use in buf.uses:
        if use.op.has_trait(ViewLike):
            _set_scope(use.op.result, scope)
