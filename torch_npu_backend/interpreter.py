"""The reference interpreter: runs a module of func/arith/scf/tensor/hfusion/annotation ops on torch tensors with
torch semantics. It defines what the IR means; tests use it as the oracle, and (for now) compiled graphs execute
through it (``options={"execute": "interpret"}``).

``interpret(module, args, bindings=None, func="main") -> list``: ``args`` are tensors (for ``tensor<…>``
parameters) and ints (for ``index`` parameters); shape symbols are bound from the tensor arguments' sizes (plus
``bindings``, e.g. values of symbols that appear in no tensor argument). Every tensor result is checked against
its IR type (shape under the bindings, dtype), so a wrong lowering fails at the op that is wrong.

Rules live in one table, :data:`RULES`, keyed by op name: ``rule(interp, op, *operand_values)`` returns the
op's result value (one result), a sequence (several results, or a variadic result list), or None (no results).
"""

from __future__ import annotations

import operator
from typing import Callable

import numpy as np
import sympy
import torch
import torch.nn.functional as F

from graph_passes.dialects.hfusion import DIVMOD_FUNS
from graph_passes.intmath import ceil_div
from graph_passes.ir.core import Block, Operation, Terminator
from graph_passes.ir.sizes import evaluate
from graph_passes.ir.types import IndexType, ScalarType, TensorType, is_float_dtype

from .dtypes import torch_dtype
from .rounding import round_to_float


class InterpreterError(RuntimeError):
    """Executing the IR failed; the message names the op and its location."""


RULES: dict[str, Callable] = {}


def rule(*names: str):
    def decorate(fn):
        for n in names:
            if n in RULES:
                raise ValueError(f"interpreter rule for {n} defined twice")
            RULES[n] = fn
        return fn

    return decorate


class Interpreter:
    """Runs functions of ``module``. ``launcher`` (the runtime's simulate mode) executes ``hivm.launch`` and the
    ``func.call`` of a device kernel (see ``runtime.Launcher``); without one, a kernel call is interpreted and a
    ``hivm.launch`` is an error."""

    def __init__(self, module: Operation, bindings: dict[str, int] | None = None, launcher=None):
        self.module = module
        self.bindings: dict[str, int] = dict(bindings or {})
        self.launcher = launcher
        self._cache: dict = {}

    # -- sizes -------------------------------------------------------------------------------------------
    def size(self, e) -> int:
        key = e
        if key not in self._cache:
            self._cache[key] = evaluate(e, self.bindings)
        return self._cache[key]

    def shape(self, t: TensorType) -> tuple[int, ...]:
        return tuple(self.size(d) for d in t.shape)

    def bind(self, func: Operation, args) -> None:
        """Bind the symbols of ``func``'s tensor parameters from the actual argument sizes, then check them."""
        params = func.body.args
        if len(args) != len(params):
            raise InterpreterError(f"@{func.attributes['sym_name']} takes {len(params)} arguments, got {len(args)}")
        for p, a in zip(params, args):
            if isinstance(p.type, TensorType) and isinstance(a, torch.Tensor) and a.dim() == p.type.rank:
                for d, n in zip(p.type.shape, a.shape):
                    if isinstance(d, sympy.Symbol) and d.name not in self.bindings:
                        self.bindings[d.name] = int(n)
        self._cache.clear()
        for i, (p, a) in enumerate(zip(params, args)):
            if isinstance(p.type, TensorType):
                if not isinstance(a, torch.Tensor):
                    raise InterpreterError(f"argument {i} must be a tensor {p.type}, got {type(a).__name__}")
                want = self.shape(p.type)
                if tuple(a.shape) != want or a.dtype != torch_dtype(p.type.dtype):
                    raise InterpreterError(
                        f"argument {i} is {a.dtype} {tuple(a.shape)}, expected {p.type} = {want} "
                        f"under {self.bindings}"
                    )

    # -- execution -----------------------------------------------------------------------------------------
    def call(self, name: str, args) -> list:
        func = self.module.lookup(name) if self.module.name == "builtin.module" else None
        if func is None or func.name != "func.func":
            raise InterpreterError(f"no function @{name} in the module")
        return self.run_block(func.body, list(args))

    def run_block(self, block: Block, args) -> list:
        env = dict(zip(block.args, args))
        for op in block.ops:
            values = [env[v] for v in op.operands]
            if op.has_trait(Terminator):
                return list(self.run_op(op, values))
            results = self.run_op(op, values)
            for r, v in zip(op.results, results):
                env[r] = v
        return []

    def run_op(self, op: Operation, values) -> list:
        fn = RULES.get(op.name)
        if fn is None:
            raise InterpreterError(f"{op.loc or '<unknown>'}: no interpreter rule for '{op.name}'")
        try:
            out = fn(self, op, *values)
        except InterpreterError:
            raise
        except Exception as e:  # noqa: BLE001 - re-raised with the op's name and location
            raise InterpreterError(f"{op.loc or '<unknown>'}: '{op.name}' failed: {type(e).__name__}: {e}") from e
        if op.has_trait(Terminator):
            return list(out)
        if out is None:
            results = []
        elif isinstance(out, (list, tuple)) and (len(op.results) != 1 or _variadic_results(op)):
            results = list(out)  # several results, or a variadic result list (func.call, scf.for)
        else:
            results = [out]
        if len(results) != len(op.results):
            raise InterpreterError(f"{op.loc}: '{op.name}' produced {len(results)} values for {len(op.results)}")
        for r, v in zip(op.results, results):
            self.check(op, r.type, v)
        return results

    def check(self, op: Operation, t, v) -> None:
        if not isinstance(t, TensorType):
            return
        want = self.shape(t)
        if not isinstance(v, torch.Tensor) or tuple(v.shape) != want or v.dtype != torch_dtype(t.dtype):
            got = f"{v.dtype} {tuple(v.shape)}" if isinstance(v, torch.Tensor) else repr(v)
            raise InterpreterError(f"{op.loc or '<unknown>'}: '{op.name}' produced {got}, its type is {t} = {want}")


