"""Running a compiled graph: bind the shape symbols from the actual arguments, execute the host function, rebuild the
FX outputs.

execute="simulate": the host function (after lowering) runs in the reference interpreter; each ``hivm.launch`` runs
its compiled kernel on the simulator (:class:`Launcher`): host tensors → numpy arrays in the kernel's argument
shapes (the kernel's view of the host tensor: same elements, row-major), out-parameters allocated, tiling from the
interpreter's shape bindings, outputs → torch tensors of the launch's result types. Views and reshapes on the host
stay interpreter rules (metadata). Kernels left at tensor level (``hivm.unsupported``: gather, concat, cube …) and
kernels codegen cannot emit run in the interpreter — counted (``COUNTERS["kernels_interpreted"]``) and recorded in
the profile with the reason.
"""

from __future__ import annotations

import functools
import os
import time
from dataclasses import dataclass, field

import numpy as np
import torch

from graph_passes.ir.sizes import evaluate
from simulator import get_chip

from . import profiling as _profile
from . import workers as _workers
from .importer import OutputSpec
from .interpreter import Interpreter, InterpreterError, interpret
from .options import NpuOptions
from .stats import COUNTERS


@dataclass
class KernelInfo:
    """What the runtime knows about one device kernel of a compiled graph."""

    name: str
    fusion_kind: str | None
    core_type: str | None
    source: tuple[str, ...]  # FX node names (the ops' locations)
    compiled: object = None  # codegen.CompiledKernel, or None when the kernel is interpreted
    reason: str | None = None  # why it is interpreted
    schedule: object = None  # the kernel's schedule attribute (#hfusion.schedule, #hfusion.cube_schedule, …)


@dataclass
class CompiledGraph:
    """The callable AOTAutograd gets back: ``compiled(*args) -> list`` in the FX graph's output order.

    ``module`` is what runs: the host function with ``hivm.launch``es (simulate) or the HFusion module (interpret).
    ``tensor_module`` (simulate) is the module before lowering: the tensor-level kernels the interpreter falls back
    to. ``kernels`` describes every device kernel; ``ladder`` lists the retry ladder's failed attempts.
    """

    name: str
    module: object
    outputs: list[OutputSpec]
    symbol_args: dict[str, int]
    options: NpuOptions
    debug_dir: str | None = None
    pass_context: object = None
    stats: dict = field(default_factory=dict)
    tensor_module: object = None
    kernels: dict[str, KernelInfo] = field(default_factory=dict)
    ladder: list[str] = field(default_factory=list)
    predicates: list = field(default_factory=list)  # graph_passes.ir.size_predicates.SizePredicate, checked per run
    host_prologue: object = None  # host_scalars.HostPrologue: f64 scalars computed on the host (inputs, outputs)
    fallbacks: list = field(default_factory=list)  # fallback.Fallback: the nodes run eagerly on the host
    runs: int = 0

    @functools.cached_property
    def param_dtypes(self) -> list:
        """The IR dtype of each @main parameter (None for a size or an effect token)."""
        return [getattr(a.type, "dtype", None) for a in self.module.lookup("main").body.args]

    def bindings(self, args) -> dict[str, int]:
        """Symbols carried by SymInt arguments; the rest are bound from tensor sizes by the interpreter."""
        return {name: int(args[pos]) for name, pos in self.symbol_args.items()}

    def simulated_kernels(self) -> list[str]:
        return [k for k, info in self.kernels.items() if info.compiled is not None]

    def interpreted_kernels(self) -> dict[str, str]:
        return {k: info.reason for k, info in self.kernels.items() if info.compiled is None}

    def __call__(self, *args):
        COUNTERS["graph_runs"] += 1
        self.runs += 1
        bindings = self.bindings(args)
        host_outputs = {}
        if self.host_prologue is not None:
            extra, host_outputs = self.host_prologue.run(args)
            args = [*args, *extra]
        inputs = [a.detach() if isinstance(a, torch.Tensor) else a for a in args]
        inputs = [a.to(torch.float32) if isinstance(a, torch.Tensor) and a.dtype == torch.float64 and dtype == "f32"
                  else a for a, dtype in zip(inputs, self.param_dtypes)]  # 0-d f64 inputs a device op reads
        # (host_scalars.py): the importer made them f32; other f64 inputs are host values (read by host.fallback ops)
        if self.predicates or any(o.kind == "size" or o.strides for o in self.outputs):
            bindings = _all_bindings(self.module, inputs, bindings)  # every symbol, bound from the inputs' sizes
        for pred in self.predicates:
            pred.check(bindings)
        if self.options.execute == "interpret":
            results = interpret(self.module, inputs, bindings)
        else:
            launcher = Launcher(self, debug=bool(self.debug_dir) and self.runs == 1)
            interp = Interpreter(self.module, bindings, launcher=launcher)
            interp.bind(self.module.lookup("main"), inputs)
            try:
                results = interp.call("main", inputs)
            except BaseException:
                launcher.abandon()
                raise
            launcher.finish()
        owned = _input_storages(inputs)
        out, seen = [], set()
        for pos, spec in enumerate(self.outputs):
            if pos in host_outputs:
                out.append(host_outputs[pos])
            elif spec.kind == "none":
                out.append(None)
            elif spec.kind == "size":
                out.append(evaluate(spec.expr, bindings))
            else:
                t = results[spec.index]
                if _aliases(t, owned) or id(t) in seen or not t.is_contiguous():
                    t = t.clone(memory_format=torch.contiguous_format)  # Note: outputs never alias inputs/views
                if spec.strides is not None:  # eager's layout (a transposed view, channels_last)
                    strides = tuple(int(evaluate(e, bindings)) for e in spec.strides)
                    if t.stride() != strides:
                        t = torch.empty_strided(t.shape, strides, dtype=t.dtype).copy_(t)
                seen.add(id(t))
                out.append(t)
        return out


