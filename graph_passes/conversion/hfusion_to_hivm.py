"""Lower one scheduled vector kernel from hfusion tensor ops to a HIVM function (docs/hivm.md, docs/schedule.md).

After AscendNPU-IR's ``convert-hfusion-to-hivm`` applied to the loops ``hfusion-auto-schedule`` asked for. The
kernel's program, per work item (a tile of the parallel dims), cyclic over the cores::

    for t in range(block_idx, n_tiles, block_dim):
        off[d], len[d] = tile t's offset and valid extent along each parallel dim d
        if the reduced dims fit one tile:          # one pass
            load, compute every op in order (in place where the buffer plan says), store the results
        else:                                      # one pass per reduction, then one for the outputs
            for each reduction R (in order):
                acc_R = identity;  for each reduced tile j:  recompute R's input;  acc_R ⊕= reduce(input)
            compute/store the results spanning the reduced dims in one more pass over the reduced tiles
            compute/store the results that do not span them

Values that do not span the reduced dims ("small": reduction results, row-wise operands) are computed once per
work item, outside the reduced loops; values that span them are recomputed in each pass that needs them.
"""

from __future__ import annotations

from contextlib import contextmanager

from ..dialects.arith import BINARY_OPS, ConstantOp
from ..dialects.func import FuncOp, ReturnOp
from ..dialects import hivm
from ..dialects.scf import ForOp, YieldOp
from ..ir.builder import Builder
from ..ir.core import Block, OpResult, Operation, Region, Value
from ..ir.sizes import as_expr
from ..ir.types import INT_LIMITS, IndexType, MemRefType, TensorType, is_float_dtype
from ..dialects.schedule_attrs import VectorSchedule
from ..idioms.columns import scalar_column
from ..schedule.buffers import BufferPlan
from ..schedule.software_pipeline import compute_order
from ..schedule.kernel_info import KernelInfo
from .index_ops import lower_arange, lower_gather
from .pipelined_rows import Pipelined

REDUCE_IDENTITY = {"sum": 0.0, "prod": 1.0, "max": float("-inf"), "min": float("inf"), "any": 0, "all": 1}
REDUCE_COMBINE = {"sum": "add", "prod": "mul", "max": "max", "min": "min", "any": "logical_or", "all": "logical_and"}


class LoweringError(Exception):
    """The kernel cannot be lowered as scheduled (a bug in the schedule or a body changed since)."""


def gm_types(info: KernelInfo) -> dict:
    """Kernel argument → its GM buffer type (the kernel's view of the host tensor: same elements, same order)."""
    out = {}
    for a in info.func.body.args:
        if not isinstance(a.type, TensorType):
            continue
        mask = info.arg_masks.get(a)
        shape = a.type.shape
        if mask is None:
            out[a] = MemRefType(tuple(shape), a.type.dtype, "gm")
            continue
        views = [v for v, (src, _) in info.views.items() if src is a]
        if views and info.views[views[0]][1] is None:  # a reshape view: the kernel sees the view's shape
            shape = views[0].type.shape
        elif a in info.outputs:
            shape = info.results[info.outputs.index(a)].type.shape
        if len(shape) != len(mask):
            raise LoweringError(f"argument of type {a.type} cannot be viewed over domain dims {mask}")
        out[a] = MemRefType(tuple(info.expanded_shape(shape, mask)), a.type.dtype, "gm")
    return out


