"""docs/ops.md is what ``python -m torch_npu_backend.coverage`` prints, and its statuses follow the tables."""

from __future__ import annotations

import pathlib

import torch

from torch_npu_backend import coverage

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "ops.md"


def test_docs_ops_md_is_generated():
    assert DOC.read_text() == coverage.render(), (
        "docs/ops.md is stale: regenerate it with `python -m torch_npu_backend.coverage > docs/ops.md`")


def test_statuses():
    status = {(name, status) for name, _, status, _ in coverage.rows()}
    assert ("log1p", "lowered") in status and ("diagonal", "lowered") in status  # lowering table entries
    assert ("linalg_vector_norm", "decomposed") in status  # an EXTRA decomposition
    assert ("isposinf", "decomposed") in status  # core aten's decomposition
    assert ("nonzero", "no lowering") in status  # a core aten op with neither
    lowered_and_decomposed = {n for n, s in status if s == "lowered"} & {n for n, s in status if s == "decomposed"}
    for name in lowered_and_decomposed:  # the same overload is never both (a lowering removes the decomposition)
        rows = [r for r in coverage.rows() if r[0] == name]
        lowered = {o for r in rows if r[2] == "lowered" for o in r[1].split(", ")}
        assert not lowered & {o for r in rows if r[2] == "decomposed" for o in r[1].split(", ")}, name


def test_out_and_inplace_overloads_are_left_out():
    names = {(name, overloads) for name, overloads, _, _ in coverage.rows()}
    assert not any(o == "out" or o.endswith("_out") for _, ovs in names for o in ovs.split(", "))
    assert ("add_", "Tensor") not in names and torch.ops.aten.add_.Tensor is not None
