"""Shared helpers: run a pipeline on text IR, and compare the reference interpreter before and after."""

from __future__ import annotations

import torch

from graph_passes.ir import verify
from graph_passes.ir.parser import parse_module
from graph_passes.ir.printer import print_module
from graph_passes.ir.types import TensorType
from graph_passes.passes import PassManager

from torch_npu_backend.interpreter import interpret


def run(text: str, pipeline: str):
    """(module after ``pipeline``, counters of the run); the verifier runs after every pass."""
    module = parse_module(text)
    verify(module)
    ctx = PassManager.from_pipeline(pipeline, verify=True).run(module)
    verify(module)
    return module, ctx


def random_args(module, bindings: dict[str, int], seed: int = 0) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    main = module.lookup("main")
    args = []
    for a in main.args:
        t = a.type
        assert isinstance(t, TensorType), f"test helper expects tensor arguments, got {t}"
        shape = [int(d.subs({s: bindings[s.name] for s in d.free_symbols})) for d in t.shape]
        args.append(torch.randn(shape, generator=gen, dtype=torch.float32))
    return args


def assert_same_values(text: str, pipeline: str, bindings: dict[str, int]) -> None:
    """Interpreting the module before and after ``pipeline`` gives the same values."""
    before = parse_module(text)
    after, _ = run(text, pipeline)
    args = random_args(before, bindings)
    expected = interpret(before, args)
    got = interpret(after, args)
    assert len(expected) == len(got)
    for e, g in zip(expected, got):
        torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-5, msg=lambda m: m + "\n" + print_module(after))
