"""``check_model``: eager vs ``torch.compile(backend="npu")``, with per-dtype tolerances, optional backward and
dynamic shapes. Tolerances follow torch_npu's accuracy checker: fp32 rtol 1.3e-6 / atol 1e-5; fp16 1e-3 and bf16
1.6e-2 for both rtol and atol; integer and bool results must be equal.
"""

from __future__ import annotations

import torch
import torch._dynamo

TOLERANCES = {
    torch.float32: (1.3e-6, 1e-5),
    torch.float16: (1e-3, 1e-3),
    torch.bfloat16: (1.6e-2, 1.6e-2),
}


def tolerance(dtype: torch.dtype) -> tuple[float, float]:
    return TOLERANCES.get(dtype, (0.0, 0.0))


def _clone(x):
    if isinstance(x, torch.Tensor):
        c = x.detach().clone()
        return c.requires_grad_(x.requires_grad)
    return x


def _flatten(out) -> list:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _flatten(o)]
    return []


def assert_close(actual, expected, what: str, scale: float = 1.0) -> None:
    """Compare with the tolerance of ``expected``'s dtype (``scale`` widens it for a documented reason)."""
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != eager {expected.dtype}"
    rtol, atol = tolerance(expected.dtype)
    torch.testing.assert_close(actual, expected, rtol=rtol * scale, atol=atol * scale, equal_nan=True,
                               msg=lambda m: f"{what}: {m}")  # fmt: skip


def check_model(fn, inputs, *, backward: bool = False, dynamic: bool = False, options: dict | None = None,
                backend: str = "npu", tol_scale: float = 1.0, seed: int = 0):  # fmt: skip
    """Run ``fn(*inputs)`` eagerly and compiled; compare outputs and (``backward``) the gradients of every input
    that requires grad, using random cotangents. Returns the compiled outputs."""
    torch._dynamo.reset()
    eager_in = [_clone(x) for x in inputs]
    comp_in = [_clone(x) for x in inputs]
    compiled = torch.compile(fn, backend=backend, dynamic=dynamic, options=options)
    expected = fn(*eager_in)
    actual = compiled(*comp_in)
    exp_flat, act_flat = _flatten(expected), _flatten(actual)
    assert len(exp_flat) == len(act_flat), f"{len(act_flat)} outputs, eager has {len(exp_flat)}"
    for i, (a, e) in enumerate(zip(act_flat, exp_flat)):
        assert a.shape == e.shape, f"output {i}: shape {tuple(a.shape)} != eager {tuple(e.shape)}"
        assert_close(a.detach(), e.detach(), f"output {i}", tol_scale)
    if backward:
        _check_backward(eager_in, comp_in, exp_flat, act_flat, tol_scale, seed)
    torch._dynamo.reset()
    return actual


def _check_backward(eager_in, comp_in, exp_flat, act_flat, tol_scale, seed) -> None:
    wrt = [i for i, x in enumerate(eager_in) if isinstance(x, torch.Tensor) and x.requires_grad]
    outs = [i for i, e in enumerate(exp_flat) if e.requires_grad]
    assert wrt and outs, "backward=True needs inputs that require grad and outputs that depend on them"
    gen = torch.Generator().manual_seed(seed)
    cotangents = [torch.randn(exp_flat[i].shape, generator=gen).to(exp_flat[i].dtype) for i in outs]
    ge = torch.autograd.grad([exp_flat[i] for i in outs], [eager_in[i] for i in wrt], cotangents, allow_unused=True)
    ga = torch.autograd.grad([act_flat[i] for i in outs], [comp_in[i] for i in wrt], cotangents, allow_unused=True)
    for k, (a, e) in enumerate(zip(ga, ge)):
        assert (a is None) == (e is None), f"grad of input {wrt[k]}: compiled {a is None=}, eager {e is None=}"
        if e is not None:
            assert_close(a, e, f"grad of input {wrt[k]}", tol_scale)


