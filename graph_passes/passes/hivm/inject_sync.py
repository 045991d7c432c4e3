"""``hivm-inject-sync``: order dependent instructions of different pipes with ``set_flag``/``wait_flag`` and
dependent vector instructions with ``pipe_barrier`` (after AscendNPU-IR's InjectSync: SyncAnalysis,
SyncEventIdAllocation, RemoveRedundantSync, SyncCodegen).

Pipes run their queues in order and overlap each other; PIPE_V may overlap its own instructions, so dependent
vector instructions need ``pipe_barrier {pipe = "PIPE_V"}`` (HARDWARE.md). For every pair of pipe ops that
conflict on memory (:mod:`graph_passes.analysis.memory_deps`: RAW, WAR, WAW on overlapping bytes):

- forward (``A`` before ``B`` in one iteration): ``set_flag`` right after ``A``'s anchor and ``wait_flag`` right
  before ``B``'s anchor, the anchors being their ancestors in the innermost block holding both (a dependence into
  or out of a loop is synced before/after the whole loop). Dependences on one pipe pair covered by an existing
  set→wait (set after the source, wait before the sink) get no new flags (``syncs-removed-redundant``).
- loop-carried (``A`` in iteration ``i``, ``B`` at or before ``A`` in iteration ``i + d``): one set→wait per loop
  and pipe pair, set after the latest source, wait before the earliest sink; ``d`` ids rotate with the loop's
  iteration number ``%k`` (d > 1 when the dependence only hits the same copy of a multi-buffered buffer every d
  iterations); each id is pre-armed by a ``set_flag`` as early as possible — before the first pipe op after the
  previous loop of the block (or of the block), so that the first iterations wait for no earlier op — and drained by
  a ``wait_flag`` as late as possible (before the next loop of the block, or its end). Pre-arms and drains go
  around the outermost loop that holds the carrying one (``syncs-hoisted``): the flag then pairs each wait with the
  latest set of its id across every execution of the inner loop, so a pipe is not stopped at the inner loop's end
  (a cube kernel's MTE1 loads the next accumulator part's first window while the last mmads of this one run); when
  the ids run out this way, the drains go back around the carrying loops.
- flags inside a loop order its carried dependences (no flag is added for them, ``syncs-covered-by-inner``): a
  forward flag on the pipe pair set and waited before the sink in its iteration (the set follows every earlier op of
  the source pipe, as a pipe runs in order, so the source's instance in an earlier iteration too); or, between ops
  of one inner loop, that loop's carried flag on the pair (set after the source, wait before the sink) when the two
  conflict only ``k``·m iterations of the inner loop apart, ``k`` the flag's rotation (its id then follows the copy
  they share; a single id orders every earlier source).
- inside a loop that rotates multi-buffered copies (depth n), forward flags rotate over n ids too (selector
  ``%k``), so a pipe that runs an iteration ahead never sets an id the consumer has not waited for yet.

Event ids are allocated per (src, dst) pipe pair; an id is reused only after a quiesce point
(``pipe_barrier {pipe = "PIPE_ALL"}`` between top-level ops, inserted only when the ids would run out). The kernel
ends with ``pipe_barrier {pipe = "PIPE_ALL"}`` before ``func.return``. ``mode = barrier-all`` instead puts a
``PIPE_ALL`` barrier after every pipe op (slow, trivially correct).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from ...analysis.loops import enclosing_loops, iteration_number
from ...analysis.memory_deps import carried_distances, conflicts, rotation_period
from ...dialects.hivm import HIVMOp, PipeBarrierOp, SetFlagOp, WaitFlagOp
from ...ir.core import Block, Operation
from ...target import module_target
from .. import ModulePass, PassContext, PassError, register_pass

BARRIER_PIPES = ("PIPE_V",)  # pipes that may overlap their own instructions (HARDWARE.md: vector)
SYNC_OPS = ("hivm.set_flag", "hivm.wait_flag", "hivm.pipe_barrier")

# Order of inserted ops within one gap (before one op): drains of the previous loop, sets after the previous op,
# waits for the next op, the quiesce barrier, pre-arms of the next loop, vector barriers, the kernel-end barrier.
# Note: drains before sets. A set after an inner loop may release the producer of one of that loop's ids (an outer
# loop-carried flag), which then runs on into the next outer iteration and pre-arms the id again; the consumer
# must have drained it first, or the id is set twice without a wait (the simulator's SyncError).
DRAIN, SET, WAIT, QUIESCE, PREARM, BARRIER, END = range(7)


class _OutOfIds(PassError):
    """A pipe pair needs more event ids at once than the target has (``pair``: (src, dst))."""

    def __init__(self, msg: str, pair: tuple[str, str]):
        super().__init__(msg)
        self.pair = pair


@dataclass
class _Flag:
    """One set→wait: set before ``set_at``, wait before ``wait_at`` (ops of ``block``); ``carried`` loop: pre-arm
    before it and drain after it; ``rotation`` ids selected by ``rot_loop``'s iteration number."""

    src: str
    dst: str
    block: Block
    set_at: Operation
    wait_at: Operation
    carried: Operation | None = None
    rotation: int = 1
    rot_loop: Operation | None = None
    seg: tuple[int, int] = (0, 0)
    ids: list[int] = field(default_factory=list)
    hoist: Operation | None = None  # the loop its pre-arms and drains go around (``carried`` or an outer one)

    @property
    def around(self) -> Operation | None:
        return self.hoist or self.carried


