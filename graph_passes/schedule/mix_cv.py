"""The schedule of a MIX_CV kernel (a matmul and its elementwise epilogue, ``hfusion-fuse-mix-cv``; docs/cube.md,
*Cube–vector fusion*).

The kernel is cut as ``hivm-split-mix-kernel`` cuts it (:func:`split_mix_kernel`): the **cube part** is the matmul
alone, writing the GM workspace (the ``workspace_args`` argument), and the **epilogue part** is the epilogue
reading the workspace where it read the product. Both keep every argument of the kernel, in order, so the two
programs of the mix launch take the same parameters.

- The cube part gets the SINGLE_CUBE schedule (schedule/cube.py: tile by wave count, K steps, ping-pong buffers);
  its tiles are the epilogue's work: a group's vector cores take the tiles their cube core computes, in its order.
- The cube drains a tile in ``acc_parts`` column parts of ``W = base_n / acc_parts``; the vector cores take each part
  as it is drained. Each part's rows are halved between the group's two vector cores (sub-block ``sb`` takes rows
  ``[sb·⌈base_m/2⌉, …)``), and a half is walked in chunks of ``rows`` × ``W`` elements, the largest that fit UB
  with the epilogue's buffers at the multi-buffer depth (``epilogue_tile``).

The epilogue's schedule is an ordinary ``#hfusion.schedule`` over the epilogue part (its buffer plan, copies, the
tile ``[rows, W]``), recorded as the kernel's ``epilogue_schedule``; the cube's is its ``schedule``; the
``tiling`` is the cube's (the launch's block dim is the number of groups).
"""

from __future__ import annotations

from dataclasses import replace

from ..analysis.fusion_kind import FusionKind
from ..dialects.func import FuncOp, ReturnOp
from ..dialects.hivm_cube import ACCUMULATOR
from ..dialects.schedule_attrs import CubeBufferDecl, CubeSchedule
from ..ir.core import Operation
from ..dialects.tensor import EmptyOp
from ..ir.sizes import as_expr
from ..ir.types import TensorType
from .buffers import plan_buffers
from .cube import FRACTAL, ITEMSIZE, CubeKernel
from .mix_cv_estimate import epilogue_time, pipelining_pays
from .kernel_info import Unsupported, analyze_kernel
from .record import vector_schedule
from .tiling import Schedule


def workspace_index(func: Operation) -> int:
    ws = list(func.attributes.get("workspace_args") or [])
    if len(ws) != 1:
        raise Unsupported("func.func", f"a MIX_CV kernel has one workspace argument, @{func.sym_name} has {len(ws)}")
    return ws[0]


def ring_rows(schedule, block_dim: int) -> int:
    """Rows of a ring workspace: ``ws_slots`` slots of ``base_m`` rows per group of the launch."""
    return block_dim * schedule.ws_slots * schedule.base_m


