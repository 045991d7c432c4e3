"""The op suite: every lowering in ``LOWERINGS`` runs forward (and backward where differentiable) against eager,
in f32 and in f16 or bf16 (alternating per case), through ``torch.compile(backend="npu")``.

The last test checks completeness: every table entry was lowered by some case of this module.
"""

from __future__ import annotations

import pytest
import torch

from tests.backend.op_cases import CASES
from tests.helpers import check_model
from torch_npu_backend.lowerings import LOWERING_HITS, LOWERINGS

LOW = (torch.float16, torch.bfloat16)
_PARAMS = []
for _i, _case in enumerate(CASES):
    if _case.floats:
        _PARAMS += [pytest.param(_case, torch.float32, id=f"{_case.name}-f32"),
                    pytest.param(_case, LOW[_i % 2], id=f"{_case.name}-{str(LOW[_i % 2])[6:]}")]  # fmt: skip
    else:
        _PARAMS.append(pytest.param(_case, None, id=f"{_case.name}-fixed"))

_RAN: set[str] = set()


@pytest.mark.parametrize("case, dtype", _PARAMS)
def test_op(case, dtype):
    gen = torch.Generator().manual_seed(0)
    inputs = case.make(dtype, gen)
    check_model(case.fn, inputs, backward=case.backward, tol_scale=case.scale)
    _RAN.add(f"{case.name}-{dtype}")


def test_every_lowering_is_exercised():
    """Every entry of the lowering table was used by an import during this module's cases."""
    expected = {f"{p.values[0].name}-{p.values[1]}" for p in _PARAMS}
    if not expected <= _RAN:
        pytest.skip("needs the whole op suite in this session (run tests/backend/test_ops.py without -k)")
    missing = sorted(str(op) for op in LOWERINGS if LOWERING_HITS[op] == 0)
    assert not missing, f"lowerings no case exercises: {', '.join(missing)}"
