"""Pipeline strings: ``"canonicalize,cse"``, ``"x{opt=1}"``, ``"x{a=1 b=true}"`` (commas between options work too).

``builtin.module(…)`` around the list is accepted and ignored (MLIR's spelling). A bare option (``x{flag}``)
means ``flag=true``.
"""

from __future__ import annotations

import difflib
import re

from .base import ModulePass, PipelineError
from .registry import PASS_REGISTRY, load_all_passes

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_WRAPPER = re.compile(r"^\s*(?:builtin\.)?module\((.*)\)\s*$", re.S)


def parse_pipeline_text(text: str) -> list[tuple[str, dict[str, str]]]:
    """``"a,b{x=1 y=2}"`` → ``[("a", {}), ("b", {"x": "1", "y": "2"})]`` (names not yet checked)."""
    m = _WRAPPER.match(text)
    body = m.group(1) if m else text
    items: list[tuple[str, dict[str, str]]] = []
    pos, n = 0, len(body)

    def err(msg: str) -> PipelineError:
        return PipelineError(f"pipeline {text!r}: {msg} at column {pos + 1}")

    while True:
        while pos < n and body[pos] in " \t\n":
            pos += 1
        if pos >= n:
            if items or not body.strip():
                return items
        nm = _NAME.match(body, pos)
        if not nm:
            raise err("expected a pass name")
        name, pos = nm.group(0), nm.end()
        options: dict[str, str] = {}
        if pos < n and body[pos] == "{":
            close = body.find("}", pos)
            if close < 0:
                raise err(f"unclosed '{{' after pass '{name}'")
            for token in re.split(r"[\s,]+", body[pos + 1 : close].strip()):
                if not token:
                    continue
                key, eq, value = token.partition("=")
                if not key:
                    raise err(f"empty option name in the options of '{name}'")
                if key in options:
                    raise err(f"option '{key}' of '{name}' given twice")
                options[key] = value if eq else "true"
            pos = close + 1
        items.append((name, options))
        while pos < n and body[pos] in " \t\n":
            pos += 1
        if pos >= n:
            return items
        if body[pos] != ",":
            raise err(f"expected ',' after pass '{name}', found {body[pos]!r}")
        pos += 1


def build_pipeline(text: str) -> list[ModulePass]:
    """Parse a pipeline string into pass instances; unknown passes/options and bad values raise PipelineError."""
    load_all_passes()
    passes = []
    for name, options in parse_pipeline_text(text):
        cls = PASS_REGISTRY.get(name)
        if cls is None:
            close = difflib.get_close_matches(name, PASS_REGISTRY, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else f" (known: {', '.join(sorted(PASS_REGISTRY))})"
            raise PipelineError(f"unknown pass '{name}'{hint}")
        passes.append(cls.from_options(options))
    return passes


def pipeline_text(passes: list[ModulePass]) -> str:
    """The pipeline string of ``passes`` (inverse of :func:`build_pipeline`)."""
    return ",".join(p.pipeline_text() for p in passes)
