"""The op suite: every lowering in ``LOWERINGS`` runs forward (and backward where differentiable) against eager,
through ``torch.compile(backend="npu")`` with simulation (the default execution mode), in f32 and in f16 or bf16
(alternating per case; the other low-precision dtype is a ``slow`` variant), again with the reference interpreter
as the execution mode, and forward with ``dynamic=True`` compiled once across three sizes.

Every case asserts where its kernels ran (profile records): each kernel on the simulator, except those the
allow-list :data:`INTERPRETED` names with the reason they are interpreted today.

The last test checks completeness: every table entry was lowered by some case of this module.
"""

from __future__ import annotations

import os

import pytest
import torch

import torch_npu_backend
from tests.backend.op_cases import CASES
from tests.helpers import assert_close, check_model
from torch_npu_backend.lowerings import LOWERING_HITS, LOWERINGS

LOW = (torch.float16, torch.bfloat16)

# Why kernels are interpreted today: a substring of the runtime's reason -> the explanation. Empty: every case's
# kernels run on the simulator, the matmuls (mm, bmm, addmm, linear, embedding's backward) as cube kernels.
REASONS: dict[str, str] = {}

# case name -> the REASONS keys its interpreted kernels may give. Cases not listed: every kernel simulated.
INTERPRETED: dict[str, tuple[str, ...]] = {}

# Known bugs (each reported with the numbers): strict xfail, so a fix fails the test until its entry is removed.
KNOWN_BUGS: dict[str, str] = {}  # fmt: skip
NO_KERNEL = {"convert_element_type": "f32 -> f32 is the identity: no kernel"}


def _param(case, dtype, name):
    key = f"{case.name}-{name}"
    marks = [pytest.mark.xfail(reason=KNOWN_BUGS[key], strict=True)] if key in KNOWN_BUGS else []
    return pytest.param(case, dtype, id=key, marks=marks)


_PARAMS, _SLOW = [], []
for _i, _case in enumerate(CASES):
    if _case.floats:
        _low, _other = LOW[_i % 2], LOW[(_i + 1) % 2]
        _PARAMS += [_param(_case, torch.float32, "f32"), _param(_case, _low, str(_low)[6:])]
        _SLOW.append(_param(_case, _other, str(_other)[6:]))
    else:
        _PARAMS.append(_param(_case, None, "fixed"))

_RAN: set[str] = set()


def check_where_kernels_ran(case, prof) -> None:
    """Every kernel ran on the simulator, or is interpreted for the reason the allow-list gives."""
    assert prof.records or case.name in NO_KERNEL, f"{case.name}: no kernel launched"
    allowed = INTERPRETED.get(case.name, ())
    bad = [r for r in prof.interpreted() if not any(k in r.reason for k in allowed)]
    if os.environ.get("NPU_TEST_DUMP_REASONS"):
        with open(os.environ["NPU_TEST_DUMP_REASONS"], "a") as f:
            f.writelines(f"{case.name}\t{r.reason}\n" for r in bad)
    assert not bad, "\n".join(f"{case.name}: kernel {r.kernel} ({','.join(r.source)}) ran in the interpreter: "
                              f"{r.reason}" for r in bad)  # fmt: skip


@pytest.mark.parametrize("case, dtype", _PARAMS)
def test_op(case, dtype):
    gen = torch.Generator().manual_seed(0)
    inputs = case.make(dtype, gen)
    with torch_npu_backend.profile(trace=False) as prof:
        check_model(case.fn, inputs, backward=case.backward, tol_scale=case.scale)
    check_where_kernels_ran(case, prof)
    _RAN.add(f"{case.name}-{dtype}")


@pytest.mark.slow
@pytest.mark.parametrize("case, dtype", _SLOW)
def test_op_other_low_precision_dtype(case, dtype):
    gen = torch.Generator().manual_seed(0)
    with torch_npu_backend.profile(trace=False) as prof:
        check_model(case.fn, case.make(dtype, gen), backward=case.backward, tol_scale=case.scale)
    check_where_kernels_ran(case, prof)


_REFERENCE = [pytest.param(*p.values, id=p.id) for p in _PARAMS]  # the known bugs above are simulate-mode bugs


@pytest.mark.parametrize("case, dtype", _REFERENCE)
def test_op_interpret_mode(case, dtype):
    """The frontend alone: import + HFusion IR run by the reference interpreter, forward and backward."""
    gen = torch.Generator().manual_seed(0)
    check_model(case.fn, case.make(dtype, gen), backward=case.backward, tol_scale=case.scale,
                options={"execute": "interpret"})  # fmt: skip


