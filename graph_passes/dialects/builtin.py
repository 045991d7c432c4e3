"""``builtin.module``: the top-level container of functions.

Module attributes carry what every pass may read: ``symbols`` (shape symbol → [lo, hi] range), ``size_equalities``
(size → the canonical size it always equals, from the graph's guards: ``"s38*s97" = "s3*s88"``) and ``target`` (the
chip name; passes read capacities from the target spec, never from the simulator).
"""

from __future__ import annotations

from ..ir.attrs import AnyAttr, StrAttr
from ..ir.core import Block, IsolatedFromAbove, Operation, Region, register_op
from ..ir.sizes import SizeVars, expr_str, parse_expr
from ..target import module_target


@register_op
class ModuleOp(Operation):
    name = "builtin.module"
    num_regions = 1
    traits = (IsolatedFromAbove,)
    attribute_schema = {"symbols": AnyAttr(), "size_equalities": AnyAttr(), "target": StrAttr(optional=True)}

    @classmethod
    def build(cls, symbols: dict[str, tuple[int, int]] | None = None, target: str | None = None) -> "ModuleOp":
        attrs = {}
        if symbols:
            attrs["symbols"] = {k: [int(lo), int(hi)] for k, (lo, hi) in symbols.items()}
        if target:
            attrs["target"] = target
        return cls([], [], attrs, [Region([Block()])])

    @property
    def functions(self) -> list[Operation]:
        return [op for op in self.body.ops if op.name == "func.func"]

    def lookup(self, sym_name: str) -> Operation | None:
        for op in self.body.ops:
            if op.attributes.get("sym_name") == sym_name:
                return op
        return None

    def size_vars(self) -> SizeVars:
        """The shape service for this module, knowing every declared symbol's range."""
        sv = SizeVars()
        for name, (lo, hi) in (self.attributes.get("symbols") or {}).items():
            sv.declare(name, lo, hi)
        for size, canonical in (self.attributes.get("size_equalities") or {}).items():
            sv.declare_equal(parse_expr(size), parse_expr(canonical))
        return sv

    def declare_equal(self, size, canonical) -> None:
        """Record that ``size`` always equals ``canonical`` (a guard the graph runs under)."""
        equal = dict(self.attributes.get("size_equalities") or {})
        equal[expr_str(size)] = expr_str(canonical)
        self.attributes["size_equalities"] = equal

    def declare_symbol(self, name: str, lo: int, hi: int) -> None:
        symbols = dict(self.attributes.get("symbols") or {})
        symbols[name] = [int(lo), int(hi)]
        self.attributes["symbols"] = symbols

    def verify_(self) -> None:
        module_target(self)  # an unknown chip name is this op's error
        symbols = self.attributes.get("symbols") or {}
        if not isinstance(symbols, dict):
            raise self.error("attribute 'symbols' must be a dictionary of name = [lo, hi]")
        for name, rng in symbols.items():
            if not (isinstance(rng, (list, tuple)) and len(rng) == 2 and rng[0] <= rng[1]):
                raise self.error(f"symbol {name} has invalid range {rng!r}")
        equal = self.attributes.get("size_equalities") or {}
        if not isinstance(equal, dict):
            raise self.error("attribute 'size_equalities' must be a dictionary of size = canonical size")
        for size, canonical in equal.items():
            try:
                free = parse_expr(size).free_symbols | parse_expr(canonical).free_symbols
            except ValueError as e:
                raise self.error(f"size_equalities: {e}") from None
            if {s.name for s in free} - set(symbols):
                raise self.error(f"size_equalities: {size} = {canonical} uses undeclared shape symbol(s) "
                                 f"{', '.join(sorted({s.name for s in free} - set(symbols)))}")
        used = set()
        for op in self.walk():
            values = list(op.results) + [a for r in op.regions for b in r.blocks for a in b.args]
            for v in values:
                used |= getattr(v.type, "free_symbols", set())
        undeclared = sorted(used - set(symbols))
        if undeclared:
            raise self.error(f"uses undeclared shape symbol(s) {', '.join(undeclared)}")
        names = [op.attributes.get("sym_name") for op in self.body.ops if "sym_name" in op.attributes]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise self.error(f"defines symbol(s) {', '.join('@' + d for d in dup)} more than once")
