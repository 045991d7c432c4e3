"""The pass manager: runs a pipeline, verifies after each pass, times and counts, dumps, stops early."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TextIO

from ..ir.core import Operation, VerifyError
from ..ir.verifier import verify as verify_ir
from .base import ModulePass, PassContext, PipelineError
from .dumps import dump_text, resolve_debug_dir, write_dump
from .pipeline_syntax import build_pipeline, pipeline_text


class PassVerifyError(VerifyError):
    """A pass left invalid IR; the message names the pass, then the verifier's op/location/problem."""


class PassManager:
    """Runs ``passes`` in order on a module.

    - ``verify``: verify the input and the IR after every pass (errors name the pass that broke it);
    - ``debug_dir``: write numbered dumps there (also enabled by NPU_COMPILE_DEBUG=1 / TORCH_COMPILE_DEBUG=1);
    - ``stop_after``: the name of a pass in the pipeline after which to stop;
    - ``print_ir_after_all``: a stream that receives every dump (``npu-opt --mlir-print-ir-after-all``).
    """

    def __init__(self, passes: list[ModulePass], verify: bool = True, debug_dir=None, stop_after: str | None = None,
                 print_ir_after_all: TextIO | None = None):  # fmt: skip
        self.passes = list(passes)
        self.verify = verify
        self.debug_dir: Path | None = resolve_debug_dir(debug_dir)
        self.print_ir_after_all = print_ir_after_all
        names = [p.name for p in self.passes]
        if stop_after is not None and stop_after not in names:
            raise PipelineError(f"stop_after={stop_after!r} names no pass of the pipeline ({', '.join(names)})")
        self.stop_after = stop_after

    @classmethod
    def from_pipeline(cls, pipeline: str, verify: bool = True, debug_dir=None, stop_after: str | None = None,
                      print_ir_after_all: TextIO | None = None) -> "PassManager":  # fmt: skip
        return cls(build_pipeline(pipeline), verify, debug_dir, stop_after, print_ir_after_all)

    @property
    def pipeline(self) -> str:
        return pipeline_text(self.passes)

    def run(self, module: Operation, ctx: PassContext | None = None) -> PassContext:
        ctx = ctx or PassContext()
        if self.verify:
            verify_ir(module)
        self._dump(0, None, module)
        for i, p in enumerate(self.passes, start=1):
            ctx.current_pass = p.name
            start = time.perf_counter()
            try:
                p.run(module, ctx)
            finally:
                ctx.timings[p.name] = ctx.timings.get(p.name, 0.0) + time.perf_counter() - start
                ctx.current_pass = None
            ctx.passes_run.append(p.name)
            ctx.counters.setdefault(p.name, {})
            self._dump(i, p, module)
            if self.verify:
                try:
                    verify_ir(module)
                except VerifyError as e:
                    raise PassVerifyError(f"pass '{p.name}' produced invalid IR: {e}") from e
            if p.name == self.stop_after:
                break
        return ctx

    def _dump(self, index: int, p: ModulePass | None, module: Operation) -> None:
        if self.debug_dir is not None:
            write_dump(self.debug_dir, index, p, module)
        if self.print_ir_after_all is not None and p is not None:
            self.print_ir_after_all.write(dump_text(p, module) + "\n")