@dataclass
class _Dep:
    """``b``'s access on ``b_pipe`` must wait for ``a``'s on ``a_pipe``; anchors are their ancestors in ``block``;
    ``carried``: b runs ``distance`` iterations of that loop after a."""

    a: Operation
    b: Operation
    a_pipe: str
    b_pipe: str
    block: Block
    a_anc: Operation
    b_anc: Operation
    carried: Operation | None = None
    distance: int = 0


def _pipe_ops(func: Operation) -> list[Operation]:
    return [op for op in func.walk() if isinstance(op, HIVMOp) and op.pipe]


def _chain(op: Operation, func: Operation) -> list[tuple[Block, Operation]]:
    """(block, ancestor of op in that block), innermost first, up to the function body."""
    out = []
    while op is not None and op is not func:
        out.append((op.parent, op))
        op = op.parent_op()
    return out


def _anchors(a: Operation, b: Operation, func: Operation) -> tuple[Block, Operation, Operation]:
    """The innermost block holding both and the ancestors of ``a`` and ``b`` in it."""
    cb = {id(blk): anc for blk, anc in _chain(b, func)}
    for blk, anc in _chain(a, func):
        if id(blk) in cb:
            return blk, anc, cb[id(blk)]
    raise AssertionError("ops of one function share its body")


def _loop_of(block: Block) -> Operation | None:
    """The innermost scf.for around ``block`` (None at function level)."""
    op = block.parent.parent if block.parent else None
    while op is not None and op.name != "scf.for":
        op = op.parent_op()
    return op if op is not None and op.name == "scf.for" else None


def _after(op: Operation) -> Operation:
    """The op following ``op`` in its block (a terminator ends every block, so there is one)."""
    ops = op.parent.ops
    return ops[ops.index(op) + 1]


@register_pass
@dataclass(frozen=True)
class InjectSync(ModulePass):
    """Insert set_flag/wait_flag between dependent pipes and pipe barriers between dependent vector ops."""

    name: ClassVar[str] = "hivm-inject-sync"
    mode: Literal["normal", "barrier-all"] = "normal"

    def run(self, module, ctx: PassContext) -> None:
        for c in ("set-flags", "wait-flags", "pipe-barriers", "event-ids-used", "syncs-removed-redundant",
                  "syncs-merged-for-ids", "syncs-hoisted", "syncs-covered-by-inner"):
            ctx.count(c, 0)
        limit = module_target(module).event_ids_per_pipe_pair
        for func in [op for op in module.walk() if op.name == "func.func"]:
            if not _pipe_ops(func) or any(op.name in SYNC_OPS for op in func.walk()):
                continue  # nothing to order, or already synchronised
            if self.mode == "barrier-all":
                self._barrier_all(func, ctx)
            else:
                _KernelSync(func, limit, ctx).run()

    def _barrier_all(self, func: Operation, ctx: PassContext) -> None:
        for op in _pipe_ops(func):
            op.parent.insert_after(op, PipeBarrierOp([], [], {"pipe": "PIPE_ALL"}, [], op.loc))
            ctx.count("pipe-barriers")
        ret = func.body.terminator
        before = func.body.ops[-2] if len(func.body.ops) > 1 else None
        if not (before is not None and before.name == "hivm.pipe_barrier" and before.attributes["pipe"] == "PIPE_ALL"):
            func.body.insert_before(ret, PipeBarrierOp([], [], {"pipe": "PIPE_ALL"}, [], ret.loc))
            ctx.count("pipe-barriers")


