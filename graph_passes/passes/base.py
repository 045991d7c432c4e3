"""What a pass is (:class:`ModulePass`) and what it reports into (:class:`PassContext`).

A pass is a frozen dataclass with a kebab-case ``name``, its options as fields, a one-line docstring and
``run(module, ctx)``. It knows nothing of torch or the simulator; it reads the target from the module.
"""

from __future__ import annotations

import dataclasses
import typing
from collections import defaultdict
from dataclasses import dataclass, field
from typing import ClassVar

from tabulate import tabulate

from ..ir.core import Operation


class PassError(RuntimeError):
    """A pass failed; the message names the pass and, where it can, the op and the numbers."""


@dataclass
class PassContext:
    """Per-run statistics: ``counters[pass_name][counter]``, ``timings[pass_name]`` (seconds), the passes run."""

    counters: dict[str, dict[str, int]] = field(default_factory=lambda: defaultdict(dict))
    timings: dict[str, float] = field(default_factory=dict)
    passes_run: list[str] = field(default_factory=list)
    current_pass: str | None = None

    def count(self, counter: str, n: int = 1) -> None:
        """Add ``n`` to ``counter`` of the running pass (``n = 0`` makes the counter show up as zero)."""
        if self.current_pass is None:
            raise PassError(f"ctx.count({counter!r}) called outside a pass")
        per_pass = self.counters[self.current_pass]
        per_pass[counter] = per_pass.get(counter, 0) + int(n)

    def counter(self, pass_name: str, counter: str) -> int:
        return self.counters.get(pass_name, {}).get(counter, 0)

    def report(self) -> str:
        """A table: one row per pass with its wall time and its counters."""
        rows = []
        for name in dict.fromkeys(self.passes_run):
            counters = ", ".join(f"{k}={v}" for k, v in sorted(self.counters.get(name, {}).items()))
            rows.append([name, f"{self.timings.get(name, 0.0) * 1e3:.2f}", counters])
        return tabulate(rows, headers=["pass", "time (ms)", "counters"])


@dataclass(frozen=True)
class ModulePass:
    """Base of all passes. Subclasses set ``name`` and implement ``run``; options are dataclass fields."""

    name: ClassVar[str] = ""

    def run(self, module: Operation, ctx: PassContext) -> None:
        raise NotImplementedError(f"pass {self.name} does not implement run()")

    # -- options ------------------------------------------------------------------------------------------------
    @classmethod
    def option_fields(cls) -> dict[str, tuple[str, object]]:
        """kebab-case option name → (field name, type)."""
        hints = typing.get_type_hints(cls)
        return {f.name.replace("_", "-"): (f.name, hints.get(f.name, str)) for f in dataclasses.fields(cls)}

    @classmethod
    def from_options(cls, options: dict[str, str]) -> "ModulePass":
        """Build the pass from pipeline-string options (kebab-case names, text values)."""
        known = cls.option_fields()
        kwargs = {}
        for key, text in options.items():
            entry = known.get(key) or known.get(key.replace("_", "-"))
            if entry is None:
                names = ", ".join(known) or "none"
                raise PipelineError(f"pass '{cls.name}' has no option '{key}' (options: {names})")
            field_name, typ = entry
            kwargs[field_name] = convert_option(cls.name, key, text, typ)
        return cls(**kwargs)

    def pipeline_text(self) -> str:
        """This pass as a pipeline element, with the options that differ from their defaults."""
        opts = []
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.default is not dataclasses.MISSING and value == f.default:
                continue
            text = str(value).lower() if isinstance(value, bool) else str(value)
            opts.append(f"{f.name.replace('_', '-')}={text}")
        return self.name + (f"{{{' '.join(opts)}}}" if opts else "")


class PipelineError(ValueError):
    """A pipeline string names an unknown pass or option, or gives a bad value."""


def convert_option(pass_name: str, key: str, text: str, typ) -> object:
    """Text → the option's type (bool, int, float, str, Literal[...], X | None)."""
    origin = typing.get_origin(typ)
    args = typing.get_args(typ)
    if origin is typing.Union or type(typ).__name__ == "UnionType":
        if text.lower() in ("none", "null", ""):
            return None
        inner = [a for a in args if a is not type(None)]
        return convert_option(pass_name, key, text, inner[0])
    if origin is typing.Literal:
        for choice in args:
            if str(choice) == text:
                return choice
        raise PipelineError(f"pass '{pass_name}': option '{key}' must be one of {', '.join(map(str, args))}, got '{text}'")
    if typ is bool:
        low = text.lower()
        if low in ("true", "1", "yes", "on"):
            return True
        if low in ("false", "0", "no", "off"):
            return False
        raise PipelineError(f"pass '{pass_name}': option '{key}' expects true or false, got '{text}'")
    if typ is int:
        try:
            return int(text, 0)
        except ValueError:
            raise PipelineError(f"pass '{pass_name}': option '{key}' expects an integer, got '{text}'") from None
    if typ is float:
        try:
            return float(text)
        except ValueError:
            raise PipelineError(f"pass '{pass_name}': option '{key}' expects a number, got '{text}'") from None
    if typ is str:
        return text
    raise PipelineError(f"pass '{pass_name}': option '{key}' has unsupported type {typ}")