class Launcher:
    """Executes the device kernels of one graph run for the interpreter (its ``launcher``)."""

    def __init__(self, graph: CompiledGraph, debug: bool = False):
        self.graph = graph
        self.debug = debug  # first run with a debug dir: write the report table and the trace
        self.trace = debug or _profile.wants_trace()
        self.records: list[_profile.KernelRecord] = []
        self.jobs = _workers.jobs_for(graph.options)  # timing jobs of new launches (workers >= 2), else None
        self.pending: list = []  # (record, workers.PendingLaunch): filled in by finish()

    # -- hivm.launch: the simulator --------------------------------------------------------------------------
    def launch(self, interp: Interpreter, op, values) -> list:
        name = op.attributes["callee"]
        info = self.graph.kernels[name]
        if info.compiled is None:
            return self._interpret(interp, op, name, values)
        ck = info.compiled
        if len(values) != len(ck.arg_layout):
            raise InterpreterError(f"{op.loc}: hivm.launch of @{name} has {len(values)} operands, the kernel takes "
                                   f"{len(ck.arg_layout)}")  # fmt: skip
        shapes = ck.sizes(interp.bindings).shapes
        arrays = []
        for a, v, shape in zip(ck.arg_layout, values, shapes):
            if a.is_scalar:
                arrays.append(v.item() if isinstance(v, torch.Tensor) else v)
            elif a.is_output:
                arrays.append(np.zeros(shape, _np_dtype(a.dtype)))
            else:
                arrays.append(to_numpy(v).reshape(shape))
        start = time.perf_counter()
        opts = self.graph.options
        outs, res = ck.run(arrays, interp.bindings, chip=_chip(opts.chip, opts.fixed_costs),
                           check_hazards=opts.check_hazards, trace=self.trace, simulate=opts.simulate,
                           jobs=self.jobs)  # fmt: skip
        wall = time.perf_counter() - start
        COUNTERS["kernels_simulated"] += 1
        results = [to_torch(o, interp.shape(r.type), owned=True) for o, r in zip(outs, op.results)]
        self._record(info, interp.bindings, res, wall)
        return results

    # -- kernels run by the interpreter ------------------------------------------------------------------------
    def call_kernel(self, interp: Interpreter, op, args) -> list:
        """``func.call`` of a kernel left at tensor level (``hivm.unsupported``)."""
        return self._interpret(interp, op, op.attributes["callee"], args)

    def _interpret(self, interp: Interpreter, op, name: str, args) -> list:
        info = self.graph.kernels[name]
        start = time.perf_counter()
        sub = Interpreter(self.graph.tensor_module, interp.bindings)
        out = sub.call(name, list(args))
        COUNTERS["kernels_interpreted"] += 1
        self.add(_profile.KernelRecord(self.graph.name, name, info.fusion_kind, info.core_type, "interpreter",
                                        info.source, _shape_bindings(interp.bindings), reason=info.reason,
                                        wall_s=time.perf_counter() - start))  # fmt: skip
        return out

    # -- records ----------------------------------------------------------------------------------------------
    def _record(self, info: KernelInfo, bindings, res, wall) -> None:
        rec = _profile.KernelRecord(self.graph.name, info.name, info.fusion_kind, info.core_type, "simulator",
                                    info.source, _shape_bindings(bindings), wall_s=wall,
                                    schedule=info.schedule)  # fmt: skip
        if isinstance(res, _workers.PendingLaunch):  # its timing is a job: the record is filled in by finish()
            rec.replayed = res.replayed
            self.pending.append((rec, res))
        elif res is not None:  # block_dim 0 (an empty tensor): nothing launched
            _fill(rec, res)
        else:
            rec.block_dim, rec.cycles, rec.us, rec.roofline_us, rec.efficiency, rec.gm_bytes = 0, 0, 0.0, 0.0, 1.0, 0
            rec.hazards_checked = self.graph.options.check_hazards
        self.add(rec)

    def add(self, rec) -> None:
        self.records.append(rec)
        _profile.record(rec)

    def finish(self) -> None:
        """The run is over: wait for its timing jobs and fill their records in, in launch order (the first job
        error is raised for this call). First run with a debug dir: write ``report.txt`` (the records' table) and
        ``trace.json``."""
        if self.jobs is not None:
            self.jobs.wait()
            for rec, pending in self.pending:
                _fill(rec, pending.resolve())
        if not self.debug:
            return
        prof = _profile.Profile(trace=True)
        prof.records = list(self.records)
        with open(os.path.join(self.graph.debug_dir, "report.txt"), "w") as f:
            f.write(prof.table() + "\n")
            for r in prof.simulated():
                if r.result is not None:
                    f.write(f"\n{r.result.summary_table()}\n")
        prof.write_trace(os.path.join(self.graph.debug_dir, "trace.json"))

    def abandon(self) -> None:
        """The run failed before finishing: its timing jobs are dropped (their keys are simulated again later)."""
        if self.jobs is not None:
            self.jobs.cancel()


