"""``compile_kernel``: one HIVM kernel → a :class:`CompiledKernel` (simulator program + host tiling function + layout).

    ck = compile_kernel(module.lookup("main_fused_0"), module)
    outs, res = ck.run([x, y, out], {"s0": 300})   # on the module's target chip; out-parameters come back in order
    print(ck.assembly()); res.stats.cycles

Kernel params (in order): one GM base address per memref argument (scalar and index arguments by value), in
argument order, then the ``tiling`` parameters in the kernel's argument order, then *derived* size params codegen
needed (a GM row stride that no tiling parameter names). The host evaluates the tiling parameters — ``block_dim`` among them —
from the shape-symbol bindings through the module's ``SizeVars`` (:class:`Tiling`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np

from graph_passes.intmath import prod
from graph_passes.ir.core import Operation
from graph_passes.ir.sizes import SizeVars, expr_str
from graph_passes.ir.types import MemRefType, ScalarType
from graph_passes.target import module_target, target_spec
from simulator import GlobalMemory, If, Loop, MixProgram, Program, get_chip, launch
from simulator.replay import ReplayMismatch
from simulator.assembly import to_text
from simulator.intmath import align_up

from .dtypes import ITEMSIZE, np_dtype
from .emitters import EMITTERS
from .errors import CodegenError
from .lowering import KernelEmitter, TracingBuilder

MAX_RECORDED = 8  # recorded launches kept per kernel (distinct launch keys); the oldest goes first
MAX_SIZES = 64  # sizes() results kept per kernel (distinct bindings)
GM_ALIGN = 512  # GM bases on 512-B boundaries: the DMA's fastest alignment (ASCENDC, simulator gm_model)


@dataclass
class Tiling:
    """The host tiling function: tiling parameter values from shape-symbol bindings."""

    params: list[str]  # in kernel param order (derived params last)
    exprs: dict  # name -> sympy expression over shape symbols
    sizes: SizeVars

    def __call__(self, bindings: dict[str, int]) -> dict[str, int]:
        return {p: self.sizes.evaluate(self.exprs[p], bindings) for p in self.params}

    def block_dim(self, bindings: dict[str, int]) -> int:
        return self.sizes.evaluate(self.exprs["block_dim"], bindings)

    def __str__(self) -> str:
        return ", ".join(f"{p} = {expr_str(self.exprs[p])}" for p in self.params)


@dataclass
class ArgLayout:
    """One kernel argument as the host passes it: param name, dtype, symbolic shape, whether the kernel writes it."""

    name: str
    dtype: str
    shape: tuple  # sympy expressions; () for a scalar argument
    is_output: bool
    is_scalar: bool = False

    def evaluate_shape(self, sizes: SizeVars, bindings) -> tuple[int, ...]:
        return tuple(sizes.evaluate(d, bindings) for d in self.shape)


@dataclass
class CompiledKernel:
    name: str
    core_type: str  # "AIV", "AIC" or "MIX"
    program: Program
    params: list[str]
    tiling: Tiling
    arg_layout: list[ArgLayout]
    source_ops: Counter  # HIVM op name -> count
    origin: dict = field(repr=False, default_factory=dict)  # id(program node) -> HIVM op it came from
    hivm: Operation | None = field(repr=False, default=None)
    chip: str = field(default_factory=lambda: target_spec(None).name)  # the chip it was compiled for
    recorded: dict = field(repr=False, default_factory=dict)  # launch key -> LaunchResult with a replay.Recording
    gm_images: dict = field(repr=False, default_factory=dict)  # launch key -> the GlobalMemory its replays reuse
    replayed: dict = field(repr=False, default_factory=dict)  # launch key -> its recorded result marked replayed
    _sizes: dict = field(repr=False, default_factory=dict)  # bindings -> _Layout (sizes())

    # -- pickling (the compile cache) --------------------------------------------------------------------------------
    def __getstate__(self) -> dict:
        """``origin`` is keyed by the program nodes' ids, which a loaded copy does not share: pickled as pairs."""
        state = dict(self.__dict__)
        state["origin"] = [(n, self.origin[id(n)]) for n in _nodes(self.program) if id(n) in self.origin]
        state["recorded"], state["gm_images"], state["replayed"] = {}, {}, {}  # launch replay: this process's launches
        state["_sizes"] = {}
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.origin = {id(n): op for n, op in state["origin"]}

    # -- dumps -------------------------------------------------------------------------------------------------------
    def assembly(self) -> str:
        """The program's assembly, headed by the kernel name, its HIVM source ops and tiling, with a ``#`` comment
        naming the HIVM op before the instructions emitted for it (``simulator.parse`` reads it back)."""
        ops = ", ".join(f"{n} x{c}" for n, c in sorted(self.source_ops.items()))
        head = [f"# kernel @{self.name} ({self.core_type}), compiled from HIVM", f"# source ops: {ops}",
                f"# tiling: {self.tiling}",
                "# args: " + ", ".join(f"{a.name}: {'out ' if a.is_output else ''}{a.dtype}"
                                       f"[{', '.join(expr_str(d) for d in a.shape)}]" for a in self.arg_layout)]
        last = None

        def source(node):  # the HIVM op before the first instruction emitted for it
            nonlocal last
            src = self.origin.get(id(node))
            if src is None or src is last:
                return None
            last = src
            return f"{src.name}{_attrs(src)}" + (f"  ({src.loc})" if src.loc else "")

        return "\n".join(head + [to_text(self.program, comment=source)])

    # -- running -----------------------------------------------------------------------------------------------------
    def sizes(self, bindings: dict[str, int]) -> "_Layout":
        """The tiling values, every argument's shape and the memref arguments' GM addresses under ``bindings``,
        evaluated once per distinct bindings (a compiled graph launches a kernel with the same ones every call)."""
        bkey = tuple(sorted((k, int(v)) for k, v in bindings.items()))
        hit = self._sizes.get(bkey)
        if hit is None:
            if len(self._sizes) >= MAX_SIZES:
                del self._sizes[next(iter(self._sizes))]
            hit = self._sizes[bkey] = _Layout.of(self, bindings)
        return hit

    def run(self, gm_arrays: list, bindings: dict[str, int], chip=None, check_hazards: bool = True,
            trace: bool = False, simulate: str = "every", jobs=None):
        """Place the arguments in a fresh GlobalMemory (512-B aligned), launch on ``block_dim`` cores of ``chip``
        (the chip it was compiled for by default), read the outputs back. ``gm_arrays``: one array per memref
        argument (a number per scalar argument), in order.
        Returns ``(outputs, LaunchResult)``; outputs in ``output_args`` order.

        ``simulate="once"``: the first launch with a given key (every launch argument — GM addresses, scalars,
        tiling values —, the arguments' shapes, block dim, chip with its fixed costs, ``check_hazards``) is simulated in full and recorded;
        later ones replay its functional effects (simulator/replay.py) on the GM image kept for the key (the
        arguments written into it again) and return its stats with ``replayed`` set.
        A kernel whose DMAs take GM addresses from data registers replays while those addresses equal the
        recorded ones; when they differ it is simulated again (``note`` says so) and that launch is recorded.
        ``"every"``: always the full simulation. ``jobs`` (torch_npu_backend/workers.py, with "once"): a new key's
        outputs come from the functional executor and its timing becomes a job (a PendingLaunch is returned)."""
        if len(gm_arrays) != len(self.arg_layout):
            raise ValueError(f"{self.name}: expects {len(self.arg_layout)} arguments "
                             f"({', '.join(a.name for a in self.arg_layout)}), got {len(gm_arrays)}")
        if simulate not in ("once", "every"):
            raise ValueError(f"{self.name}: simulate={simulate!r} must be 'once' or 'every'")
        lay = self.sizes(bindings)
        args, arg_key = lay.args(self, gm_arrays)
        result, gm = None, None
        block_dim = lay.values["block_dim"]
        if block_dim > 0:
            spec = get_chip(chip or self.chip)
            # Note: the argument shapes are part of the key: a kernel whose params do not name an argument's size
            # (one element selected from a dynamic-size input) launches with equal args over GM images of other sizes
            key = (arg_key, lay.shape_key, block_dim, _chip_key(spec), check_hazards)
            hit = self.recorded.get(key) if simulate == "once" else None
            note = None
            if hit is not None and hit.replayable(trace):
                gm = self.gm_images[key]
                lay.write(self, gm, gm_arrays, check=False)  # the image's own buffers (lay.place allocated them)
                try:
                    hit.recording.replay(gm)
                    result = self.replayed.get(key)
                    if result is None:  # the recorded result marked replayed, made once per key
                        result = self.replayed[key] = replace(hit, replayed=True, note=None)
                except ReplayMismatch as e:
                    note = f"simulated again: {e}"
            if result is None:
                gm = lay.place(self, gm_arrays)  # a fresh GM (a failed replay wrote into the kept one)
                if jobs is not None and simulate == "once":  # outputs now (functional executor), timing a job
                    result = jobs.defer(self.program, spec, block_dim, args, gm, check_hazards, trace)
                else:
                    result = launch(self.program, chip=spec, block_dim=block_dim, args=args, gm=gm,
                                    check_hazards=check_hazards, trace=trace, record=simulate == "once")
                if simulate == "once":
                    if len(self.recorded) >= MAX_RECORDED and key not in self.recorded:
                        old = next(iter(self.recorded))  # the oldest key
                        del self.recorded[old], self.gm_images[old]
                        self.replayed.pop(old, None)
                    self.recorded[key] = result
                    self.gm_images[key] = gm
                    self.replayed.pop(key, None)
                if note:
                    result = replace(result, note=note)
        if gm is None:
            gm = lay.place(self, gm_arrays)  # nothing launched (block_dim 0): the outputs as given
        outs = [gm.read(addr, np_dtype(a.dtype), shape, check=False) for a, addr, shape in lay.placed if a.is_output]
        return outs, result