class KernelLowering:
    stage_tag: int | None = None  # ``stage`` attribute of the ops built (the body of a pipelined loop)

    def __init__(self, info: KernelInfo, schedule: VectorSchedule, plan: BufferPlan, tiling: dict, ub_align: int):
        """Lower ``info``'s kernel as ``schedule`` says, allocating ``plan``'s buffers (read from the schedule:
        schedule/record.py); ``tiling``: the host tiling function."""
        self.info = info
        self.ub_align = ub_align
        self.tile = list(schedule.tile)
        self.looped = schedule.reduce_looped
        self.serial = list(schedule.serial_dims)
        self.tiling = tiling
        self.plan = plan
        self.copies = {i: b.copies for i, b in enumerate(schedule.buffers)}  # buffer index -> copies
        self.stage_split = schedule.stage_split if schedule.pipelined else None
        self.scaled = self._scaled_columns()
        self.counts = {"loads": 0, "stores": 0, "vector-ops": 0}
        self.scratch = schedule.scratch_bytes  # the code generator's temporary UB, as the schedule sized it
        self.stage_bufs: dict = {}  # buffer index -> the copy the stage being lowered uses (pipelined kernels)

    # -- building blocks -------------------------------------------------------------------------------------------
    def op(self, cls_or_name, operands=(), result_types=(), **attrs) -> Operation:
        if isinstance(cls_or_name, str):
            if self.stage_tag is not None:
                attrs["stage"] = self.stage_tag
            op = Operation.create(cls_or_name, list(operands), list(result_types), attrs, loc=self.loc)
            return self.b.insert(op)
        return self.create(cls_or_name, operands, result_types, **attrs)

    def create(self, cls, operands=(), result_types=(), regions=(), **attrs) -> Operation:
        """Build an op at the insertion point with the location of the hfusion op being lowered (and the stage of
        a pipelined loop body being built)."""
        self.b.loc = self.loc
        if self.stage_tag is not None:
            attrs["stage"] = self.stage_tag
        return self.b.create(cls, operands, result_types, regions, **attrs)

    @contextmanager
    def located(self, v_or_op):
        """New ops get the location of the hfusion op (or kernel argument) they come from."""
        saved = self.loc
        op = v_or_op if isinstance(v_or_op, Operation) else getattr(v_or_op, "op", None)
        if op is not None and op.loc is not None:
            self.loc = op.loc
        elif op is None and getattr(v_or_op, "name_hint", None):
            self.loc = f"{self.info.func.sym_name}:%{v_or_op.name_hint}"  # a kernel argument: its name
        try:
            yield
        finally:
            self.loc = saved

    def const(self, value: int) -> Value:
        if value not in self.consts:
            op = ConstantOp([], [IndexType()], {"value": int(value)}, [], self.kernel_loc)
            self.top.insert(op)
            op.result.name_hint = f"c{value}" if value >= 0 else f"cm{-value}"
            self.consts[value] = op.result
        return self.consts[value]

    def arith(self, name: str, a: Value, b: Value, hint: str | None = None) -> Value:
        r = self.op(BINARY_OPS[f"arith.{name}"], [a, b], [IndexType()]).result
        r.name_hint = hint
        return r

    def size(self, e) -> Value:
        """An index value for a size expression: a constant, or the tiling parameter with that exact expression."""
        e = as_expr(e)
        if e.is_Integer:
            return self.const(int(e))
        for name, expr in self.tiling.items():
            if as_expr(expr) == e:
                return self.params[name]
        raise LoweringError(f"size {e} is neither constant nor a tiling parameter")

    def vec(self, cls, operands, **attrs) -> None:
        self.counts["vector-ops"] += 1
        self.create(cls, operands, [], **attrs)

    # -- the function -----------------------------------------------------------------------------------------------
    def begin_function(self, old_args: list, arg_types: list) -> FuncOp:
        """The kernel's HIVM function: ``arg_types`` for the old arguments, then one index argument per tiling
        parameter, the old attributes; builders at its end (``b``) and top (``top``, constants go first)."""
        info, func = self.info, self.info.func
        param_names = sorted(self.tiling)
        attrs = {k: v for k, v in func.attributes.items() if k not in ("sym_name", "function_type")}
        new = FuncOp.build(func.sym_name, arg_types + [IndexType()] * len(param_names), [],
                           [a.name_hint for a in old_args] + param_names, **attrs)  # fmt: skip
        self.kernel_loc = self.loc = func.loc or next((op.loc for op in info.ops if op.loc is not None),
                                                      func.sym_name)
        new.loc = self.kernel_loc
        body = new.body
        self.args = dict(zip(old_args, body.args))
        self.params = dict(zip(param_names, body.args[len(old_args) :]))
        self.b = Builder.at_end(body, func.loc)
        self.top = Builder(body, 0, func.loc)
        self.consts: dict = {}
        return new

    def begin_kernel(self, old_args, types):
        """The kernel function with ``types`` for ``old_args``, the body's scalar arguments and constants bound
        (the constants cloned at the top), and the block index: ``(function, bid)``."""
        new = self.begin_function(old_args, types)
        self.scalars = {a: self.args[a] for a in old_args if not isinstance(a.type, TensorType)}
        for op in self.info.ops:  # scalar constants of the body, cloned at the top
            if op.name == "arith.constant":
                self.scalars[op.result] = self.top.insert(op.clone()).result
        bid = self.op(hivm.GetBlockIdxOp, [], [IndexType()]).result
        bid.name_hint = "bid"
        return new, bid

    def build(self) -> FuncOp:
        info, func = self.info, self.info.func
        gm = gm_types(info)
        old_args = list(func.body.args)
        new, bid = self.begin_kernel(old_args, [gm.get(a, a.type) for a in old_args])
        stages = Pipelined(self, self.copies) if self.stage_split is not None else None
        self.bufs = {}
        for buf in self.plan.buffers:
            shape = buf.shape(self.tile, self.ub_align)
            with self.located(buf.values[0] if buf.values else self.info.func):
                if stages is not None and buf.index in stages.doubled:
                    stages.alloc_copies(buf, shape)
                    continue
                # hivm-mark-multi-buffer gives it the schedule's copies of buffer ``buf.index``
                alloc = self.op(hivm.AllocOp, [], [MemRefType(tuple(shape), buf.dtype)], buffer=buf.index)
            alloc.result.name_hint = f"ub{buf.index}"
            self.bufs[buf.index] = alloc.result
        if self.scratch:  # the code generator's temporary UB (docs/codegen.md), planned like any buffer
            parts = {"stages": 2} if stages is not None else {}  # one half per pipeline stage
            alloc = self.op(hivm.AllocOp, [], [MemRefType((self.scratch,), "i8")], scratch=True, **parts)
            alloc.result.name_hint = "scratch"

        self.hoisted: set = set()
        if stages is not None:
            stages.loop(bid)  # hoists the invariant loads itself
        else:
            self.hoist_invariant_loads()
            loop = self.open_loop(bid, self.params["n_tiles"], self.params["block_dim"], "t")
            self.work_item(loop.body.args[0])
            self.close_loop(loop)
        self.create(ReturnOp, [], [])
        new.set_function_type()
        return new

    def open_loop(self, lb, ub, step, iv_name) -> Operation:
        block = Block([IndexType()], [iv_name])
        loop = self.op(ForOp, [lb, ub, step], [], regions=[Region([block])])
        self.saved = getattr(self, "saved", []) + [self.b]
        self.b = Builder.at_end(block, self.b.loc)
        return loop

    def close_loop(self, loop: Operation) -> None:
        self.create(YieldOp, [], [])
        self.b = self.saved.pop()

    # -- the load stage ---------------------------------------------------------------------------------------------
    def invariant(self, v: Value) -> bool:
        """Whether ``v``'s GM region is the same in every work item: it spans only dims that are never tiled (its
        offsets and extents do not depend on any loop's induction variable), e.g. a broadcast parameter row."""
        return all(f"tiles{d}" not in self.tiling for d in self.info.masks[v])

    def loads_of(self, roots, every: bool = False) -> list[Value]:
        """The inputs/views not loaded yet that computing ``roots`` needs, in the order of the first op ``emit``
        computes (depth-first, operands first) that reads each — so the first ops' loads come first, and
        hivm-inject-sync can start them before the later loads land (stops at ready values and, unless ``every``,
        at reduction results, which a multi-pass kernel computes in their own pass)."""
        info, seen, out, first_use = self.info, set(), [], {}
        computed = 0

        def visit(v):
            nonlocal computed
            if id(v) in seen or id(v) in self.ready or not isinstance(v.type, TensorType):
                return
            seen.add(id(v))
            if v in info.row_gathers:  # read row by row from GM by its gather (hivm.embedding_gather)
                return
            if v in info.views or v in info.inputs:
                out.append(v)
                return
            op = getattr(v, "op", None)
            if op is None or (self.looped and not every and op.name == "hfusion.reduce"):
                return
            for x in op.operands:
                visit(x)
            for x in op.operands:
                first_use.setdefault(id(x), computed)
            computed += 1

        for r in roots:
            visit(r)
        return sorted(out, key=lambda v: first_use.get(id(v), computed))

    def hoist_invariant_loads(self) -> None:
        """Load the loop-invariant inputs once per core, before the work-item loop (no DMA inside the loop feeds
        their buffers, so hivm-mark-multi-buffer leaves them single)."""
        self.dims = {d: (self.const(0), self.params[f"n{d}"]) for d in range(self.info.rank)}
        self.ready = set()
        for v in self.loads_of(self.info.results, every=True):
            if self.invariant(v):
                self.emit(v)
        for v in self.plan.hoisted:  # loop-invariant compute (docs/schedule.md): after the loads it reads
            self.emit(v)
        self.hoisted = set(self.ready)

    def load_stage(self, roots) -> None:
        """Load every per-tile input ``roots`` need, grouped before the compute that reads them (CopyIn → Compute
        → CopyOut), so one set/wait per pipe pair covers the group."""
        for v in self.loads_of(roots):
            self.emit(v)

    # -- one work item ------------------------------------------------------------------------------------------
    def tile_of(self, d: int, index: Value) -> tuple[Value, Value]:
        if "tail_full" in self.tiling and f"tiles{d}" in self.tiling:
            return self.balanced_tile(d, index)
        # a dim split per launch (schedule split_dims) steps by its tiling parameter, at most the tile
        step = self.params[f"step{d}"] if f"step{d}" in self.tiling else self.const(self.tile[d])
        off = self.arith("muli", index, step, f"off{d}")
        n = as_expr(self.tiling[f"n{d}"])
        if self.tile[d] == 1 or (n.is_Integer and int(n) % self.tile[d] == 0):
            # every work item's tile is whole: a static extent (codegen drops a dim of one, runs whole rows flat)
            return off, self.const(self.tile[d])
        rem = self.arith("subi", self.params[f"n{d}"], off)
        length = self.arith("minsi", rem, step, f"len{d}")
        return off, length

    def balanced_tile(self, d: int, index: Value) -> tuple[Value, Value]:
        """Offset and extent of work item ``index`` when the last round is spread over every core
        (graph_passes/schedule/tail.py, ``BalancedTail.rows_of``): full tiles first, then ``tail_units`` units of
        ``tail_unit`` rows each, the first ``tail_extra`` items one unit more."""
        full, unit = self.const(int(self.tiling["tail_full"])), int(self.tiling["tail_unit"])
        q, r, tile = self.const(int(self.tiling["tail_units"])), self.const(int(self.tiling["tail_extra"])), \
            self.const(self.tile[d])
        zero, one = self.const(0), self.const(1)
        u = self.arith("maxsi", self.arith("subi", index, full), zero, "u")  # 0 for a full tile
        lo = self.arith("addi", self.arith("muli", u, q), self.arith("minsi", u, r))
        units = self.arith("addi", q, self.arith("minsi", self.arith("maxsi", self.arith("subi", r, u), zero), one))
        in_tail = self.arith("minsi", self.arith("maxsi", self.arith("subi", self.arith("addi", index, one), full),
                                                 zero), one)
        # index·T − u·T is F·B·T for a last-round item, index·T for a full one
        off = self.arith("addi", self.arith("muli", self.arith("subi", index, u), tile),
                         self.arith("muli", lo, self.const(unit)), f"off{d}")
        tail_rows = self.arith("muli", units, self.const(unit))
        length = self.arith("addi", tile, self.arith("muli", in_tail, self.arith("subi", tail_rows, tile)))
        n = int(as_expr(self.tiling[f"n{d}"]))
        if n % unit:  # the last unit ends at the tensor's end
            length = self.arith("minsi", length, self.arith("subi", self.params[f"n{d}"], off))
        length.name_hint = f"len{d}"
        return off, length

    def work_item(self, t: Value) -> None:
        info = self.info
        self.dims = {}
        tiled = [d for d in info.parallel_dims if f"tiles{d}" in self.tiling and d not in self.serial]
        rem = t
        for k, d in enumerate(reversed(tiled)):
            if k == len(tiled) - 1:
                idx = rem
            else:
                idx = self.arith("remsi", rem, self.params[f"tiles{d}"])
                rem = self.arith("floordivsi", rem, self.params[f"tiles{d}"])
            self.dims[d] = self.tile_of(d, idx)
        for d in range(info.rank):
            if d not in self.dims:
                self.dims[d] = (self.const(0), self.params[f"n{d}"])
        self.ready: set = set(self.hoisted)
        if not self.looped:
            loops = []
            for d in self.serial:  # the tiles of a serial dim stay on this core: whole GM rows (docs/schedule.md)
                if f"tiles{d}" in self.tiling:
                    loop = self.open_loop(self.const(0), self.params[f"tiles{d}"], self.const(1), f"j{d}")
                    loops.append(loop)
                    self.dims[d] = self.tile_of(d, loop.body.args[0])
            self.load_stage(info.results)
            for out, res in zip(info.outputs, info.results):
                self.emit(res)
                self.store(res, out)
            for loop in reversed(loops):
                self.close_loop(loop)
            return
        self.small_ready: set = set()
        for op in info.ops:
            if op.name == "hfusion.reduce":
                self.reduction_pass(op)
        big = [(o, r) for o, r in zip(info.outputs, info.results) if not info.is_small(r)]
        if big:
            self.hoist_small([r for _, r in big])
            self.over_reduced_tiles(lambda: [self.load_stage([r for _, r in big])]
                                    + [(self.emit(r), self.store(r, o)) for o, r in big])
        small = [r for r in info.results if info.is_small(r)]
        self.load_stage(small)
        for out, res in zip(info.outputs, info.results):
            if info.is_small(res):
                self.emit(res)
                self.store(res, out)

    def over_reduced_tiles(self, body) -> None:
        """Run ``body`` inside loops over the tiles of the reduced dims (big values are recomputed inside)."""
        loops, saved_dims = [], dict(self.dims)
        for d in self.info.reduce_dims:
            if f"tiles{d}" not in self.tiling:
                continue
            loop = self.open_loop(self.const(0), self.params[f"tiles{d}"], self.const(1), f"j{d}")
            loops.append(loop)
            self.dims[d] = self.tile_of(d, loop.body.args[0])
        outer_ready = set(self.ready)
        body()
        self.ready = outer_ready
        for loop in reversed(loops):
            self.close_loop(loop)
        self.dims = saved_dims

    def hoist_small(self, roots) -> None:
        """Compute the small values the big ``roots`` depend on, before entering the reduced loops."""
        seen, order = set(), []

        def visit(v):
            if id(v) in seen or not isinstance(v.type, TensorType):
                return
            seen.add(id(v))
            if self.info.is_small(v):
                order.append(v)
                return
            if hasattr(v, "op") and v not in self.info.views:
                for x in v.op.operands:
                    visit(x)

        for r in roots:
            visit(r)
        self.load_stage(order)
        for v in order:
            self.emit(v)

    def reduction_pass(self, op: Operation) -> None:
        with self.located(op):
            self._reduction_pass(op)

    def _reduction_pass(self, op: Operation) -> None:
        kind = op.attributes["kind"]
        src, res = op.operands[0], op.result
        acc, part = self.buffer(res), self.bufs[self.plan.partial[op].index]
        self.hoist_small([src])
        self.vec(hivm.VFillOp, [acc, *self.extents(res)], value=self.identity(kind, res.type.dtype))
        # Note: the op's own dims, not the kernel's union: a unit dim the result keeps (softmax over dim 0 of
        # [s0, s1, 1] beside a mean over [0, 2]) is not reduced, or its partial would be laid out without it.
        dims = [self.info.masks[src][i] for i in op.attributes["dims"]]

        def body():
            self.load_stage([src])
            self.emit(src)
            self.vec(hivm.VReduceOp, [self.buffer(src), part, *self.extents(src)], kind=kind, dims=dims)
            self.vec(hivm.VBinaryOp, [acc, part, acc, *self.extents(res)], fun=REDUCE_COMBINE[kind])

        self.over_reduced_tiles(body)
        self.ready.add(id(res))

    @staticmethod
    def identity(kind: str, dtype: str):
        value = REDUCE_IDENTITY[kind]
        if is_float_dtype(dtype) or kind in ("sum", "prod", "any", "all"):
            return value if is_float_dtype(dtype) else int(value)
        lo, hi = INT_LIMITS[dtype]
        return lo if kind == "max" else hi

    # -- values ------------------------------------------------------------------------------------------------------
    def buffer(self, v: Value) -> Value:
        i = self.plan.of_value[v].index
        return self.stage_bufs.get(i) or self.bufs[i]

    def extents(self, v: Value) -> list[Value]:
        mask = self.info.masks[v]
        out = [self.dims[d][1] if d in mask else self.const(1) for d in range(self.info.rank)]
        if v in self.info.gather_sources:  # a gathered source's rows are whole
            d, size = self.info.gather_sources[v]
            out[d] = self.const(size)
        return out

    def gm_offsets(self, mask, extra=None) -> list[Value]:
        offs = []
        for d in range(self.info.rank):
            if d not in mask:
                offs.append(self.const(0))
                continue
            off = self.dims[d][0]
            if extra is not None:
                e = extra[mask.index(d)]
                if not (as_expr(e).is_Integer and int(e) == 0):
                    off = self.arith("addi", off, self.size(e))
            offs.append(off)
        return offs

    def _scaled_columns(self) -> dict:
        """Column sources ``v = r × c`` (``c`` a scalar constant) read only as per-row scalars: ``v → (r, c)``. No
        op computes them: each binary reading ``v`` reads ``r`` with ``column_scale = c`` and codegen's scalar unit
        multiplies each row's value as it loads it (a layer norm's mean: one vector step fewer a work item). Only
        when every use is such a binary (``idioms.columns.scalar_column`` on the tile) and, in a pipelined kernel, ``r``,
        ``v`` and those binaries are computed in the same stage (``r`` is not carried for them)."""
        info, plan = self.info, self.plan
        if not plan.scalar_columns or info.rank != 2:
            return {}
        order = compute_order(info, plan) if self.stage_split is not None else []
        stage = {id(x): int(i >= self.stage_split) for i, x in enumerate(order)}
        out = {}
        for op in info.ops:
            if op.name != "hfusion.elemwise_binary" or op.attributes["fun"] != "mul":
                continue
            v = op.result
            consts = [x for x in op.operands if isinstance(x, OpResult) and x.op.name == "arith.constant"]
            tensors = [x for x in op.operands if isinstance(x.type, TensorType)]
            if len(consts) != 1 or len(tensors) != 1 or info.masks.get(tensors[0]) != info.masks.get(v):
                continue
            if not v.users or not all(b.name == "hfusion.broadcast" and b.result in plan.inlined for b in v.users):
                continue
            binaries = [u for b in v.users for u in b.result.uses]
            ok = bool(binaries) and all(
                u.op.name == "hfusion.elemwise_binary" and plan.columns(u.op) and scalar_column(
                    u.op.attributes["fun"], u.index == 0, v.type.dtype, self.tile[0], self.tile[1])
                for u in binaries)
            same = {stage.get(id(x)) for x in [v, tensors[0]] + [u.op.result for u in binaries]}
            if ok and len(same) == 1:
                out[v] = (tensors[0], consts[0].op.attributes["value"])
        return out

    def operand(self, v: Value) -> Value:
        v = self.plan.source(v)  # a broadcast read in place by its binary user: its source row or column
        if v in self.scaled:  # its source, multiplied as the scalar unit reads it (_scaled_columns)
            v = self.scaled[v][0]
        if isinstance(v.type, TensorType):
            self.emit(v)
            return self.buffer(v)
        if v not in self.scalars:
            raise LoweringError(f"scalar operand {v} is not a constant or kernel argument")
        return self.scalars[v]

    def store(self, v: Value, out) -> None:
        mask = self.info.masks[v]
        self.counts["stores"] += 1
        # Note: a result not spanning a tiled parallel dim (an arange row returned beside the rows it fed) is the
        # same in every tile along that dim: only the tile at offset 0 stores it (a loop of 0 or 1 iterations),
        # so two cores never write the same GM block.
        missing = [d for d in self.info.parallel_dims if d not in mask and f"tiles{d}" in self.tiling]
        with self.located(v):
            loop = None
            if missing:
                first = self.dims[missing[0]][0]
                for d in missing[1:]:
                    first = self.arith("addi", first, self.dims[d][0])
                once = self.arith("subi", self.const(1), self.arith("minsi", first, self.const(1)), "once")
                loop = self.open_loop(self.const(0), once, self.const(1), "first_tile")
            self.create(hivm.StoreOp, [self.buffer(v), self.args[out], *self.gm_offsets(mask), *self.extents(v)], [])
            if loop is not None:
                self.close_loop(loop)

    def emit(self, v: Value) -> None:
        if id(v) in self.ready or v in self.scaled:  # a scaled column is computed by its readers (_scaled_columns)
            return
        with self.located(v):
            self._emit(v)

    def _emit(self, v: Value) -> None:
        info = self.info
        if v in info.views or v in info.inputs:
            src, offsets = info.views.get(v, (v, None))
            mask = info.masks[v]
            self.counts["loads"] += 1
            gm_offsets = self.gm_offsets(mask, offsets)
            if v in info.gather_sources:  # whole rows along the gathered dim
                gm_offsets[info.gather_sources[v][0]] = self.const(0)
            ops = [self.args[src], self.buffer(v), *gm_offsets, *self.extents(v)]
            with self.located(src if v in info.inputs else v):
                self.create(hivm.LoadOp, ops, [])
            self.ready.add(id(v))
            return
        op = v.op
        if op.name == "hfusion.reduce":
            if self.looped:
                raise LoweringError(f"reduction result needed before its pass ({op.loc})")
            src = op.operands[0]
            self.emit(src)
            dims = [info.masks[src][i] for i in op.attributes["dims"]]
            in_place = {"fold_in_place": True} if op in self.plan.in_place else {}
            self.vec(hivm.VReduceOp, [self.buffer(src), self.buffer(v), *self.extents(src)],
                     kind=op.attributes["kind"], dims=dims, **in_place)  # fmt: skip
            self.ready.add(id(v))
            return
        if op.name == "hfusion.gather":
            lower_gather(self, v)
            self.ready.add(id(v))
            return
        ins = [self.operand(x) for x in op.operands]
        dst, ext = self.buffer(v), self.extents(v)
        a = op.attributes
        name = op.name
        if name == "hfusion.elemwise_unary":
            self.vec(hivm.VUnaryOp, [ins[0], dst, *ext], fun=a["fun"])
        elif name == "hfusion.elemwise_binary":
            column = self.plan.columns(op) if self.plan.scalar_columns else []
            attrs = {"scalar_column": True} if column else {}
            scaled = [self.scaled[self.plan.source(x)][1] for x in column if self.plan.source(x) in self.scaled]
            if scaled:
                attrs["column_scale"] = scaled[0]
            self.vec(hivm.VBinaryOp, [ins[0], ins[1], dst, *ext], fun=a["fun"], **attrs)
        elif name == "hfusion.elemwise_ternary":
            first, second = ("mul", "add") if a["fun"] == "fma" else ("max", "min")
            self.vec(hivm.VBinaryOp, [ins[0], ins[1], dst, *ext], fun=first)
            self.vec(hivm.VBinaryOp, [dst, ins[2], dst, *ext], fun=second)
        elif name == "hfusion.compare":
            self.vec(hivm.VCmpOp, [ins[0], ins[1], dst, *ext], predicate=a["predicate"])
        elif name == "hfusion.select":
            self.vec(hivm.VSelOp, [ins[0], ins[1], ins[2], dst, *ext])
        elif name == "hfusion.cast":
            self.vec(hivm.VCastOp, [ins[0], dst, *ext], round_mode=a.get("round_mode", "rint"))
        elif name == "hfusion.broadcast":
            src_mask = info.masks[op.operands[0]]
            dims = [d for d in info.masks[v] if d not in src_mask]
            self.vec(hivm.VBrcOp, [ins[0], dst, *ext], dims=dims)
        elif name == "hfusion.fill":
            self.vec(hivm.VFillOp, [dst, *ext], value=a["value"])
        elif name == "hfusion.arange":
            lower_arange(self, v)
        else:
            raise LoweringError(f"{name} has no vector lowering")
        self.ready.add(id(v))
