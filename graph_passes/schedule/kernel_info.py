"""What a vector kernel computes, seen as one iteration domain (after AscendNPU-IR's ``KernelInfo``).

Every tensor value of a vector kernel's body spans some dims of one *domain*: the shape of the kernel's
largest tensors. A value's *mask* lists the domain dims it spans, in its own dim order::

    x:      tensor<s0x128xf16>     mask (0, 1)       the domain is [s0, 128]
    bias:   tensor<128xf16>        mask (1,)         broadcast along dim 0 before use
    rowmax: tensor<s0xf16>         mask (0,)         reduce over dim 1

The lowering gives every value a local buffer of the domain's rank with extent 1 in the dims it does not span
(``memref<tr x 1>`` for ``rowmax``), which is what ``hivm.vbrc`` sources and ``hivm.vreduce`` destinations look
like, and gives kernel arguments the same "expanded" shape in GM (``bias`` becomes ``memref<1x128xf16, gm>``:
the same elements in the same row-major order).

A kernel is *vector-schedulable* when every op has a vector lowering, every value's mask is increasing (no
transposes) and all reductions reduce the same domain dims. Otherwise :attr:`KernelInfo.unsupported` names the
first op that prevents it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

from ..analysis.union_find import UnionFind
from ..idioms.gathers import gather_index
from ..ir.core import BlockArgument, Operation, Value
from ..ir.sizes import SizeVars, as_expr
from ..ir.types import ScalarType, IndexType, TensorType

VECTOR_KINDS = ("PURE_ELEMWISE", "ANY_PB", "LAST_AXIS_PBR", "ANY_PBR")
"""Fusion kinds that hfusion-auto-schedule schedules (the cube kinds are left alone)."""

ELEMENTWISE_OPS = (
    "hfusion.elemwise_unary", "hfusion.elemwise_binary", "hfusion.elemwise_ternary", "hfusion.compare",
    "hfusion.select", "hfusion.cast",
)  # fmt: skip
LOWERED_OPS = ELEMENTWISE_OPS + ("hfusion.broadcast", "hfusion.reduce", "hfusion.fill", "hfusion.arange",
                                  "hfusion.gather")
"""hfusion ops with a vector lowering. Everything else (concat, transpose, reshape, matmul …; gathers other than
along the last dim of an input or of whole rows along dim 0) leaves its kernel at tensor level, marked
``hivm.unsupported``."""
EXACT_INTEGERS = {"f16": 2**11, "bf16": 2**8, "f32": 2**24, "f64": 2**53, "i16": 2**15 - 1, "i32": 2**31 - 1,
                  "i64": 2**63 - 1}
"""Largest magnitude up to which every integer is exact in the dtype (arange's values are checked against it)."""
BOUNDARY_VIEWS = ("hfusion.reshape", "hfusion.slice", "hfusion.bitcast")
"""Views of a kernel argument that are loads of it (a bitcast may also follow a reshape or slice), and views
feeding the return that are stores (reshapes and bitcasts): not computed."""


class Unsupported(Exception):
    """The kernel has no vector schedule; ``op_name`` is the op to blame."""

    def __init__(self, op_name: str, reason: str):
        super().__init__(f"{op_name}: {reason}")
        self.op_name = op_name
        self.reason = reason


class LayoutConflict(Unsupported):
    """A value needed along two different domain dims (one arange broadcast both as a row and as a column): one
    buffer has one layout. Names the value, both masks and the domain."""

    def __init__(self, value: Value, first: tuple, second: tuple, domain: tuple):
        self.value, self.first, self.second = value, first, second
        super().__init__(_producer_name(value), f"{describe_value(value)} is needed along domain dims {list(first)} "
                                                f"and {list(second)} of the domain [{', '.join(map(str, domain))}]; "
                                                f"one buffer has one layout")


@dataclass
class KernelInfo:
    func: Operation
    domain: tuple  # sizes of the domain dims (sympy expressions)
    masks: dict  # Value -> tuple of domain dims it spans
    reduce_dims: tuple  # domain dims reduced by every hfusion.reduce of the kernel (empty: none)
    ops: list  # body ops in order, without the terminator
    inputs: list  # tensor arguments that are not out-parameters
    outputs: list  # out-parameter arguments, in output_args order
    results: list  # returned values; results[i] is written to outputs[i]
    views: dict = field(default_factory=dict)  # entry view result -> (source argument, slice offsets or None)
    arg_masks: dict = field(default_factory=dict)  # tensor argument -> mask of its expanded GM shape
    gather_sources: dict = field(default_factory=dict)  # gathered argument -> (domain dim, its whole extent there)
    row_gathers: dict = field(default_factory=dict)  # argument whose rows are gathered from GM -> the gathered dim

    @property
    def rank(self) -> int:
        return len(self.domain)

    def mask(self, v: Value) -> tuple:
        return self.masks[v]

    def is_small(self, v: Value) -> bool:
        """Spans none of the reduced dims of extent > 1: computed once per parallel tile, outside the reduction
        loops.

        Note: a reduced dim of extent 1 (a reduction keeping a unit dim beside one that drops it, softmax over dim 0
        of ``[s0, s1, 1]`` beside a mean over ``[0, 2]``) has one tile, so a value spanning it is the same in every
        iteration of the reduced loops. Counting it as big recomputed a reduction result's consumers inside those
        loops, and a consumer planned in place on the accumulator (``1/sum``) was applied once per iteration."""
        looped = {d for d in self.reduce_dims if as_expr(self.domain[d]) != 1}
        return not set(self.masks[v]) & looped

    def expanded_shape(self, shape, mask) -> list:
        """``shape`` (over ``mask``'s dims) as a domain-rank shape with 1 in the other dims."""
        out = [as_expr(1)] * self.rank
        for d, s in zip(mask, shape):
            out[d] = as_expr(s)
        return out

    @property
    def parallel_dims(self) -> list[int]:
        return [d for d in range(self.rank) if d not in self.reduce_dims]


def tensor_values(info_ops, args) -> list[Value]:
    vals = [a for a in args if isinstance(a.type, TensorType)]
    for op in info_ops:
        vals += [r for r in op.results if isinstance(r.type, TensorType)]
    return vals


def analyze_kernel(func: Operation, sizes: SizeVars, target) -> KernelInfo:
    """The domain, masks and reductions of ``func``; raises :class:`Unsupported` when it has no vector schedule.

    Views at the kernel boundary are not computed: a reshape, bitcast or unit-stride slice of an argument is a load
    of that argument (in the view's shape and dtype, at the slice's offsets); a reshape or bitcast feeding the
    return stores its input. A bitcast only changes the element type of the bytes moved (GM bools are loaded and
    stored as i8, ``hfusion-legalize-bool``).
    """
    layout = kernel_layout(func, sizes)
    ops, inputs, outputs, results, views = layout.ops, layout.inputs, layout.outputs, layout.results, layout.views
    domain, masks, rank = layout.domain, layout.masks, len(layout.domain)
    gather_sources, row_gathers = _gather_sources(ops, masks, inputs, rank, target.dma_half_bytes)
    for v in layout.values:
        if v not in masks:
            raise Unsupported(_producer_name(v), f"cannot place value of type {v.type} in the domain {list(domain)}")
        m = masks[v]
        if list(m) != sorted(m):
            raise Unsupported(_producer_name(v), "permutes dims (transposes are not lowered)")
        for d, s in zip(m, v.type.shape):
            if (v in gather_sources and d == gather_sources[v][0]) or row_gathers.get(v) == d:
                continue  # a gathered source is whole along the gathered dim (loaded whole or read row by row)
            if not sizes.statically_known_equal(s, domain[d]):
                raise Unsupported(_producer_name(v), f"dim of size {s} does not match domain dim {d} = {domain[d]}")

    # Reductions agree on the domain dims they reduce; a dim of extent 1 is reduced or kept alike (a loss's count of
    # valid labels over [N] beside its sum over [N, 1]): the kernel reduces the union.
    reduce_dims = None
    unit = {d for d, s in enumerate(domain) if sizes.statically_known_equal(s, 1)}
    for op in ops:
        if op.name != "hfusion.reduce":
            continue
        m = masks[op.operands[0]]
        dims = tuple(m[i] for i in op.attributes["dims"])
        if reduce_dims is not None and set(dims) - unit != set(reduce_dims) - unit:
            raise Unsupported(op.name, f"reduces dims {dims}, another reduction of the kernel reduces {reduce_dims}")
        reduce_dims = tuple(sorted(set(dims) | set(reduce_dims or ())))

    arg_masks = {a: masks[a] for a in inputs if a in masks}
    for res, (src, _) in views.items():
        if src in arg_masks and arg_masks[src] != masks[res]:
            raise Unsupported("hfusion.slice", "an argument is viewed as different parts of the domain")
        arg_masks[src] = masks[res]
    for out, res in zip(outputs, results):
        arg_masks[out] = masks[res]
    return KernelInfo(func, domain, masks, reduce_dims or (), ops, inputs, outputs, results, views, arg_masks,
                      gather_sources, row_gathers)


@dataclass
class KernelLayout:
    """The computed body of a vector kernel and where its values lie in the domain (:func:`kernel_layout`)."""

    ops: list  # computed ops in body order (boundary views left out)
    inputs: list
    outputs: list
    results: list  # returned values, looked through the boundary reshapes/bitcasts that store them
    views: dict  # entry view result -> (source argument, slice offsets or None)
    values: list  # the tensor values that need a place in the domain
    domain: tuple
    masks: dict  # Value -> domain dims (values the propagation does not reach are absent)


def kernel_layout(func: Operation, sizes: SizeVars) -> KernelLayout:
    """The first half of :func:`analyze_kernel`: boundary views, the domain and every value's mask, as propagated
    from the values of the domain's rank. Raises :class:`Unsupported` for an op with no vector lowering and
    :class:`LayoutConflict` for a value needed along two different domain dims."""
    body = func.body
    ops = list(body.ops[:-1])
    ret = body.ops[-1]
    output_args = list(func.attributes.get("output_args") or [])
    args = list(body.args)
    outputs = [args[i] for i in output_args]
    inputs = [a for i, a in enumerate(args) if i not in output_args and isinstance(a.type, TensorType)]
    results = list(ret.operands)
    if len(results) != len(outputs):
        raise Unsupported(func.sym_name, f"returns {len(results)} values for {len(outputs)} out-parameters")

    views = {}  # entry view result -> (argument, offsets or None)
    boundary = set()  # ids of view ops that are not computed
    for op in ops:
        src = op.operands[0] if op.operands else None
        if op.name in BOUNDARY_VIEWS and isinstance(src, BlockArgument):
            if op.name == "hfusion.slice" and any(as_expr(s) != 1 for s in op.attributes["strides"]):
                raise Unsupported(op.name, "only unit-stride slices of kernel arguments are lowered (to loads)")
            if any(u.name not in BOUNDARY_VIEWS for u in src.users):
                raise Unsupported(op.name, "a viewed argument is also used whole")
            offsets = [as_expr(o) for o in op.attributes["offsets"]] if op.name == "hfusion.slice" else None
            views[op.result] = (src, offsets)
            boundary.add(id(op))
        elif op.name == "hfusion.bitcast" and src in views and len(src.uses) == 1:
            views[op.result] = views.pop(src)  # a view's bytes read as another type (GM bools as i8)
            boundary.add(id(op))
    for i, r in enumerate(results):
        while hasattr(r, "op") and r.op.name in ("hfusion.reshape", "hfusion.bitcast") and len(r.uses) == 1:
            boundary.add(id(r.op))
            r = r.op.operands[0]
        results[i] = r
    ops = [op for op in ops if id(op) not in boundary]
    for op in ops:
        if op.name == "hfusion.arange":
            _check_arange(op, sizes)
        if op.name in LOWERED_OPS and op.name != "hfusion.slice":
            continue
        if op.name == "arith.constant" and not isinstance(op.result.type, TensorType):
            continue
        raise Unsupported(op.name, "has no vector lowering")
    viewed = {id(src) for src, _ in views.values()}

    values = [v for v in tensor_values(ops, inputs) if id(v) not in viewed] + list(views)
    values += [r for r in results if r not in values and isinstance(r.type, TensorType)]
    if not values:
        raise Unsupported(func.sym_name, "has no tensor values")
    gathered = {id(op.operands[0]) for op in ops if op.name == "hfusion.gather"}  # whole rows, not the domain
    anchor = max([v for v in values if id(v) not in gathered] or values, key=lambda v: v.type.rank)
    rank = anchor.type.rank
    domain = tuple(anchor.type.shape)
    masks: dict = {}
    for v in values:
        if v.type.rank == rank:
            masks[v] = tuple(range(rank))
    if rank == 0:  # a kernel of 0-d values: a domain of one element, which each value's 1-element buffer spans
        domain = (as_expr(1),)

    _propagate(ops, masks, domain)
    loops = [d for d in range(rank) if not sizes.statically_known_equal(domain[d], 1)]
    spans_loops = [v for v in values if v not in masks and _spans(v, [domain[d] for d in loops], sizes)]
    if spans_loops:  # Note: a value over the domain without its unit dims (16x50 beside 16x1x50) spans all loops
        for v in spans_loops:
            masks[v] = tuple(loops)
        _propagate(ops, masks, domain)
    if any(v not in masks for v in values) and _place_detached(ops, values, masks, domain, sizes):
        _propagate(ops, masks, domain)
    return KernelLayout(ops, inputs, outputs, results, views, values, domain, masks)


def _place_detached(ops, values: list, masks: dict, domain: tuple, sizes: SizeVars) -> bool:
    """Place each part of the body that shares no op with a placed value (a chain fused beside the rest through a
    cheap producer that ``hfusion-rematerialize-layouts`` then copied per use: a dynamic causal mask's arange beside
    the positions cast from it) at the innermost domain dims matching its largest values' extents; any place is
    correct (a result not spanning a tiled dim is stored by the first tile along it only), the innermost keeps its
    buffer rows contiguous. True when some value was placed."""
    known = set(values)
    uf = UnionFind()
    for op in ops:
        linked = [v for v in list(op.operands) + list(op.results) if v in known]
        for v in linked[1:]:
            uf.union(linked[0], v)
    parts: dict = {}
    for v in values:
        parts.setdefault(uf.find(v), []).append(v)
    placed = False
    for part in parts.values():
        if any(v in masks for v in part):
            continue
        rank = max(v.type.rank for v in part)
        for v in (v for v in part if v.type.rank == rank):
            for dims in reversed(list(combinations(range(len(domain)), rank))):
                if all(sizes.statically_known_equal(s, domain[d]) for s, d in zip(v.type.shape, dims)):
                    masks[v] = dims
                    placed = True
                    break
    return placed


def _spans(v: Value, shape: list, sizes: SizeVars) -> bool:
    return v.type.rank == len(shape) and all(sizes.statically_known_equal(a, b) for a, b in zip(v.type.shape, shape))


def looked_through(op: Operation) -> bool:
    """A broadcast only a gather's index reads (see :func:`gather_index`): it gets no buffer and no vector op."""
    users = op.result.users if op.results else []
    return op.name == "hfusion.broadcast" and len(users) == 1 and users[0].name == "hfusion.gather" and \
        users[0].operands[1] is op.result and gather_index(users[0]) is op.operands[0]


def _gather_sources(ops, masks: dict, inputs: list, rank: int, element_row_bytes: int) -> tuple[dict, dict]:
    """The kernel's gathers; the source is a kernel input used only by gathers, and either

    - gathered along the last domain dim: ``hivm.vgather`` in UB, the source's rows loaded whole; the index is any
      value of the result's domain dims. First dict: argument → (domain dim, its static extent there);
    - or whole rows along dim 0, the index spanning only dim 0 (``embedding``, ``index_select(x, 0, i)``: the index
      broadcast over the row): ``hivm.embedding_gather``, one DMA per row from GM at an address the scalar unit
      computes from the index (the source is never loaded whole, its dim 0 may be dynamic); likewise slabs along
      a middle dim ``d``, the index spanning only ``d`` (``flip``, ``roll``, ``index_select`` along dim 1 of a
      rank-3 source): one DMA of the tile's box of the other dims per index;
    - or one element of each row along the last dim (``x.gather(-1, t[:, None])``: a loss's target logit; the
      result has extent 1 there) from rows of at least ``element_row_bytes`` (or of a symbolic length):
      ``hivm.embedding_gather`` along the last dim, one DMA of one element per row — a row's bytes are never
      loaded, however long (a row of logits over a large vocabulary can exceed UB). The bound is the target's
      ``dma_half_bytes`` (PTO's transfer curve: a DMA of that size spends as long on its fixed part as on its
      bytes): a tile of k rows loaded whole costs about ``half + k·row``, k element DMAs ``k·half``, so rows
      shorter than ``half`` are cheaper loaded whole (docs/schedule.md, *Measurements*).
      Second dict: argument → the gathered dim (0, or the last)."""
    out, rows = {}, {}
    for op in ops:
        if op.name != "hfusion.gather":
            continue
        src = op.operands[0]
        if src not in inputs or any(u.name != "hfusion.gather" for u in src.users):
            raise Unsupported(op.name, "the gathered tensor must be a kernel input used only by gathers")
        if src.type.rank != rank or masks.get(op.result) != tuple(range(rank)):
            raise Unsupported(op.name, f"gathers {src.type} outside the kernel's domain of rank {rank}")
        dim = op.attributes["dim"]
        row = as_expr(src.type.shape[dim]) * src.type.element_bytes
        if dim == rank - 1 and rank == 2 and as_expr(op.result.type.shape[dim]) == 1 and \
                not (row.is_Integer and row < element_row_bytes):
            if src in out:
                raise Unsupported(op.name, "an argument is gathered both as elements and along its last dim")
            rows[src] = dim  # one element per row: hivm.embedding_gather of one-element rows along the last dim
            continue
        if dim != rank - 1:
            index_mask = masks.get(gather_index(op))
            if index_mask != (dim,):
                raise Unsupported(op.name, f"gathers along dim {dim} by an index spanning domain dims "
                                           f"{list(index_mask or ())}: only the last dim (vgather) or whole rows or "
                                           f"slabs along another dim (an index spanning that dim only) are lowered")
            if src in out:
                raise Unsupported(op.name, "an argument is gathered both as rows and along its last dim")
            rows[src] = dim
            continue
        if src in rows:
            raise Unsupported(op.name, "an argument is gathered both as rows and along its last dim")
        size = as_expr(src.type.shape[dim])
        if not size.is_Integer:
            raise Unsupported(op.name, f"the gathered dim of {src.type} is not static (its rows are loaded whole "
                                       f"into UB)")
        out[src] = (dim, int(size))
    return out, rows


def _check_arange(op: Operation, sizes: SizeVars) -> None:
    """An arange is lowered (CreateVecIndex, then an integer multiply and add) only when its values are those eager
    computes: integer start and step, and every value and intermediate exact in the dtype (|start| + |step|·(n − 1)
    within its exact integers) — or, for a float arange of step 1, any length: CreateVecIndex forms start + i
    exactly and rounds once, as eager rounds its exact value once; or, for an i64 arange of step ±1 from
    |start| ≤ 2^62, any length: no tensor has 2^62 elements, so every value fits (a causal mask's arange of a
    dynamic sequence length)."""
    start, step = op.attributes["start"], op.attributes["step"]
    dtype = op.result.type.dtype
    if float(start) != int(start) or float(step) != int(step) or dtype not in EXACT_INTEGERS:
        raise Unsupported(op.name, f"start {start} / step {step} in {dtype}: only integer aranges are lowered")
    if int(step) == 1 and dtype in ("f16", "bf16", "f32"):
        return
    if dtype == "i64" and abs(int(step)) == 1 and abs(int(start)) <= 2**62:
        return
    n = sizes.upper_bound(op.result.type.shape[0])
    if n is None:
        raise Unsupported(op.name, f"length {op.result.type.shape[0]} has no upper bound: exactness unknown")
    top = abs(int(start)) + abs(int(step)) * max(n - 1, 0)
    if top > EXACT_INTEGERS[dtype]:
        raise Unsupported(op.name, f"values up to {top} are not all exact in {dtype} "
                                   f"(integers are exact up to {EXACT_INTEGERS[dtype]})")


def _producer_name(v: Value) -> str:
    return v.op.name if hasattr(v, "op") else "func.func"


def describe_value(v: Value) -> str:
    """``v`` for a message: its producer (or argument position), type and FX node (``loc``)."""
    if isinstance(v, BlockArgument):
        return f"kernel argument {v.index} ({v.name_hint or '?'}: {v.type})"
    loc = f" from {str(v.op.loc).strip(chr(34))}" if v.op.loc else ""
    return f"the {v.op.name} value {v.type}{loc}"


def _propagate(ops, masks: dict, domain: tuple) -> None:
    """Fill ``masks`` through the body: elementwise ops share a mask, broadcast drops its new dims towards its
    input, reduce drops its reduced dims towards its result, slice keeps its rank. A value reached with two
    different masks (an arange broadcast both as a row and as a column) has no single buffer layout:
    :class:`LayoutConflict` (``hfusion-rematerialize-layouts`` copies cheap values per layout before this runs)."""
    changed = True
    while changed:
        changed = False

        def setm(v, m):
            nonlocal changed
            if not isinstance(v.type, TensorType):
                return
            if v in masks:
                if masks[v] != tuple(m):  # one buffer cannot hold a value laid along two different domain dims
                    raise LayoutConflict(v, masks[v], tuple(m), domain)
                return
            masks[v] = tuple(m)
            changed = True

        for op in ops:
            tensors = [v for v in list(op.operands) + list(op.results) if isinstance(v.type, TensorType)]
            if op.name in ELEMENTWISE_OPS or op.name == "hfusion.gather":  # gather: source, index, result alike
                known = [masks[v] for v in tensors if v in masks]
                if known:
                    for v in tensors:
                        setm(v, known[0])
            elif op.name == "hfusion.broadcast" and op.result in masks:
                mr = masks[op.result]
                dims = op.attributes["dims"]
                setm(op.operands[0], [mr[i] for i in range(len(mr)) if i not in dims])
            elif op.name == "hfusion.reduce" and op.operands[0] in masks:
                mi = masks[op.operands[0]]
                dims = op.attributes["dims"]
                setm(op.result, [mi[i] for i in range(len(mi)) if i not in dims])


def is_scalar(v: Value) -> bool:
    return isinstance(v.type, (ScalarType, IndexType))
