"""Shape expressions from dynamo's ShapeEnv → the IR's sympy sizes (``graph_passes.ir.sizes``).

torch's symbols carry their own assumptions and torch-specific functions (``FloorDiv``, ``PythonMod`` …); the IR
uses :func:`graph_passes.ir.sizes.sym` symbols and plain sympy (``floor``, ``Mod``). Ranges come from
``shape_env.var_to_range``; ``int_oo`` becomes :data:`graph_passes.ir.sizes.INF`.
"""

from __future__ import annotations

import sympy
import torch

from graph_passes.intmath import align_up
from graph_passes.ir.sizes import INF, sym

from .errors import NpuCompileError


def is_symbolic(x) -> bool:
    return isinstance(x, (torch.SymInt, torch.SymFloat, torch.SymBool))


def to_predicate(x) -> sympy.Basic:
    """A bool or SymBool → an IR size predicate (a sympy boolean over IR symbols)."""
    if isinstance(x, torch.SymBool):
        return convert(x.node.expr)
    if isinstance(x, bool):
        return sympy.true if x else sympy.false
    raise NpuCompileError(f"expected a bool or SymBool predicate, got {type(x).__name__} {x!r}")


def to_expr(x) -> sympy.Expr:
    """An int or SymInt → an IR size expression."""
    if isinstance(x, (torch.SymInt, torch.SymFloat)):
        return convert(x.node.expr)  # a SymFloat is accepted when it is an integer size as float (ToFloat(s0))
    if isinstance(x, bool):
        raise NpuCompileError(f"expected a size, got {x!r}")
    if isinstance(x, int):
        return sympy.Integer(x)
    if isinstance(x, sympy.Basic):
        return convert(x)
    raise NpuCompileError(f"expected an int or SymInt size, got {type(x).__name__} {x!r}")


def convert(e: sympy.Basic) -> sympy.Expr:
    """Rebuild a torch sympy expression over IR symbols."""
    if isinstance(e, sympy.Symbol):
        return sym(e.name)
    if isinstance(e, sympy.Integer):
        return sympy.Integer(int(e))
    if isinstance(e, sympy.Float) and float(e).is_integer():
        return sympy.Integer(int(e))  # SymFloat arithmetic on sizes (ToFloat(s0) - 1.0)
    if e in (sympy.true, sympy.false):
        return e
    fname = type(e).__name__
    args = [convert(a) for a in e.args]
    if isinstance(e, (sympy.Add, sympy.Mul, sympy.Max, sympy.Min)):
        return e.func(*args)
    if isinstance(e, (sympy.core.relational.Relational, sympy.And, sympy.Or, sympy.Not)):
        return e.func(*args)  # size predicates (SymBool): s77 <= 64, Eq(Mod(s77, 8), 0), their conjunctions
    if isinstance(e, sympy.Pow) and e.args[1].is_Integer:
        return args[0] ** args[1]
    if fname == "ToFloat" and len(args) == 1:
        return args[0]
    if fname in ("FloorDiv", "IntTrueDiv") and len(args) == 2:
        return sympy.floor(args[0] / args[1])
    if fname == "CeilDiv" and len(args) == 2:
        return sympy.ceiling(args[0] / args[1])
    if fname in ("Mod", "PythonMod") and len(args) == 2:
        return sympy.Mod(args[0], args[1])
    if fname == "ModularIndexing" and len(args) == 3:
        return sympy.Mod(sympy.floor(args[0] / args[1]), args[2])
    if isinstance(e, sympy.floor) or isinstance(e, sympy.ceiling):
        return e.func(*args)
    raise NpuCompileError(f"shape expression {e} uses {fname}, which the IR's sizes cannot express")