def _fill(rec, res) -> None:
    """A simulated launch's record: its LaunchResult's figures."""
    s = res.stats
    rec.block_dim, rec.cycles, rec.us, rec.roofline_us = s.block_dim, s.cycles, s.us, s.roofline_us
    rec.launch_us = s.launch_us
    rec.efficiency, rec.bound, rec.busy, rec.gm_bytes = s.efficiency, s.bound, dict(s.busy_ratio), s.gm_bytes
    rec.hazards_checked, rec.result = s.hazards_checked, res
    rec.replayed, rec.reason = res.replayed, res.note


def _shape_bindings(bindings: dict[str, int]) -> dict[str, int]:
    return {k: int(v) for k, v in bindings.items()}


@functools.lru_cache(maxsize=None)
def _chip(name: str, fixed_costs: bool):
    """The options' chip preset, one object per (preset, fixed costs): a launch key names it by its repr, made once
    per object (codegen/kernel.py)."""
    chip = get_chip(name)
    return chip if fixed_costs else chip.without_fixed_costs()


def _np_dtype(dtype: str):
    from codegen.dtypes import np_dtype

    return np_dtype(dtype)


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """A host tensor as the contiguous numpy array a kernel argument takes (bf16 through ml_dtypes, bool as bytes)."""
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        import ml_dtypes

        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def to_torch(a: np.ndarray, shape, owned: bool = False) -> torch.Tensor:
    """A kernel output (in the kernel's argument shape) → a torch tensor of the launch result's shape. ``owned``:
    the caller hands ``a`` over (a kernel's output, read out of GM into an array of its own): the tensor shares its
    memory instead of copying it."""
    a = np.ascontiguousarray(a)
    if not (owned and a.flags.writeable):
        a = a.copy()
    if a.dtype.name == "bfloat16":
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16).reshape(shape)
    return torch.from_numpy(a).reshape(shape)


def _input_storages(inputs) -> set[int]:
    return {t.untyped_storage().data_ptr() for t in inputs if isinstance(t, torch.Tensor)}


def _aliases(t: torch.Tensor, storages: set[int]) -> bool:
    return t.untyped_storage().data_ptr() in storages


def _all_bindings(module, inputs, bindings) -> dict[str, int]:
    interp = Interpreter(module, bindings)
    interp.bind(module.lookup("main"), inputs)
    return interp.bindings
