"""Shared fixtures for the test suite (markers and default options live in setup.cfg).

The compile cache on disk is off for the whole suite (``NPU_CACHE_DIR=0``, set before any test runs): a hit from an
earlier test or run would skip the passes a test monkeypatches or expects an error from. The cache's own tests
(tests/backend/test_compile_cache.py) turn it on with a temporary directory. ``NPU_WORKERS=1`` (unless set): every new
launch is simulated in full at once, in process, as before timing jobs existed (tests/backend/test_workers.py and
test_functional_launches.py ask for the pool and the deferred path themselves).
"""

import os

import pytest
import torch._dynamo

os.environ["NPU_CACHE_DIR"] = "0"
os.environ.setdefault("NPU_WORKERS", "1")  # timing jobs serial, in process; the pool tests ask for workers=2


@pytest.fixture
def fresh_dynamo():
    """A clean dynamo cache and compile counters before and after the test."""
    import torch_npu_backend

    torch._dynamo.reset()
    torch_npu_backend.COUNTERS.clear()
    yield torch_npu_backend.COUNTERS
    torch._dynamo.reset()
