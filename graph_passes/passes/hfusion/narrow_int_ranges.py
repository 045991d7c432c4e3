"""``hfusion-narrow-int-ranges``: i64 values whose every element provably fits in i32 are computed in i32.

PyTorch's integer index arithmetic is i64 (``arange``, ``tril``'s row/column offsets). The A2 vector unit has no i64
arithmetic, compare or select: each i64 vector op runs as a scalar loop over UB, element by element (docs/codegen.md,
"i64: scalar loops"). The causal mask ``ones(T, T, dtype=bool).tril()`` is such a chain::

    %a = hfusion.arange {start = 0, step = 1} : () -> tensor<128xi64>          values in [0, 127]
    %r = hfusion.broadcast %a {dims = [0]} : ... -> tensor<128x128xi64>          [0, 127]
    %c = hfusion.broadcast %a {dims = [1]} : ... -> tensor<128x128xi64>          [0, 127]
    %d = hfusion.elemwise_binary %r, %c {fun = "sub"} : ... -> ...xi64           [-127, 127]
    %m = hfusion.compare %d, %zero {predicate = "le"} : (..., i64) -> ...xi1

An interval analysis gives every i64 tensor value of a function body a range ``[lo, hi]`` when it can prove one:

=========================================  ======================================================================
op                                         range of its result
=========================================  ======================================================================
``hfusion.arange``                         ``start + step·i`` for ``i`` below the dim's size (a symbolic size at
                                           its upper bound; a symbol without a finite one: no range)
``hfusion.fill``, ``arith.constant``       the constant(s)
``hfusion.cast`` from i1/i8/ui8/i16/i32    the source dtype's range
broadcast, reshape, transpose, slice       the operand's (the same elements, or some of them)
``hfusion.concat``                         the union of the inputs'
add, sub, mul, max, min, neg, abs          interval arithmetic on the operands' ranges (scalar operands:
                                           ``arith.constant``\\ s)
``hfusion.select``                         the union of the two values'
=========================================  ======================================================================

Anything else (a function argument, a reduction, a gather, an op the table does not know) has no range. A value
is a *candidate* when its range lies in ``[-2^31, 2^31 - 1]`` and each of its i64 operands is a candidate: every
intermediate is checked, so the i32 computation never wraps and equals the i64 one bit for bit.

A candidate is narrowed when it computes (arithmetic, select) or when a narrowed op or a narrowing consumer reads
it: a compare whose operands are candidates or constants that fit compares in i32, a cast of a candidate to i32
becomes the i32 value itself, a cast to f32 / i1 (any mode) or f16 / bf16 (``rint``) reads the i32 value (the same
value, the same rounding). A value only read as i64 stays i64: narrowing a lone arange, fill or broadcast would
only add a cast (canonicalize folds one of an arange or fill back). Narrowed ops get i32 results and i32 constants;
``abs`` becomes ``max(x, neg(x))`` (the vector unit has no i32 ``vabs``; exact, the range excludes -2^31). Every
use that still needs i64 (a function result, a reduction, an op not in the table) reads one exact ``cast`` i32 →
i64 of the value. An i64 function argument is never narrowed (its values are unknown).

Note: symbolic sizes use the symbol's upper bound from the module's ``symbols`` (dynamo's shape environment, e.g.
``torch._dynamo.mark_dynamic(x, d, min=2, max=4096)``). A symbol whose range is unbounded gives no range: its
arange stays i64, nothing is assumed. AscendNPU-IR has no such pass (its A2 lowering runs i64 vector ops as scalar
loops, ``ShouldLowerToScalarLoops.cpp``); this one runs before fusion so kernels never see the i64 chain.

Counters: ``values-narrowed`` (ops whose result became i32), ``compares-narrowed``, ``casts-narrowed`` (casts
now reading the i32 value, or removed), ``casts-inserted`` (i32 → i64 casts for uses that need i64).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...ir.core import OP_REGISTRY, Constant, Operation, Value
from ...ir.sizes import SizeVars
from ...ir.types import INT_LIMITS, ScalarType, TensorType
from .. import ModulePass, PassContext, register_pass
from ..folding import flat

I32_MIN, I32_MAX = INT_LIMITS["i32"]
VIEWS = ("hfusion.broadcast", "hfusion.reshape", "hfusion.transpose", "hfusion.slice")
BINARY = ("add", "sub", "mul", "max", "min")
UNARY = ("neg", "abs")
COMPUTES = ("hfusion.elemwise_binary", "hfusion.elemwise_unary", "hfusion.select")
"""Narrowed whenever they are candidates: their i32 form is a vector op, their i64 form a scalar loop. (Not a
broadcast: a fill broadcast into a column for an i64 select would only gain an i32 -> i64 cast of the column.)"""
CAST_READS_I32 = {"i32": None, "f32": None, "i1": None, "f16": "rint", "bf16": "rint"}
"""Cast destinations that read a narrowed value directly (None: any round mode; else that mode only)."""

Range = tuple[int, int]


def _integral(x) -> int | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or x != int(x):
        return None
    return int(x)


def _fits(r: Range | None) -> Range | None:
    return r if r is not None and I32_MIN <= r[0] and r[1] <= I32_MAX else None


def _union(ranges) -> Range | None:
    ranges = list(ranges)
    if not ranges or any(r is None for r in ranges):
        return None
    return min(r[0] for r in ranges), max(r[1] for r in ranges)


def _is_i64_tensor(v: Value) -> bool:
    return isinstance(v.type, TensorType) and v.type.dtype == "i64"


def _scalar_constant(v: Value) -> int | None:
    """The value of an integer ``arith.constant`` scalar, else None."""
    op = getattr(v, "op", None)
    if op is None or not op.has_trait(Constant) or not isinstance(v.type, ScalarType) or v.type.dtype != "i64":
        return None
    return _integral(op.attributes["value"])


class RangeAnalysis:
    """Ranges of the i64 values of one block that fit in i32 (``ranges``), in block order."""

    def __init__(self, sizes: SizeVars):
        self.sizes = sizes
        self.ranges: dict[int, Range] = {}  # id(value) -> range, candidates only

    def of(self, v: Value) -> Range | None:
        """A candidate's range (an i64 tensor), or a fitting i64 scalar constant's; else None."""
        if isinstance(v.type, TensorType):
            return self.ranges.get(id(v))
        c = _scalar_constant(v)
        return _fits((c, c)) if c is not None else None

    def run(self, ops) -> None:
        for op in ops:
            if len(op.results) == 1 and _is_i64_tensor(op.result) and not op.regions:
                r = _fits(self._result(op))
                if r is not None:
                    self.ranges[id(op.result)] = r

    def _result(self, op: Operation) -> Range | None:
        name, attrs = op.name, op.attributes
        if name == "hfusion.arange":
            return self._arange(op)
        if name == "hfusion.fill":
            v = _integral(attrs["value"])
            return (v, v) if v is not None else None
        if op.has_trait(Constant):
            values = [_integral(x) for x in flat(attrs["value"])]
            return (min(values), max(values)) if values and None not in values else None
        if name == "hfusion.cast":
            src = op.operand("input").type
            return INT_LIMITS.get(src.dtype) if isinstance(src, TensorType) else None
        if name == "hfusion.select":  # the condition is i1; the result is one of the two values
            return _union(self.of(v) for v in (op.operand("true_value"), op.operand("false_value")))
        operands = [self.of(v) for v in op.operands]
        if not operands or None in operands:
            return None
        if name in VIEWS:
            return operands[0]
        if name == "hfusion.concat":
            return _union(operands)
        if name == "hfusion.elemwise_binary" and attrs["fun"] in BINARY:
            return _binary(attrs["fun"], *operands)
        if name == "hfusion.elemwise_unary" and attrs["fun"] in UNARY:
            return _unary(attrs["fun"], operands[0])
        return None

    def _arange(self, op: Operation) -> Range | None:
        start, step = _integral(op.attributes["start"]), _integral(op.attributes["step"])
        n = self.sizes.upper_bound(op.result.type.shape[0])
        if start is None or step is None or n is None:
            return None
        last = start + step * max(n - 1, 0)
        return min(start, last), max(start, last)


def _binary(fun: str, a: Range, b: Range) -> Range:
    if fun == "add":
        return a[0] + b[0], a[1] + b[1]
    if fun == "sub":
        return a[0] - b[1], a[1] - b[0]
    if fun == "mul":
        products = [x * y for x in a for y in b]
        return min(products), max(products)
    if fun == "max":
        return max(a[0], b[0]), max(a[1], b[1])
    return min(a[0], b[0]), min(a[1], b[1])  # min


def _unary(fun: str, a: Range) -> Range:
    if fun == "neg":
        return -a[1], -a[0]
    if a[0] >= 0:  # abs
        return a
    if a[1] <= 0:
        return -a[1], -a[0]
    return 0, max(-a[0], a[1])


@register_pass
@dataclass(frozen=True)
class NarrowIntRanges(ModulePass):
    """Compute i64 values in i32 where an interval analysis proves every value fits (arange index arithmetic)."""

    name: ClassVar[str] = "hfusion-narrow-int-ranges"

    def run(self, module: Operation, ctx: PassContext) -> None:
        for counter in ("values-narrowed", "compares-narrowed", "casts-narrowed", "casts-inserted"):
            ctx.count(counter, 0)
        sizes = module.size_vars()
        for func in module.functions:
            _Narrowing(func.body, sizes, ctx).run()


class _Narrowing:
    """The narrowing of one block: decide (users before definitions), then rewrite (definitions first)."""

    def __init__(self, block, sizes: SizeVars, ctx: PassContext):
        self.block, self.ctx = block, ctx
        self.analysis = RangeAnalysis(sizes)
        self.narrowed: set[int] = set()  # ids of ops whose result becomes i32
        self.consumers: set[int] = set()  # ids of compares and casts that read i32 operands
        self.constants: dict[int, Value] = {}  # the value of an i64 scalar constant -> its i32 twin
        self.replaced: list[Operation] = []  # the i64 scalar constants given an i32 twin

    def run(self) -> None:
        ops = list(self.block.ops)
        self.analysis.run(ops)
        for op in reversed(ops):
            self._decide(op)
        if not self.narrowed:
            return
        for op in ops:
            if id(op) in self.narrowed:
                self._narrow(op)
            elif id(op) in self.consumers:
                self._consume(op)
        for op in self.replaced:  # the i64 constants the narrowed ops no longer read
            if not op.result.uses:
                op.erase()

    # -- deciding ----------------------------------------------------------------------------------------
    def _candidate(self, v: Value) -> bool:
        return isinstance(v.type, TensorType) and id(v) in self.analysis.ranges

    def _decide(self, op: Operation) -> None:
        if len(op.results) == 1 and self._candidate(op.result):
            demanded = any(id(u) in self.narrowed or id(u) in self.consumers for u in op.result.users)
            if demanded or op.name in COMPUTES:
                self.narrowed.add(id(op))
        elif self._reads_i32(op):
            self.consumers.add(id(op))

    def _reads_i32(self, op: Operation) -> bool:
        """A compare of candidates (or fitting constants), or a cast of a candidate that can read its i32 value."""
        if op.name == "hfusion.compare":
            return (any(self._candidate(v) for v in op.operands)
                    and all(self.analysis.of(v) is not None for v in op.operands))
        if op.name == "hfusion.cast" and self._candidate(op.operand("input")):
            dst = op.result.type.dtype
            return dst in CAST_READS_I32 and CAST_READS_I32[dst] in (None, op.attributes["round_mode"])
        return False

    # -- rewriting ---------------------------------------------------------------------------------------
    def _narrow(self, op: Operation) -> None:
        new = self._i32_form(op)
        i64_uses = []
        for use in list(op.result.uses):
            if id(use.op) in self.narrowed or id(use.op) in self.consumers:
                use.op.set_operand(use.index, new)
            else:
                i64_uses.append(use)
        if i64_uses:
            # Note: the cast goes right before the first use that needs i64, so the i32 value's users keep their
            # block order (a returned value's last: hfusion-rematerialize-layouts keeps the first user on the original
            # of a value it copies per use, and a value only returned is not placed in the kernel's domain)
            first = min((self._in_block(u.op) for u in i64_uses), key=self.block.ops.index)
            widen = self._create("hfusion.cast", [new], op.result.type, {"round_mode": "rint"}, first, loc=op.loc)
            for use in i64_uses:
                use.op.set_operand(use.index, widen)
            self.ctx.count("casts-inserted")
        op.erase()
        self.ctx.count("values-narrowed")

    def _i32_form(self, op: Operation) -> Value:
        """The i32 value computing what ``op`` computes (its operands are narrowed already)."""
        t = op.result.type.with_dtype("i32")
        if op.name == "hfusion.cast" and op.operand("input").type.dtype == "i32":
            return op.operand("input")
        operands = [self._i32_operand(v) for v in op.operands]
        hint = op.result.name_hint
        if op.name == "hfusion.elemwise_unary" and op.attributes["fun"] == "abs":  # no i32 vabs: max(x, -x)
            neg = self._create("hfusion.elemwise_unary", operands, t, {"fun": "neg"}, op)
            return self._create("hfusion.elemwise_binary", [operands[0], neg], t, {"fun": "max"}, op, hint=hint)
        return self._create(op.name, operands, t, dict(op.attributes), op, hint=hint)

    def _consume(self, op: Operation) -> None:
        for i, v in enumerate(op.operands):
            if _scalar_constant(v) is not None:  # tensor operands read the narrowed values already
                op.set_operand(i, self._i32_operand(v))
        if op.name == "hfusion.compare":
            self.ctx.count("compares-narrowed")
            return
        self.ctx.count("casts-narrowed")
        if op.result.type.dtype == "i32":
            op.replace_with([op.operand("input")])

    def _i32_operand(self, v: Value) -> Value:
        c = _scalar_constant(v)
        if c is None:
            return v  # a narrowed tensor (already i32) or a non-integer operand
        if c not in self.constants:
            const = OP_REGISTRY["arith.constant"]([], [ScalarType("i32")], {"value": c}, [], v.op.loc)
            self.block.insert(0, const)
            self.constants[c] = const.result
            self.replaced.append(v.op)
        return self.constants[c]

    def _in_block(self, op: Operation) -> Operation:
        """``op`` or its ancestor in the block (a use inside a region)."""
        while op.parent is not self.block:
            op = op.parent_op()
        return op

    def _create(self, name: str, operands, result_type, attributes, before: Operation, hint=None, loc=None) -> Value:
        new = OP_REGISTRY[name](operands, [result_type], attributes, [], loc or before.loc)
        self.block.insert_before(before, new)
        new.result.name_hint = hint
        return new.result
