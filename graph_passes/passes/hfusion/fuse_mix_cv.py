"""``hfusion-fuse-mix-cv``: a SINGLE_CUBE matmul kernel and the elementwise kernel that is its product's only user
become one MIX_CV kernel (docs/cube.md, *Cube–vector fusion*; after AscendNPU-IR's MIX_CV fusion kind, whose
kernels ``hivm-split-mix-kernel`` cuts into an AIC and an AIV function)::

    %p = func.call %x, %w, %ws {callee = "k_cube"}          // SINGLE_CUBE: %p = hfusion.matmul %x, %w
    %y = func.call %b, %p, %o {callee = "k_epilogue"}       // ANY_PB: bias add, gelu, cast …
  →
    %y = func.call %x, %w, %ws, %b, %o {callee = "k_cube"}  // MIX_CV {workspace_args = [2]}:
                                                            //   %p = hfusion.matmul %x, %w; the epilogue of %p

The product's out-parameter (the host's ``tensor.empty``) stays an argument, marked ``workspace_args``: the GM
workspace, allocated per launch, the cube writes each tile to and the vector cores read it back from. The kernel
computes what the two did (the body is the matmul then the epilogue), so the interpreter runs it unchanged.

Joined only when the lowering covers it: a rank-2 ``hfusion.matmul`` of kernel arguments with static sizes, its
product used by that one call only, an epilogue kernel of elementwise ops and broadcasts (``is_mix_cv``) whose
values are the product's shape or rows broadcast to it, and rows of whole 32-B GM blocks in the workspace and in
every output (the two vector cores of a group each store half of a tile's rows; a block two cores wrote would be
a race). Anything else stays two kernels (counter ``mix-cv-skipped``; ``_join`` returns the reason).

Runs after ``hfusion-fuse-ops`` and before flattening (the epilogue keeps the product's 2-D domain). Option
``cv_fusion`` of the backend (README) turns it off. Counters: ``mix-cv-fused``, ``mix-cv-skipped``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...analysis.fusion_kind import FusionKind, is_mix_cv
from ...dialects.func import CallOp, FuncOp, ReturnOp
from ...ir.core import Operation
from ...ir.types import DTYPE_BYTES, TensorType
from ...schedule.cube import analyze_cube_kernel, work_item
from ...schedule.kernel_info import Unsupported
from .. import ModulePass, PassContext, register_pass

GM_BLOCK = 32  # bytes: the DMA's unit and the hazard checker's GM granule (docs/cube.md, *Work items*)
EPILOGUE_KINDS = ("PURE_ELEMWISE", "ANY_PB")


@register_pass
@dataclass(frozen=True)
class FuseMixCV(ModulePass):
    """Join a matmul kernel and its elementwise epilogue kernel into one MIX_CV kernel."""

    name: ClassVar[str] = "hfusion-fuse-mix-cv"

    def run(self, module: Operation, ctx: PassContext) -> None:
        ctx.count("mix-cv-fused", 0)
        ctx.count("mix-cv-skipped", 0)
        for host in [f for f in module.functions if not f.attributes.get("kernel")]:
            for call in [op for op in host.walk() if op.name == "func.call"]:
                if call.parent is None:
                    continue  # erased by an earlier join
                cube = module.lookup(call.attributes["callee"])
                if cube is None or cube.attributes.get("fusion_kind") != "SINGLE_CUBE":
                    continue
                reason = _join(module, call, cube)
                if reason is None:
                    ctx.count("mix-cv-fused")
                else:
                    ctx.count("mix-cv-skipped")


def _epilogue_call(call: Operation, module: Operation):
    """The one call reading the product, when it is the product's only user, and its kernel."""
    if len(call.results) != 1:
        return None, None, "the kernel has several results"
    uses = list(call.result.uses)
    if len(uses) != 1 or uses[0].op.name != "func.call" or uses[0].op.parent is not call.parent:
        return None, None, "the product is not read by exactly one kernel call (in the same block)"
    user = uses[0].op
    kernel = module.lookup(user.attributes["callee"])
    if kernel is None or kernel.attributes.get("fusion_kind") not in EPILOGUE_KINDS:
        kind = kernel.attributes.get("fusion_kind") if kernel is not None else None
        return None, None, f"the product's user is a {kind} kernel, not an elementwise epilogue"
    if sum(1 for v in user.operands if v is call.result) != 1:
        return None, None, "the epilogue takes the product twice"
    return user, kernel, None


def _row_blocks(t) -> bool:
    return t.shape[-1] * DTYPE_BYTES[t.dtype] % GM_BLOCK == 0


