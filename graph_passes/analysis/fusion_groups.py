"""Fusion groups of a host block: which ops go into one kernel.

Legality (:meth:`FusionGraph.can_fuse`) is separate from benefit (:meth:`FusionGraph.score`):

- ``can_fuse(a, b)``: the merged group has a fusion kind other than UNKNOWN (pattern tables, reduce agreement,
  one iteration space — :mod:`.fusion_kind`), neither group holds a matmul (cube kernels stay SINGLE_CUBE for
  now), and merging creates no cycle: no path leaves one group, runs through an op outside both, and enters the
  other (the outlined kernel could then not be placed anywhere in the host block).
- ``score(a, b)``: bytes of GM traffic the merge saves, at every shape symbol's lower bound: a value passed from
  one group to the other is no longer read back (and no longer written when nothing else uses it); an input
  both groups read is read once; 0 when the merged kernel would reduce leading dims, store a value of that
  reduction's domain and not hold the reduced rows in UB (:meth:`FusionGraph.column_rows_fit`). Except when exactly one of the groups reduces every element
  (:func:`runs_on_one_core`): the merged kernel has one work item, so the other group's work would move onto one
  core. That merge is weighed by time, in bytes through one core's GM port (:meth:`FusionGraph.one_core_saving`),
  so the per-row part of a loss (the gather of each row's target logit, the ignore_index masks) stays a
  multi-core kernel writing an ``[N]`` vector and only the final sums run on one core.

The driver is Inductor's: candidate pairs (producer→consumer edges, and pairs of groups reading one value —
horizontal fusion) in a heap by score; the best legal pair merges; scores are re-checked lazily when popped.
Horizontal merges stop after ``max_horizontal`` (-1: unlimited, AscendNPU-IR's default).
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field

from sympy import prod as sympy_prod

from ..ir.core import Cube, Operation, Value
from ..ir.sizes import INF, SizeVars, as_expr
from ..ir.types import ShapedType
from ..target import TargetSpec, target_spec
from .fusion_kind import IMPORTANT, FusionKind, OpPattern, group_kind, op_pattern

PARTICIPATING = IMPORTANT | {OpPattern.RESHAPE}  # ops that may go into a kernel (a reshape only beside others)


MOVEMENT = ("hfusion.transpose", "hfusion.concat", "hfusion.slice", "hfusion.reshape", "hfusion.fill")


def mixes_movement_and_compute(ops: list[Operation]) -> bool:
    """A transpose, a concat, a strided slice or a slice of a value computed in the group, together with compute
    ops. Note: such kernels would need element shuffles inside UB between vector ops; kept apart, the movement
    becomes its own data-movement kernel (DMA with strides, graph_passes/schedule/movement.py) and the compute a
    vector kernel reading its result (AscendNPU-IR likewise keeps transposes and concats out of its vector
    fusion patterns unless a template handles them)."""
    members = set(ops)
    if all(op.name in MOVEMENT for op in ops):
        return False
    for op in ops:
        if op.name in ("hfusion.transpose", "hfusion.concat"):
            return True
        if op.name == "hfusion.slice" and (any(str(s) != "1" for s in op.attributes["strides"])
                                           or getattr(op.operand("input"), "op", None) in members):
            return True
    return False


@dataclass(eq=False)
class Group:
    ops: list[Operation] = field(default_factory=list)  # in block order

    @property
    def num_important(self) -> int:
        return sum(1 for op in self.ops if op_pattern(op) in IMPORTANT)

    def has_cube(self) -> bool:
        return any(op.has_trait(Cube) for op in self.ops)


def below_domain(ops: list[Operation]) -> bool:
    """Does a reduction or a gather of ``ops`` have no place over the kernel's domain — the shape of the group's
    largest tensors, gathered sources and reshaped values (views) aside (schedule/kernel_info.py)?
    A reduction's input is placed over the domain whole, or over it without its unit dims: the final reduction of a
    batch norm's per-(n, c) partial sums ``[N, C]`` beside its normalisation over ``[N, C, H·W]`` has no such place.
    A gather's source and result have the domain's rank: a position-embedding lookup ``[T, D]`` broadcast over the
    batch of a ``[B, T, D]`` layer norm (a transformer's embedding sum) runs as a kernel of its own."""
    viewed = {id(op.operand("input")) for op in ops if op.name in ("hfusion.gather", "hfusion.reshape")}
    values = [v for op in ops for v in (*op.operands, *op.results)
              if isinstance(v.type, ShapedType) and id(v) not in viewed]
    if not values:
        return False

    def size(v):  # rank, then dims that are not 1, then static elements
        dims = [as_expr(d) for d in v.type.shape]
        n = as_expr(v.type.numel())
        return v.type.rank, sum(d != 1 for d in dims), int(n) if n.is_Integer else 0

    domain = [str(d) for d in max(values, key=size).type.shape]
    loops = [d for d in domain if d != "1"]
    for op in ops:
        if op.name == "hfusion.reduce":
            shape = [str(d) for d in op.operand("input").type.shape]
            if shape != domain and [d for d in shape if d != "1"] != loops:
                return True
        if op.name == "hfusion.gather" and op.results[0].type.rank != len(domain):
            return True
    return False


def gathers_computed_value(ops: list[Operation]) -> bool:
    """Does a gather of ``ops`` read a value the group computes? A gather reads its source from GM (rows loaded
    whole, or one DMA per row at an address the scalar unit computes): a flip of a computed gradient gathers it in
    a kernel of its own."""
    computed = {id(r) for op in ops for r in op.results}
    return any(op.name == "hfusion.gather" and id(op.operand("input")) in computed for op in ops)


def runs_on_one_core(ops: list[Operation], sizes: SizeVars) -> bool:
    """Does a kernel of ``ops`` reduce every element of its domain (a reduction to one element from more)? Such a
    kernel has one work item: the schedule runs it on one core (docs/schedule.md, "Work split")."""
    return any(op.name == "hfusion.reduce" and sizes.statically_known_equal(op.results[0].type.numel(), 1)
               and not sizes.statically_known_equal(op.operand("input").type.numel(), 1) for op in ops)


def value_bytes(v: Value, sizes: SizeVars) -> int:
    """Bytes of a tensor value at its symbols' lower bounds (0 for scalars)."""
    t = v.type
    if not isinstance(t, ShapedType):
        return 0
    lo = sizes.lower_bound(t.numel())
    return (lo if lo is not None else 0) * t.element_bytes


LARGE_SYMBOL = 2**20  # an unbounded shape symbol, where the one-core weighing needs a size (see one_core_saving)


def value_bytes_at_most(v: Value, sizes: SizeVars) -> int:
    """Bytes of a tensor value at its symbols' upper bounds, an unbounded symbol taken as ``LARGE_SYMBOL`` (0 for
    scalars)."""
    t = v.type
    if not isinstance(t, ShapedType):
        return 0
    numel = as_expr(t.numel())
    at = {s: min(sizes.ranges.get(s.name, (1, INF))[1], LARGE_SYMBOL) for s in numel.free_symbols}
    return int(numel.subs(at)) * t.element_bytes


class FusionGraph:
    def __init__(self, ops: list[Operation], sizes: SizeVars, max_horizontal: int = -1,
                 target: TargetSpec | None = None):
        self.sizes = sizes
        self.target = target or target_spec(None)
        self.max_horizontal = max_horizontal
        self.position = {op: i for i, op in enumerate(ops)}
        self.group_of: dict[Operation, Group] = {}
        for op in ops:
            if op_pattern(op) in PARTICIPATING:
                self.group_of[op] = Group([op])
        self.horizontal_merges = 0
        self.bytes_saved = 0

    # -- legality ---------------------------------------------------------------------------------------------
    def kind(self, a: Group, b: Group) -> FusionKind:
        return group_kind(self._merged_ops(a, b), self.sizes)

    def can_fuse(self, a: Group, b: Group) -> bool:
        if a is b or a.has_cube() or b.has_cube():
            return False
        ops = self._merged_ops(a, b)
        if self.kind(a, b) == FusionKind.UNKNOWN or mixes_movement_and_compute(ops) or below_domain(ops) \
                or gathers_computed_value(ops):
            return False
        return not self._path_through_outside(a, b) and not self._path_through_outside(b, a)

    def _path_through_outside(self, src: Group, dst: Group) -> bool:
        """Is there a path src → (ops or groups in neither) → … → dst?

        Note: groups already formed are contracted: entering any op of a third group continues from every op of
        that group, since the group becomes one kernel that runs after all its inputs and before all its users.
        Without this, two groups could each feed the other (a cycle no op-level path shows).
        """
        members = set(src.ops) | set(dst.ops)
        dst_ops = set(dst.ops)
        stack = [u for op in src.ops for r in op.results for u in r.users if u not in members]
        seen: set[Operation] = set()
        while stack:
            op = stack.pop()
            if op in seen:
                continue
            group = self.group_of.get(op)
            contracted = group.ops if group is not None else [op]
            seen.update(contracted)
            for member in contracted:
                for r in member.results:
                    for u in r.users:
                        if u in dst_ops:
                            return True
                        if u not in members and u not in seen:
                            stack.append(u)
        return False

    # -- benefit ----------------------------------------------------------------------------------------------
    def score(self, a: Group, b: Group) -> int:
        one_a, one_b = runs_on_one_core(a.ops, self.sizes), runs_on_one_core(b.ops, self.sizes)
        if one_a != one_b:
            return self.one_core_saving(a if one_a else b, b if one_a else a)
        members = set(a.ops) | set(b.ops)
        if not self.column_rows_fit(members):
            return 0
        saved = 0
        for src, dst in ((a, b), (b, a)):
            dst_ops = set(dst.ops)
            for op in src.ops:
                for r in op.results:
                    if not any(u in dst_ops for u in r.users):
                        continue
                    only_inside = all(u in members for u in r.users)
                    saved += value_bytes(r, self.sizes) * (2 if only_inside else 1)
        a_inputs = self._inputs(a)
        saved += sum(value_bytes(v, self.sizes) for v in self._inputs(b) if v in a_inputs)
        return saved

    def column_rows_fit(self, ops: set[Operation]) -> bool:
        """Would a kernel of ``ops`` that reduces leading dims (a column sum) and also stores a value of that
        reduction's domain still hold every reduced row in UB at its narrowest column strip, or have a strip for
        every core? False when neither: the schedule would tile the rows (multi-pass) over few cores, and the stored
        value's elementwise work would run in that slow schedule; kept apart, it runs over every core. A group
        whose strips cover every core stays one kernel, reading its input once (measurements: docs/fusion.md).

        An estimate of the schedule's buffers (graph_passes/schedule/buffers.py): every value of the reduction's
        domain the group computes or reads gets a buffer of the reduced rows × one strip (32 B of the group's
        narrowest dtype, ``tiling._granule``'s unit), two for the ones loaded or stored. It leaves out in-place
        sharing and inlined broadcasts (which it over-counts) and smaller values and the scratch (which it
        under-counts)."""
        domains = [(op.operand("input").type.shape, op.attributes["dims"]) for op in ops if op.name == "hfusion.reduce"
                   and op.operand("input").type.rank - 1 not in op.attributes["dims"]]
        if not domains:
            return True
        values = {v for op in ops for v in (*op.operands, *op.results) if isinstance(v.type, ShapedType)}
        strip = self.target.ub_align // min(v.type.element_bytes for v in values)
        for shape, dims in domains:
            full = [v for v in values if v.type.shape == shape]
            stores = [v for v in full if getattr(v, "op", None) in ops and any(u not in ops for u in v.users)]
            if not stores:
                continue
            rows = self.sizes.upper_bound(as_expr(sympy_prod([shape[d] for d in dims])))
            columns = self.sizes.upper_bound(as_expr(sympy_prod([s for d, s in enumerate(shape) if d not in dims])))
            if rows is None or columns is None or columns // strip >= self.target.vector_cores:
                continue  # a strip for every core: even a multi-pass schedule keeps them busy
            need = sum((2 if v in stores or getattr(v, "op", None) not in ops else 1) * rows * strip
                       * v.type.element_bytes for v in full)  # a strip's bytes: whole 32-B granules already
            if need > self.target.ub_bytes:
                return False
        return True

    def one_core_saving(self, serial: Group, par: Group) -> int:
        """Time saved by merging ``par`` into ``serial``, a group that runs on one core, in bytes through one
        core's GM port (``gm_port_read_bytes_per_cycle``); <= 0: keep apart.

        Sizes at the symbols' upper bounds (:func:`value_bytes_at_most`), not the lower bounds the GM-bytes score
        uses: a dynamic kernel must not be slow at the sizes it may see. Kept apart, it loses at most the extra
        kernel's fixed latency at small sizes; merged, it loses in proportion to the size at large ones (dynamo
        marks a batch dim dynamic after a second batch size, with the range [2, ∞)).

        Merged, the one core also moves what ``par`` alone reads (``own``) and writes for others (``out``).
        Apart, ``par`` is a kernel over every core moving its inputs, the values it takes from ``serial`` and its
        results at the chip's rate (``min(DDR, cores × port)``), the one-core kernel reads back what ``par``
        hands it (``handed``), and the extra kernel costs at least one load's and one store's fixed transfer
        latency (``TargetSpec.dma_latency_cycles``). Only bytes are weighed, not vector work (which would favour
        keeping apart further).

        Note: AscendNPU-IR fuses by pattern alone and spreads a full reduction over cores only with atomic
        stores (``enableMultiCoreReduce``, off under deterministic computing, one reduction directly stored);
        here both reductions of a loss and the ops after them need the combined value, so keeping the per-row
        work apart is what gives it the cores.
        """
        t, size = self.target, lambda vs: sum(value_bytes_at_most(v, self.sizes) for v in vs)
        serial_ops, par_ops = set(serial.ops), set(par.ops)
        par_in, serial_in = self._inputs(par), self._inputs(serial)
        own = [v for v in par_in if v not in serial_in and getattr(v, "op", None) not in serial_ops]
        taken = [v for v in par_in if v not in own]
        handed = [r for op in par.ops for r in op.results if any(u in serial_ops for u in r.users)]
        out = [r for op in par.ops for r in op.results if any(u not in par_ops | serial_ops for u in r.users)]
        port = t.gm_port_read_bytes_per_cycle
        chip = min(t.ddr_bytes_per_cycle, t.vector_cores * port)
        apart = (size(own) + size(taken) + size(set(handed) | set(out))) * port / chip + size(handed) \
            + 2 * t.dma_latency_cycles * port
        return int(apart - size(own) - size(out))

    def _inputs(self, g: Group) -> set[Value]:
        ops = set(g.ops)
        return {v for op in g.ops for v in op.operands if getattr(v, "op", None) not in ops}

    # -- driver -----------------------------------------------------------------------------------------------
    def _merged_ops(self, a: Group, b: Group) -> list[Operation]:
        return sorted(a.ops + b.ops, key=lambda op: self.position[op])

    def _candidates(self):
        """(producer, consumer, horizontal) op pairs."""
        for op in self.group_of:
            for r in op.results:
                for u in r.users:
                    if u in self.group_of:
                        yield op, u, False
        values = {v for op in self.group_of for v in op.operands}
        for v in sorted(values, key=self._value_order):
            users = [u for u in v.users if u in self.group_of]
            for x, y in itertools.pairwise(users):
                yield x, y, True

    def _value_order(self, v: Value) -> tuple:
        owner = getattr(v, "op", None)
        return (0, v.index) if owner is None else (1, self.position.get(owner, -1), v.index)

    def merge(self, a: Group, b: Group) -> Group:
        a.ops = self._merged_ops(a, b)
        for op in b.ops:
            self.group_of[op] = a
        return a

    def run(self) -> list[Group]:
        heap, tie = [], itertools.count()
        for x, y, horizontal in self._candidates():
            s = self.score(self.group_of[x], self.group_of[y])
            heapq.heappush(heap, (-s, next(tie), x, y, horizontal))
        while heap:
            neg, _, x, y, horizontal = heapq.heappop(heap)
            a, b = self.group_of[x], self.group_of[y]
            if a is b:
                continue
            if horizontal and 0 <= self.max_horizontal <= self.horizontal_merges:
                continue
            s = self.score(a, b)
            if s != -neg:  # groups changed since the pair was scored
                heapq.heappush(heap, (-s, next(tie), x, y, horizontal))
                continue
            if s <= 0 or not self.can_fuse(a, b):
                continue
            if horizontal and self._connected(a, b):
                horizontal = False  # the pair became a producer/consumer pair through earlier merges
            self.merge(a, b)
            self.bytes_saved += s
            self.horizontal_merges += horizontal
        return self.groups()

    def _connected(self, a: Group, b: Group) -> bool:
        bs = set(b.ops)
        return any(u in bs for op in a.ops for r in op.results for u in r.users) or any(
            getattr(v, "op", None) in set(a.ops) for op in b.ops for v in op.operands
        )

    def groups(self) -> list[Group]:
        seen, out = set(), []
        for op in sorted(self.group_of, key=lambda o: self.position[o]):
            g = self.group_of[op]
            if id(g) not in seen:
                seen.add(id(g))
                out.append(g)
        return out
