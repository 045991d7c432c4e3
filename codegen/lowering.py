"""Walking one HIVM kernel into a simulator program: the per-kernel state every emit function works with.

``KernelEmitter`` (every emit function's ``state`` argument) owns the :class:`~simulator.ProgramBuilder` (``b``),
maps every SSA value to what the program sees —
an index value to an expression (a constant or a scalar register), a buffer to its address expression and type, a
float scalar to its value or kernel param — and walks the kernel's body: ``scf.for`` becomes a ``Loop`` over a
scalar register, other ops go to their emitter in :data:`codegen.emitters.EMITTERS`.

Sizes of GM buffers are sympy expressions over shape symbols; the program sees them through kernel params:
a tiling parameter whose expression is the same, or a *derived* param (``gm_<arg>_<dim>``) that the host tiling
function evaluates too (``CompiledKernel.tiling``).
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass

import sympy

from graph_passes.dialects.hivm import FlagOp, VectorOp
from graph_passes.intmath import align_up, prod
from graph_passes.ir.core import Operation, Terminator, Value
from graph_passes.ir.sizes import as_expr
from graph_passes.ir.types import IndexType, MemRefType, ScalarType
from graph_passes.target import module_target
from simulator import ProgramBuilder, ProgramError
from simulator.expr import Expr, Imm, Reg, as_expr as sim_expr
from simulator.isa.sync import PipeBarrier

from .dtypes import ITEMSIZE
from .errors import CodegenError
from .stages import emit_pipelined_body, is_pipelined
from .sync import PIPES

RESERVED = {"block_idx", "block_num", "subblock_idx", "subblock_num", "min", "max", "inf", "nan"}


@dataclass
class Buf:
    """A buffer as the program sees it: ``scope`` ('gm' or 'ub'), byte address expression, IR type, and for a UB
    buffer the tag of the logical buffer (the alloc) its instructions name (the simulator's buffer-tag check)."""

    scope: str
    addr: Expr
    type: MemRefType
    tag: str | None = None

    @property
    def dtype(self) -> str:
        return self.type.dtype

    @property
    def es(self) -> int:
        return ITEMSIZE[self.type.dtype]

    def flat(self) -> "Buf":
        """This local buffer as 1-D over its row-major elements (a buffer whose last dim is 1 is contiguous)."""
        n = prod(self.type.static_shape())
        return Buf(self.scope, self.addr, MemRefType((n,), self.type.dtype, self.type.scope), self.tag)

    def static_strides(self) -> list[int]:
        """Row-major element strides of a local buffer (its static shape, padding included)."""
        shape = self.type.static_shape()
        strides, acc = [], 1
        for d in reversed(shape):
            strides.append(acc)
            acc *= d
        return strides[::-1]


class TracingBuilder(ProgramBuilder):
    """A ProgramBuilder that remembers, for every instruction, the HIVM op it was emitted for, and whether the
    kernel's scratch may have been touched since the last ``pipe_barrier V`` (``scratch_dirty``)."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.current = None
        self.origin: dict[int, Operation] = {}
        # Note: conservative across control flow: a loop body starts dirty (the previous iteration); after a loop or
        # an if, a barrier inside may not have run, so it is dirty if it was before or the scratch was touched inside.
        self.scratch_dirty = True
        self.scratch_touches = 0

    def emit(self, ins):
        if self.current is not None:
            self.origin[id(ins)] = self.current
        if isinstance(ins, PipeBarrier) and ins.barrier_pipe in ("V", "ALL"):
            self.scratch_dirty = False
        return super().emit(ins)

    def touch_scratch(self) -> None:
        self.scratch_dirty = True
        self.scratch_touches += 1

    @contextmanager
    def _nested(self, cm, enter_dirty: bool):
        before, touches = self.scratch_dirty, self.scratch_touches
        self.scratch_dirty = before or enter_dirty
        with cm as r:
            yield r
        self.scratch_dirty = before or self.scratch_touches != touches

    def loop(self, *a, **kw):
        return self._nested(super().loop(*a, **kw), True)

    def if_(self, cond):
        return self._nested(super().if_(cond), False)

    def else_(self):
        return self._nested(super().else_(), False)


def _ident(hint: str | None, fallback: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_]", "_", hint or "") or fallback
    return name if not name[0].isdigit() else f"v{name}"


class KernelEmitter:
    """One kernel's emission: the walk over its body and the state its emit functions share (``state``)."""

    def __init__(self, func: Operation, module: Operation, emitters: dict):
        self.func, self.module, self.emitters = func, module, emitters
        self.target = module_target(module)
        self.sizes = module.size_vars()
        self.tiling = {k: as_expr(v) for k, v in (func.attributes.get("tiling") or {}).items()}
        self.taken: set[str] = set(RESERVED)
        self.values: dict[Value, object] = {}  # index → Expr, buffer → Buf, float scalar → Expr
        self.gm_params: list[str] = []
        self.tiling_params: list[str] = []
        self.derived: dict[str, sympy.Expr] = {}  # derived param → size expression
        self.scratch_region: tuple[int, int] | None = None  # (UB byte offset, bytes) of the scratch alloc
        self.scratch_used = 0  # bytes of it held by the op being emitted (nested uses stack)
        self.region_tags: list = []  # buffer tags of the operands of the region being emitted (codegen.vector)
        self.b: TracingBuilder | None = None
        self.scalar_indices: set[int] = set()  # positions of index arguments passed by value (not tiling params)
        self.last_vector_op: Operation | None = None  # the vector op emitted last (the scratch's latest user)

    def spare_event_id(self, src: str, dst: str) -> int | None:
        """An event id of the ``src`` → ``dst`` flags (simulator pipe names) that no hivm.set_flag/wait_flag of the
        kernel uses, for a handshake inside one op's instructions (its set and wait adjacent); None when all are."""
        used = {i for op in self.func.walk() if isinstance(op, FlagOp)
                and PIPES.get(op.attributes["src_pipe"]) == src and PIPES.get(op.attributes["dst_pipe"]) == dst
                for i in op.attributes["event_ids"]}
        return next((i for i in range(self.target.event_ids_per_pipe_pair) if i not in used), None)

    # -- names and registers -------------------------------------------------------------------------------------
    def fresh(self, hint: str | None, fallback: str = "r") -> str:
        base = _ident(hint, fallback)
        name, i = base, 1
        while name in self.taken:
            name, i = f"{base}_{i}", i + 1
        self.taken.add(name)
        return name

    def mov(self, hint: str, value) -> Expr:
        """One scalar instruction: a fresh register = value (constants stay immediates, no instruction)."""
        value = sim_expr(value)
        if isinstance(value, Imm):
            return value
        return self.b.mov(self.fresh(hint), value)

    # -- values ----------------------------------------------------------------------------------------------------
    def index(self, v: Value) -> Expr:
        e = self.values.get(v)
        if not isinstance(e, Expr) or not isinstance(v.type, IndexType):
            raise CodegenError(self.b.current, f"index operand {v} has no value in the program")
        return e

    def static(self, v: Value) -> int | None:
        """The value of an index operand known at compile time (an arith.constant), else None."""
        e = self.values.get(v)
        return int(e.value) if isinstance(e, Imm) else None

    def buf(self, v: Value) -> Buf:
        b = self.values.get(v)
        if not isinstance(b, Buf):
            raise CodegenError(self.b.current, f"operand of type {v.type} is not a buffer the program knows")
        return b

    def scalar(self, v: Value) -> Expr:
        e = self.values.get(v)
        if not isinstance(e, Expr):
            raise CodegenError(self.b.current, f"scalar operand {v} has no value in the program")
        return e

    def size(self, e) -> Expr:
        """A GM size expression over shape symbols as a program expression over kernel params."""
        e = as_expr(e)
        if e.is_Integer:
            return Imm(int(e))
        for name, t in self.tiling.items():
            if t == e or self.sizes.statically_known_equal(t, e):
                return Reg(name)
        for name, t in self.derived.items():
            if t == e:
                return Reg(name)
        name = self.fresh(f"size{len(self.derived)}")
        self.derived[name] = e
        return Reg(name)

    # -- the kernel's scratch buffer (hivm.alloc {scratch = true}) ------------------------------------------------
    def scratch_size(self, nbytes: int) -> int:
        """The bytes of scratch ``nbytes`` take: scratch parts start on the target's UB alignment."""
        return align_up(nbytes, self.target.ub_align)

    def scratch_free(self) -> int:
        """Bytes of the kernel's scratch buffer not held by the op being emitted (0 without one)."""
        return 0 if self.scratch_region is None else self.scratch_region[1] - self.scratch_used

    def scratch(self, nbytes: int, what: str, fence: bool = False) -> int:
        """The UB address of ``nbytes`` of the kernel's planned scratch buffer (after what the op already holds).

        Ops share the scratch: an op's first write of it must follow a ``pipe_barrier V`` after the previous op's
        uses. ``fence``: emit that barrier here, unless no instruction touched the scratch since the last barrier (an
        independent op before this one then shares its level: no vector start-up in between); otherwise the caller
        emits it."""
        if self.scratch_region is None or self.scratch_size(nbytes) > self.scratch_free():
            have = "no scratch buffer" if self.scratch_region is None else f"{self.scratch_free()} B of scratch free"
            raise CodegenError(
                self.b.current,
                f"{what} needs {nbytes} B of UB scratch; the kernel has {have} (hfusion-auto-schedule sizes the "
                f"'hivm.alloc {{scratch = true}}' that convert-to-hivm emits)",
            )
        if fence and self.b.scratch_dirty:
            self.b.pipe_barrier("V")
        self.b.touch_scratch()
        return self.scratch_region[0] + self.scratch_used

    # -- the walk ----------------------------------------------------------------------------------------------------
    def bind_args(self) -> None:
        args = list(self.func.body.args)
        n_tiling = len(self.tiling)  # convert-to-hivm appends one index parameter per tiling entry
        for i, a in enumerate(args):
            t = a.type
            if isinstance(t, IndexType) and i < len(args) - n_tiling:
                name = self.fresh(a.name_hint, "s")
                self.gm_params.append(name)  # an index argument of the kernel (e.g. a dynamic element count for a
                self.values[a] = Reg(name)  # mean): by value, in argument order, like a scalar
                self.scalar_indices.add(i)
            elif isinstance(t, MemRefType):
                if t.scope not in (None, "gm"):
                    raise CodegenError(self.func, f"kernel argument %{a.name_hint} of type {t} is not in GM")
                name = self.fresh(a.name_hint, "arg")
                self.gm_params.append(name)
                self.values[a] = Buf("gm", Reg(name), t)
            elif isinstance(t, IndexType):
                if a.name_hint not in self.tiling:
                    raise CodegenError(self.func, f"index parameter %{a.name_hint} has no entry in 'tiling'")
                self.taken.add(a.name_hint)
                self.tiling_params.append(a.name_hint)
                t_expr = self.tiling[a.name_hint]
                # Note: a parameter whose tiling expression is a constant is a compile-time constant (folds, merges
                # DMA dims); it stays a kernel param so the launch interface does not depend on it.
                self.values[a] = Imm(int(t_expr)) if t_expr.is_Integer else Reg(a.name_hint)
            elif isinstance(t, ScalarType):
                name = self.fresh(a.name_hint, "s")
                self.gm_params.append(name)  # a scalar kernel argument: passed by value, in argument order
                self.values[a] = Reg(name)
            else:
                raise CodegenError(self.func, f"kernel argument of type {t} is not supported")

    def block(self, block) -> None:
        for op in block.ops:
            self.op(op)

    def op(self, op: Operation) -> None:
        if op.has_trait(Terminator):
            if op.operands:
                raise CodegenError(op, "returning or yielding values is not supported in kernels")
            return
        if op.name == "scf.for":
            return self.loop(op)
        emitter = self.emitters.get(op.name)
        if emitter is None:
            raise CodegenError(op, "no emitter for this op")
        saved, self.b.current = self.b.current, op
        try:
            emitter(self, op)
            if isinstance(op, VectorOp):
                self.last_vector_op = op
        except ProgramError as e:  # the simulator's ISA rejected an instruction: say which op asked for it
            raise CodegenError(op, f"the simulator's ISA rejects the emitted instruction: {e}") from e
        finally:
            self.b.current = saved

    def loop(self, op: Operation) -> None:
        if len(op.operands) > 3:
            raise CodegenError(op, "loop-carried values (iter_args) are not supported in kernels")
        self.b.current = op
        lo, hi, step = (self.index(op.operand(n)) for n in ("lower", "upper", "step"))
        iv = op.body.args[0]
        var = self.fresh(iv.name_hint, "i")
        self.values[iv] = Reg(var)
        with self.b.loop(var, lo, hi, step):
            self.b.current = None
            if is_pipelined(op.body):
                emit_pipelined_body(self, op, op.body)
            else:
                self.block(op.body)
        self.b.current = None
