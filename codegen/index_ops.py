"""Index ops on PIPE_V: ``hivm.varange`` → ``vci`` (CreateVecIndex) and, for a step or start, ``vmuls``/``vadds``.

``varange dst, offset, e {start, step}`` counts along the one dim of ``dst`` whose size is not 1 (flat in UB)::

    vci   dst, first = offset + k          # k: position of the instruction's first element in the region
    vmuls dst, dst, step                   # when step != 1
    vadds dst, dst, start                  # when start != 0 (with step 1, start folds into vci's first value)

Every value ``start + step·(offset + i)`` and every intermediate is exact: ``hfusion-auto-schedule`` lowers an
arange only when its start and step are integers and ``|start| + |step|·(n − 1)`` is exactly representable in its
dtype (kernel_info). The vector unit has no i64 (CANN-INI): an i64 arange is a CodegenError.
"""

from __future__ import annotations

from simulator.expr import Imm
from simulator.isa.index import VCI_DTYPES

from .vector import _fold, region
from .vector_ops import _dtype, _operand, _ub, barrier


def emit_varange(L, op) -> None:
    dst = _ub(L, op, op.buffers[0])
    dtype = _dtype(op, dst.type, VCI_DTYPES)
    ext = [L.index(v) for v in op.extents()]
    caps = list(dst.type.static_shape())
    offset = L.index(op.offset())
    start, step = op.attributes["start"], op.attributes["step"]
    is_float = dtype.startswith("f")
    num = (lambda x: float(x)) if is_float else (lambda x: int(x))
    base = dst.addr
    first_extra = start if step == 1 else 0

    def vci(addrs, repeat, mask, reps):
        first = _fold(offset + (addrs[0] - base) // dst.es + first_extra)
        L.b.vci(dtype, _fold(addrs[0]), first, repeat=_fold(repeat), mask=_fold(mask), dst_rep=reps[0])

    ops = [_operand(dst)]
    region(L, vci, ops, ext, caps)
    for form, value, needed in (("muls", step, step != 1), ("adds", start, step != 1 and start != 0)):
        if not needed:
            continue

        def emit(addrs, repeat, mask, reps, form=form, value=value):
            getattr(L.b, "v" + form)(dtype, _fold(addrs[0]), _fold(addrs[0]), Imm(num(value)), repeat=_fold(repeat),
                                     mask=_fold(mask), src_rep=reps[0], dst_rep=reps[0])

        barrier(L)
        region(L, emit, ops, ext, caps)
