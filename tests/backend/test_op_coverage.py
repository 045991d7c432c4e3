"""The coverage report (torch_npu_backend/op_coverage.py): one CSV row per aten op and where it runs."""

from __future__ import annotations

import csv

import pytest
import torch

import torch_npu_backend
from torch_npu_backend import op_coverage as cov


def _fn(x, w):
    y = torch.softmax(x @ w, -1)
    v, _ = torch.kthvalue(y, 2, dim=1)
    return v + 1, torch.nn.functional.hardswish(y)


def make():
    """For the command line test: ``npu-coverage tests.backend.test_op_coverage:make``."""
    return _fn, (torch.randn(8, 16), torch.randn(16, 32))


def _by_op(rows):
    out = {}
    for r in rows:
        out.setdefault(r["op"], []).append(r)
    return out


def test_csv_lists_each_op_with_its_status(tmp_path, fresh_dynamo):
    path = tmp_path / "cov.csv"
    torch_npu_backend.coverage_report(*make()[:1], *make()[1], path=str(path))
    with open(path) as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == list(cov.COLUMNS)
    ops = _by_op(rows)
    assert [(r["status"], r["count"], r["dtypes"], r["shapes"]) for r in ops["aten.mm.default"]] == [
        ("simulated", "1", "f32", "[8,32]")]
    assert [r["status"] for r in ops["aten._softmax.default"]] == ["simulated"]
    kth = ops["aten.kthvalue.default"]
    assert [(r["status"], r["detail"], r["dtypes"], r["shapes"]) for r in kth] == [
        ("host fallback", "no lowering", "f32 i64", "[8]")]  # values and indices: one shape
    # hardswish has no lowering of its own: the core-aten table decomposes it, so it is not in the compiled graph
    hs = ops["aten.hardswish.default"]
    assert [r["status"] for r in hs] == ["decomposed"] and hs[0]["detail"].startswith("into ")
    assert "clamp.default" in hs[0]["detail"] and "aten.clamp.default" in ops
    assert all(r["graph"] == "inference" and r["symbolic"] == "no" for r in rows)


def test_interpret_mode_and_backward_and_symbolic_sizes(fresh_dynamo):
    x = torch.randn(6, 8, requires_grad=True)
    rows = torch_npu_backend.coverage_report(lambda t: torch.tanh(t).sum(-1), x, backward=True, dynamic=True,
                                             options={"execute": "interpret"})  # fmt: skip
    kinds = {r.graph for r in rows}
    assert kinds == {"forward", "backward"}, kinds
    tanh = [r for r in rows if r.op == "aten.tanh.default"]
    assert [(r.graph, r.status, r.detail) for r in tanh] == [("forward", "interpreted", "execute='interpret'")]
    assert any(r.op == "aten.tanh_backward.default" and r.graph == "backward" for r in rows)
    assert tanh[0].symbolic and tanh[0].csv_row()["symbolic"] == "yes"


def test_command_line(tmp_path, capsys, fresh_dynamo):
    out = tmp_path / "c.csv"
    assert cov.main(["tests.backend.test_op_coverage:make", "-o", str(out)]) == 0
    assert "host fallback" in capsys.readouterr().out
    with open(out) as f:
        assert {r["op"] for r in csv.DictReader(f)} >= {"aten.mm.default", "aten.kthvalue.default"}
    assert cov.main(["no_such_model"]) == 2
    assert "neither a built-in model" in capsys.readouterr().err


@pytest.mark.slow
def test_gpt2_training(tmp_path, fresh_dynamo):
    out = tmp_path / "gpt2.csv"
    assert cov.main(["gpt2", "--backward", "-o", str(out)]) == 0
    with open(out) as f:
        rows = list(csv.DictReader(f))
    assert {r["graph"] for r in rows} == {"forward", "backward"}
    assert not [r for r in rows if r["status"] in ("host fallback", "interpreted")], rows
