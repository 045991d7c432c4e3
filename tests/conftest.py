"""Shared fixtures for the test suite (markers and default options live in setup.cfg)."""

import pytest
import torch._dynamo


@pytest.fixture
def fresh_dynamo():
    """A clean dynamo cache and compile counters before and after the test."""
    import torch_npu_backend

    torch._dynamo.reset()
    torch_npu_backend.COUNTERS.clear()
    yield torch_npu_backend.COUNTERS
    torch._dynamo.reset()
