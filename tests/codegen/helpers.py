"""Shared helpers of the codegen tests: run the real pipeline, compile, run, and break a kernel's sync."""

from __future__ import annotations

import numpy as np

from codegen import compile_kernel, compile_module
from graph_passes.ir.parser import parse_module
from graph_passes.passes import PASS_REGISTRY, PassManager


def lower(text: str, multi_buffer: int = 2, max_tile_elems: int = 0, row_pipeline: bool = True,
          split_reductions: bool = False, cv_pipelining: bool = True):
    """Tensor-level module text → synchronised HIVM through ``graph_passes.pipelines.default_pipeline``.

    ``split_reductions`` is off by default: these tests lower one kernel's schedule, and ``hfusion-split-reductions``
    would make two kernels of a reduction to fewer rows than cores (tests/backend/test_split_reductions.py).

    Note: while ``hivm-infer-core-type`` / ``hivm-infer-mem-scope`` are not registered yet, their effect on vector
    kernels (core_type = AIV, every alloc in UB) is applied here in their place, so the rest of the real pipeline
    still runs. Remove the shim once both passes land.
    """
    from graph_passes.pipelines import PipelineOptions, default_pipeline

    module = parse_module(text)
    pipeline = default_pipeline(PipelineOptions(multi_buffer=multi_buffer, max_tile_elems=max_tile_elems,
                                                row_pipeline=row_pipeline, split_reductions=split_reductions,
                                                cv_pipelining=cv_pipelining))
    missing = [p for p in ("hivm-infer-core-type", "hivm-infer-mem-scope") if p not in PASS_REGISTRY]
    if not missing:
        PassManager.from_pipeline(pipeline, verify=True).run(module)
        return module
    head, tail = pipeline.split("hivm-infer-core-type,hivm-infer-mem-scope,")
    PassManager.from_pipeline(head.rstrip(","), verify=True).run(module)
    for op in module.walk():
        if op.name == "hivm.alloc" and op.result.type.scope is None:
            op.result.type = op.result.type.with_scope("ub")
        if op.name == "func.func" and op.attributes.get("kernel") and "hivm.unsupported" not in op.attributes:
            op.attributes.setdefault("core_type", "AIV")
    PassManager.from_pipeline(tail, verify=True).run(module)
    return module


def only_kernel(module):
    cks = compile_module(module)
    assert len(cks) == 1, f"expected one kernel, got {sorted(cks)}"
    return next(iter(cks.values()))


def op_levels(ck, op: str) -> int:
    """Dependent steps of the kernel's ``op`` (e.g. ``hivm.vreduce``): its runs of vector instructions between
    ``pipe_barrier V``s (none may sit in a program loop: count its iterations instead)."""
    levels, pending, inside = 0, False, False
    for line in ck.assembly().splitlines():
        s = line.strip()
        if s.startswith("# "):
            inside = s.startswith("# " + op)
        elif inside:
            assert not s.startswith("loop"), f"a step of {op} in a program loop: count its iterations instead"
            if s == "pipe_barrier barrier_pipe=V":
                levels, pending = levels + pending, False
            elif s.startswith("v"):
                pending = True
    return levels + pending


def run_kernel(ck, inputs, bindings, **kw):
    """Run ``ck`` on ``inputs`` (the non-output arguments), zero-filled outputs; returns (outputs, result)."""
    arrays, it = [], iter(inputs)
    for a in ck.arg_layout:
        if a.is_output:
            shape = a.evaluate_shape(ck.tiling.sizes, bindings)
            from codegen.dtypes import np_dtype

            arrays.append(np.zeros(shape, np_dtype(a.dtype)))
        else:
            arrays.append(next(it))
    return ck.run(arrays, bindings, **kw)


def recompile_without(ck, module, doomed):
    """Recompile ``ck``'s kernel with the ops ``doomed(clone)`` picks from a clone of its HIVM function erased."""
    def erase(clone):
        for op in doomed(clone):
            op.erase()
    return recompile_edited(ck, module, erase, "_nosync")


def recompile_edited(ck, module, edit, suffix: str = "_edited"):
    """Recompile ``ck``'s kernel from a clone of its HIVM function changed in place by ``edit(clone)``."""
    func = module.lookup(ck.name)
    clone = func.clone()
    edit(clone)
    module.body.insert_before(func, clone)
    clone.attributes["sym_name"] = ck.name + suffix
    try:
        return compile_kernel(clone, module)
    finally:
        clone.erase()


def drop_one_sync(ck, module, which: int = 0, src: str = "PIPE_MTE2", dst: str = "PIPE_V"):
    """Recompile ``ck``'s kernel with its ``which``-th ``hivm.wait_flag`` from ``src`` to ``dst`` removed (its
    matching set_flag stays: the flag is then never consumed, which the simulator allows at kernel end)."""
    def doomed(clone):
        waits = [op for op in clone.walk() if op.name == "hivm.wait_flag" and op.attributes["src_pipe"] == src
                 and op.attributes["dst_pipe"] == dst]
        return [waits[which]]
    return recompile_without(ck, module, doomed)


def run_host(module, kernels: dict, args: list, bindings=None, func: str = "main", results: list | None = None):
    """Run the host function with the reference interpreter, except that each ``hivm.launch`` runs the compiled
    kernel on the simulator (hazard checker on). ``results`` collects each launch's LaunchResult."""
    import torch

    from torch_npu_backend.interpreter import Interpreter

    class Host(Interpreter):
        def run_op(self, op, values):
            if op.name != "hivm.launch":
                return super().run_op(op, values)
            ck = kernels[op.attributes["callee"]]
            arrays = [v.contiguous().numpy() if v.dtype != torch.bfloat16 else v.float().numpy() for v in values]
            outs, res = ck.run(arrays, self.bindings)
            if results is not None:
                results.append(res)
            return [torch.from_numpy(np.ascontiguousarray(o)).reshape(r.shape if hasattr(r, "shape") else -1)
                    for o, r in zip(outs, [values[i] for i in ck.hivm.attributes["output_args"]])]

    interp = Host(module, bindings)
    interp.bind(module.lookup(func), args)
    return interp.call(func, args)
