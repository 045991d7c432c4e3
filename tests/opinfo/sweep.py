"""The OpInfo sweep: every OpInfo of PyTorch's ``op_db``, its sample inputs through ``torch.compile(backend="npu")``
against eager, with the OpInfo's own tolerances.

One op, one dtype, one direction (forward, or forward and backward) → one :class:`OpResult` whose ``status`` is:

- ``pass``: every sample compiled matches eager and every kernel ran on the simulator;
- ``pass (host fallback)`` / ``pass (interpreted)``: matches, but some op ran eagerly on the host or some kernel in
  the reference interpreter (``reason`` names them);
- ``mismatch``: a result differs from eager beyond the tolerance (``reason``: the first sample's message);
- ``internal error``: compiling or running raised while eager did not (``reason``: the exception);
- ``timeout``: one sample took longer than the limit;
- ``not compiled``: dynamo handed the backend no graph for any sample (a graph break ran the op eagerly);
- ``eager fails``: no sample runs in eager itself (excluded from the pass rate);
- ``unsupported dtype``: the OpInfo does not list the dtype for CPU (excluded).

Tolerances: the largest ``toleranceOverride`` among the OpInfo's decorators for the dtype (atol and rtol each the
largest over every test and device the decorators name), else
``torch.testing.assert_close``'s defaults. Each sample compiles afresh (``torch._dynamo.reset()``, static shapes),
so dynamo's recompile limit never sends a sample to eager unnoticed. Ops whose results are uninitialised memory
(``empty*``, ``new_empty*``) and ops the OpInfo marks ``skip_correctness_check_compile_vs_eager`` compare shapes,
strides and dtypes only. Random ops compare under one seed: the backend
draws them on the host with torch's generator, as eager does.

``op_db`` imports ``expecttest``, a test-only package in the ``test`` extra.
"""

from __future__ import annotations

import signal
import warnings
from dataclasses import dataclass, field

import torch
import torch._dynamo

PASS = "pass"
PASS_FALLBACK = "pass (host fallback)"
PASS_INTERPRETED = "pass (interpreted)"
MISMATCH = "mismatch"
INTERNAL = "internal error"
TIMEOUT = "timeout"
NOT_COMPILED = "not compiled"
EAGER_FAILS = "eager fails"
NO_DTYPE = "unsupported dtype"
PASSES = (PASS, PASS_FALLBACK, PASS_INTERPRETED)
RAN_IN_EAGER = PASSES + (MISMATCH, INTERNAL, TIMEOUT, NOT_COMPILED)

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def op_db() -> list:
    """PyTorch's OpInfo database (a few seconds to import, once per process; it needs ``expecttest``)."""
    from torch.testing._internal.common_methods_invocations import op_db as db

    return list(db)


def op_name(op) -> str:
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def key(name: str, dtype: str, backward: bool) -> str:
    """The expected-failure table's key: ``<op>[.<variant>]/<dtype>/<fwd|bwd>``."""
    return f"{name}/{dtype}/{'bwd' if backward else 'fwd'}"


@dataclass
class OpResult:
    op: str
    dtype: str
    backward: bool
    status: str
    reason: str = ""
    samples: int = 0  # samples that ran in eager
    fallbacks: list[str] = field(default_factory=list)  # aten ops run on the host
    interpreted: list[str] = field(default_factory=list)  # reasons kernels were interpreted
    seconds: float = 0.0

    @property
    def key(self) -> str:
        return key(self.op, self.dtype, self.backward)


class _Timeout(Exception):
    pass


def tolerance(op, dtype: torch.dtype) -> tuple[float | None, float | None]:
    """(atol, rtol): the largest ``toleranceOverride`` for ``dtype`` among the OpInfo's decorators, else (None, None)
    (assert_close's defaults)."""
    from torch.testing._internal.common_device_type import toleranceOverride

    atol = rtol = None
    for info in getattr(op, "decorators", ()) or ():
        for dec in getattr(info, "decorators", [info]):
            if isinstance(dec, toleranceOverride) and dtype in dec.d:
                t = dec.d[dtype]
                atol = t.atol if atol is None else max(atol, t.atol)
                rtol = t.rtol if rtol is None else max(rtol, t.rtol)
    return atol, rtol


