"""``hfusion-legalize-bool`` keeps every kernel's meaning: the reference interpreter gives the same values before and
after, on random bools, integers and floats (the kernels of ``legalize-bool.mlir``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from graph_passes.ir.parser import parse_module
from graph_passes.ir.types import TensorType
from tests.passes.hfusion.helpers import run
from torch_npu_backend.interpreter import interpret

CHUNKS = (Path(__file__).parent / "legalize-bool.mlir").read_text().split("// -----")


def _arg(t: TensorType, gen) -> torch.Tensor:
    shape = [int(d) for d in t.shape]
    if t.dtype == "i1":
        return torch.rand(shape, generator=gen) < 0.5
    if t.dtype == "i32":
        return torch.randint(-2, 3, shape, generator=gen, dtype=torch.int32)
    return torch.randn(shape, generator=gen)


@pytest.mark.parametrize("chunk", range(len(CHUNKS)))
def test_same_values(chunk):
    text = CHUNKS[chunk]
    before = parse_module(text)
    after, ctx = run(text, "hfusion-legalize-bool")
    kernels = [f for f in before.functions if f.attributes.get("kernel")]
    assert kernels and (ctx.counter("hfusion-legalize-bool", "ops-legalized") > 0
                        or ctx.counter("hfusion-legalize-bool", "bool-copies-kept") == len(kernels))
    for f in kernels:
        gen = torch.Generator().manual_seed(chunk)
        args = [_arg(a.type, gen) for a in f.args]
        expected = interpret(before, args, func=f.sym_name)
        got = interpret(after, args, func=f.sym_name)
        for e, g in zip(expected, got):
            assert g.dtype == e.dtype and torch.equal(g, e), f"@{f.sym_name}: {g} != {e}"
