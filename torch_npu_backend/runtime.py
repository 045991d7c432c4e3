"""Running a compiled graph: bind the shape symbols from the actual arguments, execute @main, rebuild FX outputs."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from graph_passes.ir.sizes import evaluate

from .importer import OutputSpec
from .interpreter import interpret
from .options import NpuOptions
from .stats import COUNTERS


@dataclass
class CompiledGraph:
    """The callable AOTAutograd gets back: ``compiled(*args) -> list`` in the FX graph's output order."""

    name: str
    module: object
    outputs: list[OutputSpec]
    symbol_args: dict[str, int]
    options: NpuOptions
    debug_dir: str | None = None
    pass_context: object = None
    stats: dict = field(default_factory=dict)

    def bindings(self, args) -> dict[str, int]:
        """Symbols carried by SymInt arguments; the rest are bound from tensor sizes by the interpreter."""
        return {name: int(args[pos]) for name, pos in self.symbol_args.items()}

    def __call__(self, *args):
        COUNTERS["graph_runs"] += 1
        bindings = self.bindings(args)
        if self.options.execute != "interpret":
            raise ValueError(f"execute={self.options.execute!r} is not implemented")
        inputs = [a.detach() if isinstance(a, torch.Tensor) else a for a in args]
        results = interpret(self.module, inputs, bindings)
        if any(o.kind == "size" for o in self.outputs):
            bindings = _all_bindings(self.module, inputs, bindings)
        owned = _input_storages(inputs)
        out, seen = [], set()
        for spec in self.outputs:
            if spec.kind == "none":
                out.append(None)
            elif spec.kind == "size":
                out.append(evaluate(spec.expr, bindings))
            else:
                t = results[spec.index]
                if _aliases(t, owned) or id(t) in seen or not t.is_contiguous():
                    t = t.clone(memory_format=torch.contiguous_format)  # Note: outputs never alias inputs/views
                seen.add(id(t))
                out.append(t)
        return out


def _input_storages(inputs) -> set[int]:
    return {t.untyped_storage().data_ptr() for t in inputs if isinstance(t, torch.Tensor)}


def _aliases(t: torch.Tensor, storages: set[int]) -> bool:
    return t.untyped_storage().data_ptr() in storages


def _all_bindings(module, inputs, bindings) -> dict[str, int]:
    from .interpreter import Interpreter

    interp = Interpreter(module, bindings)
    interp.bind(module.lookup("main"), inputs)
    return interp.bindings
