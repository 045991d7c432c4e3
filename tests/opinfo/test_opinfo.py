"""The OpInfo sweep (tests/opinfo/sweep.py) against the expected-failure table (tests/opinfo/expected.json).

Default run: the table's ``subset`` (about 25 fast ops, picked by a fixed rule when the table was regenerated:
``regenerate.subset``), f32 forward, must give the statuses the table records (absent = ``pass``). ``-m slow``: every op, and the f16/bf16 and backward configurations the table has
swept. A difference means the compiler changed what an op does: fix it, or rerun ``python -m tests.opinfo.regenerate``
and commit the table.
"""

from __future__ import annotations

import types

import pytest
import torch

from tests.opinfo import sweep
from tests.opinfo.regenerate import load_expected

@pytest.fixture(scope="module")
def db():
    return sweep.op_db()


def _expected_status(table: dict, key: str) -> str:
    return table["entries"].get(key, {}).get("status", sweep.PASS)


def _check(ops, dtype: str, backward: bool) -> None:
    table = load_expected()
    wrong = []
    for op in ops:
        r = sweep.run_op(op, dtype, backward)
        want = _expected_status(table, r.key)
        if r.status != want:
            wrong.append(f"{r.key}: {r.status} ({r.reason[:160]}), the table says {want}")
    assert not wrong, "\n".join(wrong)


def test_subset_matches_the_expected_table(db, fresh_dynamo):
    names = load_expected()["subset"]
    assert len(names) >= 20, "the table has no subset: python -m tests.opinfo.regenerate (a whole f32 forward run)"
    ops = [o for o in db if sweep.op_name(o) in set(names)]
    assert len(ops) == len(names), f"not in op_db: {set(names) - {sweep.op_name(o) for o in ops}}"
    _check(ops, "f32", False)


@pytest.mark.slow
@pytest.mark.parametrize("cfg", ["f32/fwd", "f32/bwd", "f16/fwd", "f16/bwd", "bf16/fwd", "bf16/bwd"])
def test_full_sweep(db, cfg, fresh_dynamo):
    if cfg not in load_expected()["swept"]:
        pytest.skip(f"the table has not swept {cfg}: python -m tests.opinfo.regenerate first")
    dtype, direction = cfg.split("/")
    _check(db, dtype, direction == "bwd")


def _fake_op(fn, samples, dtypes=(torch.float32,)):
    """A stand-in OpInfo: what run_op reads of one."""
    from torch.testing._internal.opinfo.core import SampleInput

    return types.SimpleNamespace(name="fake", variant_test_name="", op=fn, decorators=(), supports_autograd=True,
                                 supported_dtypes=lambda device: set(dtypes),
                                 sample_inputs=lambda device, dtype, requires_grad=False: [
                                     SampleInput(s.to(dtype).requires_grad_(requires_grad)) for s in samples])  # fmt: skip


def test_statuses(db, fresh_dynamo):
    x = torch.randn(4, 8)
    assert sweep.run_op(_fake_op(torch.sigmoid, [x])).status == sweep.PASS
    # differs under compile: caught as a mismatch, with the sample named
    r = sweep.run_op(_fake_op(lambda t: t + (2 if torch.compiler.is_compiling() else 1), [x]))
    assert (r.status, r.reason.split(":")[0]) == (sweep.MISMATCH, "sample 0")
    # eager rejects every sample: excluded, not a failure
    bad = sweep.run_op(_fake_op(lambda t: t @ t, [x]))
    assert (bad.status, bad.samples) == (sweep.EAGER_FAILS, 0)
    assert sweep.run_op(_fake_op(torch.sigmoid, [x]), "bf16").status == sweep.NO_DTYPE
    kth = sweep.run_op(next(o for o in db if o.name == "kthvalue"))
    assert kth.status == sweep.PASS_FALLBACK and kth.fallbacks == ["aten.kthvalue.default: no lowering"]
    grads = sweep.run_op(_fake_op(lambda t: torch.tanh(t) * t, [x]), backward=True)
    assert grads.status == sweep.PASS and grads.key == "fake/f32/bwd"


def test_tolerances_come_from_the_opinfo(db):
    addmv = next(o for o in db if o.name == "addmv")  # toleranceOverride decorators for f32 and f16
    assert sweep.tolerance(addmv, torch.float32) == (2e-05, 3e-06)
    assert sweep.tolerance(addmv, torch.float16) == (1e-05, 0.003)
    assert sweep.tolerance(_fake_op(torch.sigmoid, []), torch.float32) == (None, None)  # assert_close's defaults