def _grow(inputs, k: int):
    """The inputs repeated ``k`` times along dim 0 (every tensor input has the same shape), no grad."""
    return [torch.cat([x.detach()] * k, 0) for x in inputs]


_DYNAMIC = [p for p in _PARAMS if (p.values[1] in (torch.float32, None))]


@pytest.mark.parametrize("case, dtype", _DYNAMIC)
def test_op_dynamic(case, dtype, fresh_dynamo):
    """dynamic=True: one compile serves three sizes (forward), every kernel simulated as in test_op."""
    inputs = case.make(dtype, torch.Generator().manual_seed(0))
    shapes = {tuple(x.shape) for x in inputs if isinstance(x, torch.Tensor)}
    if len(shapes) != 1 or not next(iter(shapes)) or case.name in _DYNAMIC_SKIP:
        pytest.skip(_DYNAMIC_SKIP.get(case.name, "inputs of different shapes: resizing them together is case-specific"))
    compiled = torch.compile(case.fn, backend="npu", dynamic=True)
    with torch_npu_backend.profile(trace=False) as prof, torch.no_grad():
        for k in (1, 2, 3):
            xs = _grow(inputs, k)
            expected, actual = case.fn(*xs), compiled(*xs)
            expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
            actual = list(actual) if isinstance(actual, (list, tuple)) else [actual]
            for i, (a, e) in enumerate(zip(actual, expected)):
                assert a.shape == e.shape, f"size x{k} output {i}: {tuple(a.shape)} != {tuple(e.shape)}"
                assert_close(a, e, f"size x{k} output {i}", case.scale)
    assert fresh_dynamo["graphs_compiled"] == 1, "one compile for three sizes"
    check_where_kernels_ran(case, prof)


_DYNAMIC_SKIP = {
    # sizes baked into the function: a resized input would not fit them
    "full": "the function builds a tensor of a fixed (3, 8) shape",
    "view_reshape": "view(4, 6) fixes the element count",
    "squeeze_dims": "dim 0 must stay 1 to be squeezed",
    "squeeze_all": "dim 0 stays 3 but dim 1 must stay 1",
    "tensor_constant": "a constant of 3 rows broadcasts against dim 0",
    "split": "split sizes [2, 5, 1] and split(3, 0) fix dims",
    "expand": "expand(4, 3, 8) fixes the sizes",
    "as_strided_prefix": "as_strided((3, 8), (8, 1)) fixes the sizes (and the lowering reads static ones only)",
    "arange": "arange(8) fixes the last dim only (kept), but arange(1, 17, 2) broadcasts against it",
    "index_constant": "an index of -1 into a symbolic length is refused (test_errors): its bound is not guarded",
    "index_one": "an index of -2 into a symbolic length is refused (test_errors): its bound is not guarded",
    # dynamic=True makes every dim symbolic, and a scan's step count needs a static length (test_errors)
    "cumsum": "cumsum over a symbolic length",
    "cumsum_int": "cumsum over a symbolic length",
    "cumprod_cummax_logcumsumexp": "scans over a symbolic length",
    "avg_pool2d": "pooling windows over symbolic sizes: the divisors and slices need static sizes (test_pooling)",
    "max_pool2d": "pooling windows over symbolic sizes: the slices and positions need static sizes (test_pooling)",
    "topk": "its values are a gather from rows of symbolic length here, which is interpreted (rows loaded whole "
            "into UB; a static row length, as a model's experts, simulates: test_sorting)",
    "sort": "a sorted row's length must be static (at most 16: test_sorting); dynamic=True makes it symbolic",
    "diagonal": "the diagonal's length (a min of the two sizes less the offset) needs static sizes "
                "(test_norms_diagonal)",
}


def test_every_lowering_is_exercised():
    """Every entry of the lowering table was used by an import during this module's cases."""
    expected = {f"{p.values[0].name}-{p.values[1]}" for p in _PARAMS}
    if not expected <= _RAN:
        pytest.skip("needs the whole op suite in this session (run tests/backend/test_ops.py without -k)")
    missing = sorted(str(op) for op in LOWERINGS if LOWERING_HITS[op] == 0)
    assert not missing, f"lowerings no case exercises: {', '.join(missing)}"
