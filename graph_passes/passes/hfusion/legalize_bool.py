"""``hfusion-legalize-bool``: inside kernels, GM bools move as bytes and i1 compute becomes mask idioms.

After AscendNPU-IR's ``LegalizeBool`` (``HFusion/Transforms/LegalizeBool.cpp``), which ``HFusionPipelines.cpp``
runs on outlined kernels (``postProcessOutlinedKernel``), and the i1 cast rewrites of its ``Normalize.cpp``
(``castSrcTypeToI1ByVCmp``: x → i1 is ``vcmp_ne(x, 0)``). In UB an ``i1`` value is a packed bit mask (what
``vcmp`` writes and ``vsel`` reads); in GM a bool is one byte, 0 or 1. Nothing moves bits to bytes, so every kernel
is rewritten so that no ``i1`` value crosses its boundary and every ``i1`` op has a mask idiom::

    entry   %m = <i1 argument or its boundary reshape>
         -> %b = hfusion.bitcast %m : i1 -> i8            (a load of the bytes)
            %h = hfusion.cast %b : i8 -> f16              (0.0 / 1.0)
            %k = hfusion.compare %h, 0.0 {ne} : -> i1       (the mask, for the ops that need one)
            a cast of the argument to T reads %h (or %b) directly: exact, no mask
    exit    %r : i1 returned
         -> %s = hfusion.select %r, 1.0, 0.0 : f16 ;  %c = hfusion.cast %s : f16 -> i8
            %o = hfusion.bitcast %c : i8 -> i1            (a store of the bytes)

    logical_and/or/xor/not, bitwise_and/or/xor/not, mul/min, add/max on i1
         -> bitwise_and / bitwise_or / bitwise_xor / bitwise_not on i1   (vand/vor/vnot on the packed bits)
    cast x: T -> i1        -> compare(x, 0, ne)   (i8/i16 through f16, bf16 through f32)
    cast m: i1 -> T        -> select(m, 1, 0) in f16 or f32, then cast to T (exact: 0 and 1)
    select(c, a, b) on i1  -> or(and(c, a), and(not c, b))
    compare of i1 values, broadcast, reduce (any/all/max/min) and fill of i1
                           -> the same op on f16 0/1 values, then compare(…, 0, ne)

A data-movement kernel (transposes, slices, concats of its arguments only: ``schedule/movement.py``) is left
alone: it copies the bool bytes without computing on them.

Counters: ``bools-loaded``, ``bools-stored``, ``ops-legalized``, ``bool-copies-kept`` (data-movement kernels of
bools left alone).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...ir.core import OP_REGISTRY, BlockArgument, Operation, Value
from ...ir.types import ScalarType, TensorType
from ...schedule.kernel_info import Unsupported
from ...schedule.movement import analyze_movement
from .. import ModulePass, PassContext, register_pass

AND_FUNS = ("logical_and", "bitwise_and", "mul", "min")
OR_FUNS = ("logical_or", "bitwise_or", "add", "max")
XOR_FUNS = ("logical_xor", "bitwise_xor")
NOT_FUNS = ("logical_not", "bitwise_not")
ENTRY_VIEWS = ("hfusion.reshape", "hfusion.slice")
REDUCE_01 = {"any": "max", "max": "max", "all": "min", "min": "min"}  # over 0/1 values
SELECT_DTYPE = {"f16": "f16", "i8": "f16", "i16": "f16"}  # the dtype vsel builds 0/1 in before a cast to T (else f32)
COMPARE_DTYPE = {"i8": "f16", "i16": "f16", "bf16": "f32"}  # x -> i1 compares in this dtype (else x's own)
DIRECT_CASTS = {"i8": ("f16",), "f16": ("f32", "i32", "i16", "i8")}  # CANN-INI vconv from i8 / f16
CAST_VIA = {"i8": "f16", "f16": "f32"}  # otherwise: one step wider first


def _is_bool(v: Value) -> bool:
    return isinstance(v.type, TensorType) and v.type.dtype == "i1"


@register_pass
@dataclass(frozen=True)
class LegalizeBool(ModulePass):
    """Kernels move GM bools as i8 bytes (bitcasts at the boundary) and compute on i1 only with mask idioms."""

    name: ClassVar[str] = "hfusion-legalize-bool"

    def run(self, module: Operation, ctx: PassContext) -> None:
        for counter in ("bools-loaded", "bools-stored", "ops-legalized", "bool-copies-kept"):
            ctx.count(counter, 0)
        sizes = module.size_vars()
        for func in list(module.functions):
            if not func.attributes.get("kernel"):
                continue
            if not _moves_data_only(func, sizes):
                _KernelBools(func, ctx).run()
            elif any(_is_bool(a) for a in func.body.args):
                ctx.count("bool-copies-kept")


def _moves_data_only(func: Operation, sizes) -> bool:
    """A data-movement kernel (a transpose of a mask …) copies GM bools as the bytes they are: no i1 value is
    computed, so nothing needs a mask idiom (schedule/movement.py moves them through i8 buffers)."""
    try:
        analyze_movement(func, sizes)
    except Unsupported:
        return False
    return True


class _KernelBools:
    def __init__(self, func: Operation, ctx: PassContext):
        self.func, self.ctx = func, ctx
        self.body = func.body
        self.consts: dict = {}  # (dtype, value) -> scalar constant at the top of the body
        self.bytes: dict = {}  # i1 value loaded from GM -> its i8 bytes
        self.halves: dict = {}  # i1 value -> its f16 0/1 form
        self.masks: dict = {}  # i1 value loaded from GM -> its mask

    # -- building ----------------------------------------------------------------------------------------------
    def create(self, name: str, operands, dtype_or_type, anchor: Operation, **attrs) -> Value:
        """A new op before ``anchor``; ``dtype_or_type``: the result type, or a dtype with the first operand's shape."""
        t = dtype_or_type
        if isinstance(t, str):
            t = operands[0].type.with_dtype(t)
        op = OP_REGISTRY[name](list(operands), [t], attrs, [], anchor.loc)
        anchor.parent.insert_before(anchor, op)
        return op.result

    def const(self, value, dtype: str) -> Value:
        key = (dtype, value)
        if key not in self.consts:
            v = float(value) if dtype.startswith(("f", "bf")) else int(value)
            op = OP_REGISTRY["arith.constant"]([], [ScalarType(dtype)], {"value": v}, [], self.func.loc)
            self.body.insert(0, op)
            self.consts[key] = op.result
        return self.consts[key]

    def cast(self, x: Value, dtype: str, anchor: Operation) -> Value:
        """``x`` as ``dtype``: i8 goes through f16 and f16 through f32 where CANN's vconv list has no direct
        conversion (as AscendNPU-IR's Normalize.cpp casts i8 -> f16 -> f32 -> i64). Exact on 0/1; a value compared
        with 0 only needs to stay nonzero, which every such step keeps."""
        src = x.type.dtype
        if src == dtype:
            return x
        if src in CAST_VIA and dtype not in DIRECT_CASTS[src]:
            return self.cast(self.cast(x, CAST_VIA[src], anchor), dtype, anchor)
        return self.create("hfusion.cast", [x], dtype, anchor, round_mode="rint")

    def ne_zero(self, x: Value, anchor: Operation) -> Value:
        """The mask ``x != 0``."""
        x = self.cast(x, COMPARE_DTYPE.get(x.type.dtype, x.type.dtype), anchor)
        return self.create("hfusion.compare", [x, self.const(0, x.type.dtype)], "i1", anchor, predicate="ne")

    def zero_one(self, m: Value, dtype: str, anchor: Operation) -> Value:
        """The i1 value ``m`` as 0/1 of ``dtype``: from its GM bytes when it was loaded, else ``vsel``."""
        if m in self.bytes:
            return self.cast(self.bytes[m], dtype, anchor)
        base = SELECT_DTYPE.get(dtype, "f32")
        if base == "f16" and m in self.halves:
            return self.cast(self.halves[m], dtype, anchor)
        s = self.create("hfusion.select", [m, self.const(1, base), self.const(0, base)], base, anchor)
        if base == "f16":
            self.halves[m] = s
        return self.cast(s, dtype, anchor)

    def bitwise(self, fun: str, operands, anchor: Operation) -> Value:
        name = "hfusion.elemwise_unary" if fun == "bitwise_not" else "hfusion.elemwise_binary"
        return self.create(name, operands, "i1", anchor, fun=fun)

    # -- the kernel ---------------------------------------------------------------------------------------------
    def run(self) -> None:
        self.entry()
        for op in list(self.body.ops):
            if op.parent is not None and op.name != "func.return":
                self.legalize(op)
        self.exit()

    def entry(self) -> None:
        """Each i1 argument (or its boundary reshape/slice) is read as bytes; a cast of it reads them directly."""
        outputs = set(self.func.attributes.get("output_args") or [])
        for i, a in enumerate(list(self.body.args)):
            if i in outputs or not _is_bool(a):
                continue
            entries = [u.result for u in a.users if u.name in ENTRY_VIEWS]
            if any(u.name not in ENTRY_VIEWS for u in a.users):
                entries.append(a)
            for v in entries:
                users = [u for u in v.users if u.name not in ENTRY_VIEWS and u.name != "func.return"]
                if not users:
                    continue
                ops = self.body.ops
                anchor = self.first_op() if isinstance(v, BlockArgument) else ops[ops.index(v.op) + 1]
                self.bytes[v] = self.create("hfusion.bitcast", [v], "i8", anchor)
                self.ctx.count("bools-loaded")
                for u in users:
                    if u.name == "hfusion.cast" and not _is_bool(u.result):
                        u.replace_with([self.zero_one(v, u.result.type.dtype, u)])
                        self.ctx.count("ops-legalized")
                        continue
                    if v not in self.masks:  # right after the bytes: before every user (``anchor`` may be a
                        ops = self.body.ops  # cast user replaced above)
                        after = ops[ops.index(self.bytes[v].op) + 1]
                        self.halves[v] = self.cast(self.bytes[v], "f16", after)
                        self.masks[v] = self.ne_zero(self.halves[v], after)
                    for k, x in enumerate(u.operands):
                        if x is v:
                            u.set_operand(k, self.masks[v])

    def first_op(self) -> Operation:
        """The body's first op after the constants this pass put at the top: an argument's bytes are read before it.
        Looked up afresh for each argument (a cast of an earlier one, the first op before, is replaced)."""
        made = {id(c.op) for c in self.consts.values()}
        return next(op for op in self.body.ops if id(op) not in made)

    def legalize(self, op: Operation) -> None:
        name, fun = op.name, op.attributes.get("fun")
        ins = [v for v in op.operands if isinstance(v.type, TensorType)]
        if not (any(_is_bool(v) for v in ins) or any(_is_bool(r) for r in op.results)):
            return
        out = op.results[0] if op.results else None
        if name == "hfusion.elemwise_binary" and _is_bool(out) and all(_is_bool(v) for v in op.operands):
            new = next((f for f, group in (("bitwise_and", AND_FUNS), ("bitwise_or", OR_FUNS),
                                           ("bitwise_xor", XOR_FUNS)) if fun in group), None)  # fmt: skip
            if new is None or new == fun:
                return
            op.attributes["fun"] = new
        elif name == "hfusion.elemwise_unary" and _is_bool(out) and fun in NOT_FUNS:
            if fun == "bitwise_not":
                return
            op.attributes["fun"] = "bitwise_not"
        elif name == "hfusion.cast" and _is_bool(out) and not _is_bool(op.operand("input")):
            op.replace_with([self.ne_zero(op.operand("input"), op)])
        elif name == "hfusion.cast" and _is_bool(op.operand("input")) and not _is_bool(out):
            op.replace_with([self.zero_one(op.operand("input"), out.type.dtype, op)])
        elif name == "hfusion.select" and _is_bool(out) and all(_is_bool(v) for v in op.operands):
            c, a, b = op.operands
            picked = self.bitwise("bitwise_and", [c, a], op)
            other = self.bitwise("bitwise_and", [self.bitwise("bitwise_not", [c], op), b], op)
            op.replace_with([self.bitwise("bitwise_or", [picked, other], op)])
        elif name == "hfusion.compare" and all(_is_bool(v) for v in ins):
            if any(not isinstance(v.type, TensorType) and getattr(v, "op", None) is None for v in op.operands):
                return  # a scalar argument compared with a mask: no idiom
            for k, v in enumerate(list(op.operands)):
                op.set_operand(k, self.zero_one(v, "f16", op) if _is_bool(v) else
                               self.const(v.op.attributes["value"], "f16"))
        elif name == "hfusion.broadcast" and _is_bool(out):
            h = self.zero_one(op.operand("input"), "f16", op)
            wide = self.create("hfusion.broadcast", [h], out.type.with_dtype("f16"), op, dims=op.attributes["dims"])
            op.replace_with([self.ne_zero(wide, op)])
        elif name == "hfusion.reduce" and _is_bool(out) and op.attributes["kind"] in REDUCE_01:
            h = self.zero_one(op.operand("input"), "f16", op)
            r = self.create("hfusion.reduce", [h], out.type.with_dtype("f16"), op,
                            kind=REDUCE_01[op.attributes["kind"]], dims=op.attributes["dims"])  # fmt: skip
            op.replace_with([self.ne_zero(r, op)])
        elif name == "hfusion.fill" and _is_bool(out):
            f = self.create("hfusion.fill", [], out.type.with_dtype("f16"), op,
                            value=float(bool(op.attributes["value"])))
            op.replace_with([self.ne_zero(f, op)])
        else:
            return  # no mask idiom (codegen names the op if it reaches it)
        self.ctx.count("ops-legalized")

    def exit(self) -> None:
        """Each returned i1 value (under the boundary reshapes) is stored as bytes: 0/1 as i8, bitcast to i1."""
        ret = self.body.terminator
        stored: dict = {}
        for k, v in enumerate(list(ret.operands)):
            consumer, index = ret, k
            while isinstance(v.type, TensorType) and getattr(v, "op", None) is not None and \
                    v.op.name == "hfusion.reshape" and len(v.uses) == 1:
                consumer, index, v = v.op, 0, v.op.operand("input")
            if not _is_bool(v) or isinstance(v, BlockArgument):
                continue
            if v not in stored:
                stored[v] = self.create("hfusion.bitcast", [self.zero_one(v, "i8", consumer)], "i1", consumer)
                self.ctx.count("bools-stored")
            consumer.set_operand(index, stored[v])
