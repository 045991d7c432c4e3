"""Every local operand the code generator emits names its logical buffer, so the simulator's buffer-tag check sees
every access: a kernel of each emitter family (elementwise, compare/select bit masks, broadcasts, row/column/all
reductions, products, softmax, gathers, permutes, i64 scalar loops, casts, matmuls on the cube) runs with no
untagged UB/L1/L0 access."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

from simulator import hazards
from tests.backend.op_cases import CASES

FAMILIES = ["add_broadcast", "compare_scalar", "where", "where_int32", "bitwise", "to_float16", "arange", "expand",
            "permute_transpose_t", "cat", "constant_pad_nd", "sum", "cumsum", "cumsum_int", "prod", "amax_amin", "any",
            "mean", "var", "softmax", "log_softmax", "layer_norm", "mm", "bmm", "linear", "gather", "index_select",
            "index_put", "scatter_value", "cross_entropy", "embedding"]  # fmt: skip
BY_NAME = {c.name: c for c in CASES}


@pytest.fixture
def untagged(monkeypatch):
    seen: Counter = Counter()
    check = hazards.HazardChecker.check

    def counting(self, ins, stream, seq, vc):
        for a in ins.accesses(ins.core):
            if a.scope != "GM" and a.tag is None:
                seen[(ins.mnemonic, a.scope, "write" if a.write else "read")] += 1
        return check(self, ins, stream, seq, vc)

    monkeypatch.setattr(hazards.HazardChecker, "check", counting)
    return seen


def test_the_families_exist():
    assert not [f for f in FAMILIES if f not in BY_NAME]


@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=["f32", "f16"])
def test_every_local_access_is_tagged(untagged, name, dtype):
    case = BY_NAME[name]
    if not case.floats and dtype != torch.float32:
        pytest.skip("the case fixes its own dtypes")
    inputs = case.make(dtype, torch.Generator().manual_seed(0))
    torch._dynamo.reset()
    torch.compile(case.fn, backend="npu")(*inputs)
    torch._dynamo.reset()
    assert not untagged, f"{name}: untagged local accesses {dict(untagged)}"
