"""``builtin.module``: the top-level container of functions.

Module attributes carry what every pass may read: ``symbols`` (shape symbol → [lo, hi] range) and ``target``
(the chip name; passes read capacities from the target spec, never from the simulator).
"""

from __future__ import annotations

from ..ir.attrs import AnyAttr, StrAttr
from ..ir.core import Block, IsolatedFromAbove, Operation, Region, register_op
from ..ir.sizes import SizeVars


@register_op
class ModuleOp(Operation):
    name = "builtin.module"
    num_regions = 1
    traits = (IsolatedFromAbove,)
    attribute_schema = {"symbols": AnyAttr(), "target": StrAttr(optional=True)}

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
        return sv

    def declare_symbol(self, name: str, lo: int, hi: int) -> None:
        symbols = dict(self.attributes.get("symbols") or {})
        symbols[name] = [int(lo), int(hi)]
        self.attributes["symbols"] = symbols

    def verify_(self) -> None:
        symbols = self.attributes.get("symbols") or {}
        if not isinstance(symbols, dict):
            raise self.error("attribute 'symbols' must be a dictionary of name = [lo, hi]")
        for name, rng in symbols.items():
            if not (isinstance(rng, (list, tuple)) and len(rng) == 2 and rng[0] <= rng[1]):
                raise self.error(f"symbol {name} has invalid range {rng!r}")
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
