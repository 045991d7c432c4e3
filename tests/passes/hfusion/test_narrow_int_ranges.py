"""``hfusion-narrow-int-ranges`` keeps every function's meaning: the reference interpreter gives the same values,
bit for bit and of the same dtypes, before and after (the functions of ``narrow-int-ranges.mlir``, symbols at
their upper bound where they have one), on random bools and on i64 arguments across the whole i64 range."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from graph_passes.ir.parser import parse_module
from graph_passes.ir.types import TensorType
from tests.passes.hfusion.helpers import run
from torch_npu_backend.interpreter import interpret

PASS = "hfusion-narrow-int-ranges"
CHUNKS = (Path(__file__).parent / "narrow-int-ranges.mlir").read_text().split("// -----")
UNBOUNDED_SIZE = 300  # a size for a symbol without a finite upper bound


def _arg(shape, dtype: str, gen) -> torch.Tensor:
    if dtype == "i1":
        return torch.rand(shape, generator=gen) < 0.5
    if dtype == "i64":
        return torch.randint(-(2**63), 2**63 - 1, shape, generator=gen, dtype=torch.int64)
    return torch.randn(shape, generator=gen)


@pytest.mark.parametrize("chunk", range(len(CHUNKS)))
def test_same_values(chunk):
    text = CHUNKS[chunk]
    before = parse_module(text)
    after, ctx = run(text, PASS)
    narrowed = ctx.counter(PASS, "values-narrowed")
    assert narrowed > 0 or "@kept" in text, "the pass narrowed nothing"
    sizes = before.size_vars()
    bindings = {n: hi if sizes.upper_bound(n) is not None else UNBOUNDED_SIZE
                for n, (lo, hi) in sizes.ranges.items()}
    for f in before.functions:
        gen = torch.Generator().manual_seed(chunk)
        args = []
        for a in f.args:
            assert isinstance(a.type, TensorType)
            args.append(_arg([sizes.evaluate(d, bindings) for d in a.type.shape], a.type.dtype, gen))
        expected = interpret(before, args, bindings, func=f.sym_name)
        got = interpret(after, args, bindings, func=f.sym_name)
        for e, g in zip(expected, got, strict=True):
            assert g.dtype == e.dtype and torch.equal(g, e), f"@{f.sym_name}: {g} != {e}"


def test_kept_chunk_is_unchanged():
    """An i64 argument, an unbounded symbolic arange and an overflowing product: nothing narrowed."""
    (text,) = [c for c in CHUNKS if "@kept" in c]
    _, ctx = run(text, PASS)
    assert ctx.counters[PASS] == {"values-narrowed": 0, "compares-narrowed": 0, "casts-narrowed": 0,
                                  "casts-inserted": 0}
