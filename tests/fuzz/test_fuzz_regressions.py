"""Minimal regression tests for failures the fuzzer (test_fuzz.py) found; a known one is a strict xfail with its
reason until fixed."""

from __future__ import annotations

import torch

from tests.helpers import check_model


def test_cast_and_unsqueezed_relu_of_one_input():
    """hfusion-propagate-reshape{outlined=true}: collapse_down lifted the cast of an argument to the argument's
    expand view and fold_reshape (reshape(cast(reshape(x))) -> cast(x)) undid it, forever; fuzz seed 18."""
    check_model(lambda x: (x.to(torch.bfloat16), torch.relu(x).unsqueeze(0)), [torch.randn(24, 16)])


def test_sum_over_dims_around_a_unit_dim():
    """hfusion-flatten-ops once left an invalid hfusion.reduce (result shape [1] must be the input without dims
    [0]); fuzz seeds 60, 95, 252, 256."""
    check_model(lambda x: x.sum(dim=[0, 2]), [torch.randn(8, 1, 8)])


def test_flattened_product_with_an_unsqueezed_operand(fresh_dynamo):
    """A broadcast of [24, 24] into [24, 24, 24, 8] along dims 1 and 3 (its source's rows are not one run of rows in
    the destination) has no vector idiom: the kernel stays at tensor level, its reason naming the op, instead of an
    internal ValueError from codegen's column broadcast; fuzz seed 147."""
    import torch_npu_backend

    with torch_npu_backend.profile() as prof:
        check_model(lambda x, y: (x.unsqueeze(1).abs(), (x.unsqueeze(1).abs() * y).flatten(1, 2).sigmoid()),
                    [torch.randn(24, 24, 1), torch.randn(24, 24, 8)])
    (rec,) = prof.interpreted()
    assert "hfusion.broadcast" in rec.reason and "not one run of rows" in rec.reason, rec.reason