def _join(module: Operation, call: Operation, cube: Operation) -> str | None:
    """Replace ``call`` and its epilogue's call by one call of a MIX_CV kernel; the reason when it cannot."""
    try:
        ck = analyze_cube_kernel(cube)
    except Unsupported as e:
        return e.reason
    if ck.op.name != "hfusion.matmul" or ck.k_chunk:
        return "only rank-2 hfusion.matmul products are fused (no batch, no split-K)"
    types = [a.type for a in cube.body.args if isinstance(a.type, TensorType)]
    if not all(t.is_static for t in types):
        return "symbolic sizes are not fused yet"
    if work_item(ck) != "tile":
        return "the product's rows are not whole 32-B blocks (band work items)"
    user, epi, why = _epilogue_call(call, module)
    if why:
        return why
    epi_ops = [op for op in epi.body.ops if op.name != "func.return"]
    r_index = next(i for i, v in enumerate(user.operands) if v is call.result)
    r_arg = epi.body.args[r_index]
    prod_t = ck.op.result.type
    if tuple(r_arg.type.shape) != tuple(prod_t.shape) or r_arg.type.dtype != prod_t.dtype:
        return f"the epilogue reads the product as {r_arg.type}, not {prod_t}"
    outs = list(epi.attributes.get("output_args") or [])
    for i in outs:
        t = epi.body.args[i].type
        if tuple(t.shape) != tuple(prod_t.shape):
            return f"the epilogue writes {t}, not the product's shape {prod_t}"
        if not _row_blocks(t):
            return f"the epilogue's output rows ({t}) are not whole 32-B blocks"
    if any(isinstance(v.type, TensorType) and v.type.dtype == "i1" for op in epi_ops for v in op.results):
        return "the epilogue computes bools"
    mixed = _build(module, cube, epi, r_index)
    if not is_mix_cv([op for op in mixed.body.ops if op.name != "func.return"]):
        mixed.erase()
        return "the epilogue holds ops other than elementwise maps and row broadcasts"
    host_block = call.parent
    operands = list(call.operands) + [v for i, v in enumerate(user.operands) if i != r_index]
    new_call = CallOp(operands, [r.type for r in user.results], {"callee": mixed.sym_name}, [], user.loc)
    host_block.insert_before(user, new_call)
    for old, new in zip(user.results, new_call.results):
        new.name_hint = old.name_hint
    user.replace_with(new_call.results)
    call.erase()
    for f in (cube, epi):
        if not _called(module, f.sym_name):
            f.erase()
    return None


def _build(module: Operation, cube: Operation, epi: Operation, r_index: int) -> Operation:
    """The MIX_CV kernel: the cube kernel's arguments, then the epilogue's but the product; the matmul, then the
    epilogue's ops on its result. Inserted after the epilogue kernel, named ``<epilogue>_mix``."""
    c_args, e_args = list(cube.body.args), list(epi.body.args)
    kept = [a for i, a in enumerate(e_args) if i != r_index]
    types = [a.type for a in c_args + kept]
    names = [a.name_hint for a in c_args] + [a.name_hint for a in kept]
    e_outs = list(epi.attributes.get("output_args") or [])
    position = {id(a): len(c_args) + j for j, a in enumerate(kept)}
    out_types = [e_args[i].type for i in e_outs]
    ws = list(cube.attributes.get("output_args") or [])
    mixed = FuncOp.build(f"{epi.sym_name}_mix", types, out_types, names, kernel=True,
                         fusion_kind=FusionKind.MIX_CV.name, output_args=[position[id(e_args[i])] for i in e_outs],
                         workspace_args=ws)  # fmt: skip
    mixed.loc = epi.loc
    body = mixed.body
    mapping = dict(zip(c_args, body.args[: len(c_args)]))
    mapping.update({a: body.args[position[id(a)]] for a in kept})
    for op in cube.body.ops:
        if op.name != "func.return":
            body.append(op.clone(mapping))
    product = mapping[cube.body.ops[-1].operands[0]]
    mapping[e_args[r_index]] = product
    for op in epi.body.ops:
        if op.name != "func.return":
            body.append(op.clone(mapping))
    ret = epi.body.ops[-1]
    body.append(ReturnOp([mapping[v] for v in ret.operands], [], {}, [], ret.loc))
    module.body.insert_after(epi, mixed)
    return mixed


def _called(module: Operation, name: str) -> bool:
    return any(op.name in ("func.call", "hivm.launch") and op.attributes.get("callee") == name
               for f in module.functions for op in f.walk())
