"""The shared greedy pattern driver: local rewrites run to a fixed point.

A pattern is a function ``(op, rewriter) -> bool`` (True when it changed the IR) keyed by an op name, or by
``None`` for any op. :func:`apply_patterns_greedily` visits every op under a root, tries the patterns for it, and
revisits what a rewrite touched (users of replaced values, defining ops of dropped operands, new ops) until nothing
fires. It must converge: when a sweep cap or rewrite cap is hit it raises :class:`RewriteError` naming the patterns
that were still firing — never a silent stop.

Patterns change the IR only through the :class:`Rewriter`, which keeps the worklist up to date.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Callable, Iterable

from .ir.core import OP_REGISTRY, Operation, Value

PatternFn = Callable[[Operation, "Rewriter"], bool]


class RewriteError(RuntimeError):
    """The greedy driver did not converge; the message names the patterns still firing."""


@dataclass(frozen=True)
class Pattern:
    """One rewrite: applies to ``op_name`` (``None``: every op); ``counter`` names the statistic it bumps."""

    op_name: str | None
    fn: PatternFn
    name: str = ""
    counter: str = "rewrites"

    def __post_init__(self):
        if not self.name:
            object.__setattr__(self, "name", getattr(self.fn, "__name__", repr(self.fn)))


def pattern(op_name: str | None = None, counter: str = "rewrites", name: str = "") -> Callable[[PatternFn], Pattern]:
    """Decorator: ``@pattern("hfusion.transpose", counter="ops-folded")`` turns a function into a Pattern."""

    def wrap(fn: PatternFn) -> Pattern:
        return Pattern(op_name, fn, name or fn.__name__, counter)

    return wrap


class Rewriter:
    """IR mutations for patterns; every change re-queues the ops it may have enabled new rewrites on."""

    def __init__(self, on_touch: Callable[[Operation], None] | None = None):
        self._on_touch = on_touch or (lambda op: None)
        self.current: Operation | None = None

    def _touch(self, op: Operation | None) -> None:
        if op is not None and op.parent is not None:
            self._on_touch(op)

    def _touch_users(self, v: Value) -> None:
        for user in v.users:
            self._touch(user)

    # -- mutations ------------------------------------------------------------------------------------------------
    def replace_op(self, op: Operation, values: Iterable[Value]) -> None:
        """Replace every use of ``op``'s results with ``values`` and erase ``op``."""
        values = list(values)
        if len(values) != len(op.results):
            raise ValueError(f"{op.name}: replacing {len(op.results)} result(s) with {len(values)} value(s)")
        for r, v in zip(op.results, values):
            self._touch_users(r)
            r.replace_all_uses_with(v)
        self.erase_op(op)

    def replace_all_uses(self, old: Value, new: Value) -> None:
        self._touch_users(old)
        old.replace_all_uses_with(new)

    def erase_op(self, op: Operation) -> None:
        """Erase ``op`` (its results must be unused); the ops defining its operands may now be dead."""
        defs = [getattr(v, "op", None) for v in op.operands]
        op.erase()
        for d in defs:
            self._touch(d)

    def insert_before(self, anchor: Operation, new_op: Operation) -> Operation:
        """Insert ``new_op`` before ``anchor`` (inheriting its location when it has none) and queue it."""
        if new_op.loc is None:
            new_op.loc = anchor.loc
        anchor.parent.insert_before(anchor, new_op)
        self._touch(new_op)
        return new_op

    def create(self, op: str | type[Operation], operands=(), result_types=(), attributes=None, *,
               before: Operation | None = None, loc: str | None = None) -> Operation:  # fmt: skip
        """Build an op (by class or name) and insert it before ``before`` (default: the op being rewritten)."""
        op_cls = OP_REGISTRY[op] if isinstance(op, str) else op
        anchor = before or self.current
        if anchor is None:
            raise ValueError("Rewriter.create needs an insertion point (before=…) outside a pattern")
        new = op_cls(list(operands), list(result_types), dict(attributes or {}), [], loc)
        return self.insert_before(anchor, new)

    def set_operands(self, op: Operation, values: Iterable[Value]) -> None:
        """Change ``op``'s operands in place (e.g. swapping them) and requeue it."""
        old = list(op.operands)
        op.set_operands(list(values))
        for v in old:
            self._touch(getattr(v, "op", None))
        self._touch(op)

    def modified(self, op: Operation) -> None:
        """Tell the driver that ``op`` was changed in place (attributes)."""
        self._touch(op)
        for r in op.results:
            self._touch_users(r)


@dataclass
class RewriteStats:
    """What a driver run did: rewrites per pattern name, and per counter name."""

    by_pattern: Counter = field(default_factory=Counter)
    by_counter: Counter = field(default_factory=Counter)
    sweeps: int = 0

    @property
    def total(self) -> int:
        return sum(self.by_pattern.values())


def apply_patterns_greedily(root: Operation, patterns: Iterable[Pattern], max_sweeps: int = 10,
                            max_rewrites: int | None = None) -> RewriteStats:  # fmt: skip
    """Run ``patterns`` on every op nested in ``root`` until none fires; raise RewriteError if it does not converge.

    A sweep visits every op once (plus the ops rewrites re-queue); the driver sweeps again while the previous sweep
    changed something. ``max_sweeps`` bounds the sweeps, ``max_rewrites`` (default 100 per op, at least 10000)
    bounds the rewrites within one sweep, so a pair of patterns undoing each other is reported, not looped on.
    """
    by_name: dict[str | None, list[Pattern]] = {}
    for p in patterns:
        by_name.setdefault(p.op_name, []).append(p)
    generic = by_name.get(None, [])
    stats = RewriteStats()

    for sweep in range(max_sweeps):
        ops = [op for op in root.walk() if op is not root]
        cap = max_rewrites if max_rewrites is not None else max(10_000, 100 * len(ops))
        worklist: deque[Operation] = deque(ops)
        queued = {id(op) for op in ops}
        fired: Counter = Counter()

        def touch(op: Operation) -> None:
            if id(op) not in queued and op is not root:
                queued.add(id(op))
                worklist.append(op)

        rewriter = Rewriter(touch)
        while worklist:
            op = worklist.popleft()
            queued.discard(id(op))
            if op.parent is None:  # erased
                continue
            for p in by_name.get(op.name, []) + generic:
                rewriter.current = op
                if p.fn(op, rewriter):
                    fired[p.name] += 1
                    stats.by_pattern[p.name] += 1
                    stats.by_counter[p.counter] += 1
                    if op.parent is not None:
                        touch(op)
                    break
            rewriter.current = None
            if sum(fired.values()) > cap:
                raise RewriteError(_not_converged(f"{cap} rewrites in one sweep", fired))
        stats.sweeps = sweep + 1
        if not fired:
            return stats
        last_fired = fired
    raise RewriteError(_not_converged(f"{max_sweeps} sweeps", last_fired))


def _not_converged(what: str, fired: Counter) -> str:
    names = ", ".join(f"{name} ({n}x)" for name, n in fired.most_common(5))
    return f"greedy rewrite did not converge after {what}; patterns still firing: {names}"


__all__ = ["Pattern", "pattern", "Rewriter", "RewriteError", "RewriteStats", "apply_patterns_greedily"]
