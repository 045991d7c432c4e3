"""Compile options: ``torch.compile(model, backend="npu", options={...})`` → a validated, frozen :class:`NpuOptions`.

Environment variables: ``NPU_COMPILE_DEBUG=1`` or ``TORCH_COMPILE_DEBUG=1`` turn on debug dumps when no
``debug_dir`` option is given; dumps then go under ``$NPU_DEBUG_DIR`` (default ``./npu_debug``), the same root the
pass manager uses (both read them through :func:`graph_passes.debug_env.debug_root_from_env`).

Every invalid ``options`` (not a dict, an unknown key, a bad value, a ``debug_dir`` that is not a writable
directory path) is a one-line :class:`OptionsError`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields

EXECUTE_MODES = ("simulate", "interpret")
"""How compiled graphs run: "simulate" (the default) lowers every vector kernel to HIVM, compiles it and launches it
on the simulator; "interpret" runs the HFusion IR with the reference interpreter (a debug mode)."""

CHIPS = ("ascend910b1", "ascend910b4", "ascend910a")  # the presets both graph_passes/target.py and simulator/presets.py know
SYNC_MODES = ("normal", "barrier-all")
FALLBACK_MODES = ("auto", "error")
"""``auto``: an op the backend cannot compile runs eagerly on the host (``host.fallback``); ``error``: compiling
fails, naming every such op."""
SIMULATE_MODES = ("once", "every")
DEFAULT_PIPELINE = "canonicalize,cse"


class OptionsError(ValueError):
    """An unknown option or an invalid option value."""


@dataclass(frozen=True)
class NpuOptions:
    """Options of one ``torch.compile(..., backend="npu")`` call (docs/runtime.md has the table)."""

    execute: str = "simulate"
    """"simulate": kernels run on the simulator; "interpret": the HFusion IR runs in the reference interpreter."""
    chip: str = "ascend910b1"
    """Target chip preset: recorded on the module (``target``), read by the passes, used by the simulator."""
    fusion: bool = True
    """Fuse ops into kernels (``hfusion-fuse-ops``); False: one kernel per op."""
    multi_buffer: int = 2
    """Copies of each DMA-fed UB buffer (double buffering = 2); 1 turns multi-buffering off."""
    sync_mode: str = "normal"
    """``hivm-inject-sync`` mode: "normal" (set/wait flags) or "barrier-all" (a full barrier between ops)."""
    max_tile_elems: int = 0
    """Cap on the elements of one tile (0: as large as UB allows). The retry ladder halves it on UB overflow."""
    tile_elems: int = 0
    """Requested elements per tile (0: automatic). Honoured even when the buffers exceed UB; then the retry ladder
    retries with multi_buffer 1 and halved requests until the kernel fits."""
    row_pipeline: bool = True
    """Software-pipeline row kernels (softmax, norms) across work items when the schedule's estimate favours it;
    False keeps one work item per loop iteration (docs/schedule.md)."""
    split_reductions: bool = True
    """Reductions to fewer rows than the chip has vector cores (``x.sum()``, a loss's mean, a max over a few long
    rows) run as a multi-core partial reduction and a final one (``hfusion-split-reductions``, docs/passes.md)."""
    cv_fusion: bool = True
    """A matmul and its elementwise epilogue (bias, GELU, a residual add, a scale, a cast) run as one MIX_CV launch:
    cube tiles through a GM workspace to the group's two vector cores (``hfusion-fuse-mix-cv``, docs/cube.md);
    False keeps a SINGLE_CUBE kernel and a vector kernel."""
    cv_pipelining: bool = True
    """MIX_CV kernels drain each tile in parts of 64 columns, each a whole K loop with the tile's A rows kept in L1,
    through a ring workspace of two slots per group (cv-pipelining, docs/cube.md); False: the tile's K loop holds
    both parts and the workspace holds the whole product."""
    split_k: bool | int = True
    """Matmuls whose output has too few tiles for the cube cores and a long K run as partial products over chunks of
    K and a vector sum, when the estimate says it wins (``hfusion-split-k``, docs/cube.md); False: never; an int
    S >= 2: S chunks for every static matmul whose K holds two chunks of 256 (measurements)."""
    pad_matmul: bool = True
    """A matmul whose result rows are not whole 32-B blocks (an LM head's 50,257 columns) computes a product padded
    with zero columns to whole blocks, split by column tiles over every cube core, and a slice kernel, when the
    estimate says it wins (``hfusion-pad-matmul-output``, docs/cube.md); False keeps bands of 16 rows."""
    check_hazards: bool = True
    """Run the simulator's hazard checker on every launch (races, deadlocks); reports say when it was off."""
    simulate: str = "once"
    """"once": each distinct launch (kernel, launch arguments, block dim, chip, check_hazards) is simulated in full
    once; later launches replay its instructions' functional effects alone and report the recorded timing
    (simulator/replay.py). "every": every launch is simulated in full."""
    fixed_costs: bool = True
    """Simulate the chip's fixed costs (launch overhead, per-DMA fixed cost, cross-core hand-off; docs/simulator.md).
    False reproduces the simulator's timing without them: for before/after comparisons only."""
    fallback: str = "auto"
    """"auto": an aten op the backend cannot compile (no lowering, a float64 or complex value, a random op) runs eagerly on the
    host inside the compiled graph, listed in the profile and in one warning per graph; "error": compiling fails
    with one error naming every such op."""
    pipeline: str = DEFAULT_PIPELINE
    """execute="interpret" only: the pass pipeline run on the imported module (PassManager syntax)."""
    debug_dir: str | None = None
    """Write per-graph dumps (FX graph, IR after every pass, kernel assembly, host plan, report, trace) here."""
    verify: bool = True
    """Run the IR verifier after import and after every pass."""
    cache: bool = True
    """Read and write the compile cache on disk (``compile_cache.py``; also off with ``NPU_CACHE_DIR=0``)."""
    workers: int | None = None
    """With simulate="once": processes that run the timing simulations of a graph run's new launches while their
    outputs come from the functional executor (``workers.py``); None: ``$NPU_WORKERS``, else the machine's cores;
    1: every new launch is simulated in full in this process, at once."""
    executor: str = "local"
    """Where timing jobs run with workers >= 2: "local" (a process pool), "dask" or "ray" (optional extras)."""

    def __post_init__(self):
        if self.execute not in EXECUTE_MODES:
            raise OptionsError(f"option execute={self.execute!r} is not supported; valid: {', '.join(EXECUTE_MODES)}")
        if self.chip not in CHIPS:
            raise OptionsError(f"option chip={self.chip!r} is not known; valid: {', '.join(CHIPS)}")
        for name in ("fusion", "cv_fusion", "cv_pipelining", "pad_matmul", "row_pipeline", "split_reductions",
                     "check_hazards", "fixed_costs", "verify",
                     "cache"):
            if not isinstance(getattr(self, name), bool):
                raise OptionsError(f"option {name} must be a bool, got {getattr(self, name)!r}")
        if not isinstance(self.split_k, bool) and not (_is_int(self.split_k) and self.split_k >= 2):
            raise OptionsError(f"option split_k must be a bool or an int >= 2 (chunks), got {self.split_k!r}")
        if not _is_int(self.multi_buffer) or self.multi_buffer < 1:
            raise OptionsError(f"option multi_buffer must be an int >= 1, got {self.multi_buffer!r}")
        if self.fallback not in FALLBACK_MODES:
            raise OptionsError(f"option fallback={self.fallback!r} is not supported; valid: {', '.join(FALLBACK_MODES)}")
        if self.simulate not in SIMULATE_MODES:
            raise OptionsError(f"option simulate={self.simulate!r} is not supported; valid: {', '.join(SIMULATE_MODES)}")
        if self.sync_mode not in SYNC_MODES:
            raise OptionsError(f"option sync_mode={self.sync_mode!r} is not supported; valid: {', '.join(SYNC_MODES)}")
        if not _is_int(self.max_tile_elems) or self.max_tile_elems < 0:
            raise OptionsError(f"option max_tile_elems must be an int >= 0 (0: UB decides), got {self.max_tile_elems!r}")
        if not _is_int(self.tile_elems) or self.tile_elems < 0:
            raise OptionsError(f"option tile_elems must be an int >= 0 (0: automatic), got {self.tile_elems!r}")
        if self.workers is not None and (not _is_int(self.workers) or self.workers < 1):
            raise OptionsError(f"option workers must be an int >= 1 (or None: $NPU_WORKERS, else the cores), "
                               f"got {self.workers!r}")
        from .workers import EXECUTORS, check_executor

        if self.executor not in EXECUTORS:
            raise OptionsError(f"option executor={self.executor!r} is not supported; valid: {', '.join(EXECUTORS)}")
        try:
            check_executor(self.executor)
        except ImportError as e:
            raise OptionsError(f"option {e}") from None
        if not isinstance(self.pipeline, str):
            raise OptionsError(f"option pipeline must be a string, got {self.pipeline!r}")
        if self.debug_dir is not None:
            if not isinstance(self.debug_dir, (str, os.PathLike)) or not isinstance(os.fspath(self.debug_dir), str):
                raise OptionsError(f"option debug_dir must be a path (a string), got {self.debug_dir!r}")
            problem = _unwritable_reason(os.fspath(self.debug_dir))
            if problem:
                raise OptionsError(f"option debug_dir={self.debug_dir!r} is not a writable directory: {problem}")

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    @classmethod
    def from_dict(cls, options: dict | None) -> "NpuOptions":
        """Validate ``options`` (unknown keys are an error listing the valid ones) and apply the environment."""
        from graph_passes.debug_env import debug_root_from_env

        if options is not None and not isinstance(options, Mapping):
            raise OptionsError(f"npu options must be a dict of option names to values, got {type(options).__name__}")
        options = dict(options or {})
        unknown = sorted(set(options) - set(cls.names()), key=str)
        if unknown:
            raise OptionsError(f"unknown npu option(s) {', '.join(map(str, unknown))}; "
                               f"valid options: {', '.join(cls.names())}")  # fmt: skip
        if options.get("debug_dir") is None:
            root = debug_root_from_env()
            if root is not None and _unwritable_reason(str(root)):
                raise OptionsError(f"debug dumps are on (NPU_COMPILE_DEBUG/TORCH_COMPILE_DEBUG) but "
                                   f"NPU_DEBUG_DIR={root} is not a writable directory: {_unwritable_reason(str(root))}")
            options["debug_dir"] = os.path.abspath(root) if root is not None else None
        elif isinstance(options["debug_dir"], os.PathLike):
            options["debug_dir"] = os.fspath(options["debug_dir"])
        return cls(**options)

    def replace(self, **changes) -> "NpuOptions":
        return dataclasses.replace(self, **changes)

    def pipeline_options(self):
        """The knobs of ``graph_passes.pipelines`` these options select."""
        from graph_passes.pipelines import PipelineOptions

        return PipelineOptions(fusion=self.fusion, multi_buffer=self.multi_buffer, max_tile_elems=self.max_tile_elems,
                               sync_mode=self.sync_mode, tile_elems=self.tile_elems,
                               row_pipeline=self.row_pipeline, split_reductions=self.split_reductions,
                               split_k=self.split_k, cv_fusion=self.cv_fusion,
                               cv_pipelining=self.cv_pipelining, pad_matmul=self.pad_matmul)  # fmt: skip


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _unwritable_reason(path: str) -> str | None:
    """Why dumps cannot be written under ``path`` (its nearest existing ancestor decides), or None."""
    if not path:
        return "empty path"
    probe = os.path.abspath(path)
    while not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if not os.path.isdir(probe):
        return f"{probe} is not a directory"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"{probe} is not writable"
    return None