def aten_graph(fn, inputs, dynamic: bool | None = None):
    """The inference aten graph AOTAutograd hands the backend for ``fn(*inputs)`` (our decompositions)."""
    from torch._dynamo.backends.common import aot_autograd

    from torch_npu_backend.decompositions import decomposition_table

    graphs = []

    def grab(gm, example_inputs):
        graphs.append(gm)
        return gm

    torch._dynamo.reset()
    with torch.no_grad():
        backend = aot_autograd(fw_compiler=grab, decompositions=decomposition_table())
        torch.compile(fn, backend=backend, dynamic=dynamic)(*inputs)
    torch._dynamo.reset()
    assert len(graphs) == 1, f"expected one graph, got {len(graphs)}"
    return graphs[0]


def _split_pipeline(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur] if cur else out


def check_stages(fn, inputs, options: dict | None = None, tol_scale: float = 1.0) -> list[str]:
    """Semantic preservation: the reference interpreter after import and after every pass of ``hfusion_pipeline``
    and after auto-schedule, then the simulator after codegen, each against eager; fails naming the first stage
    whose result differs. Returns the stage names checked."""
    from graph_passes.passes import PassContext, PassManager
    from graph_passes.pipelines import HFUSION_SCHEDULE, hfusion_pipeline, stage_values
    from torch_npu_backend import NpuOptions, compile_graph
    from torch_npu_backend.importer import import_graph
    from torch_npu_backend.interpreter import interpret

    inputs = [x.detach() if isinstance(x, torch.Tensor) else x for x in inputs]
    opts = NpuOptions.from_dict(options)
    gm = aten_graph(fn, inputs)
    with torch.no_grad():
        expected = _flatten(fn(*inputs))
    result = import_graph(gm, target=opts.chip)
    module, stages = result.module, []

    def compare(stage, outs):
        stages.append(stage)
        for i, (a, e) in enumerate(zip(outs, expected)):
            assert a.shape == e.shape, f"stage '{stage}' changed the result: output {i} shape {tuple(a.shape)}"
            assert_close(a, e, f"stage '{stage}' changed the result (first differing stage): output {i}", tol_scale)

    def run_interpreter(stage):
        res = interpret(module, inputs)
        compare(stage, [res[s.index] for s in result.outputs if s.kind == "tensor"])

    run_interpreter("import")
    ctx = PassContext()
    popts = opts.pipeline_options()
    for p in _split_pipeline(hfusion_pipeline(popts)) + [s % stage_values(popts) for s in HFUSION_SCHEDULE]:
        PassManager.from_pipeline(p, verify=True).run(module, ctx)
        run_interpreter(p)
    graph = compile_graph(gm, inputs, opts)
    compare("codegen (simulator)", [t for t in graph(*inputs) if isinstance(t, torch.Tensor)])
    return stages


def buffer_tag_error_of(fn, *inputs) -> str:
    """Compile and run ``fn`` expecting the simulator's BufferTagError (the runtime names the launch and chains it):
    its one-line message."""
    import pytest

    from simulator.errors import BufferTagError

    torch._dynamo.reset()
    with pytest.raises(Exception) as err:
        torch.compile(fn, backend="npu")(*inputs)
    torch._dynamo.reset()
    e = err.value
    while e is not None and not isinstance(e, BufferTagError):
        e = e.__cause__
    assert e is not None, f"not a BufferTagError: {err.value!r}"
    msg = str(e)
    assert "\n" not in msg
    return msg


def simulated(fn, *args):
    """``fn(*args)`` compiled afresh with ``backend="npu"``, asserting every kernel ran on the simulator (none
    interpreted, none on the host)."""
    import torch_npu_backend

    torch._dynamo.reset()
    with torch_npu_backend.profile(trace=False) as prof:
        out = torch.compile(fn, backend="npu")(*args)
    assert prof.records and not prof.interpreted() and not prof.fallbacks(), \
        [(r.kernel, r.reason) for r in prof.interpreted() + prof.fallbacks()]
    return out


def seeded_randn(*shape, dtype, seed=0):
    """Standard normal values of ``shape`` from their own seeded generator, cast to ``dtype``."""
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def profiled(fn, *inputs, **options):
    """``fn(*inputs)`` compiled afresh with ``backend="npu"`` and ``options``, under a profile: (outputs, profile);
    asserts no kernel was interpreted."""
    import torch_npu_backend

    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="npu", options=options)
    with torch_npu_backend.profile() as prof:
        out = compiled(*inputs)
    assert not prof.interpreted(), [r.reason for r in prof.interpreted()]
    return out, prof