def use_ring_workspace(module: Operation, func: Operation, schedule, block_dim: int) -> None:
    """Give MIX_CV kernel ``func`` a ring workspace of ``ring_rows`` × (``base_n / acc_parts``) accumulator elements
    (schedule ``ws_slots``): its workspace argument and the host's ``tensor.empty`` passed to it at every call take
    the ring's type."""
    ws = workspace_index(func)
    arg = func.body.args[ws]
    ring = TensorType((ring_rows(schedule, block_dim), schedule.base_n // schedule.acc_parts), arg.type.dtype)
    arg.type = ring
    func.set_function_type()
    for host in module.functions:
        for call in [op for op in host.walk() if op.name == "func.call" and op.attributes["callee"] == func.sym_name]:
            old = call.operands[ws]
            empty = EmptyOp([], [ring], {}, [], call.loc)
            call.parent.insert_before(call, empty)
            call.set_operand(ws, empty.result)
            if not old.uses and getattr(old, "op", None) is not None and old.op.name == "tensor.empty":
                old.op.erase()  # the product-shaped allocation no call reads any more


def split_mix_kernel(func: Operation) -> tuple[Operation, Operation, list[int]]:
    """(cube part, epilogue part, the position in ``func``'s arguments of each of the epilogue part's) of MIX_CV
    kernel ``func``: detached functions. The cube part takes ``func``'s arguments; the epilogue part those its ops
    read or write — the workspace where they read the product — for the analysis of its domain (the lowering gives
    its HIVM function every argument back)."""
    ws = workspace_index(func)
    ops = [op for op in func.body.ops if op.name != "func.return"]
    mm = ops[0]
    if mm.name != "hfusion.matmul":
        raise Unsupported(mm.name, "a MIX_CV kernel starts with its hfusion.matmul")
    args = list(func.body.args)
    types = [mm.result.type if i == ws else a.type for i, a in enumerate(args)]  # a ring workspace: the product
    attrs = {k: v for k, v in func.attributes.items()
             if k not in ("sym_name", "function_type", "schedule", "epilogue_schedule", "tiling", "workspace_args",
                          "output_args", "fusion_kind")}  # fmt: skip
    cube = FuncOp.build(f"{func.sym_name}_aic", types, [mm.result.type],
                        [a.name_hint for a in args], **attrs, fusion_kind=FusionKind.SINGLE_CUBE.name,
                        output_args=[ws])
    mapping = dict(zip(args, cube.body.args))
    clone = mm.clone(mapping)
    cube.body.append(clone)
    cube.body.append(ReturnOp([clone.result], [], {}, [], func.loc))
    ret = func.body.ops[-1]
    outs = list(func.attributes["output_args"])
    read = {id(v) for op in ops[1:] for v in op.operands} | {id(mm.result)}
    positions = [i for i, a in enumerate(args) if i == ws or i in outs or id(a) in read]
    kept = [args[i] for i in positions]
    epi = FuncOp.build(f"{func.sym_name}_aiv", [types[i] for i in positions], [v.type for v in ret.operands],
                       [a.name_hint for a in kept], **attrs, fusion_kind=FusionKind.ANY_PB.name,
                       output_args=[positions.index(i) for i in outs])
    mapping = dict(zip(kept, epi.body.args))
    mapping[mm.result] = epi.body.args[positions.index(ws)]
    for op in ops[1:]:
        epi.body.append(op.clone(mapping))
    epi.body.append(ReturnOp([mapping[v] for v in ret.operands], [], {}, [], ret.loc))
    for f in (cube, epi):
        f.loc = func.loc
    return cube, epi, positions


def epilogue_tile(info, base_m: int, base_n: int, target, multi_buffer: int) -> list[int]:
    """``[rows, base_n]`` (``base_n``: the columns of one drained part): the most rows of half a tile whose buffers
    (at ``multi_buffer`` copies each loaded or stored one) and scratch fit UB; :class:`Unsupported` when not one row
    does."""
    plan = plan_buffers(info, False)
    half = (base_m + 1) // 2
    fits = lambda r: plan.ub_bytes([r, base_n], target.ub_align, multi_buffer) <= target.ub_bytes  # noqa: E731
    if not fits(1):
        raise Unsupported("hfusion.matmul", f"one row of {base_n} epilogue elements does not fit UB "
                                            f"({plan.ub_bytes([1, base_n], target.ub_align, multi_buffer)} B)")
    lo, hi = 1, half
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
    return [lo, base_n]


def epilogue_schedule(epi: Operation, sizes, target, base_m: int, base_n: int, multi_buffer: int):
    """(analysis of the epilogue part, its ``#hfusion.schedule``) for drained parts of ``base_m`` × ``base_n``."""
    info = analyze_kernel(epi, sizes, target)
    if info.rank != 2 or info.reduce_dims:
        raise Unsupported("hfusion.matmul", f"the epilogue's domain is rank {info.rank} with reduced dims "
                                            f"{list(info.reduce_dims)}: a MIX_CV epilogue is elementwise over the tile")
    tile = epilogue_tile(info, base_m, base_n, target, multi_buffer)
    plan = plan_buffers(info, False)
    sched = Schedule(tile, False, plan, plan.ub_bytes(tile, target.ub_align, multi_buffer), {},
                     scratch_bytes=plan.scratch_bytes(tile, target.ub_align), serial_dims=[])
    per_tile = {"tiles0": 1, "tiles1": 1}  # every input is loaded per tile: buffer_copies gives it the depth
    return info, vector_schedule(info, sched, multi_buffer, per_tile)


WS_SLOTS = 2  # slots of a pipelined MIX_CV kernel's ring workspace per group: the cube fills one while the vector
#               cores read the other
PIECE_COLS = 64  # columns of one cv-pipelined piece (measurements: docs/cube.md, *cv-pipelining*)
PIECE_L1_K = 256  # a piece's L1 K step at most: its last step's mmads, which follow its last box, are short
A_STEPS = 4  # L1 boxes of the resident A rows at most (one per K step, each a copy with its MTE2 -> MTE1 event id)


def pipelined_schedule(ck: CubeKernel, schedule: CubeSchedule, target, epi: Operation, sizes) -> CubeSchedule:
    """cv-pipelining of a MIX_CV kernel's cube part: the tile's accumulator is cut into pieces of
    :data:`PIECE_COLS` columns, each a whole K loop of its own (``resident_a``: piece 0 loads the tile's A rows, one
    L1 box per K step, ``a_l1`` having a copy per step, and the later pieces reuse them while their B columns stream
    through two L1 boxes), so the first piece is drained and handed to the vector cores after A and one piece of B
    are loaded instead of the whole of B; the ring workspace has :data:`WS_SLOTS` slots per group. The schedule
    unchanged when the tile has one piece, K is symbolic, the A boxes (at most :data:`A_STEPS`) and two B boxes
    do not fit L1, or the estimate says the group would not end sooner (schedule/mix_cv_estimate.py)."""
    k = as_expr(ck.k)
    pieces = schedule.base_n // PIECE_COLS
    if not k.is_Integer or pieces < 2 or schedule.base_n % PIECE_COLS or schedule.k_chunk:
        return schedule
    es, k_total = ITEMSIZE[ck.dtype], int(k)
    kp = -(-k_total // (32 // es)) * (32 // es)  # K in whole fractal columns
    width, bm, bk = PIECE_COLS, schedule.base_m, schedule.base_k
    l1k = max(bk, min(schedule.l1_k, PIECE_L1_K))
    if -(-kp // l1k) > A_STEPS:  # fewer, longer steps: one A box (and event id) per step
        l1k = -(-kp // A_STEPS // bk) * bk
    steps = -(-kp // l1k)
    if steps > A_STEPS or bm * steps * l1k * es + 2 * width * l1k * es > target.l1_bytes:
        return schedule
    em = min(bm, int(as_expr(ck.m)))
    info = analyze_kernel(epi, sizes, target)
    vector = epilogue_time(info, plan_buffers(info, False), (em + 1) // 2, target)
    if not pipelining_pays(em, k_total, es, 32 // es, schedule.base_n, schedule.acc_parts, schedule.l1_k, pieces,
                           vector, target):
        return schedule
    dt = ck.dtype
    buffers = (CubeBufferDecl("a_l1", "l1", dt, (l1k, bm) if ck.transpose_a else (bm, l1k), steps),
               CubeBufferDecl("b_l1", "l1", dt, (width, l1k) if ck.transpose_b else (l1k, width), 2),
               CubeBufferDecl("a_l0", "l0a", dt, (bm, bk), 2), CubeBufferDecl("b_l0", "l0b", dt, (bk, width), 2),
               CubeBufferDecl("c_l0", "l0c", ACCUMULATOR[dt], (bm, width), 2))
    assert width % FRACTAL == 0
    return replace(schedule, acc_parts=pieces, buffers=buffers, resident_a=True, ws_slots=WS_SLOTS, l1_k=l1k)
