"""FX import: an aten FX graph (from AOTAutograd) → a ``builtin.module`` holding ``func.func @main`` in ``hfusion``.

One lowering per aten op, looked up in :data:`torch_npu_backend.lowerings.LOWERINGS`. A node without one (or whose
lowering refuses its arguments, or that touches a host dtype, or draws random numbers) becomes a ``host.fallback``
op run eagerly on the host (:mod:`torch_npu_backend.fallback`), or, with ``fallback="error"``, is named in one
error with every other such node. A lowering is called as
``fn(ctx, *node.args, **node.kwargs)`` and returns the IR value(s) of the node; ``ctx`` is the
:class:`ImportContext`, which owns the builder (every op it creates gets ``loc`` = the FX node name) and the shared
helpers: explicit type promotion (``cast``), explicit broadcasting (``broadcast_to``: ``hfusion.reshape`` drops
expanded size-1 dims, then ``hfusion.broadcast`` adds dims), scalar constants and symbolic sizes as values.

Calling convention of @main (Note: it mirrors the FX placeholders one to one, so the runtime passes its arguments
through unchanged): a tensor placeholder is a ``tensor<…>`` argument, a SymInt placeholder an ``index`` argument,
an AOTAutograd effect token (the runtime passes None; ``fallback.is_effect_token``) an unused ``index`` argument.
Every FX output that is a tensor is a result of @main; ``None`` and SymInt outputs (AOTAutograd saves sizes for the
backward) are rebuilt by the runtime from the symbol bindings (see :class:`OutputSpec`).

Dims are sympy expressions over the ShapeEnv's symbols (``s77``), each declared on the module with its range.

Size predicates (``torch._check(x.shape[0] <= 64)``: a SymBool node such as ``operator.le`` feeding
``aten._assert_scalar``; ``aten.sym_constrain_range*``) produce no IR: they become
:class:`graph_passes.ir.size_predicates.SizePredicate` records the runtime checks on every run, and the bounds they
prove narrow the symbols' declared ranges, as ``mark_dynamic(min=…, max=…)`` bounds do.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

import sympy
import torch
import torch.fx

from graph_passes.dialects.arith import BINARY_OPS, ConstantOp
from graph_passes.dialects.builtin import ModuleOp
from graph_passes.dialects.func import FuncOp, ReturnOp
from graph_passes.dialects.hfusion import BroadcastOp, CastOp, ReshapeOp
from graph_passes.dialects.tensor import DimOp
from graph_passes.ir.builder import Builder
from graph_passes.ir.core import Operation, Value
from graph_passes.ir.size_predicates import SizePredicate, proven_bounds
from graph_passes.ir.sizes import SizeVars
from graph_passes.ir.types import IndexType, ScalarType, TensorType, is_float_dtype

from .dtypes import ir_dtype
from .errors import NpuCompileError, UnsupportedDtypeError, UnsupportedOpError
from .fallback import (HOST_DTYPES, NO_LOWERING, RANDOM_OPS, RANDOM_REASON, WITH_EFFECTS, Fallback, dtype_reason,
                       emit_effect, emit_fallback, host_type, is_effect_token, many_error)
from .options import FALLBACK_MODES
from .symbolic import (convert, guarded_equalities, is_symbolic, shape_env_of, symbol_range, to_expr,
                       to_predicate)

IGNORED_TARGETS = {torch.ops.aten._assert_tensor_metadata.default}
"""Assertions on tensor metadata (dtype, device) that dynamo already guards; they produce no value and no IR."""

RANGE_CONSTRAINTS = {torch.ops.aten.sym_constrain_range.default, torch.ops.aten.sym_constrain_range_for_size.default}
"""``sym_constrain_range(size, min=…, max=…)``: the size predicate ``min <= size <= max``."""


@dataclass(frozen=True)
class OutputSpec:
    """How the runtime rebuilds FX output ``i``: a result of @main, None, or a size expression."""

    kind: str  # "tensor" | "none" | "size"
    index: int = -1  # result index of @main for "tensor"
    expr: object = None  # sympy size expression for "size"
    strides: tuple | None = None  # eager's strides (sympy) of a "tensor" output that is not contiguous, else None


@dataclass
class ImportResult:
    module: ModuleOp
    outputs: list[OutputSpec]
    symbol_args: dict[str, int] = field(default_factory=dict)
    """symbol name → position of the SymInt placeholder (index argument) that carries it."""
    lowered: list[object] = field(default_factory=list)
    """The aten ops lowered, in node order (tests use this to check coverage)."""
    predicates: list[SizePredicate] = field(default_factory=list)
    """Size predicates the graph asserts; the runtime checks them on every run."""
    fallbacks: list[Fallback] = field(default_factory=list)
    """The nodes imported as ``host.fallback`` ops (run eagerly on the host), in node order."""


class ImportContext:
    """State of one import and the helpers lowerings share."""

    def __init__(self, gm: torch.fx.GraphModule, target: str | None = None):
        self.gm = gm
        self.placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        vals = [n.meta.get("val") for n in self.placeholders]
        self.shape_env = shape_env_of([v for v in vals if v is not None])
        self.equal_sizes = SizeVars(equal=guarded_equalities(self.shape_env) if self.shape_env is not None else {})
        self.module = ModuleOp.build(target=target)
        self.node: torch.fx.Node | None = None
        self.env: dict[torch.fx.Node, object] = {}
        self._size_sources: dict[str, Value] = {}
        self._declared: set[str] = set()
        self.symbol_args: dict[str, int] = {}
        self.predicates: list[SizePredicate] = []
        arg_types = [self._placeholder_type(n) for n in self.placeholders]
        self.func = FuncOp.build("main", arg_types, [], [_arg_name(n.name) for n in self.placeholders])
        self.module.body.append(self.func)
        self.builder = Builder.at_end(self.func.body)

    # -- types ---------------------------------------------------------------------------------------------
    def _placeholder_type(self, node: torch.fx.Node):
        val = node.meta.get("val")
        if is_effect_token(node):
            return IndexType()  # Note: an effect token has no value (the runtime passes None): an unused parameter
        if isinstance(val, torch.Tensor):
            device_scalar = val.dtype == torch.float64 and val.dim() == 0 and not _read_on_host_only(node)
            if val.dtype in HOST_DTYPES and not device_scalar:
                return host_type(self, val)  # a host value: the nodes reading it run on the host (fallback.py)
            return self.tensor_type(val, node)
        if isinstance(val, torch.SymInt):
            expr = self.expr(val)
            if isinstance(expr, sympy.Symbol):
                self.symbol_args.setdefault(expr.name, self.placeholders.index(node))
            return IndexType()
        raise NpuCompileError(f"placeholder '{node.name}' has unsupported value {type(val).__name__} {val!r}")

    def expr(self, x) -> sympy.Expr:
        """A size (int, SymInt, or an FX node computing one) as an IR expression; declares its symbols."""
        if isinstance(x, torch.fx.Node):
            x = x.meta["val"]
        e = to_expr(x)
        if self.equal_sizes.equal:
            e = self.equal_sizes.canonical(e)  # sizes dynamo's guards make equal get one form
        self.declare(e)
        return e

    def declare(self, e: sympy.Expr) -> None:
        for s in e.free_symbols:
            if s.name in self._declared:
                continue
            if self.shape_env is None:
                raise NpuCompileError(f"symbol {s.name} appears but the graph has no ShapeEnv")
            if not s.name.startswith("s"):
                raise UnsupportedOpError(self.target_name(), self.node_name(), f"data-dependent size {s.name}")
            lo, hi = symbol_range(self.shape_env, s.name)
            self.module.declare_symbol(s.name, lo, hi)
            self._declared.add(s.name)

    def assert_predicate(self, pred: sympy.Basic, loc: str, message: str = "") -> None:
        """Record the size predicate ``pred`` (a sympy boolean) asserted at FX node ``loc``."""
        if pred == sympy.true:
            return
        if pred == sympy.false:
            raise NpuCompileError(f"size predicate at FX node '{loc}' is false for the traced sizes: {message}")
        self.declare(pred)
        self.predicates.append(SizePredicate(pred, loc, message))

    def record_equalities(self) -> None:
        """Record in the module each guarded size equality over symbols the graph uses: a reshape between the two
        forms (labels ``[s97, s38]`` viewed as the logits' ``[s3*s88]``) verifies by it."""
        for size, canonical in self.equal_sizes.equal.items():
            if {s.name for s in size.free_symbols | canonical.free_symbols} <= self._declared:
                self.module.declare_equal(size, canonical)

    def narrow_symbols(self) -> None:
        """Intersect each symbol's declared range with the bounds the recorded predicates prove."""
        sizes = self.module.size_vars()
        for p in self.predicates:
            for name, (lo, hi) in proven_bounds(p.expr, sizes).items():
                old_lo, old_hi = sizes.ranges[name]
                new_lo, new_hi = max(lo, old_lo), min(hi, old_hi)
                if new_lo > new_hi:
                    raise NpuCompileError(f"size predicate {p} (FX node '{p.loc}') leaves symbol {name} no value: "
                                          f"[{old_lo}, {old_hi}] and [{lo}, {hi}]")  # fmt: skip
                if (new_lo, new_hi) != (old_lo, old_hi):
                    self.module.declare_symbol(name, new_lo, new_hi)
                    sizes.declare(name, new_lo, new_hi)

    def tensor_type(self, val: torch.Tensor, node: torch.fx.Node | None = None) -> TensorType:
        node = node or self.node
        name = node.name if node is not None else None
        if val.dtype == torch.float64 and val.dim() == 0 and node is not None and node.op == "placeholder":
            return TensorType((), "f32")  # a host float scalar (host_scalars.py): the runtime rounds it to f32
        return TensorType(tuple(self.expr(d) for d in val.shape), ir_dtype(val.dtype, name))

    def out_type(self, index: int | None = None) -> TensorType:
        """The IR type of the current node's result (``index`` picks one of a tuple result)."""
        val = self.node.meta["val"]
        if index is not None:
            val = val[index]
        return self.tensor_type(val)

    def meta(self, arg):
        """The example value (FakeTensor, SymInt, number) of an FX argument."""
        return arg.meta["val"] if isinstance(arg, torch.fx.Node) else arg

    def shape(self, v: Value) -> tuple:
        return v.type.shape

    def node_name(self) -> str | None:
        return self.node.name if self.node is not None else None

    def target_name(self) -> str:
        return str(self.node.target) if self.node is not None else "<none>"

    def checkpoint(self) -> set[int]:
        """The ops of @main now (for :meth:`rollback`)."""
        return {id(op) for op in self.func.body.ops}

    def rollback(self, checkpoint: set[int]) -> None:
        """Erase the ops emitted since ``checkpoint`` (a lowering that gave up half way), except the cached size
        sources (``tensor.dim`` at the top of @main), which later nodes may still read."""
        keep = {id(v.op) for v in self._size_sources.values() if hasattr(v, "op")}
        new = [op for op in self.func.body.ops if id(op) not in checkpoint and id(op) not in keep]
        for op in reversed(new):
            op.erase()

    def error(self, reason: str) -> UnsupportedOpError:
        """An error for the current node: its op does not support ``reason``."""
        return UnsupportedOpError(self.node.target, self.node.name, reason)

    # -- values --------------------------------------------------------------------------------------------
    def tensor(self, arg) -> Value:
        """The IR value of a tensor argument."""
        if not isinstance(arg, torch.fx.Node):
            raise self.error(f"expected a tensor argument, got {arg!r}")
        v = self.env.get(arg)
        if not isinstance(v, Value) or not isinstance(v.type, TensorType):
            raise self.error(f"argument '{arg.name}' is not a tensor value")
        return v

    def is_tensor(self, arg) -> bool:
        return isinstance(arg, torch.fx.Node) and isinstance(arg.meta.get("val"), torch.Tensor)

    def create(self, op_cls: type[Operation], operands, result_types, **attrs) -> Operation:
        return self.builder.create(op_cls, operands, result_types, **attrs)

    def emit(self, op_cls: type[Operation], operands, result_type, **attrs) -> Value:
        return self.create(op_cls, operands, [result_type], **attrs).result

    def cast(self, v: Value, dtype: str, round_mode: str | None = None) -> Value:
        """``v`` converted to ``dtype`` (no op when it already has it). Scalars must already have it."""
        if not isinstance(v.type, TensorType):
            if v.type == ScalarType(dtype) or isinstance(v.type, IndexType):
                return v
            raise self.error(f"cannot cast scalar of type {v.type} to {dtype}")
        if v.type.dtype == dtype:
            return v
        if round_mode is None and is_float_dtype(v.type.dtype) and not is_float_dtype(dtype) and dtype != "i1":
            round_mode = "trunc"  # torch truncates float → int conversions
        return self.emit(CastOp, [v], v.type.with_dtype(dtype), round_mode=round_mode)

    def reshape(self, v: Value, shape) -> Value:
        """``v`` with a new shape; a reshape of a reshape reads the original value (keepdim → broadcast chains)."""
        shape = tuple(sympy.sympify(d) for d in shape)
        if _same(v.type.shape, shape):
            return v
        producer = getattr(v, "op", None)
        if isinstance(producer, ReshapeOp):
            return self.reshape(producer.operand("input"), shape)
        return self.emit(ReshapeOp, [v], v.type.with_shape(shape))

    def broadcast_to(self, v: Value, shape) -> Value:
        """Explicit numpy-style broadcast of ``v`` to ``shape``: reshape away expanded size-1 dims, then broadcast."""
        if not isinstance(v.type, TensorType):
            return v  # scalars broadcast implicitly
        src, shape = list(v.type.shape), [sympy.sympify(d) for d in shape]
        if len(src) > len(shape):
            raise self.error(f"cannot broadcast {v.type} to rank {len(shape)}")
        offset = len(shape) - len(src)
        kept, kept_dims = [], []
        for i, d in enumerate(src):
            j = i + offset
            if d == shape[j]:
                kept.append(d)
                kept_dims.append(j)
            elif d == 1:
                continue  # expanded: dropped by the reshape, re-created by the broadcast
            else:
                raise self.error(f"cannot broadcast dim {i} of {v.type} (size {d}) to size {shape[j]}")
        if len(kept_dims) == len(shape):
            return v
        v = self.reshape(v, kept)
        dims = [j for j in range(len(shape)) if j not in kept_dims]
        return self.emit(BroadcastOp, [v], TensorType(tuple(shape), v.type.dtype), dims=dims)

    def scalar(self, value, dtype: str) -> Value:
        """A scalar operand: a constant of ``dtype``, or the index value of a symbolic size."""
        if isinstance(value, torch.fx.Node):
            value = value.meta["val"]
        if isinstance(value, sympy.Expr):
            if value.is_Integer:
                value = int(value)
            else:
                self.declare(value)
                return self.size_value(value)
        if is_symbolic(value):
            if not isinstance(value, (torch.SymInt, torch.SymFloat)):
                raise self.error(f"symbolic {type(value).__name__} operands are not supported")
            return self.size_value(self.expr(value))
        if isinstance(value, bool) or dtype == "i1":
            value = bool(value)
        elif is_float_dtype(dtype):
            value = float(value)
        else:
            value = int(value)
        return self.emit(ConstantOp, [], ScalarType(dtype), value=value)

    def symbolic_ratio(self, arg) -> tuple[sympy.Expr, sympy.Expr] | None:
        """(num, den) when ``arg`` is a SymFloat ``num / den`` of sizes (e.g. 2/(s0-1) in var's backward)."""
        val = self.meta(arg)
        if not isinstance(val, torch.SymFloat):
            return None
        e = val.node.expr
        if type(e).__name__ != "FloatTrueDiv":
            return None
        return convert(e.args[0]), convert(e.args[1])

    def operand(self, arg, dtype: str, shape) -> Value:
        """A tensor argument cast to ``dtype`` and broadcast to ``shape``, or a scalar argument as a constant."""
        if isinstance(arg, torch.fx.Node) and isinstance(arg.meta.get("val"), torch.Tensor):
            return self.broadcast_to(self.cast(self.tensor(arg), dtype), shape)
        if isinstance(arg, (int, float, bool, torch.SymInt, torch.fx.Node)):
            return self.scalar(arg, dtype)
        raise self.error(f"unsupported operand {arg!r}")

    def size_value(self, e) -> Value:
        """An ``index`` value equal to the size expression ``e`` at run time (tensor.dim / index args + arith)."""
        e = sympy.sympify(e)
        if e.is_Integer:
            return self.emit(ConstantOp, [], IndexType(), value=int(e))
        if isinstance(e, sympy.Symbol):
            return self._symbol_source(e.name)
        if isinstance(e, (sympy.Add, sympy.Mul)):
            terms = list(e.args)
            acc = self.size_value(terms[0])
            op = BINARY_OPS["arith.addi" if isinstance(e, sympy.Add) else "arith.muli"]
            for t in terms[1:]:
                acc = self.emit(op, [acc, self.size_value(t)], IndexType())
            return acc
        if isinstance(e, sympy.Pow) and e.exp.is_Integer and e.exp > 0:  # s0**2: equal dims share a symbol
            base = self.size_value(e.base)
            acc = base
            for _ in range(int(e.exp) - 1):
                acc = self.emit(BINARY_OPS["arith.muli"], [acc, base], IndexType())
            return acc
        if isinstance(e, sympy.floor):
            num, den = sympy.fraction(sympy.together(e.args[0]))
            return self.emit(BINARY_OPS["arith.floordivsi"], [self.size_value(num), self.size_value(den)], IndexType())
        raise self.error(f"cannot compute size {e} as a value")

    def _symbol_source(self, name: str) -> Value:
        if name in self._size_sources:
            return self._size_sources[name]
        if name in self.symbol_args:
            v = self.func.args[self.symbol_args[name]]
        else:
            v = None
            for arg in self.func.args:
                if isinstance(arg.type, TensorType):
                    for i, d in enumerate(arg.type.shape):
                        if isinstance(d, sympy.Symbol) and d.name == name:
                            v = Builder(self.func.body, 0, self.node_name()).create(
                                DimOp, [arg], [IndexType()], index=i
                            ).result
                            break
                if v is not None:
                    break
            if v is None:
                raise self.error(f"no argument carries shape symbol {name}")
        self._size_sources[name] = v
        return v


def _same(a, b) -> bool:
    return len(a) == len(b) and all(sympy.sympify(x) == sympy.sympify(y) for x, y in zip(a, b))


def _arg_name(name: str) -> str:
    return name if name.isidentifier() else None


def import_graph(gm: torch.fx.GraphModule, target: str | None = None, fallback: str = "auto") -> ImportResult:
    """Import an aten FX graph. A node the backend cannot compile becomes a ``host.fallback`` op (fallback.py);
    with ``fallback="error"`` one :class:`UnsupportedOpError` names every such node instead."""
    if fallback not in FALLBACK_MODES:
        raise ValueError(f"fallback={fallback!r}; valid: {', '.join(FALLBACK_MODES)}")
    ctx = ImportContext(gm, target)
    for i, node in enumerate(ctx.placeholders):
        val = node.meta.get("val")
        if is_effect_token(node):
            continue  # read by with_effects only (emit_effect)
        ctx.env[node] = ctx.func.args[i] if isinstance(val, torch.Tensor) else ctx.expr(val)
    lowered, fallbacks, outputs = [], [], None
    for node in gm.graph.nodes:
        ctx.node = node
        ctx.builder.loc = node.name
        if node.op == "placeholder":
            continue
        if node.op == "output":
            outputs = _emit_output(ctx, node)
            continue
        if node.op == "get_attr":
            ctx.env[node] = _lower_constant(ctx, getattr(gm, node.target))
            continue
        if node.op != "call_function":
            raise UnsupportedOpError(node.target, node.name, f"FX op kind '{node.op}'")
        if node.target is operator.getitem:
            ctx.env[node] = ctx.env[node.args[0]][node.args[1]]
            continue
        if node.target in IGNORED_TARGETS:
            continue
        if node.target is WITH_EFFECTS:
            fallbacks.append(emit_effect(ctx, node))
            continue
        if node.target is torch.ops.aten._assert_scalar.default:
            _assert_scalar(ctx, node)
            continue
        if node.target in RANGE_CONSTRAINTS:
            _constrain_range(ctx, node)
            continue
        val = node.meta.get("val")
        if isinstance(val, torch.SymBool):
            ctx.env[node] = to_predicate(val)  # a size predicate (operator.le, sym_not, and_ …): checked on the host
            continue
        if isinstance(val, (int, float)):
            ctx.env[node] = val  # a scalar computed on the host at trace time (sizes as numbers)
            continue
        if isinstance(val, torch.SymFloat):
            ctx.env[node] = val  # converted where it is used (a ratio of sizes may only be usable as mul/div)
            continue
        if isinstance(val, torch.SymInt):
            ctx.env[node] = ctx.expr(val)  # a size computation: it lives in the types, not as ops
            continue
        reason = _lower(ctx, node)
        if reason is None:
            lowered.append(node.target)
            continue
        try:
            ctx.env[node] = emit_fallback(ctx, node, reason)
        except NpuCompileError as e:  # e.g. a result size the IR cannot express: name the op and both reasons
            raise UnsupportedOpError(node.target, node.name, f"{reason}; it cannot run on the host either: {e}") from None
        fallbacks.append(Fallback(str(node.target), node.name, reason))
    if fallbacks and fallback == "error":
        raise many_error(fallbacks)
    ctx.narrow_symbols()
    ctx.record_equalities()
    return ImportResult(ctx.module, outputs or [], dict(ctx.symbol_args), lowered, list(ctx.predicates), fallbacks)


def _read_on_host_only(node: torch.fx.Node) -> bool:
    """Every node reading ``node`` has a result of a host dtype (it runs on the host whatever it is): a 0-d f64 input
    read only there stays f64 (a linalg tolerance), not the f32 scalar a device op would read."""
    vals = [u.meta.get("val") for u in node.users]
    return bool(vals) and all(isinstance(v, torch.Tensor) and v.dtype in HOST_DTYPES for v in vals)


def _lower(ctx: ImportContext, node: torch.fx.Node) -> str | None:
    """Lower ``node`` into ``ctx.env``; or, when it must run on the host, emit nothing and return why."""
    from .lowerings import LOWERINGS, record_lowering

    if node.target in RANDOM_OPS:
        return RANDOM_REASON
    reason = dtype_reason(ctx, node)
    if reason is not None:
        return reason
    lowering = LOWERINGS.get(node.target)
    if lowering is None:
        return NO_LOWERING
    checkpoint = ctx.checkpoint()
    try:
        ctx.env[node] = lowering(ctx, *node.args, **node.kwargs)
    except (UnsupportedOpError, UnsupportedDtypeError) as e:
        ctx.rollback(checkpoint)
        return (e.reason if isinstance(e, UnsupportedOpError) else None) or str(e)
    record_lowering(node.target)
    return None


def _assert_scalar(ctx: ImportContext, node: torch.fx.Node) -> None:
    """``aten._assert_scalar(cond, msg)``: ``cond`` a predicate node (named in errors) or a constant."""
    cond = node.args[0]
    message = node.args[1] if len(node.args) > 1 else node.kwargs.get("assert_msg", "")
    if isinstance(cond, torch.fx.Node):
        pred, loc = ctx.env[cond], cond.name
    else:
        pred, loc = cond, node.name
    pred = pred if isinstance(pred, sympy.Basic) else to_predicate(pred)  # a bool folded at trace time
    ctx.assert_predicate(pred, loc, str(message))


def _constrain_range(ctx: ImportContext, node: torch.fx.Node) -> None:
    """``sym_constrain_range[_for_size](size, min=…, max=…)``: ``min <= size <= max`` for the bounds given."""
    size = ctx.expr(node.args[0])
    lo, hi = node.kwargs.get("min"), node.kwargs.get("max")
    parts = ([size >= lo] if lo is not None else []) + ([size <= hi] if hi is not None else [])
    ctx.assert_predicate(sympy.And(*parts), node.name, f"{node.target}(min={lo}, max={hi})")


def _emit_output(ctx: ImportContext, node: torch.fx.Node) -> list[OutputSpec]:
    values, specs = [], []
    for out in node.args[0]:
        if out is None or is_effect_token(out):
            specs.append(OutputSpec("none"))  # an effect token: the runtime wrapper drops it
        elif isinstance(out, torch.fx.Node) and isinstance(out.meta.get("val"), torch.Tensor):
            specs.append(OutputSpec("tensor", len(values), strides=_layout(ctx, out.meta["val"])))
            values.append(ctx.tensor(out))
        elif isinstance(out, torch.fx.Node) or isinstance(out, (int, torch.SymInt)):
            specs.append(OutputSpec("size", expr=ctx.expr(out)))
        else:
            raise UnsupportedOpError("output", node.name, f"output value {out!r}")
    ctx.create(ReturnOp, values, [])
    ctx.func.set_function_type()
    return specs


def _layout(ctx: ImportContext, val: torch.Tensor) -> tuple | None:
    """The strides eager gives an output (a transposed view, channels_last), or None when it is row-major: the
    runtime hands back a tensor of these strides, as Inductor does. Strides the sizes cannot express (a symbolic
    row-major stride torch writes ``Max(1, s - 1)``, for a dim that may have one element) mean row-major: the
    compiled graph's row-major result."""
    sizes = [ctx.expr(d) for d in val.shape]
    try:
        strides = [ctx.expr(st) for st in val.stride()]
    except NpuCompileError:
        return None
    if any(stride == 0 and size != 1 for size, stride in zip(sizes, strides)):
        return None  # an expanded output (a broadcast view): returned materialised, as one dense tensor
    expected = sympy.Integer(1)
    row_major = True
    for size, stride in reversed(list(zip(sizes, strides))):
        if sympy.simplify(stride - expected) != 0:  # a unit dim's stride too (empty_permuted's [1, 3, 5]: 5, 5, 1)
            row_major = False
        expected = expected * size
    return None if row_major else tuple(strides)


def _lower_constant(ctx: ImportContext, t) -> Value:
    """A tensor attribute of the graph module (a lifted constant) as a dense ``arith.constant``."""
    if not isinstance(t, torch.Tensor):
        raise UnsupportedOpError("get_attr", ctx.node_name(), f"attribute of type {type(t).__name__}")
    if t.numel() > 4096:
        raise UnsupportedOpError("get_attr", ctx.node_name(), f"constant tensor with {t.numel()} elements")
    ttype = TensorType(tuple(t.shape), ir_dtype(t.dtype, ctx.node_name()))
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily():  # AOTAutograd calls compilers under its fake mode; the constant is real
        values = t.detach().flatten().tolist()
    return ctx.emit(ConstantOp, [], ttype, value=values)
