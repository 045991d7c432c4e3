"""The batched replay forms (simulator/replay_forms.py) equal the per-instruction execution bit for bit.

Each case builds resolved instructions of one kind, one per core, that share everything but their GM address (one
batch), fills every core's local memories and GM with random values, then runs ``execute`` core by core on one
copy and the batched form over the stacked memories of another — the rows as a slice (consecutive cores), as an
index array (a subset) and as a grid (two of every three cores) — and compares every byte of every memory; a form
with a compiled variant (``g.bind``: views made once, launch replay's compiled plan) is compared the same way.
"""
from functools import partial

import numpy as np
import pytest

from simulator import GlobalMemory, get_chip, replay_forms
from simulator.core import KIND_SCOPES, Core
from simulator.isa.cube import Fixpipe, LoadL1ToL0A, LoadL1ToL0B, Mmad
from simulator.isa.dma import CopyGmToL1, CopyGmToUb, CopyUbToGm
from simulator.isa.index import VCi, VGather
from simulator.isa.vector import VReduce
from simulator.errors import ProgramError
from simulator.memory import LocalMemory

CHIP = get_chip("ascend910b1")
GM_BYTES = 1 << 18
FILL = {"aiv": "f32", "aic": "f16"}


def _random_state(kind, rows, dtype, seed):
    """Random local memories (rows x capacity per scope, values of ``dtype``) and a random GM."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(np.float16) if dtype == "f16" else np.dtype(np.float32)

    def values(nbytes):
        return rng.uniform(-2, 2, nbytes // dt.itemsize).astype(dt).view(np.uint8)

    stacks = {s: np.stack([values(CHIP.capacity(s)) for _ in range(rows)]) for s in KIND_SCOPES[kind]}
    gm = GlobalMemory()
    gm.alloc(GM_BYTES)
    gm.data[:GM_BYTES] = values(GM_BYTES)
    return stacks, gm


def _resolved(cls, pc=7, **fields):
    x = cls(**fields).resolve({})
    x.pc = pc
    return x


def _compare(xs, kind="aiv", dtype="f32", seed=0, prepare=None):
    """``execute`` per core vs the batched form, for the rows as a slice and as an index array (``prepare(stacks)``:
    values the instructions need in the random memories)."""
    keys = {replay_forms.batch_key(x) for x in xs}
    assert len(keys) == 1 and None not in keys, "the instructions must form one batch"
    cls = type(xs[0])
    assert cls in replay_forms.FORMS
    n = len(xs)
    grid = np.array([i + i // 2 for i in range(n)])  # two of every three cores: a (n/2, 2) grid when n is even
    cases = [(rows, bound) for rows in (slice(0, n), np.arange(n) * 2 + 1, grid) for bound in (False, True)]
    for rows, bound in cases:  # consecutive cores, every other core of 2n, a grid; the form, then it compiled
        _, g = replay_forms.batch_effect(xs[0])
        if bound and not hasattr(g, "bind"):
            continue
        total = n if isinstance(rows, slice) else int(rows[-1]) + 1
        stacks, gm = _random_state(kind, total, dtype, seed)
        if prepare is not None:
            prepare(stacks)
        ref_stacks = {s: a.copy() for s, a in stacks.items()}
        ref_gm = GlobalMemory()
        ref_gm.alloc(GM_BYTES)
        ref_gm.data[:] = gm.data
        row_ids = range(n) if isinstance(rows, slice) else rows
        for x, r in zip(xs, row_ids):
            mem = {s: LocalMemory(s, CHIP.capacity(s), CHIP.align[s], ref_stacks[s][r]) for s in KIND_SCOPES[kind]}
            core = Core(int(r), f"c{r}", kind, CHIP, ref_gm, int(r), mem=mem)
            x.check(core)
            with np.errstate(all="ignore"):
                x.execute(core)
        scope, g = replay_forms.batch_effect(xs[0])
        assert scope is None, f"{cls.__name__} has no batched form of its own"
        addrs = np.array([replay_forms.gm_address(x) for x in xs], np.int64)
        run = g.bind(stacks, rows, gm, addrs) if bound else partial(g, stacks, rows, gm, addrs)
        if run is None:  # the compiled form declines (then the replay runs the form itself)
            continue
        with np.errstate(all="ignore"):
            run()
        what = f"{cls.__name__}{' compiled' if bound else ''}"
        for s in stacks:
            assert stacks[s].tobytes() == ref_stacks[s].tobytes(), f"{what}: {s} differs (rows {rows})"
        assert gm.data.tobytes() == ref_gm.data.tobytes(), f"{what}: GM differs (rows {rows})"


@pytest.mark.parametrize("op, dtype, whole, src_rep", [("sum", "f32", 0, 8), ("sum", "f16", 0, 16),
                                                       ("sum", "f32", 1, 8), ("rmax", "f16", 0, 8),
                                                       ("rmin", "f32", 1, 12), ("sum", "f32", 0, 12)])
@pytest.mark.parametrize("repeat, short", [(5, 3), (37, 50)])
def test_reduction_form(op, dtype, whole, src_rep, repeat, short):
    """Sums in f32 whose order shows (pairwise over each repeat's lanes, or over every lane with ``whole``)."""
    lanes = 256 // (2 if dtype == "f16" else 4)
    xs = [_resolved(VReduce, op=op, dtype=dtype, dst=20480, src=0, repeat=repeat, mask=lanes - short,
                    src_rep=src_rep, whole=whole) for _ in range(4)]
    _compare(xs, dtype=dtype)


@pytest.mark.parametrize("dtype, dst_rep", [("f32", 8), ("i16", 8), ("f16", 12)])
def test_vci_form(dtype, dst_rep):
    xs = [_resolved(VCi, dtype=dtype, dst=256, first=-37, repeat=3, mask=40, dst_rep=dst_rep) for _ in range(3)]
    _compare(xs)


@pytest.mark.parametrize("cls, kind", [(CopyGmToUb, "aiv"), (CopyUbToGm, "aiv"), (CopyGmToL1, "aic")])
@pytest.mark.parametrize("gm_step", [320, "uneven"])
@pytest.mark.parametrize("strided", [True, False])
def test_dma_form(cls, kind, gm_step, strided):
    """Bursts of 64 B every 96 B locally and every 256 B in GM (loads: GM to local; stores: local to GM), or one
    contiguous run, each core at its own GM address: evenly stepped (one strided view) or not (one per core)."""
    bases = [i * 4096 + (i * i * 64 if gm_step == "uneven" else i * gm_step) for i in range(5)]
    load = cls is not CopyUbToGm
    local, far = (96, 256) if strided else (0, 0)
    xs = [_resolved(cls, dst=512 if load else b, src=b if load else 512, burst_len=64, n_burst=9,
                    src_stride=far if load else local, dst_stride=local if load else far) for b in bases]
    _compare(xs, kind=kind)


@pytest.mark.parametrize("cls", [LoadL1ToL0A, LoadL1ToL0B])
@pytest.mark.parametrize("dtype, transpose", [("f16", 0), ("f16", 1), ("f32", 0), ("f32", 1)])
def test_cube_load_form(cls, dtype, transpose):
    """Sizes that are not whole fractals (the padding is written as zeros), rows of L1 longer than the matrix."""
    dims = dict(m=20, k=40) if cls is LoadL1ToL0A else dict(k=40, n=24)
    xs = [_resolved(cls, dst=1024, src=512, src_ld=256, dtype=dtype, transpose=transpose, **dims) for _ in range(3)]
    _compare(xs, kind="aic", dtype=dtype)


@pytest.mark.parametrize("dtype, init", [("f16", 1), ("f16", 0), ("f32", 1), ("f32", 0), ("bf16", 1)])
def test_mmad_form(dtype, init):
    """f32 inputs make the k-sums round: a different summation order would show."""
    xs = [_resolved(Mmad, dst=0, a=0, b=2048, m=20, k=72, n=24, dtype=dtype, init=init) for _ in range(4)]
    _compare(xs, kind="aic", dtype="f32" if dtype == "f32" else "f16")


@pytest.mark.parametrize("dst_dtype, relu, dst_ld", [("f16", 0, 64), ("f32", 1, 128), ("bf16", 0, 48)])
def test_fixpipe_form(dst_dtype, relu, dst_ld):
    """Each core writes its own GM rows (a row of dst_ld bytes per result row; dst_ld = the row's bytes: dense)."""
    xs = [_resolved(Fixpipe, dst=4096 + i * 8192, src=1024, m=20, n=24, dst_ld=dst_ld, dst_dtype=dst_dtype, relu=relu)
          for i in range(3)]
    _compare(xs, kind="aic", dtype="f32")


@pytest.mark.parametrize("dtype, dst_rep", [("f32", 8), ("f16", 8), ("i16", 12)])
def test_gather_form(dtype, dst_rep):
    """Every core gathers its own elements (random in-range offsets per core); an out-of-range offset is execute's
    error."""
    es = 2 if dtype in ("f16", "i16") else 4
    src, src_len, off = 8192, 4096, 16384
    xs = [_resolved(VGather, dtype=dtype, dst=0, src=src, offset=off, src_len=src_len, repeat=3, mask=40,
                    dst_rep=dst_rep) for _ in range(4)]
    lanes = 256 // es
    rng = np.random.default_rng(3)

    def offsets(stacks):
        ub = stacks["UB"]
        for r in range(ub.shape[0]):
            words = rng.integers(0, src_len // es, 3 * lanes).astype(np.uint32) * es
            ub[r, off:off + words.nbytes] = words.view(np.uint8)

    _compare(xs, dtype=dtype, prepare=offsets)
    stacks, gm = _random_state("aiv", 2, dtype, 0)
    offsets(stacks)
    stacks["UB"][1, off + 4 * 5:off + 4 * 6] = np.array([src_len], np.uint32).view(np.uint8)
    _, g = replay_forms.batch_effect(xs[0])
    with pytest.raises(ProgramError, match=rf"vgather \(pc 7\): element 5 of repeat 0 has source offset {src_len} B"):
        g(stacks, slice(0, 2), gm, np.zeros(2, np.int64))
