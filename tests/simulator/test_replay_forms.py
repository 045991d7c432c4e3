"""The batched replay forms (simulator/replay_forms.py) equal the per-instruction execution bit for bit.

Each case builds resolved instructions of one kind, one per core, that share everything but their GM address (one
batch), fills every core's local memories and GM with random values, then runs ``execute`` core by core on one
copy and the batched form over the stacked memories of another — the rows as a slice (consecutive cores) and as an
index array (a subset) — and compares every byte of every memory.
"""
import numpy as np
import pytest

from simulator import GlobalMemory, get_chip, replay_forms
from simulator.core import KIND_SCOPES, Core
from simulator.isa.cube import Fixpipe, LoadL1ToL0A, LoadL1ToL0B, Mmad
from simulator.isa.dma import CopyGmToL1, CopyGmToUb, CopyUbToGm
from simulator.isa.index import VCi
from simulator.isa.vector import VReduce
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


def _compare(xs, kind="aiv", dtype="f32", seed=0):
    """``execute`` per core vs the batched form, for the rows as a slice and as an index array."""
    keys = {replay_forms.batch_key(x) for x in xs}
    assert len(keys) == 1 and None not in keys, "the instructions must form one batch"
    cls = type(xs[0])
    assert cls in replay_forms.FORMS
    n = len(xs)
    for rows in (slice(0, n), np.arange(n) * 2 + 1):  # consecutive cores, then every other core of 2n
        total = n if isinstance(rows, slice) else 2 * n
        stacks, gm = _random_state(kind, total, dtype, seed)
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
        with np.errstate(all="ignore"):
            g(stacks, rows, gm, addrs)
        for s in stacks:
            assert stacks[s].tobytes() == ref_stacks[s].tobytes(), f"{cls.__name__}: {s} differs (rows {rows})"
        assert gm.data.tobytes() == ref_gm.data.tobytes(), f"{cls.__name__}: GM differs (rows {rows})"


@pytest.mark.parametrize("op, dtype, whole, src_rep", [("sum", "f32", 0, 8), ("sum", "f16", 0, 16),
                                                       ("sum", "f32", 1, 8), ("rmax", "f16", 0, 8),
                                                       ("rmin", "f32", 1, 12), ("sum", "f32", 0, 12)])
def test_reduction_form(op, dtype, whole, src_rep):
    lanes = 256 // (2 if dtype == "f16" else 4)
    xs = [_resolved(VReduce, op=op, dtype=dtype, dst=4096, src=0, repeat=5, mask=lanes - 3, src_rep=src_rep,
                    whole=whole) for _ in range(4)]
    _compare(xs, dtype=dtype)


@pytest.mark.parametrize("dtype, dst_rep", [("f32", 8), ("i16", 8), ("f16", 12)])
def test_vci_form(dtype, dst_rep):
    xs = [_resolved(VCi, dtype=dtype, dst=256, first=-37, repeat=3, mask=40, dst_rep=dst_rep) for _ in range(3)]
    _compare(xs)


@pytest.mark.parametrize("cls, kind", [(CopyGmToUb, "aiv"), (CopyUbToGm, "aiv"), (CopyGmToL1, "aic")])
@pytest.mark.parametrize("gm_step", [320, "uneven"])
def test_strided_dma_form(cls, kind, gm_step):
    """Bursts of 64 B every 96 B locally and every 256 B in GM (loads: GM to local; stores: local to GM), each core
    at its own GM address: evenly stepped (one strided view) or not (a view per core)."""
    bases = [i * 4096 + (i * i * 64 if gm_step == "uneven" else i * gm_step) for i in range(5)]
    load = cls is not CopyUbToGm
    xs = [_resolved(cls, dst=512 if load else b, src=b if load else 512, burst_len=64, n_burst=9,
                    src_stride=256 if load else 96, dst_stride=96 if load else 256) for b in bases]
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
