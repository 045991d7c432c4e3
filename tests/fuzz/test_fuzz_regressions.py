"""Minimal regression tests for failures the fuzzer (test_fuzz.py) found; a known one is a strict xfail with its
reason until fixed."""

from __future__ import annotations

import pytest
import torch

from tests.helpers import check_model


@pytest.mark.xfail(strict=True, reason="hfusion-propagate-reshape{outlined=true}: collapse_down and fold_reshape "
                                       "undo each other on a kernel returning a cast and an unsqueezed relu of one "
                                       "input (the rewrite does not converge); fuzz seed 18")
def test_cast_and_unsqueezed_relu_of_one_input():
    check_model(lambda x: (x.to(torch.bfloat16), torch.relu(x).unsqueeze(0)), [torch.randn(24, 16)])
