"""Compile statistics tests can read: ``COUNTERS["backend_calls"]``, ``["graphs_compiled"]``, per-kind counts."""

from __future__ import annotations

from collections import Counter

COUNTERS: Counter = Counter()
"""backend_calls: frames handed to the backend by dynamo; graphs_compiled: FX graphs imported and compiled
(forward + backward); graphs_forward / graphs_backward / graphs_inference: by kind; graph_runs: executions;
cache_hits / cache_misses / cache_writes / cache_rejected / cache_bypassed / cache_write_errors: the compile cache
(compile_cache.py)."""


def reset() -> None:
    COUNTERS.clear()