def run_op(op, dtype: str = "f32", backward: bool = False, max_samples: int | None = None,
           timeout_s: int = 300) -> OpResult:  # fmt: skip
    """Run one OpInfo's samples eager and compiled; see the module docstring for the statuses."""
    import time

    import torch_npu_backend

    name = op_name(op)
    tdtype = DTYPES[dtype]
    res = OpResult(name, dtype, backward, EAGER_FAILS)
    start = time.perf_counter()
    if tdtype not in op.supported_dtypes("cpu") or (backward and not op.supports_autograd):
        res.status, res.reason = NO_DTYPE, f"{name} lists no {tdtype} on CPU" + (" with autograd" if backward else "")
        return res
    atol, rtol = tolerance(op, tdtype)
    torch.manual_seed(0)
    try:
        samples = list(op.sample_inputs("cpu", tdtype, requires_grad=backward))
    except Exception as e:  # noqa: BLE001 — the OpInfo's own sample generator
        res.reason = f"sample_inputs: {_line(e)}"
        return res
    if max_samples is not None:
        samples = samples[:max_samples]
    errors: list[tuple[str, str]] = []
    compiled_any = False
    for i, sample in enumerate(samples):
        torch.manual_seed(1234 + i)
        try:
            expected = _run(op.op, sample, backward)
        except Exception:  # noqa: BLE001 — eager rejects this sample: skipped
            continue
        res.samples += 1
        torch._dynamo.reset()
        before = torch_npu_backend.COUNTERS["graphs_compiled"]
        torch.manual_seed(1234 + i)
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(timeout_s)
        try:
            with warnings.catch_warnings(), torch_npu_backend.profile(trace=False) as prof:
                warnings.simplefilter("ignore")
                fn = torch.compile(_call(op.op), backend="npu", dynamic=False)
                actual = _run(fn, sample, backward)
        except _Timeout:
            errors.append((TIMEOUT, f"sample {i}: over {timeout_s} s"))
            continue
        except Exception as e:  # noqa: BLE001 — recorded as the op's internal error
            errors.append((INTERNAL, f"sample {i}: {_line(e)}"))
            continue
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        compiled_any |= torch_npu_backend.COUNTERS["graphs_compiled"] > before
        for r in prof.fallbacks():
            if r.kernel not in res.fallbacks:
                res.fallbacks.append(f"{r.kernel}: {r.reason}" if r.reason else r.kernel)
        for r in prof.interpreted():
            if r.reason not in res.interpreted:
                res.interpreted.append(r.reason or "?")
        try:
            _compare(actual, expected, atol, rtol, values=not _uninitialized(op))
        except Exception as e:  # noqa: BLE001 — AssertionError, or TypeError for results of different kinds
            errors.append((MISMATCH, f"sample {i}: {_line(e)}"))
    torch._dynamo.reset()
    res.fallbacks = sorted(set(res.fallbacks))
    res.interpreted = sorted(set(res.interpreted))
    res.seconds = time.perf_counter() - start
    for status in (INTERNAL, TIMEOUT, MISMATCH):
        first = next((m for s, m in errors if s == status), None)
        if first is not None:
            res.status, res.reason = status, first
            return res
    if res.samples == 0:
        res.reason = res.reason or "no sample runs in eager"
    elif not compiled_any:
        res.status, res.reason = NOT_COMPILED, "dynamo handed the backend no graph (the op ran eagerly)"
    elif res.fallbacks:
        res.status, res.reason = PASS_FALLBACK, "; ".join(res.fallbacks)
    elif res.interpreted:
        res.status, res.reason = PASS_INTERPRETED, "; ".join(res.interpreted)
    else:
        res.status = PASS
    return res


def _call(f):
    def call(*args, **kwargs):
        return f(*args, **kwargs)

    return call


def _alarm(signum, frame):
    raise _Timeout()


def _clone(x):
    if isinstance(x, torch.Tensor):
        return x.detach().clone().requires_grad_(x.requires_grad)
    if isinstance(x, (list, tuple)):
        return type(x)(_clone(v) for v in x)
    return x


def _tensors(x) -> list:
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _tensors(v)]
    if isinstance(x, dict):
        return [t for v in x.values() for t in _tensors(v)]
    return []


def _run(fn, sample, backward: bool):
    """The op's outputs on fresh copies of the sample (and, backward, the gradients of the inputs under seeded
    random output gradients)."""
    inp, args, kwargs = _clone(sample.input), _clone(sample.args), {k: _clone(v) for k, v in sample.kwargs.items()}
    out = fn(inp, *args, **kwargs)
    if not backward:
        return out
    leaves = [t for t in _tensors([inp, args, kwargs]) if t.requires_grad]
    outs = [t for t in _tensors(out) if t.requires_grad and t.grad_fn is not None]
    if not leaves or not outs:
        return out, []
    gen = torch.Generator().manual_seed(7)
    grads_out = [torch.randn(o.shape, generator=gen, dtype=torch.float32).to(o.dtype) for o in outs]
    grads = torch.autograd.grad(outs, leaves, grads_out, allow_unused=True)
    return out, list(grads)


def _uninitialized(op) -> bool:
    """Ops whose results are uninitialised memory (``empty*``) or that OpInfo says not to compare compiled with
    eager: only shapes, strides and dtypes are compared."""
    return op.name.startswith(("empty", "new_empty")) or bool(getattr(op, "skip_correctness_check_compile_vs_eager",
                                                                        False))  # fmt: skip


def _compare(actual, expected, atol, rtol, values: bool = True) -> None:
    def strip(x):
        if isinstance(x, torch.Tensor):
            return x.detach() if values else (tuple(x.shape), tuple(x.stride()), str(x.dtype))
        if isinstance(x, (list, tuple)):
            return [strip(v) for v in x]
        return x

    if not values:
        if strip(actual) != strip(expected):
            raise AssertionError(f"shape/strides/dtype {strip(actual)} != eager {strip(expected)}")
        return
    kw = {"atol": atol, "rtol": rtol} if atol is not None else {}
    torch.testing.assert_close(strip(actual), strip(expected), equal_nan=True, **kw)


def _line(e: BaseException) -> str:
    text = [ln for ln in str(e).strip().splitlines() if ln.strip() and not ln.startswith("Traceback")]
    first = text[0] if text else ""
    if first.endswith("raised:") and len(text) > 1:  # BackendCompilerFailed: the backend's own error is next
        first = text[1]
    return f"{type(e).__name__}: {first}"[:300]
