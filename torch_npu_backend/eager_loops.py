"""Which elements eager's CPU elementwise loop computes with an op's scalar function rather than its vectorized one.

ATen's ``cpu_kernel_vec`` (``native/cpu/Loops.h``) applies an op's vectorized function a whole step of elements at
a time and its scalar function to the ``n mod step`` elements left over; a tensor of fewer elements than one step is
computed by the scalar function alone. The step is one vector register of the dtype on the CPU capability torch
dispatched to on this host (``torch.backends.cpu.get_cpu_capability()``): 64 bytes under AVX512 (measured: the
f16/bf16 ``rsqrt`` of 31 elements is all scalar-function results, of 32 all vectorized, of 40 the first 32
vectorized), 32 under AVX2 by the same rule (``tests/backend/test_eager_loops.py`` checks the model against eager
on the host it runs on). Where an op's two functions round differently (f16/bf16 ``rsqrt``: the vectorized one is
``1/sqrt(x)`` in f32 rounded once, the scalar one rounds ``sqrt(x)`` to the dtype first), a compiled op matches
eager by computing what eager's function for those elements computes.
"""

from __future__ import annotations

import torch

VECTOR_BYTES = {"AVX512": 64, "AVX2": 32}
"""Bytes of one step of eager's vectorized loop for each CPU capability this module models."""


def step_elements(itemsize: int) -> int | None:
    """Elements one step of eager's vectorized loop takes on this host, or None for an unmodelled capability."""
    width = VECTOR_BYTES.get(torch.backends.cpu.get_cpu_capability())
    return None if width is None else width // itemsize


def all_scalar(numel: int | None, itemsize: int) -> bool:
    """Eager computes every one of ``numel`` elements (None: unknown, a symbolic count) with the op's scalar
    function: fewer than one step of its vectorized loop."""
    step = step_elements(itemsize)
    return numel is not None and step is not None and numel < step
