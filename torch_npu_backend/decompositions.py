"""The decomposition table handed to AOTAutograd: torch's core-aten decompositions, minus every op that has a
lowering of its own (a direct lowering gives better IR: softmax stays one max/exp/sum/div sequence, silu one op),
plus torch's decompositions of the batch norms, which core aten keeps whole (into var_mean, the normalisation and,
in training, the running statistics' update; their backward is core-aten's ``native_batch_norm_backward``), and of
``repeat`` (an expand of the tensor with a unit dim before each repeated dim, then a reshape: alibi slopes
repeated over the batch, a rotary table), of ``linalg_vector_norm`` (``x.norm(dim=-1)``: ``sum(|x| ** p) ** (1/p)``
in f32 for f16/bf16 inputs, ``amax``/``amin`` of ``|x|`` for ±inf, a count of nonzeros for 0; p = 2 is ``x·x`` and
``vsqrt``) of ``diagonal_backward`` (zeros and a ``diagonal_scatter``, lowered in ``lowerings/diagonal.py``), of
``_adaptive_avg_pool2d`` (an ``avg_pool2d`` when the sizes divide), and of ops core aten keeps whole that torch
decomposes into lowered aten ops: ``addmv``, ``dist``, ``native_group_norm``, ``bucketize``, ``ldexp`` and the
``*_copy`` views (``INTO`` says into what). Random ops stay whole (``fallback.RANDOM_OPS``):
they run on the host with eager's own kernels, which draw differently from their core-aten decompositions.
"""

from __future__ import annotations

import functools

import torch
from torch._decomp import core_aten_decompositions, get_decompositions

from .fallback import RANDOM_OPS
from .lowerings import LOWERINGS


aten = torch.ops.aten
BATCH_NORMS = [aten._native_batch_norm_legit, aten._native_batch_norm_legit_functional,
               aten._native_batch_norm_legit_no_training, aten.native_batch_norm]
COPIES = [aten.narrow_copy, aten.view_copy, aten.permute_copy, aten.unbind_copy]
EXTRA = BATCH_NORMS + COPIES + [aten.repeat, aten.linalg_vector_norm, aten.diagonal_backward,
                                aten._adaptive_avg_pool2d, aten.addmv, aten.dist, aten.native_group_norm,
                                aten.bucketize, aten.ldexp]
INTO = {  # what torch's decompositions of EXTRA produce (the ops table in docs/ops.md shows it)
    **{op: "var_mean, the normalisation, the running statistics' update" for op in BATCH_NORMS},
    aten.repeat: "expand with a unit dim per repeated dim, then view",
    aten.linalg_vector_norm: "sum of abs ** p, then ** (1/p) (p = 2: x·x and sqrt); amax/amin of abs for ±inf; "
                             "a count of nonzeros for 0",
    aten.diagonal_backward: "zeros and diagonal_scatter",
    aten._adaptive_avg_pool2d: "avg_pool2d when the input's size is a multiple of the output's, else index.Tensor "
                               "with two index tensors (no lowering) and sums",
    **{op: "the view, then clone" for op in COPIES},
    aten.addmv: "mv, mul and add",
    aten.dist: "sub, then norm",
    aten.native_group_norm: "view, var_mean, the normalisation (with weight and bias: an as_strided view)",
    aten.bucketize: "a binary search over the boundaries: index.Tensor, compares, where (a 0-d input: kept whole)",
    aten.ldexp: "mul by pow(2, other)",
}


def decomposition_table() -> dict:
    table = dict(core_aten_decompositions())
    table.update(get_decompositions(EXTRA))
    for op in [aten.bucketize.Tensor, aten.bucketize.Scalar]:
        table[op] = _not_of_0d(table[op])
    for op in [*LOWERINGS, *RANDOM_OPS]:
        table.pop(op, None)
    return table


def _not_of_0d(decompose):
    """``decompose``, except for a 0-d input: torch's bucketize reads its one element with ``.item()`` there, which
    AOTAutograd cannot trace (dynamo would run the whole graph eagerly); the op stays whole and runs on the host."""

    @functools.wraps(decompose)
    def wrapped(x, *args, **kwargs):
        if isinstance(x, torch.Tensor) and x.dim() == 0:
            return NotImplemented
        return decompose(x, *args, **kwargs)

    return wrapped