def _variadic_results(op: Operation) -> bool:
    return any(n.startswith("*") for n in op.result_names)


def interpret(module: Operation, args, bindings: dict[str, int] | None = None, func: str = "main") -> list:
    """Run ``@func`` of ``module`` on ``args``; returns the list of its results."""
    interp = Interpreter(module, bindings)
    f = module.lookup(func)
    if f is None:
        raise InterpreterError(f"no function @{func} in the module")
    interp.bind(f, list(args))
    return interp.call(func, args)


# =============================================================================================================
# builtin / func / annotation


@rule("builtin.module", "func.func")
def _definition(interp, op, *values):
    return None  # definitions: functions run when called


@rule("func.return", "scf.yield")
def _terminator(interp, op, *values):
    return values


@rule("func.call")
def _call(interp, op, *args):
    if interp.launcher is not None:
        callee = interp.module.lookup(op.attributes["callee"])
        if callee is not None and callee.attributes.get("kernel"):
            return interp.launcher.call_kernel(interp, op, args)  # a kernel left at tensor level: counted, reported
    return interp.call(op.attributes["callee"], args)


@rule("hivm.launch")
def _launch(interp, op, *args):
    if interp.launcher is None:
        raise InterpreterError(f"{op.loc or '<unknown>'}: hivm.launch of @{op.attributes['callee']} needs a launcher "
                               "(the runtime's simulate mode); the reference interpreter does not run HIVM")
    return interp.launcher.launch(interp, op, args)


@rule("annotation.mark")
def _mark(interp, op, value):
    return None


# =============================================================================================================
# arith


@rule("arith.constant")
def _constant(interp, op):
    t, v = op.result.type, op.attributes["value"]
    if isinstance(t, IndexType):
        return int(v)
    if isinstance(t, ScalarType):
        return _py_scalar(v, t.dtype)
    flat = torch.tensor(_flatten(v), dtype=torch_dtype(t.dtype))
    shape = interp.shape(t)
    return flat.reshape(()).expand(shape).clone() if flat.numel() == 1 else flat.reshape(shape)  # a splat, or rank 0


