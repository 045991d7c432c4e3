"""The dynamo backends ``npu`` and ``npu_sim``: AOTAutograd with our decompositions, each graph → compile_graph.

Registration: both names are declared as ``torch_dynamo_backends`` entry points (setup.cfg). Importing this package
also registers them with ``torch._dynamo.register_backend`` (for source checkouts without the entry points):
``npu_sim`` always, ``npu`` only when no other package (torch_npu/TorchAir, Intel's NPU library) owns the name —
otherwise a warning says why only ``npu_sim`` is available.
"""

from __future__ import annotations

import functools
import warnings

from .modes import options_for_mode
from .options import NpuOptions
from .stats import COUNTERS

_ENTRY_POINT_GROUP = "torch_dynamo_backends"
GRAPH_OBSERVERS: list = []
"""Callables ``(gm, compiled_graph, kind)`` told of every graph the backend compiles (the coverage report's hook)."""


def npu_backend(gm, example_inputs, options: dict | None = None, mode: str | None = None):
    """``torch.compile(model, backend="npu", options={...})``: forward and backward through AOTAutograd.
    ``mode=`` (torch passes it instead of ``options``) is read by :func:`modes.options_for_mode`."""
    from torch._dynamo.backends.common import aot_autograd
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from .addcdiv_regroup import regroup_addcdiv
    from .decompositions import decomposition_table

    mapped = options_for_mode(mode)
    if mapped and (options is None or isinstance(options, dict)):
        options = {**mapped, **(options or {})}  # an option given by name wins over the mode's
    opts = NpuOptions.from_dict(options)
    COUNTERS["backend_calls"] += 1
    COUNTERS["addcdiv_regrouped"] += regroup_addcdiv(gm)
    fw = functools.partial(_compile, options=opts, kind="forward")
    bw = functools.partial(_compile, options=opts, kind="backward")
    inference = functools.partial(_compile, options=opts, kind="inference")
    compiler = aot_autograd(fw_compiler=fw, bw_compiler=bw, inference_compiler=inference,
                            decompositions=decomposition_table())  # fmt: skip
    # Note: scaled_dot_product_attention traces as its math composition (matmuls, softmax, masks) with autograd's
    # formulas for those ops; on CPU it would otherwise pick the fused flash kernel, whose backward op has no
    # decomposition (a model using the default attention could run inference but not train).
    with sdpa_kernel([SDPBackend.MATH]):
        return compiler(gm, example_inputs)


def _compile(gm, example_inputs, *, options, kind):
    """AOTAutograd's compiler hook; the result takes boxed arguments (one list), as AOTAutograd prefers."""
    from torch._functorch.aot_autograd import make_boxed_func

    from .compile import compile_graph

    graph = compile_graph(gm, example_inputs, options, kind=kind)
    for observe in list(GRAPH_OBSERVERS):
        observe(gm, graph, kind)
    return make_boxed_func(graph)


def npu_sim_backend(gm, example_inputs, options: dict | None = None, mode: str | None = None):
    """``backend="npu_sim"``: the same backend under a name no other package claims."""
    return npu_backend(gm, example_inputs, options, mode)


def _entry_points(name: str) -> list[str]:
    """The ``module:function`` values of every installed ``torch_dynamo_backends`` entry point called ``name``."""
    from importlib.metadata import entry_points

    return [ep.value.replace(" ", "") for ep in entry_points(group=_ENTRY_POINT_GROUP) if ep.name == name]


def register_backends() -> list[str]:
    """Make ``npu_sim`` (always) and ``npu`` (when free) usable with dynamo; returns the names now usable.

    Note: a name whose entry point is ours is left to dynamo, which loads entry points lazily and asserts on a name
    registered twice; ``register_backend`` is called only for names without any entry point (a source checkout).
    """
    from torch._dynamo.backends.registry import _COMPILER_FNS, register_backend

    available = []
    for name, fn in (("npu_sim", npu_sim_backend), ("npu", npu_backend)):
        ours = f"{__name__}:{fn.__name__}"
        current = _COMPILER_FNS.get(name)
        eps = _entry_points(name)
        owner = None
        if current is not None and current is not fn:
            owner = f"{getattr(current, '__module__', '?')}.{getattr(current, '__name__', '?')}"
        elif current is None and any(v != ours for v in eps):
            owner = next(v for v in eps if v != ours)
        if owner is not None:
            warnings.warn(f"dynamo backend name {name!r} is already taken by {owner}; use backend='npu_sim'",
                          stacklevel=2)  # fmt: skip
            continue
        if current is None and not eps:
            register_backend(fn, name=name)
        available.append(name)
    return available