@dataclass
class _Layout:
    """A launch's sizes under one set of bindings: tiling ``values``, ``placed`` memref arguments as
    ``(ArgLayout, GM address, shape)`` (addresses as a fresh GlobalMemory allocates them, 512-B aligned) and
    ``shapes`` of every argument (``()`` for scalars)."""

    values: dict
    shapes: list
    placed: list
    shape_key: tuple = ()  # the shapes as a launch key part
    fixed_args: tuple | None = None  # (args, key) when the kernel takes no scalar argument: the same every launch

    @classmethod
    def of(cls, ck: CompiledKernel, bindings) -> "_Layout":
        values = ck.tiling(bindings)
        shapes, placed, top = [], [], 0
        for a in ck.arg_layout:
            shape = a.evaluate_shape(ck.tiling.sizes, bindings)
            shapes.append(shape)
            if not a.is_scalar:
                addr = align_up(top, GM_ALIGN)
                top = addr + max(prod(shape) * ITEMSIZE[a.dtype], 1)
                placed.append((a, addr, shape))
        lay = cls(values, shapes, placed, tuple(map(tuple, shapes)))
        if not any(a.is_scalar for a in ck.arg_layout):
            args = lay._args(ck, [])
            lay.fixed_args = (args, _arg_key(args))
        return lay

    def args(self, ck: CompiledKernel, gm_arrays) -> tuple[dict, tuple]:
        """The launch arguments (scalars by value, memrefs by GM address, the tiling values) and their launch key
        part (made once when there are no scalars)."""
        if self.fixed_args is not None:
            return self.fixed_args
        args = self._args(ck, gm_arrays)
        return args, _arg_key(args)

    def _args(self, ck: CompiledKernel, gm_arrays) -> dict:
        args = {}
        for a, arr in zip(ck.arg_layout, gm_arrays):
            if a.is_scalar:
                args[a.name] = float(arr) if a.dtype.startswith(("f", "bf")) else int(arr)
        for a, addr, _ in self.placed:
            args[a.name] = addr
        args.update(self.values)
        return args

    def place(self, ck: CompiledKernel, gm_arrays) -> GlobalMemory:
        """A fresh GlobalMemory holding the memref arguments at :attr:`placed`'s addresses."""
        gm = GlobalMemory(align=GM_ALIGN)
        for a, addr, shape in self.placed:
            got = gm.alloc(max(prod(shape) * ITEMSIZE[a.dtype], 1), GM_ALIGN)
            if got != addr:
                raise RuntimeError(f"{ck.name}: argument {a.name} placed at GM {got:#x}, its layout says {addr:#x}")
        self.write(ck, gm, gm_arrays)
        return gm

    def write(self, ck: CompiledKernel, gm: GlobalMemory, gm_arrays, check: bool = True) -> None:
        """The memref arguments' bytes into ``gm`` at their addresses (each checked against its layout;
        ``check=False``: ``gm`` is one :meth:`place` made, its buffers at these addresses)."""
        it = iter(self.placed)
        for a, arr in zip(ck.arg_layout, gm_arrays):
            if a.is_scalar:
                continue
            _, addr, shape = next(it)
            arr = np.asarray(arr)
            if arr.dtype != np_dtype(a.dtype):
                raise ValueError(f"{ck.name}: argument {a.name} must be {a.dtype}, got {arr.dtype}")
            if arr.size != prod(shape):
                raise ValueError(f"{ck.name}: argument {a.name} needs {shape} = {prod(shape)} elements, "
                                 f"got array of shape {arr.shape}")
            if arr.nbytes:
                gm.write(addr, arr, check=check)