def _flatten(v):
    if isinstance(v, (list, tuple)):
        return [x for item in v for x in _flatten(item)]
    return [v]


def _py_scalar(v, dtype: str):
    if dtype == "i1":
        return bool(v)
    return float(v) if is_float_dtype(dtype) else int(v)


_INDEX_BINARY = {
    "arith.addi": operator.add,
    "arith.subi": operator.sub,
    "arith.muli": operator.mul,
    "arith.floordivsi": operator.floordiv,
    "arith.ceildivsi": lambda a, b: ceil_div(a, b),
    "arith.remsi": lambda a, b: a - b * int(a / b),  # remainder with the sign of the dividend (C semantics)
    "arith.minsi": min,
    "arith.maxsi": max,
}


def _index_binary(interp, op, a, b):
    return _INDEX_BINARY[op.name](int(a), int(b))


for _name in _INDEX_BINARY:
    rule(_name)(_index_binary)


@rule("arith.index_cast")
def _index_cast(interp, op, x):
    return int(x)


CMP = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
        "ge": operator.ge}  # fmt: skip


@rule("arith.cmpi")
def _cmpi(interp, op, a, b):
    return bool(CMP[op.attributes["predicate"]](int(a), int(b)))


# =============================================================================================================
# scf / tensor


@rule("scf.for")
def _for(interp, op, lb, ub, step, *inits):
    carried = list(inits)
    if int(step) <= 0:
        raise InterpreterError(f"{op.loc}: scf.for step must be positive, got {step}")
    for iv in range(int(lb), int(ub), int(step)):
        carried = interp.run_block(op.body, [iv, *carried])
    return carried


@rule("tensor.empty")
def _empty(interp, op):
    t = op.result.type
    return torch.zeros(interp.shape(t), dtype=torch_dtype(t.dtype))  # any contents are valid; zeros are reproducible


@rule("tensor.dim")
def _dim(interp, op, x):
    return int(x.shape[op.attributes["index"]])


# =============================================================================================================
# hfusion


def _dtype(op) -> torch.dtype:
    return torch_dtype(op.result.type.dtype)


def _as_tensor(op, v):
    return v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=_dtype(op))


def _full_shape(interp, op, v):
    """Elementwise ops whose operands are all scalars still produce a tensor of the result shape."""
    if isinstance(v, torch.Tensor) and v.dim() == op.result.type.rank:
        return v
    return torch.full(interp.shape(op.result.type), v if not isinstance(v, torch.Tensor) else v.item(),
                      dtype=_dtype(op))  # fmt: skip


UNARY = {
    "neg": torch.neg, "abs": torch.abs, "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt, "reciprocal": torch.reciprocal, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
    "relu": torch.relu, "gelu_erf": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "silu": F.silu,
    "erf": torch.erf, "sin": torch.sin, "cos": torch.cos, "floor": torch.floor, "ceil": torch.ceil,
    "trunc": torch.trunc, "logical_not": torch.logical_not, "bitwise_not": torch.bitwise_not, "sign": torch.sign,
}  # fmt: skip


@rule("hfusion.elemwise_unary")
def _unary(interp, op, x):
    return UNARY[op.attributes["fun"]](_as_tensor(op, x))


def _max(a, b):
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return torch.maximum(a, b)
    t, s = (a, b) if isinstance(a, torch.Tensor) else (b, a)
    return torch.clamp(t, min=s)


def _min(a, b):
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return torch.minimum(a, b)
    t, s = (a, b) if isinstance(a, torch.Tensor) else (b, a)
    return torch.clamp(t, max=s)


def _logical(fn):
    def run(a, b):
        return fn(torch.as_tensor(a), torch.as_tensor(b))

    return run


BINARY = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
    "max": _max, "min": _min, "pow": torch.pow,
    "logical_and": _logical(torch.logical_and), "logical_or": _logical(torch.logical_or),
    "logical_xor": _logical(torch.logical_xor),
    "bitwise_and": operator.and_, "bitwise_or": operator.or_, "bitwise_xor": operator.xor,
}  # fmt: skip


