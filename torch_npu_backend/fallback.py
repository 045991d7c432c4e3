"""Per-op host fallback, import side: an FX node the backend cannot compile becomes one ``host.fallback`` op.

Why a node falls back (its ``reason``, listed in the profile, the compile warning and the host plan):

- ``no lowering``: its aten op has no entry in ``LOWERINGS``;
- the lowering refused this argument combination (its ``UnsupportedOpError`` reason, e.g. ``step=2``): whatever the
  lowering had emitted is removed first;
- a tensor argument or result of a dtype the device does not hold (float64, int8, uint8, int16, uint16, uint32,
  uint64, complex32, complex64, complex128: :data:`HOST_DTYPES`); such values live on the host, so everything that reads them falls back too;
- a random op (:data:`RANDOM_OPS`): drawn on the host with torch's generator, so the compiled graph and eager agree
  bit for bit under one seed (docs/runtime.md, *Random ops*).

``fallback="error"`` (an option) still imports every node, then raises one :class:`UnsupportedOpError` naming every
node that would have fallen back; ``"auto"`` keeps the host ops and the compiler warns once per graph.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import torch
import torch.fx

from graph_passes.dialects.host import FallbackOp
from graph_passes.ir.types import TensorType

from .dtypes import TORCH_TO_IR
from .errors import UnsupportedOpError

aten = torch.ops.aten
WITH_EFFECTS = torch.ops.higher_order.with_effects

HOST_DTYPES = {torch.float64: "f64", torch.int8: "i8", torch.uint8: "ui8", torch.int16: "i16", torch.uint16: "ui16",
               torch.uint32: "ui32", torch.uint64: "ui64", torch.complex32: "c32", torch.complex64: "c64",
               torch.complex128: "c128"}
"""Dtypes a value may have on the host (the IR names them; no device kernel reads them)."""

RANDOM_OPS = frozenset(
    getattr(getattr(aten, name), overload)
    for name, overloads in {
        "native_dropout": ("default",), "rand": ("default", "generator"), "randn": ("default", "generator"),
        "rand_like": ("default",), "randn_like": ("default",), "randint": ("default", "low"),
        "randint_like": ("default", "low_dtype"), "bernoulli": ("default", "p", "Tensor"), "normal": ("Tensor_float",
        "float_Tensor", "Tensor_Tensor", "float_float"), "uniform": ("default",), "exponential": ("default",),
        "randperm": ("default",), "multinomial": ("default",),
    }.items()
    for overload in overloads
    if hasattr(getattr(aten, name, None), overload)
)
"""Ops that draw from torch's generator. They run on the host, whole: core aten's decompositions of some of them
(``bernoulli`` into ``rand_like(p) < p``) draw differently from eager's kernels, so the decomposition table keeps
them out."""

RANDOM_REASON = "random op (drawn with torch's generator, as eager)"
NO_LOWERING = "no lowering"
EFFECT_REASON = "op with side effects (an effect token orders it): run on the host"


@dataclass(frozen=True)
class Fallback:
    """One node that runs on the host: its aten op, its FX node, why."""

    op: str
    node: str
    reason: str

    def __str__(self) -> str:
        return f"{self.op} (FX node '{self.node}'): {self.reason}"


def dtype_reason(ctx, node: torch.fx.Node) -> str | None:
    """Why ``node`` must run on the host because of a dtype (an argument or a result the device does not hold)."""
    for arg in _flat(list(node.args) + list(node.kwargs.values())):
        v = ctx.env.get(arg) if isinstance(arg, torch.fx.Node) else None
        if v is not None and isinstance(getattr(v, "type", None), TensorType) and v.type.dtype in HOST_DTYPES.values():
            return f"{_torch_name(v.type.dtype)} operand '{arg.name}' (the device holds {_device_dtypes()})"
    for val in _flat([node.meta.get("val")]):
        if isinstance(val, torch.Tensor) and val.dtype not in TORCH_TO_IR:
            return f"{val.dtype} result (the device holds {_device_dtypes()})"
    return None


def host_type(ctx, val: torch.Tensor) -> TensorType:
    """The IR type of a host value: a device dtype or one of :data:`HOST_DTYPES` (others: UnsupportedDtypeError)."""
    if val.dtype in HOST_DTYPES:
        return TensorType(tuple(ctx.expr(d) for d in val.shape), HOST_DTYPES[val.dtype])
    return ctx.tensor_type(val)


def emit_fallback(ctx, node: torch.fx.Node, reason: str, call=None):
    """Emit ``host.fallback`` for ``node``; returns its value (one result) or a list (a tuple result, None kept).
    ``call``: the ``(target, args, result value)`` to run instead of the node's own (an effectful op's)."""
    target, node_args, val = call or (node.target, node.args, node.meta.get("val"))
    operands: list = []
    args = [_encode(ctx, a, operands) for a in node_args]
    kwargs = {k: _encode(ctx, v, operands) for k, v in node.kwargs.items()}
    many = isinstance(val, (tuple, list))
    vals = list(val) if many else [val]
    for v in vals:
        if (v is None and not many) or (v is not None and not isinstance(v, torch.Tensor)):
            raise UnsupportedOpError(target, node.name, f"cannot run on the host either: result {v!r} is not a "
                                     "tensor")  # fmt: skip
    extra = {}
    if many and call is None:
        read = {u.args[1] for u in node.users if u.target is operator.getitem}
        if any(v is not None and i not in read for i, v in enumerate(vals)):  # unread outputs stay on the host
            vals = [v if i in read else None for i, v in enumerate(vals)]
            extra["outputs"] = [i for i, v in enumerate(vals) if v is not None]
    types = [host_type(ctx, v) for v in vals if v is not None]
    op = ctx.create(FallbackOp, operands, types, target=str(target), node=node.name, reason=reason, args=args,
                    kwargs=kwargs, **extra)  # fmt: skip
    if not many:
        return op.results[0]
    results = iter(op.results)
    return [next(results) if v is not None else None for v in vals]


def is_effect_token(node: torch.fx.Node) -> bool:
    """An AOTAutograd effect token: a placeholder, or ``with_effects``' first result, that only orders effects (the
    runtime wrapper passes None for it and drops it from the outputs). It has no value in the IR."""
    if node.op == "placeholder":
        return bool(node.users) and all(u.target is WITH_EFFECTS and u.args[0] is node for u in node.users)
    return node.target is operator.getitem and node.args[1] == 0 and getattr(node.args[0], "target", None) is WITH_EFFECTS


def emit_effect(ctx, node: torch.fx.Node) -> Fallback:
    """``with_effects(token, op, *args)`` (AOTAutograd's effect token around an op with side effects, such as the
    linalg ops' ``_linalg_check_errors``): ``op`` runs on the host, in graph order (host ops are never reordered or
    removed); the token has no IR value (:func:`is_effect_token`). ``ctx.env[node]`` becomes ``[None, *op's results]``."""
    _, op, *args = node.args
    val = list(node.meta.get("val"))[1:]
    results = emit_fallback(ctx, node, EFFECT_REASON, (op, args, val))
    ctx.env[node] = [None, *results]
    return Fallback(str(op), node.name, EFFECT_REASON)


def many_error(fallbacks: list[Fallback]) -> UnsupportedOpError:
    """One error naming every node that has no compiled form (``fallback="error"``)."""
    first = fallbacks[0]
    if len(fallbacks) == 1:
        return UnsupportedOpError(first.op, first.node, None if first.reason == NO_LOWERING else first.reason)
    listed = "; ".join(str(f) for f in fallbacks)
    err = UnsupportedOpError(first.op, first.node, first.reason)
    err.args = (f"no npu lowering for {len(fallbacks)} aten ops: {listed}",)
    err.unsupported = list(fallbacks)
    return err


def _encode(ctx, a, operands: list):
    """One argument as attribute data (see ``graph_passes.dialects.host``); tensors become operands."""
    if isinstance(a, torch.fx.Node):
        val = a.meta.get("val")
        if isinstance(val, torch.Tensor):
            operands.append(ctx.tensor(a))
            return {"operand": len(operands) - 1}
        if isinstance(val, torch.SymInt):
            return ctx.expr(val)
        if isinstance(val, (bool, int, float)):
            return val
        raise ctx.error(f"cannot run on the host: argument '{a.name}' is a {type(val).__name__}")
    if isinstance(a, (list, tuple)):
        return [_encode(ctx, x, operands) for x in a]
    if a is None:
        return {"none": True}
    if isinstance(a, torch.SymInt):
        return ctx.expr(a)
    if isinstance(a, (bool, int, float, str)):
        return a
    if isinstance(a, torch.dtype):
        return {"dtype": str(a).removeprefix("torch.")}
    if isinstance(a, torch.device):
        return {"device": str(a)}
    if isinstance(a, torch.layout):
        return {"layout": str(a).removeprefix("torch.")}
    if isinstance(a, torch.memory_format):
        return {"memory_format": str(a).removeprefix("torch.")}
    raise ctx.error(f"cannot run on the host: argument {a!r} of type {type(a).__name__}")


def _flat(xs):
    for x in xs:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def _torch_name(ir: str) -> str:
    return str(next(t for t, n in HOST_DTYPES.items() if n == ir))


def _device_dtypes() -> str:
    return ", ".join(str(t).removeprefix("torch.") for t in TORCH_TO_IR)