def _chip_key(spec) -> str:
    """A chip's whole preset as a key part (its repr, made once per preset object)."""
    hit = _CHIP_KEYS.get(id(spec))
    if hit is None or hit[0] is not spec:
        if len(_CHIP_KEYS) >= 16:
            _CHIP_KEYS.clear()
        hit = _CHIP_KEYS[id(spec)] = (spec, repr(spec))
    return hit[1]


_CHIP_KEYS: dict = {}


def _arg_key(args: dict) -> tuple:
    """Launch arguments as a replay key: floats by their bits (a NaN equals itself, -0.0 differs from 0.0)."""
    return tuple((k, v.hex() if isinstance(v, float) else v) for k, v in sorted(args.items()))


def _attrs(op) -> str:
    keep = {k: v for k, v in op.attributes.items() if k in ("fun", "kind", "dims", "predicate", "round_mode", "value",
                                                           "src_pipe", "dst_pipe", "event_ids", "pipe")}
    return (" {" + ", ".join(f"{k} = {v}" for k, v in keep.items()) + "}") if keep else ""


def _scratch_region(func) -> tuple[int, int] | None:
    """(UB offset, bytes) of the kernel's ``hivm.alloc {scratch = true}``, planned by hivm-plan-memory; of its first
    part when it has one per pipeline stage (``stages = n``; codegen.stages gives stage i part i)."""
    for op in func.walk():
        if op.name == "hivm.alloc" and op.attributes.get("scratch") and op.attributes.get("offsets"):
            t = op.result.type
            nbytes = prod(t.static_shape()) * ITEMSIZE[t.dtype]
            return int(op.attributes["offsets"][0]), nbytes // int(op.attributes.get("stages", 1))
    return None