def symbol_range(shape_env, name: str) -> tuple[int, int]:
    """The value range of symbol ``name`` as integers (``int_oo`` → INF, ``-int_oo`` → -INF), narrowed to the
    multiples of a divisor dynamo proved for it (a positive ``s77`` that 4 divides is at least 4)."""
    for s, vr in shape_env.var_to_range.items():
        if s.name == name:
            lo, hi = _bound(vr.lower), _bound(vr.upper)
            for n, d in guarded_divisors(shape_env):
                if n == sym(name) and lo >= 1:
                    lo, hi = align_up(lo, d), (hi if hi >= INF else hi // d * d)
            return lo, hi
    raise NpuCompileError(f"shape symbol {name} has no range in the ShapeEnv")


def _bound(b) -> int:
    if b in (sympy.oo, torch.utils._sympy.numbers.int_oo):
        return INF
    if b in (-sympy.oo, -torch.utils._sympy.numbers.int_oo):
        return -INF
    return int(b)


def shape_env_of(values) -> object | None:
    """The ShapeEnv behind the first SymInt found in ``values`` (tensors' sizes or SymInts), or None."""
    for v in values:
        dims = list(v.shape) if isinstance(v, torch.Tensor) else [v]
        for d in dims:
            if isinstance(d, torch.SymInt):
                return d.node.shape_env
    return None


def guarded_equalities(shape_env) -> dict[sympy.Expr, sympy.Expr]:
    """Sizes dynamo's guards make equal, as substitutions to one form (IR expressions).

    The guards hold whenever the compiled graph runs (dynamo checks them first), so the importer may write either
    side as the other:

    - an ``Eq`` guard between sizes: a loss graph's logits and labels get their own symbols and a guard ties them
      (``Eq(s3*s88, s38*s97)``); a view ``x.view(-1, 4, T, T)`` sizes its second dim ``s77//(s77//4)`` and guards it
      equal to 4. The side with floor or Mod (else the one with more operations, then the later in sympy's order) is
      replaced by the other, which must be polynomial;
    - a divisibility dynamo proved for a view (``shape_env.divisible``: ``Mod(s77, 4)`` is 0): ``4*floor(s77/4)``
      is ``s77``, so the view ``[s77//4, 4]`` of ``[s77]`` keeps its element count."""
    pairs = []
    for guard in getattr(shape_env, "guards", ()):
        e = guard.expr
        if not isinstance(e, sympy.Eq) or not any(side.free_symbols for side in e.args):
            continue
        try:
            pairs.append(tuple(convert(side) for side in e.args))
        except NpuCompileError:
            continue
    pairs += [(d * sympy.floor(n / d), n) for n, d in guarded_divisors(shape_env)]
    return _closure(pairs)


def _closure(pairs: list) -> dict[sympy.Expr, sympy.Expr]:
    """Substitutions making the two sides of every pair one form. A pair is read through the substitutions found
    before it (``4*(s77//4) == 8*(s77//8)``, both sides irregular, is ``s77 == 8*(s77//8)`` once ``4*(s77//4)`` is
    ``s77``), and each substitution's side is read through the others (``4*(s77//4) -> s77`` and ``s77//4 -> 1``
    give ``s77 -> 4``: ``x.unflatten(0, (4, -1))`` of a dynamic length that the guards pin to 4), until nothing
    new is found."""
    subs: dict[sympy.Expr, sympy.Expr] = {}
    for _ in range(len(pairs) + 1):
        before = dict(subs)
        derived = [(_through(k, {x: y for x, y in subs.items() if x != k}), v) for k, v in subs.items()]
        for a, b in list(pairs) + derived:
            a, b = _through(a, subs), _through(b, subs)
            if a == b:
                continue
            keep, replace = sorted((a, b), key=lambda side: (_irregular(side), sympy.count_ops(side),
                                                               sympy.default_sort_key(side)))
            if not _irregular(keep):
                subs[replace] = keep
        if subs == before:
            break
    return subs


def _through(e: sympy.Expr, subs: dict) -> sympy.Expr:
    """``e`` with ``subs`` applied until it stops changing."""
    for _ in range(len(subs) + 1):
        new = sympy.sympify(e).subs(subs)
        if new == e:
            break
        e = new
    return e


def guarded_divisors(shape_env) -> list[tuple[sympy.Expr, int]]:
    """Sizes dynamo proved divisible for a view (``shape_env.divisible``: ``Mod(s27**2*s77, 4*s27**2)`` is 0), as
    (polynomial size, integer divisor > 1) in lowest terms: ``(s77, 4)``."""
    found = []
    for known_zero in getattr(shape_env, "divisible", ()):
        try:
            a, b = (convert(arg) for arg in known_zero.args)
        except NpuCompileError:
            continue
        n, d = sympy.fraction(sympy.cancel(a / b))
        if d.is_Integer and d > 1 and not _irregular(n):
            found.append((n, int(d)))
    return found


def _irregular(size: sympy.Expr) -> bool:
    """Whether ``size`` is not a polynomial of the shape symbols (floor, ceiling or Mod in it)."""
    return size.has(sympy.floor, sympy.ceiling, sympy.Mod) or not size.is_polynomial()