@rule("hfusion.elemwise_binary")
def _binary(interp, op, a, b):
    fun = op.attributes["fun"]
    if fun in DIVMOD_FUNS:
        return division(fun, _full_shape(interp, op, a), _full_shape(interp, op, b))
    return _full_shape(interp, op, BINARY[fun](a, b))


def division(fun: str, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``fun`` (hfusion ``DIVMOD_FUNS``) on two tensors of one dtype, written out step by step so that no shape
    picks another of eager's kernels (eager divides a half tensor by a one-element divisor in f32)."""
    if a.is_floating_point():
        if fun == "truncdiv":
            return torch.trunc(a / b)
        if fun == "remainder":
            return torch.remainder(a, b)
        if fun == "fmod":
            return torch.fmod(a, b)
        if a.dtype == torch.float32:
            return torch.div(a, b, rounding_mode="floor")
        # ATen's div_floor_floating_vec, each step in the dtype, from C's exact fmod (as its Sleef fmod; torch.fmod's
        # vector loop gives NaN where a/b overflows f32)
        with np.errstate(invalid="ignore"):
            mod = torch.from_numpy(np.fmod(a.float().numpy(), b.float().numpy())).to(a.dtype)
        div = (a - mod) / b
        div = torch.where((mod != 0) & ((b < 0) ^ (mod < 0)), div - 1, div)
        floor = torch.floor(div)
        floor = torch.where(div - floor > 0.5, floor + 1, floor)
        basic = a / b
        floor = torch.where(div == 0, torch.copysign(torch.zeros_like(basic), basic), floor)
        return torch.where(b == 0, basic, floor)
    nonzero = b != 0
    safe = torch.where(nonzero, b, torch.ones_like(b))
    floor = torch.div(a, safe, rounding_mode="floor")  # INT_MIN // -1 wraps to INT_MIN, as eager
    rem = a - floor * safe
    if fun in ("truncdiv", "fmod"):
        toward_zero = (rem != 0) & ((a < 0) != (safe < 0))
        floor, rem = torch.where(toward_zero, floor + 1, floor), torch.where(toward_zero, rem - safe, rem)
    if fun in ("floordiv", "truncdiv"):
        return torch.where(nonzero, floor, torch.zeros_like(floor))  # eager raises ZeroDivisionError
    return torch.where(nonzero, rem, a)


@rule("hfusion.elemwise_ternary")
def _ternary(interp, op, a, b, c):
    fun = op.attributes["fun"]
    if fun == "fma":
        return _full_shape(interp, op, a * b + c)
    if fun == "clamp":
        return torch.clamp(_as_tensor(op, a), b, c)
    raise InterpreterError(f"{op.loc}: unknown ternary fun {fun}")


@rule("hfusion.compare")
def _compare(interp, op, a, b):
    return _full_shape(interp, op, CMP[op.attributes["predicate"]](a, b))


@rule("hfusion.select")
def _select(interp, op, c, a, b):
    return _full_shape(interp, op, torch.where(torch.as_tensor(c), _as_tensor(op, a), _as_tensor(op, b)))


ROUND = {"rint": torch.round, "round": lambda x: torch.sign(x) * torch.floor(torch.abs(x) + 0.5),
          "floor": torch.floor, "ceil": torch.ceil, "trunc": torch.trunc}  # fmt: skip


@rule("hfusion.cast")
def _cast(interp, op, x):
    x = _as_tensor(op, x) if not isinstance(x, torch.Tensor) else x
    dtype = _dtype(op)
    if dtype == torch.bool:
        return x != 0
    mode = op.attributes.get("round_mode", "rint")
    if x.is_floating_point() and not dtype.is_floating_point:
        x = ROUND[mode](x)
    elif dtype.is_floating_point and x.dtype != dtype and mode != "rint":
        return round_to_float(x, dtype, mode)
    return x.to(dtype)


@rule("hfusion.broadcast")
def _broadcast(interp, op, x):
    shape = interp.shape(op.result.type)
    view = list(shape)
    for d in op.attributes["dims"]:
        view[d] = 1
    return x.reshape(view).expand(shape)


def _reduce_dims(x, dims, fn):
    for d in sorted(dims, reverse=True):
        x = fn(x, d)
    return x


@rule("hfusion.reduce")
def _reduce(interp, op, x):
    kind, dims = op.attributes["kind"], list(op.attributes["dims"])
    if not dims:
        return x.to(_dtype(op))
    if kind == "sum":
        return torch.sum(x, dims, dtype=_dtype(op))
    if kind == "prod":
        return _reduce_dims(x, dims, lambda t, d: torch.prod(t, d, dtype=_dtype(op)))
    if kind == "max":
        return torch.amax(x, dims)
    if kind == "min":
        return torch.amin(x, dims)
    if kind == "any":
        return _reduce_dims(x, dims, torch.any)
    if kind == "all":
        return _reduce_dims(x, dims, torch.all)
    raise InterpreterError(f"{op.loc}: unknown reduce kind {kind}")


@rule("hfusion.transpose")
def _transpose(interp, op, x):
    return x.permute(op.attributes["perm"])


def _matmul(interp, op, a, b, init=None):
    """A rank-2 operand of batch_matmul broadcasts over the batch (torch.matmul's rule); an f32 product of f16/bf16
    operands is the product of the operands widened to f32 (the cube accumulates in f32 too)."""
    out = _dtype(op)
    if out != a.dtype:
        a, b = a.to(out), b.to(out)
    if op.attributes.get("transpose_a"):
        a = a.transpose(-1, -2)
    if op.attributes.get("transpose_b"):
        b = b.transpose(-1, -2)
    pad = op.attributes.get("pad_n")
    if pad:  # b read with pad more columns of zeros (hfusion-pad-matmul-output)
        b = F.pad(b, (0, pad))
    chunk = op.attributes.get("k_chunk")
    if chunk is not None:  # split-K partial products: one per chunk of K
        return torch.stack([a[:, k:k + chunk] @ b[k:k + chunk] for k in range(0, a.shape[-1], chunk)])
    product = torch.matmul(a, b)
    return product if init is None else init + product  # an accumulating matmul (addmm): init + the product


rule("hfusion.matmul", "hfusion.batch_matmul")(_matmul)


@rule("hfusion.fill")
def _fill(interp, op):
    t = op.result.type
    return torch.full(interp.shape(t), _py_scalar(op.attributes["value"], t.dtype), dtype=_dtype(op))


@rule("hfusion.arange")
def _arange(interp, op):
    n = interp.shape(op.result.type)[0]
    start, step = op.attributes["start"], op.attributes["step"]
    if all(isinstance(v, int) for v in (start, step)):
        return (torch.arange(n, dtype=torch.int64) * step + start).to(_dtype(op))
    return (torch.arange(n, dtype=torch.float64) * step + start).to(_dtype(op))


@rule("hfusion.gather")
def _gather(interp, op, x, index):
    return torch.gather(x, op.attributes["dim"], index.long())


@rule("hfusion.concat")
def _concat(interp, op, *xs):
    return torch.cat(xs, op.attributes["dim"])


@rule("hfusion.slice")
def _slice(interp, op, x):
    index = []
    for off, size, stride in zip(*(op.attributes[k] for k in ("offsets", "sizes", "strides"))):
        o, n, s = interp.size(off), interp.size(size), interp.size(stride)
        if o < 0 or n < 0 or s <= 0:
            raise InterpreterError(f"{op.loc}: invalid slice offset {o} size {n} stride {s}")
        index.append(slice(o, o + (n - 1) * s + 1 if n else o, s))
    return x[tuple(index)]


@rule("hfusion.bitcast")
def _bitcast(interp, op, x):
    return x.contiguous().view(_dtype(op))


@rule("hfusion.reshape")
def _reshape(interp, op, x):
    return x.reshape(interp.shape(op.result.type))


from . import host_ops  # noqa: E402,F401  (registers the host.fallback rule)