class _KernelSync:
    """Sync analysis and code generation for one kernel function."""

    def __init__(self, func: Operation, limit: int, ctx: PassContext):
        self.func = func
        self.limit = limit
        self.ctx = ctx
        self.name = func.attributes.get("sym_name", "?")
        self.ops = _pipe_ops(func)
        self.flags: list[_Flag] = []
        self.barriers: dict[int, set[int]] = {}  # id(block) -> indices of ops a V barrier precedes
        self.blocks: dict[int, Block] = {}
        self.quiesce: set[int] = set()
        self.fences: list[Operation] = []  # PIPE_ALL barriers standing in for flags no event id was left for
        self.index: dict[int, int] = {}
        self.access_cache: dict = {}  # memory_deps' accesses per op: the IR does not change until _emit
        for op in func.walk():
            if op.parent is not None:
                self.index.setdefault(id(op), op.parent.ops.index(op))

    def idx(self, op: Operation) -> int:
        return self.index[id(op)]

    # -- analysis ----------------------------------------------------------------------------------------------
    def run(self) -> None:
        deps = self._dependences()
        self._analyse(deps, persistent=True)
        hoisted = self._hoist()
        while True:
            try:
                self._allocate_ids()
                break
            except _OutOfIds as e:
                if hoisted:
                    # Note: without hoisting, an inner loop's pre-arms run again in every outer iteration; the outer
                    # loop's own flags are what keep its source pipe from pre-arming before the last drain, so the
                    # inner flags no longer stand in for them: analyse again as flags drained per loop.
                    hoisted = 0
                    self._analyse(deps, persistent=False)
                    continue
                if not self._relieve(e.pair):
                    raise
        self.ctx.count("syncs-hoisted", hoisted)
        self.ctx.count("syncs-covered-by-inner", self.n_covered)
        self.ctx.count("syncs-removed-redundant", self.n_redundant)
        self._emit()

    def _analyse(self, deps: list[_Dep], persistent: bool) -> None:
        """Flags and barriers for ``deps``; ``persistent``: carried flags will be pre-armed and drained around the
        outermost loop, so inner flags order the outer loops' dependences (``_covered_inside``)."""
        self.flags, self.barriers, self.blocks, self.quiesce, self.fences = [], {}, {}, set(), []
        fwd = [d for d in deps if d.carried is None or self.idx(d.a_anc) < self.idx(d.b_anc)]
        back = [d for d in deps if not (d.carried is None or self.idx(d.a_anc) < self.idx(d.b_anc))]
        # Note: sinks in order, latest source first, so one set→wait covers every earlier source on that pipe.
        for dep in sorted(fwd, key=lambda d: (self.idx(d.b_anc), -self.idx(d.a_anc))):
            self._forward(dep.block, dep.a_anc, dep.b_anc, dep.a_pipe, dep.b_pipe)
        # cross-pipe first: they order V too; inner loops first: their flags may order the outer loops' deps
        covered = 0
        for dep in sorted(back, key=lambda d: (d.a_pipe == d.b_pipe, -len(enclosing_loops(d.carried)))):
            if persistent and dep.a_pipe != dep.b_pipe and self._covered_inside(dep):
                covered += 1
                continue
            self._carried(dep.carried, dep.a_anc, dep.b_anc, dep.a_pipe, dep.b_pipe, dep.distance)
        n_cross = sum(1 for d in deps if d.a_pipe != d.b_pipe)
        self._merge_same_point()
        self.n_covered, self.n_redundant = covered, n_cross - len(self.flags)

    def _covered_inside(self, dep: _Dep) -> bool:
        """Whether a loop-carried dependence is already ordered by flags inside the loop (see the module doc):

        - a forward flag on the pipe pair whose set and wait come before the sink in its iteration (in the loop's
          body or an inner body on the sink's path): the set follows every earlier op of the source pipe, the
          source's instance in an earlier iteration among them;
        - a carried flag of an inner loop that holds both ops, set after the source and waited before the sink,
          when they conflict only a multiple of the flag's rotation iterations of that loop apart."""
        pair = (dep.a_pipe, dep.b_pipe)
        blocks = [dep.carried.body] + [lp.body for lp in enclosing_loops(dep.b) if dep.carried.is_ancestor_of(lp)]
        for blk in blocks:
            ib = self.idx(self._anc(dep.b, blk))
            if any(f.block is blk and f.carried is None and (f.src, f.dst) == pair and self.idx(f.wait_at) <= ib
                   for f in self.flags):
                return True
        inner = [lp for lp in enclosing_loops(dep.a) if dep.carried.is_ancestor_of(lp) and lp.is_ancestor_of(dep.b)]
        for loop in inner:
            body = loop.body
            ia, ib = self.idx(self._anc(dep.a, body)), self.idx(self._anc(dep.b, body))
            for f in self.flags:
                if f.carried is not loop or (f.src, f.dst) != pair:
                    continue
                if self.idx(f.set_at) < ia + 1 or self.idx(f.wait_at) > ib:
                    continue
                if all(pair not in conflicts(dep.a, dep.b, loop, d, cache=self.access_cache)
                       for d in range(1, f.rotation)):
                    return True
        return False

    def _hoist(self) -> int:
        """Move every nested carried flag's pre-arms and drains around the outermost loop that holds its loop."""
        n = 0
        for f in self.flags:
            if f.carried is not None:
                loops = enclosing_loops(f.carried)
                if loops:
                    f.hoist = loops[0]
                    n += 1
        return n

    def _dependences(self) -> list[_Dep]:
        """Forward dependences (same iteration), then loop-carried ones (``b`` in a later iteration of a loop)."""
        deps, cache = [], self.access_cache
        for j, b in enumerate(self.ops):
            for a in self.ops[:j]:
                for pa, pb in sorted(conflicts(a, b, cache=cache)):
                    deps.append(_Dep(a, b, pa, pb, *_anchors(a, b, self.func)))
        for loop in [op for op in self.func.walk() if op.name == "scf.for"]:
            inside = [op for op in self.ops if loop.is_ancestor_of(op)]
            period = self._loop_rotation(loop)
            for a in inside:
                for b in inside:
                    for (pa, pb), d in sorted(carried_distances(a, b, loop, period, cache).items()):
                        body = loop.body
                        deps.append(_Dep(a, b, pa, pb, body, self._anc(a, body), self._anc(b, body), loop, d))
        return deps

    def _anc(self, op: Operation, block: Block) -> Operation:
        while op.parent is not block:
            op = op.parent_op()
        return op

    def _forward(self, blk, a, b, src, dst) -> None:
        ia, ib = self.idx(a), self.idx(b)
        if src == dst:
            if src in BARRIER_PIPES and not any(ia < g <= ib for g in self._barrier_gaps(blk)):
                self._barrier_gaps(blk).add(ib)
            return
        if self._covered(blk, ia, ib, src, dst, None, 0):
            return
        # Note: widen: one set after the last of a group of sources (a load stage), one wait. Except the first
        # flag of the pipe pair in the block when this sink is a later op: its waiter (the first op of a work item)
        # would wait for every load of the stage, those only later ops read too; the second flag takes them.
        pair = [f for f in self.flags if f.block is blk and f.carried is None and (f.src, f.dst) == (src, dst)]
        for k, f in enumerate(pair):
            if (k or self.idx(f.wait_at) == ib) and self.idx(f.set_at) <= ia + 1 <= self.idx(f.wait_at) <= ib:
                f.set_at = _after(a)
                return
        loop = _loop_of(blk)
        n = self._loop_rotation(loop) if loop is not None else 1
        self.flags.append(_Flag(src, dst, blk, _after(a), b, None, n, loop if n > 1 else None))

    def _carried(self, loop, a, b, src, dst, d) -> None:
        ia, ib = self.idx(a), self.idx(b)
        blk = loop.body
        if self._covered(blk, ia, ib, src, dst, loop, d):
            return
        if src == dst:
            gaps = self._barrier_gaps(blk)
            if src in BARRIER_PIPES and not any(g > ia or g <= ib for g in gaps):
                gaps.add(ib)
            return
        for f in self.flags:
            if f.carried is loop and (f.src, f.dst) == (src, dst):
                if self.idx(f.set_at) < ia + 1:
                    f.set_at = _after(a)
                if self.idx(f.wait_at) > ib:
                    f.wait_at = b
                if d < f.rotation:
                    f.rotation = d
                    f.rot_loop = loop if d > 1 else None
                return
        self.flags.append(_Flag(src, dst, blk, _after(a), b, loop, d, loop if d > 1 else None))

    def _covered(self, blk, ia, ib, src, dst, loop, d) -> bool:
        """Whether a source at ``ia`` and a sink at ``ib`` (``d`` iterations of ``loop`` later, or the same
        iteration when ``loop`` is None) are already ordered by flags: a set→wait on (src, dst), or a forward
        src→X set→wait followed on pipe X by an X→dst one."""
        def sink_side(f):  # f's wait orders the sink
            if loop is None:
                return f.carried is None and self.idx(f.wait_at) <= ib
            return f.carried is loop and f.rotation <= d and self.idx(f.wait_at) <= ib
        here = [f for f in self.flags if f.block is blk]
        firsts = [f for f in here if f.carried is None and f.src == src and self.idx(f.set_at) >= ia + 1]
        for f2 in here:
            if f2.dst != dst or not sink_side(f2):
                continue
            if f2.src == src and self.idx(f2.set_at) >= ia + 1 and (loop is not None or f2.carried is None):
                return True
            if any(f1.dst == f2.src and self.idx(f2.set_at) > self.idx(f1.wait_at) for f1 in firsts):
                return True
        return False

    def _barrier_gaps(self, blk: Block) -> set[int]:
        self.blocks[id(blk)] = blk
        return self.barriers.setdefault(id(blk), set())

    def _loop_rotation(self, loop: Operation) -> int:
        """The number of copies the loop's multi-buffered buffers rotate over (1 if none)."""
        period = 1
        for op in self.ops:
            if loop.is_ancestor_of(op):
                p = rotation_period(op, loop, self.access_cache)
                period = period * p // math.gcd(period, p)
        return period

    # -- event ids ---------------------------------------------------------------------------------------------
    def _merge_same_point(self) -> None:
        """Flags of one pipe pair set at the same point and waited at the same point (same loop, same rotation)
        are one flag (AscendNPU-IR's RemoveRedundantSync / MoveSyncState merge them)."""
        seen: dict[tuple, _Flag] = {}
        kept = []
        for f in self.flags:
            key = (f.src, f.dst, id(f.block), id(f.set_at), id(f.wait_at), id(f.carried), f.rotation, id(f.rot_loop))
            if key not in seen:
                seen[key] = f
                kept.append(f)
        self.flags = kept

    def _relieve(self, pair: tuple[str, str]) -> bool:
        """Fewer ids for ``pair``, slower but still correct (after AscendNPU-IR's SyncEventIdAllocation: widen,
        then ChangeNoEventIdSyncToPipeAll). First merge forward flags of the pair whose set→wait intervals overlap
        (same block and rotation) into one: set after the last of their sources, wait before the first of their
        sinks. If none can merge, one flag of the pair (the one holding most ids, the latest on a tie) becomes a
        ``pipe_barrier {pipe = "PIPE_ALL"}`` right before its wait point, which orders everything before it
        (its sources, of this iteration or an earlier one) before everything after (its sinks). Counted in
        ``syncs-merged-for-ids``; False when the pair has no flag left to merge or replace."""
        if self._merge_overlapping(pair):
            return True
        cands = [f for f in self.flags if (f.src, f.dst) == pair]
        if not cands:
            return False
        f = max(enumerate(cands), key=lambda e: (e[1].rotation, e[0]))[1]
        self.flags.remove(f)
        self.fences.append(f.wait_at)
        self.ctx.count("syncs-merged-for-ids")
        return True

    def _merge_overlapping(self, pair) -> bool:
        groups: dict[tuple, list[_Flag]] = {}
        for f in self.flags:
            if (f.src, f.dst) == pair and f.carried is None:
                groups.setdefault((id(f.block), f.rotation, id(f.rot_loop)), []).append(f)
        for fs in groups.values():
            fs.sort(key=lambda f: self.idx(f.set_at))
            for i, f in enumerate(fs):
                for g in fs[i + 1:]:
                    s_at = max(f.set_at, g.set_at, key=self.idx)
                    w_at = min(f.wait_at, g.wait_at, key=self.idx)
                    if self.idx(s_at) <= self.idx(w_at):
                        f.set_at, f.wait_at = s_at, w_at
                        self.flags.remove(g)
                        self.ctx.count("syncs-merged-for-ids")
                        return True
        return False

    def _top(self, op: Operation, block: Block) -> int | None:
        while op is not None and op.parent is not block:
            op = op.parent_op() if op.parent is not None else None
        return None if op is None else self.idx(op)

    def _segment(self, f: _Flag, block: Block) -> tuple[int, int]:
        """The ops of ``block`` the flag's ids are busy across (reuse needs a quiesce point after the last one); a
        flag outside ``block`` or rotating/carried over the loop ``block`` is the body of: all of it."""
        owner = block.parent.parent if block is not self.func.body else None  # the loop whose body it is
        if owner is not None and (not owner.is_ancestor_of(f.set_at) or f.around is owner or f.rot_loop is owner):
            return -1, len(block.ops)
        if f.block is block and f.carried is None:
            return self.idx(f.set_at) - 1, self.idx(f.wait_at)
        if f.around is not None and f.around.parent is block:  # from its pre-arms to its drains
            return self.idx(self._prearm_at(f.around)), self.idx(self._drain_at(f.around))
        t = self._top(f.set_at, block)
        return t, t

    def _prearm_at(self, loop: Operation) -> Operation:
        """Where a loop's pre-arms go: before the first pipe op after the previous loop of its block (or from the
        block's start), so that the first iterations' producers wait for nothing before them — a loop-invariant load
        or a peeled first work item does not hold back the loop's first DMA."""
        ops = loop.parent.ops
        i = ops.index(loop)
        while i > 0 and ops[i - 1].name != "scf.for":
            i -= 1
        while ops[i] is not loop and not (isinstance(ops[i], HIVMOp) and ops[i].pipe):
            i += 1  # past allocs, constants and index arithmetic: the dump keeps them first
        return ops[i]

    def _drain_at(self, loop: Operation) -> Operation:
        """Where a loop's drains go: before the next loop of its block (or its terminator), so that the ops after
        the loop (a peeled last work item) do not wait for its last iterations' consumers."""
        ops = loop.parent.ops
        i = ops.index(loop) + 1
        while i < len(ops) - 1 and ops[i].name != "scf.for":
            i += 1
        return ops[i]

    def _allocate_ids(self) -> None:
        """Ids per pipe pair; an id is reused after a quiesce point (PIPE_ALL barrier) between two flags' segments.
        Segments are taken over the top-level ops; when one top-level loop alone needs more ids than the target
        has, over the ops of that loop's body (quiesce points between its inner loops, and one at the top of the
        body so the next iteration's first flags find their ids free)."""
        try:
            self._allocate_in(self.func.body)
            return
        except PassError:
            loops = [op for op in self.func.body.ops if op.name == "scf.for"]
            if len(loops) != 1:
                raise
        self.quiesce = set()
        body = loops[0].body
        self._allocate_in(body)

    def _allocate_in(self, block: Block) -> None:
        self.quiesce_block = block
        self.quiesce = set()
        last_use: dict[tuple[str, str], dict[int, int]] = {}
        for f in self.flags:
            f.seg = self._segment(f, block)
        for f in sorted(self.flags, key=lambda f: f.seg[0]):
            used = last_use.setdefault((f.src, f.dst), {})
            free = self._free_ids(used, f.seg[0])
            if len(free) < f.rotation and f.seg[0] >= 0:
                self.quiesce.add(f.seg[0] if block is self.func.body else max(f.seg[0], 0))
                free = self._free_ids(used, f.seg[0])
            if len(free) < f.rotation:
                raise _OutOfIds(f"hivm-inject-sync: kernel {self.name} needs more than {self.limit} event ids for "
                                f"{f.src} -> {f.dst} at once", (f.src, f.dst))  # fmt: skip
            f.ids = free[: f.rotation]
            for i in f.ids:
                used[i] = f.seg[1]
        if block is not self.func.body and self.quiesce:
            self.quiesce.add(0)  # the next iteration reuses the ids from the top of the body
        self.ctx.count("event-ids-used", sum(len(u) for u in last_use.values()))

    def _free_ids(self, used: dict[int, int], start: int) -> list[int]:
        return [i for i in range(self.limit)
                if i not in used or any(used[i] < q <= start for q in self.quiesce)]  # fmt: skip

    # -- code generation ---------------------------------------------------------------------------------------
    def _emit(self) -> None:
        plan: list[tuple[Operation, int, int, Operation]] = []  # (insert before, class, seq, new op)
        # Note: resolve gap indices to ops before creating iteration numbers, which shift loop bodies.
        barrier_at = [self.blocks[key].ops[g] for key, gaps in self.barriers.items() for g in sorted(gaps)]
        qblock = getattr(self, "quiesce_block", self.func.body)
        quiesce_at = [qblock.ops[q] for q in sorted(self.quiesce)]
        selectors = {}
        for f in self.flags:
            if f.rot_loop is not None and id(f.rot_loop) not in selectors:
                selectors[id(f.rot_loop)] = iteration_number(f.rot_loop)
        def add(before, cls, op):  # noqa: E306
            plan.append((before, cls, len(plan), op))
        for f in self.flags:
            sel = [selectors[id(f.rot_loop)]] if f.rot_loop is not None else []
            attrs = {"src_pipe": f.src, "dst_pipe": f.dst, "event_ids": list(f.ids)}
            if f.carried is None:
                add(f.set_at, SET, SetFlagOp(sel, [], dict(attrs), [], f.set_at.loc))
                add(f.wait_at, WAIT, WaitFlagOp(sel, [], dict(attrs), [], f.wait_at.loc))
                continue
            add(f.set_at, SET, SetFlagOp(sel, [], dict(attrs), [], f.set_at.loc))
            add(f.wait_at, WAIT, WaitFlagOp(sel, [], dict(attrs), [], f.wait_at.loc))
            for i in f.ids:
                one = {"src_pipe": f.src, "dst_pipe": f.dst, "event_ids": [i]}
                add(self._prearm_at(f.around), PREARM, SetFlagOp([], [], dict(one), [], f.carried.loc))
                add(self._drain_at(f.around), DRAIN, WaitFlagOp([], [], dict(one), [], f.carried.loc))
        for at in barrier_at:
            add(at, BARRIER, PipeBarrierOp([], [], {"pipe": "PIPE_V"}, [], at.loc))
        for at in quiesce_at:
            add(at, QUIESCE, PipeBarrierOp([], [], {"pipe": "PIPE_ALL"}, [], at.loc))
        for at in self.fences:
            add(at, QUIESCE, PipeBarrierOp([], [], {"pipe": "PIPE_ALL"}, [], at.loc))
        ret = self.func.body.terminator
        add(ret, END, PipeBarrierOp([], [], {"pipe": "PIPE_ALL"}, [], ret.loc))
        for before, _, _, op in sorted(plan, key=lambda p: (p[1], p[2])):
            before.parent.insert_before(before, op)
            self.ctx.count({"hivm.set_flag": "set-flags", "hivm.wait_flag": "wait-flags",
                            "hivm.pipe_barrier": "pipe-barriers"}[op.name])  # fmt: skip