def _nodes(program) -> list:
    """Every node of a program (both of a mix program's): instructions, loops and ifs, in text order."""
    parts = [program.aic, program.aiv] if isinstance(program, MixProgram) else [program]
    return [n for p in parts for n in _body_nodes(p.body)]


def _body_nodes(body):
    for n in body:
        yield n
        if isinstance(n, Loop):
            yield from _body_nodes(n.body)
        elif isinstance(n, If):
            yield from _body_nodes(n.then)
            yield from _body_nodes(n.orelse)


def compile_kernel(kernel: Operation, module: Operation) -> CompiledKernel:
    """Lower one HIVM kernel (a ``func.func`` with ``kernel`` after ``hivm-inject-sync``) to a simulator program;
    the AIC part of a mix kernel (``mix_part = "aic"``) with its AIV part (``mix_peer``) to one mix program."""
    if kernel.name != "func.func" or not kernel.attributes.get("kernel"):
        raise CodegenError(kernel, "not a kernel function (needs the 'kernel' attribute)")
    if "tiling" not in kernel.attributes or "block_dim" not in kernel.attributes["tiling"]:
        raise CodegenError(kernel, "kernel has no 'tiling' with a block_dim")
    core = kernel.attributes.get("core_type", "AIV")
    part = kernel.attributes.get("mix_part")
    if core == "MIX" and part == "aic":
        peer = module.lookup(kernel.attributes.get("mix_peer", ""))
        if peer is None or peer.attributes.get("mix_part") != "aiv":
            raise CodegenError(kernel, f"mix kernel: its AIV part @{kernel.attributes.get('mix_peer')} is missing")
        parts = [(kernel, "aic"), (peer, "aiv")]
    elif core in ("AIV", "AIC") and part is None:
        parts = [(kernel, core.lower())]
    else:
        raise CodegenError(kernel, f"core_type {core} ({part or 'no'} mix part): vector (AIV), cube (AIC) kernels and "
                                   "the AIC part of a mix kernel have an emitter")
    name = kernel.sym_name
    emitted = [_emit(f, module, name, c) for f, c in parts]
    state = emitted[0][0]
    derived = {}
    for st, _ in emitted:
        derived.update(st.derived)
    params = state.gm_params + state.tiling_params + list(derived)
    for st, prog in emitted:
        if st.gm_params + st.tiling_params != state.gm_params + state.tiling_params:
            raise CodegenError(kernel, "the mix kernel's parts take different parameters: "
                                       f"{st.gm_params + st.tiling_params} vs {state.gm_params + state.tiling_params}")
        prog.params = params
    program = emitted[0][1] if len(emitted) == 1 else MixProgram(name, params, emitted[0][1], emitted[1][1])
    exprs = dict(state.tiling)
    exprs.update(derived)
    tiling = Tiling(state.tiling_params + list(derived), exprs, state.sizes)
    outputs = set(kernel.attributes.get("output_args") or [])
    layout, gi = [], 0
    for i, a in enumerate(kernel.body.args):
        if isinstance(a.type, MemRefType):
            layout.append(ArgLayout(state.gm_params[gi], a.type.dtype, tuple(a.type.shape), i in outputs))
            gi += 1
        elif isinstance(a.type, ScalarType) or i in state.scalar_indices:
            dtype = a.type.dtype if isinstance(a.type, ScalarType) else "index"
            layout.append(ArgLayout(state.gm_params[gi], dtype, (), False, is_scalar=True))
            gi += 1
    ops = Counter(op.name for f, _ in parts for op in f.walk() if op.dialect == "hivm")
    origin = {}
    for st, _ in emitted:
        origin.update(st.b.origin)
    return CompiledKernel(name, core, program, params, tiling, layout, ops, origin, kernel,
                          module_target(module).name)


def _emit(func: Operation, module: Operation, name: str, core: str):
    """(emitter state, program) of one kernel function on ``core`` (``aiv`` / ``aic``); errors name ``name``."""
    state = KernelEmitter(func, module, EMITTERS)
    state.scratch_region = _scratch_region(func)
    state.b = TracingBuilder(name, core)
    try:
        state.bind_args()
        state.block(func.body)
    except CodegenError as e:
        if e.kernel is None:  # name the kernel too: ops built by passes often carry no location
            raise CodegenError(e.op, e.reason, name) from None
        raise
    state.b.params = state.gm_params + state.tiling_params + list(state.derived)
    return state, state.b.build()


def compile_module(module: Operation) -> dict[str, CompiledKernel]:
    """Every HIVM kernel of the module (kernels left at tensor level, ``hivm.unsupported``, are not compiled; a mix
    kernel's AIV part is compiled with its AIC part)."""
    out = {}
    for f in module.functions:
        if f.attributes.get("mix_part") == "aiv":
            continue
        if f.attributes.get("kernel") and "hivm.unsupported" not in f.attributes:
            out[f.sym_name] = compile_kernel(f, module)
    return out
