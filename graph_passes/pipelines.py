"""The named pipelines, read top to bottom like a table of contents, and the memory-planning retry ladder.

Order follows AscendNPU-IR's ``HFusionPipelines.cpp`` / ``HIVMPipelines.cpp``. Where we differ:

- ``hivm-enable-multi-buffer`` runs right after ``hivm-mark-multi-buffer`` (AscendNPU-IR enables it late, after
  sync insertion, and lets plan-memory and inject-sync reason about the marked buffer). Splitting the copies
  first means plan-memory and inject-sync see each copy as an ordinary buffer, so neither needs a special case.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .ir.core import Operation

# 1. HFusion: clean up the imported graph, outline fused device kernels, flatten, schedule.
HFUSION_PREPARE = [
    # an accumulating matmul (addmm's init + a @ b) -> the product into zero and an add (NormalizeMatmul); first, so
    # every later pass sees products of two operands
    "hivm-normalize-matmul",
    "canonicalize",  # fold identities and constants, drop dead ops
    "cse",  # merge identical pure ops
    # a transpose of the last two dims feeding a matmul (x @ w.t(), a weight gradient's grad.t() @ x) becomes its
    # transpose flag, a batch broadcast of a matrix its rank-2 operand, a transpose of a product the swapped product:
    # the cube reads either orientation and a shared matrix itself. After cse, so a merged transpose shows every
    # user (one with others stays for them).
    "hfusion-fold-matmul-views",
    # floor/trunc division, remainder, fmod -> f32 quotient estimates with exact integer corrections, Dekker products
    # for float fmod (NormalizeModOp, NormalizeDivSIandDivUIOp). Before legalize-bf16: the bf16 steps torch rounds
    # one by one are then widened one by one.
    "hfusion-decompose-divmod",
    # bf16 compute ops compute in f32 between casts (no bf16 vector math); so do the f16 ops torch computes in f32
    # and rounds once (sum/prod, sigmoid/tanh/silu/gelu_tanh, floor/ceil/trunc). AscendNPU-IR runs LegalizeBF16 in its
    # pre-processing, after canonicalization and before decomposition and fusion, so the casts fuse into kernels.
    "hfusion-legalize-bf16",
    # an i32/i64 sum of bools (or i8/i16 values) whose every partial sum is exact in f32 runs as an f32 sum and one
    # cast (the vector unit reduces f16/f32 only; an integer sum is a scalar loop): a loss's count of non-ignored
    # rows. Before legalize-casts, which composes the bool -> f32 cast it adds.
    "hfusion-legalize-int-sums",
    # i64 values an interval analysis proves to fit in i32 (arange index arithmetic: a causal mask's offsets) are
    # computed in i32, on the vector unit instead of i64 scalar loops; uses that need i64 read an exact cast. After
    # legalize-int-sums (which matches casts of bools to i64), before legalize-casts (which composes the casts it
    # leaves) and before fusion, so kernels never see the i64 chain.
    "hfusion-narrow-int-ranges",
    # casts with no vconv (f16 <-> bf16, int -> bf16, i64 <-> f16 …) become exact sequences of casts that have one,
    # as AscendNPU-IR's NormalizeCastLoweringOp composes them (Normalize.cpp), but never by double rounding.
    "hfusion-legalize-casts",
    # pow with a tensor exponent -> exp(y·ln|x|) with torch's sign and special cases as selects (NormalizePowfOp)
    "hfusion-decompose-pow",
    "canonicalize",  # fold the exact cast pairs it leaves (bf16 -> f32 -> bf16); f32 -> bf16 -> f32 rounds, stays
    "cse",  # one widening cast per bf16 value
    # Sink collapse/expand reshapes (keepdim reductions' unit dims) through elementwise ops until they meet their
    # inverse; canonicalize cancels the pairs, so no reshape is left inside a kernel body (not lowered to HIVM).
    # AscendNPU-IR runs its equivalent, tensor::createPropagateReshapePass (Tensor/Transforms/PropagateReshape),
    # in HFusionPipelines.cpp's preFlattenPass, followed by canonicalization, before flattening and outlining.
    "hfusion-propagate-reshape",
    "canonicalize",  # reshape(reshape(x)) -> reshape(x) / x, dead reshapes and re-created constants
]
# A matmul whose output has too few tiles for the cube cores and a long K (64x64x16384, a weight gradient over many
# tokens) becomes partial products over chunks of K (one cube kernel, f32 partials) and their sum, a vector kernel,
# when the cube estimate says the split wins counting the sum's kernel and launch. After preparation (transposes
# folded into the matmul's flags), before split-reductions and fusion (the sum is a column reduction; a following
# cast or epilogue fuses into it).
SPLIT_K = "hfusion-split-k"
# A matmul whose result rows are not whole 32-B blocks (an LM head's 50,257 f16 columns) would split its work by bands
# of 16 rows (two cores may not write one block): it becomes a product with zero columns whose rows are whole blocks
# (column tiles on every cube core) and a slice, when the estimate says so. After split-K (which keeps the product's
# shape), before fusion (the slice becomes a data-movement kernel, or fuses into the product's users).
PAD_MATMUL_OUTPUT = "hfusion-pad-matmul-output"
# A reduction to fewer rows than there are vector cores (x.sum(), a loss's mean, amax over 4 long rows) becomes a
# multi-core partial reduction over rows split from the reduced elements and a final one (Inductor's split
# reductions; AscendNPU-IR uses atomic-add stores instead). After preparation, so fusion sees the two reductions.
SPLIT_REDUCTIONS = "hfusion-split-reductions"
# GM bools are bytes, UB bools bit masks: inside kernels, i1 crosses the boundary as i8 (bitcasts) and i1 compute
# becomes mask idioms. AscendNPU-IR runs LegalizeBool on outlined kernels, after their fusion kind is known and
# before flattening (postProcessOutlinedKernel); we run it after flattening, so the bitcasts sit inside flatten's
# boundary reshapes. It adds only elementwise idioms and boundary views: the kernel's kind stays.
LEGALIZE_BOOL = "hfusion-legalize-bool"
HFUSION_FUSE = [
    "hfusion-fuse-ops",  # group fusible ops, outline each group into a kernel (fusion_kind on each)
    # a matmul kernel and its elementwise epilogue kernel -> one MIX_CV kernel (cube tiles through a GM workspace to
    # the group's two vector cores); before flattening, so the epilogue keeps the product's 2-D domain
    "hfusion-fuse-mix-cv",
    # Inside the outlined vector kernels, unit-dim reshapes left in the body (squeeze/unsqueeze of computed values,
    # a gather's index column) move to the boundary: collapses down to the return (a store), expands up to the
    # arguments (a load), lifting the ops between to the shape with the unit dims. AscendNPU-IR runs
    # PropagateReshape on the outlined kernels too in multi-kernel mode (preFlattenPass after inferAndOutlineOp).
    "hfusion-propagate-reshape{outlined=true}",
    # a cheap value (arange, fill, elementwise chains over them) needed along two domain dims — after CSE, one
    # arange broadcast as a row and as a column in a causal mask — is computed once per layout, so each buffer has
    # one layout (AscendNPU-IR duplicates such producers into each consumer loop while tiling)
    "hfusion-rematerialize-layouts",
    "hfusion-flatten-ops",  # collapse contiguous loop dims inside kernels
    "canonicalize",  # fold the reshape chains and identity reshapes flattening leaves at the kernels' entries
    "hfusion-infer-fusion-kind",  # re-classify the flattened kernels
    LEGALIZE_BOOL,
]
HFUSION_SCHEDULE = [
    "hfusion-auto-schedule{multi-buffer=%(multi_buffer)d max-tile-elems=%(max_tile_elems)d tile-elems=%(tile_elems)d "
    "row-pipeline=%(row_pipeline)s cv-pipelining=%(cv_pipelining)s}",  # tiles, block dim, pipelined row / MIX_CV kernels
]
# 2. HIVM: buffers, memories, multi-buffering, memory plan, synchronisation.
HIVM = [
    "convert-to-hivm",  # kernels → loops over tiles of explicit buffers; host calls → hivm.launch
    "hivm-infer-core-type",  # AIV / AIC / MIX per kernel
    "hivm-infer-mem-scope",  # gm / ub / l1 / l0* per buffer
    # cube-path buffers: L1 ND, L0A zZ, L0B nZ, L0C zN; the MTE1 loads and the fixpipe record their conversions.
    # After the scopes (a layout is chosen per memory), before multi-buffering (each copy keeps its alloc's layout)
    "hivm-infer-data-layout",
    # each buffer gets the copies its kernel's schedule decided; ``depth`` serves only functions without a schedule
    # (HIVM written by hand and lowered by the driver)
    "hivm-mark-multi-buffer{depth=%(multi_buffer)d}",
    "hivm-enable-multi-buffer",  # split the copies, rotate them per iteration
    "hivm-plan-memory",  # offsets per buffer, reuse, in-place, capacity check
    "hivm-verify-memory-plan",  # no two live buffers share a byte of any scope (a wrong plan fails here)
    "hivm-inject-sync{mode=%(sync_mode)s}",  # set/wait flags, barriers, event ids
]


@dataclass(frozen=True)
class PipelineOptions:
    """Knobs of the default pipeline (the backend's options map onto these)."""

    fusion: bool = True
    multi_buffer: int = 2
    max_tile_elems: int = 0  # 0: as large as UB allows
    sync_mode: str = "normal"  # normal | barrier-all
    tile_elems: int = 0  # requested elements per tile, honoured even past UB (0: automatic); the ladder halves it
    row_pipeline: bool = True  # software-pipeline row kernels across work items when the estimate favours it
    split_reductions: bool = True  # reductions to fewer rows than vector cores run as partial + final reductions
    split_k: bool | int = True  # too few output tiles, long K: partial products + a vector sum; an int forces S chunks
    cv_fusion: bool = True  # a matmul and its elementwise epilogue run as one MIX_CV launch (hfusion-fuse-mix-cv)
    cv_pipelining: bool = True  # MIX_CV: parts of whole K loops with A resident in L1, a ring workspace (docs/cube.md)
    pad_matmul: bool = True  # result rows not whole 32-B blocks: a padded product + a slice when the estimate wins


def hfusion_pipeline(opts: PipelineOptions = PipelineOptions()) -> str:
    unfused = ["hfusion-fuse-ops{fuse=false}", "hfusion-infer-fusion-kind", LEGALIZE_BOOL]
    split_k = [] if opts.split_k is False else [SPLIT_K if opts.split_k is True else f"{SPLIT_K}{{chunks={opts.split_k}}}"]
    split = split_k + ([PAD_MATMUL_OUTPUT] if opts.pad_matmul else []) + (
        [SPLIT_REDUCTIONS] if opts.split_reductions else [])
    fuse = [s for s in HFUSION_FUSE if opts.cv_fusion or s != "hfusion-fuse-mix-cv"]
    stages = HFUSION_PREPARE + split + (fuse if opts.fusion else unfused)
    return ",".join(stages)


def stage_values(opts: PipelineOptions) -> dict:
    """The options the stage strings of HFUSION_SCHEDULE and HIVM interpolate."""
    return {"multi_buffer": opts.multi_buffer, "max_tile_elems": opts.max_tile_elems, "tile_elems": opts.tile_elems,
            "sync_mode": opts.sync_mode, "row_pipeline": str(opts.row_pipeline).lower(),
            "cv_pipelining": str(opts.cv_pipelining).lower()}


def lowering_pipeline(opts: PipelineOptions) -> str:
    """From scheduling down to synchronised HIVM."""
    return ",".join(s % stage_values(opts) for s in HFUSION_SCHEDULE + HIVM)


def default_pipeline(opts: PipelineOptions = PipelineOptions()) -> str:
    return hfusion_pipeline(opts) + "," + lowering_pipeline(opts)


def retry_ladder(opts: PipelineOptions, min_tile_elems: int = 256) -> list[PipelineOptions]:
    """The attempts made when memory planning overflows, in order: as asked, then multi-buffer 1 (same tiles), then
    the tile halved at each rung down to ``min_tile_elems`` — the requested ``tile_elems`` when there is one, else
    the ``max_tile_elems`` cap (from 16384 when uncapped)."""
    attempts = [opts]
    if opts.multi_buffer > 1:
        opts = replace(opts, multi_buffer=1)
        attempts.append(opts)
    if opts.tile_elems > 0:
        tile = opts.tile_elems
        while tile > min_tile_elems:
            tile = max(tile // 2, min_tile_elems)
            attempts.append(replace(opts, tile_elems=tile))
        return attempts
    tile = opts.max_tile_elems
    while tile == 0 or tile > min_tile_elems:
        tile = 16384 if tile == 0 else tile // 2
        attempts.append(replace(opts, max_tile_elems=tile))
    return attempts


def describe(opts: PipelineOptions) -> str:
    """One attempt of the ladder, as recorded in ``LadderResult.attempts``."""
    s = f"multi-buffer={opts.multi_buffer} max-tile-elems={opts.max_tile_elems}"
    return s + (f" tile-elems={opts.tile_elems}" if opts.tile_elems else "")


@dataclass
class LadderResult:
    module: Operation
    ctx: object
    options: PipelineOptions
    attempts: list[str] = field(default_factory=list)  # one line per failed attempt


def lower_with_retry(module: Operation, opts: PipelineOptions, *, verify=True, debug_dir=None, ctx=None) -> LadderResult:
    """Run the lowering pipeline on a copy of ``module``; on a memory-plan overflow, walk the retry ladder.

    Fails with the last overflow's one-line summary (kernel, scope, bytes needed and available, largest buffers)
    when no attempt fits.
    """
    from .passes import PassContext, PassManager
    from .passes.hivm.plan_memory import MemoryPlanOverflow

    failures: list[str] = []
    last: MemoryPlanOverflow | None = None
    for attempt in retry_ladder(opts):
        candidate = module.clone()
        run_ctx = ctx if ctx is not None else PassContext()
        try:
            PassManager.from_pipeline(lowering_pipeline(attempt), verify=verify, debug_dir=debug_dir).run(
                candidate, run_ctx
            )
        except MemoryPlanOverflow as e:
            failures.append(f"{describe(attempt)}: {e}")
            last = e
            continue
        return LadderResult(candidate, run_ctx, attempt, failures)
    raise last
