"""PIPE_V: repeat-based vector instructions over UB.

Every vector instruction processes `repeat` (1..255) repeats of up to `lanes = 256 / widest element size`
elements. Within a repeat, element e of an operand with element size `es` lives at

    addr + r*rep_stride*32 + (e // (32/es))*blk_stride*32 + (e % (32/es))*es

(strides in 32-B blocks, as Ascend C's level-0 vector APIs; defaults blk 1, rep 8 = contiguous). `mask` is
the number of active elements per repeat (a continuous mask, 1..lanes); inactive elements are untouched.
Arithmetic is numpy in the instruction's dtype (fp16/bf16 results are correctly rounded: numpy computes in
fp32 and rounds once, which is exact for + - * / since 24 >= 2*11+2). Transcendentals are evaluated in fp32
and rounded to the dtype (the hardware's ulp error is not modelled). Supported dtypes follow CANN-INI's
intrinsic map (e.g. no bf16 arithmetic: cast to f32 first).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache, partial

import numpy as np

from .base import Access, Instr
from ..dtypes import FLOAT_TYPES, itemsize, np_dtype
from ..stack_rows import as_array, grid_shape, rows_view
from ..errors import ProgramError
from ..intmath import ceil_div
from .scalar_mem import check_dreg_name, read_dreg


@lru_cache(maxsize=8192)
def lane_offsets(repeat: int, mask: int, es: int, blk: int, rep: int) -> np.ndarray:
    """Byte offsets (repeat, mask) of the active elements of one operand."""
    e = np.arange(mask)
    epb = 32 // es
    off = (e // epb) * (blk * 32) + (e % epb) * es
    out = (np.arange(repeat) * (rep * 32))[:, None] + off[None, :]
    out.flags.writeable = False
    return out


@lru_cache(maxsize=8192)
def lanes_contiguous(repeat: int, mask: int, es: int, blk: int, rep: int) -> bool:
    """Whether :func:`lane_offsets` are one run of ``repeat * mask`` consecutive elements (then an operand is a slice
    of UB: the same elements as the index array, read and written without fancy indexing)."""
    off = lane_offsets(repeat, mask, es, blk, rep).reshape(-1)
    return bool((off == np.arange(off.size) * es).all())


def _rows_get(v, rows, i):
    """Elements ``i`` (a slice or flat index array) of the rows ``rows`` (a slice or index array) of ``v``."""
    if isinstance(i, slice) or isinstance(rows, slice):
        return v[rows, i]
    return v[rows[:, None], i[None, :]]


def _rows_set(v, rows, i, value):
    if isinstance(i, slice) or isinstance(rows, slice):
        v[rows, i] = value
    else:
        v[rows[:, None], i[None, :]] = value


def _bound_op(ub2, rows, srcs, d, fn, dt):
    """None, or a function of nothing with ``_rows_set(v, rows, d, fn(*sources).astype(dt))``'s effect over the
    stacked UBs ``ub2`` viewed as ``dt`` (launch replay's compiled plan): the rows as one strided view made once
    (a grid, stack_rows.py), and the operands that are slices as views of it. ``fn`` makes a new array, so every
    source is read before ``d`` is written."""
    shape = grid_shape(as_array(rows))
    if shape is None:
        return None
    v = rows_view(ub2, rows, shape, 0, ub2.shape[1]).view(dt)
    if isinstance(d, slice) and all(isinstance(i, slice) for i in srcs):
        ins, out = [v[..., i] for i in srcs], v[..., d]
        uf, *extra = (fn,) if isinstance(fn, np.ufunc) else getattr(fn, "ufunc", (None,))  # fn(x) = uf(x, *extra)
        if uf is not None and ins and uf(*ins, *extra).dtype == dt:  # a ufunc whose result is already dt:
            return partial(uf, *ins, *extra, out=out)  # in place (numpy buffers operands overlapping the output)

        def run():
            out[...] = np.asarray(fn(*ins)).astype(dt)
        return run

    def run_indexed():
        v[..., d] = np.asarray(fn(*[v[..., i] for i in srcs])).astype(dt)
    return run_indexed


@lru_cache(maxsize=8192)
def block_offsets(repeat: int, nbytes: int, blk: int, rep: int) -> np.ndarray:
    """Start offsets of the 32-B blocks touched (nbytes active bytes per repeat)."""
    nb = ceil_div(nbytes, 32)
    out = ((np.arange(repeat) * (rep * 32))[:, None] + (np.arange(nb) * (blk * 32))[None, :]).reshape(-1)
    out.flags.writeable = False
    return out


@lru_cache(maxsize=8192)
def block_span(repeat: int, nbytes: int, blk: int, rep: int) -> tuple[int, int, bool]:
    """(lowest block offset, end of the highest block, whether the blocks are one run [0, 32·n)) of
    :func:`block_offsets`: every offset is a multiple of 32, so an operand's blocks are 32-B aligned exactly
    when its address is."""
    offs = block_offsets(repeat, nbytes, blk, rep)
    run = bool((offs == np.arange(offs.size) * 32).all())
    return int(offs.min()), int(offs.max()) + 32, run


def _check_repeat(ins, chip_max=255):
    if not (1 <= ins.repeat <= chip_max):
        raise ProgramError(f"{ins.describe()}: repeat={ins.repeat} must be in 1..{chip_max}")
    if not (1 <= ins.mask <= ins.lanes):
        raise ProgramError(f"{ins.describe()}: mask={ins.mask} must be in 1..{ins.lanes} "
                           f"(lanes per repeat for {ins.widest} B elements)")


ALLOWED = {  # CANN-INI [VectorCoreintrinsicDtypeMap] (Ascend910B1.ini)
    "add": ("f16", "f32", "i32", "i16"), "sub": ("f16", "f32", "i32", "i16"),
    "mul": ("f16", "f32", "i32", "i16"), "max": ("f16", "f32", "i32", "i16"),
    "min": ("f16", "f32", "i32", "i16"), "div": ("f16", "f32"), "and": ("i16", "u16"), "or": ("i16", "u16"),
    "exp": ("f16", "f32"), "ln": ("f16", "f32"), "sqrt": ("f16", "f32"), "rsqrt": ("f16", "f32"),
    "rec": ("f16", "f32"), "abs": ("f16", "f32"), "relu": ("f16", "f32", "i32"), "neg": ("f16", "f32", "i32"),
    "not": ("i16", "u16"), "copy": ("f16", "bf16", "f32", "i32", "i16", "u16"),
    "adds": ("f16", "f32", "i32", "i16"), "muls": ("f16", "f32", "i32", "i16"),
    "maxs": ("f16", "f32", "i32", "i16"), "mins": ("f16", "f32", "i32", "i16"),
    "lrelu": ("f16", "f32"),
    "sum": ("f16", "f32"), "rmax": ("f16", "f32"), "rmin": ("f16", "f32"),
}


def _allowed(ins, op, dtype):
    if dtype not in ALLOWED[op]:
        raise ProgramError(f"{ins.mnemonic}: dtype {dtype} not supported (CANN-INI allows {ALLOWED[op]}); "
                           f"cast to f32 first")


def _no_b64(ins, dtype):
    if itemsize(dtype) == 8:  # Ascend C Duplicate/Brcb on A2: b16 and b32 element types only
        raise ProgramError(f"{ins.mnemonic}: dtype {dtype} not supported (8-byte elements exist only in vconv)")


@dataclass
class VectorInstr(Instr):
    """Shared machinery: `ops` lists (role, addr field, dtype, blk field, rep field) per operand."""
    READS_PADDING = True  # whole repeats and blocks: the lanes past a partial tile's data are its padding
    PIPE = "V"
    COST = "binary"

    @property
    def widest(self):
        return max(itemsize(t) for t in self._types())

    @property
    def lanes(self):
        return 256 // self.widest

    def _types(self):
        return (self.dtype,)

    def operands_spec(self):  # -> list of (is_write, addr, dtype, blk, rep)
        raise NotImplementedError

    def check(self, core) -> None:
        if self.mask == 0:
            self.mask = self.lanes
        _check_repeat(self, core.chip.max_repeat)
        ub = core.local("UB", self)
        size = ub.size
        for w, addr, dt, blk, rep in self.operands_spec():
            nbytes = self.mask * itemsize(dt)
            lo, hi, _ = block_span(self.repeat, nbytes, blk, rep)
            aligned = addr % 32 == 0 or self._unaligned_ok(w)
            if 0 <= addr < size and addr + lo >= 0 and addr + hi <= size and aligned:
                continue  # the common case, decided from the cached span; the checks below name the fault
            ub.check(self.describe(), np.asarray([addr]), 1)
            offs = block_offsets(self.repeat, nbytes, blk, rep)
            ub.check(self.describe(), addr + offs, 32, align=32 if not self._unaligned_ok(w) else 1)

    def _unaligned_ok(self, w):
        return False

    def accesses(self, core):
        out = []
        for w, addr, dt, blk, rep in self.operands_spec():
            nbytes = self.mask * itemsize(dt)
            lo, hi, run = block_span(self.repeat, nbytes, blk, rep)
            if run:  # one run of blocks: one burst (the same 32-B granules, checked as a slice)
                starts, length = np.array([addr]), hi
            else:
                starts, length = addr + block_offsets(self.repeat, nbytes, blk, rep), 32
            for t in self._tags_at(w, addr):
                out.append(Access("UB", w, starts, length, t))
        return out

    def _tags_at(self, w, addr):
        """The tags of the operand fields at ``addr`` written (``w``) or read: one access per distinct tag, so two
        operands that claim different buffers at the same bytes cannot both pass."""
        if not self.tags:
            return (None,)
        ts = {t for f, t in self.tags.items() if f.startswith("dst") == w and getattr(self, f) == addr}
        return sorted(ts) or (None,)

    def _idx(self, addr, dt, blk, rep):
        es = itemsize(dt)
        return (addr + lane_offsets(self.repeat, self.mask, es, blk, rep)) // es

    def load(self, core, addr, dt, blk, rep):
        """The operand's active elements, (repeat, mask), a copy."""
        es = itemsize(dt)
        n, m = self.repeat, self.mask
        if lanes_contiguous(n, m, es, blk, rep):
            i = addr // es
            return core.mem["UB"].view(dt)[i: i + n * m].reshape(n, m).copy()
        return core.mem["UB"].view(dt)[self._idx(addr, dt, blk, rep)]

    def _operand(self, addr, dt, blk, rep, write=False):
        """The operand's active elements as an index of UB viewed as ``dt``, in load/store's row-major order: a slice
        when contiguous, else a flat index array; None for a written operand with repeated elements (execute's
        fancy assignment then decides which value lands)."""
        es = itemsize(dt)
        if lanes_contiguous(self.repeat, self.mask, es, blk, rep):
            return slice(addr // es, addr // es + self.repeat * self.mask)
        idx = self._idx(addr, dt, blk, rep).reshape(-1)
        if write and np.unique(idx).size != idx.size:
            return None
        return idx

    def _fast(self):
        """None, or (source operand indices, destination index, fn, dtype) with execute's effect being
        ``dst = asarray(fn(*sources)).astype(dtype)`` over UB viewed as ``self.dtype`` (subclasses)."""
        return None

    def fast_effect(self):
        f = self._fast()
        if f is None:
            return None
        srcs, d, fn, dt = f
        name = self.dtype

        def effect(core):  # fn makes a new array (astype copies what "copy" returns): read before written
            v = core.mem["UB"].view(name)
            v[d] = np.asarray(fn(*[v[i] for i in srcs])).astype(dt)
        effect.bind = lambda core: _bound_op(core.mem["UB"].data[None, :], slice(0, 1), srcs, d, fn, dt)
        return effect

    def _batched(self):
        """None, or ``g(ub2, rows)``: execute's effect on the rows ``rows`` of stacked UBs ``ub2`` (cores x bytes).
        From :meth:`_fast`: the same fn over (rows, the operands' elements)."""
        f = self._fast()
        if f is None:
            return None
        srcs, d, fn, dt = f

        def g(ub2, rows):
            v = ub2.view(dt)
            _rows_set(v, rows, d, np.asarray(fn(*[_rows_get(v, rows, i) for i in srcs])).astype(dt))
        g.bind = lambda ub2, rows: _bound_op(ub2, rows, srcs, d, fn, dt)
        return g

    def batch_key(self):
        if self.reads_dregs or self._batched() is None:
            return None
        return self._field_key()

    def batch_effect(self):
        g = self._batched()

        def effect(ub2, rows, gm, addrs):
            g(ub2, rows)
        if hasattr(g, "bind"):
            effect.bind = lambda ub2, rows, gm, addrs: g.bind(ub2, rows)
        return "UB", effect

    def _fast_from_batched(self):
        """A fast effect that runs :meth:`_batched` on the core's UB as a one-row stack."""
        g = self._batched()
        if g is None:
            return None
        one = slice(0, 1)

        def effect(core):
            g(core.mem["UB"].data[None, :], one)
        if hasattr(g, "bind"):
            effect.bind = lambda core: g.bind(core.mem["UB"].data[None, :], one)
        return effect

    def store(self, core, addr, dt, blk, rep, value):
        es = itemsize(dt)
        n, m = self.repeat, self.mask
        if lanes_contiguous(n, m, es, blk, rep):
            i = addr // es
            core.mem["UB"].view(dt)[i: i + n * m].reshape(n, m)[...] = value
            return
        core.mem["UB"].view(dt)[self._idx(addr, dt, blk, rep)] = value

    def cycles(self, chip) -> int:
        return self.repeat * chip.vector.per_repeat[self.cost_class()]

    def cost_class(self):
        return self.COST

    def head(self, chip) -> int:
        return chip.vector.startup

    def flops(self) -> int:
        return self.repeat * self.mask


BINARY_FUNS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "max": np.maximum,
               "min": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or}


@dataclass
class VBinary(VectorInstr):
    """dst[e] = src0[e] (op) src1[e] for every active element of every repeat."""
    op: str
    dtype: str
    dst: object
    src0: object
    src1: object
    repeat: object = 1
    mask: object = 0
    dst_blk: object = 1
    src0_blk: object = 1
    src1_blk: object = 1
    dst_rep: object = 8
    src0_rep: object = 8
    src1_rep: object = 8
    EXPRS = ("dst", "src0", "src1", "repeat", "mask", "dst_blk", "src0_blk", "src1_blk", "dst_rep",
             "src0_rep", "src1_rep")

    @property
    def mnemonic(self):
        return "v" + self.op

    def validate(self):
        if self.op not in BINARY_FUNS:
            raise ProgramError(f"vbinary: unknown op {self.op!r}; known {sorted(BINARY_FUNS)}")
        _allowed(self, self.op, self.dtype)

    def cost_class(self):
        return ("div_f16" if self.dtype == "f16" else "div_f32") if self.op == "div" else "binary"

    def operands_spec(self):
        return [(False, self.src0, self.dtype, self.src0_blk, self.src0_rep),
                (False, self.src1, self.dtype, self.src1_blk, self.src1_rep),
                (True, self.dst, self.dtype, self.dst_blk, self.dst_rep)]

    def execute(self, core):
        a = self.load(core, self.src0, self.dtype, self.src0_blk, self.src0_rep)
        b = self.load(core, self.src1, self.dtype, self.src1_blk, self.src1_rep)
        with np.errstate(all="ignore"):
            r = BINARY_FUNS[self.op](a, b)
        self.store(core, self.dst, self.dtype, self.dst_blk, self.dst_rep, r.astype(np_dtype(self.dtype)))

    def _fast(self):
        ops = [self._operand(self.src0, self.dtype, self.src0_blk, self.src0_rep),
               self._operand(self.src1, self.dtype, self.src1_blk, self.src1_rep),
               self._operand(self.dst, self.dtype, self.dst_blk, self.dst_rep, write=True)]
        if any(o is None for o in ops):
            return None
        return ops[:2], ops[2], BINARY_FUNS[self.op], np_dtype(self.dtype)


def _f32(x):
    return x.astype(np.float32)


UNARY_FUNS = {
    "exp": (lambda x: np.exp(_f32(x)), "transcendental"), "ln": (lambda x: np.log(_f32(x)), "transcendental"),
    "sqrt": (lambda x: np.sqrt(_f32(x)), "transcendental"),
    "rsqrt": (lambda x: np.float32(1) / np.sqrt(_f32(x)), "transcendental"),
    "rec": (lambda x: np.float32(1) / _f32(x), "transcendental"),
    "abs": (np.abs, "scalar"), "relu": (lambda x: np.maximum(x, np.zeros((), x.dtype)), "scalar"),
    "neg": (np.negative, "scalar"), "not": (np.invert, "scalar"), "copy": (lambda x: x, "scalar"),
}


@dataclass
class VUnary(VectorInstr):
    """dst[e] = op(src[e]). exp/ln/sqrt/rsqrt/rec in fp32 then rounded; abs/relu/neg/not/copy exact."""
    op: str
    dtype: str
    dst: object
    src: object
    repeat: object = 1
    mask: object = 0
    dst_blk: object = 1
    src_blk: object = 1
    dst_rep: object = 8
    src_rep: object = 8
    EXPRS = ("dst", "src", "repeat", "mask", "dst_blk", "src_blk", "dst_rep", "src_rep")

    @property
    def mnemonic(self):
        return "v" + self.op

    def validate(self):
        if self.op not in UNARY_FUNS:
            raise ProgramError(f"vunary: unknown op {self.op!r}; known {sorted(UNARY_FUNS)}")
        _allowed(self, self.op, self.dtype)

    def cost_class(self):
        return UNARY_FUNS[self.op][1]

    def flops(self):
        return 0 if self.op == "copy" else self.repeat * self.mask

    def operands_spec(self):
        return [(False, self.src, self.dtype, self.src_blk, self.src_rep),
                (True, self.dst, self.dtype, self.dst_blk, self.dst_rep)]

    def execute(self, core):
        x = self.load(core, self.src, self.dtype, self.src_blk, self.src_rep)
        with np.errstate(all="ignore"):
            r = UNARY_FUNS[self.op][0](x)
        self.store(core, self.dst, self.dtype, self.dst_blk, self.dst_rep, np.asarray(r).astype(np_dtype(self.dtype)))

    def _fast(self):
        ops = [self._operand(self.src, self.dtype, self.src_blk, self.src_rep),
               self._operand(self.dst, self.dtype, self.dst_blk, self.dst_rep, write=True)]
        if any(o is None for o in ops):
            return None
        return ops[:1], ops[1], UNARY_FUNS[self.op][0], np_dtype(self.dtype)


VECTOR_SCALAR_FUNS = {"adds": np.add, "muls": np.multiply, "maxs": np.maximum, "mins": np.minimum,
                      "lrelu": lambda x, s: np.where(x >= 0, x, x * s)}


@dataclass
class VScalar(VectorInstr):
    """dst[e] = src[e] (op) scalar; the scalar is first rounded to the dtype (as the hardware register).

    With ``sreg`` the scalar is that data register (a value the scalar unit loaded from UB with ``ld_ub``,
    isa/scalar_mem.py), read as the scalar unit issues the instruction (bound in phase 2); ``scalar`` is then unused.
    """
    op: str
    dtype: str
    dst: object
    src: object
    scalar: object = 0
    repeat: object = 1
    mask: object = 0
    dst_blk: object = 1
    src_blk: object = 1
    dst_rep: object = 8
    src_rep: object = 8
    sreg: str = "-"
    EXPRS = ("dst", "src", "scalar", "repeat", "mask", "dst_blk", "src_blk", "dst_rep", "src_rep")
    OPTIONAL = {"sreg": "-"}
    COST = "scalar"

    @property
    def mnemonic(self):
        return "v" + self.op

    @property
    def reads_dregs(self) -> bool:
        return self.sreg != "-"

    def bind(self, core) -> None:
        self.scalar = read_dreg(core, self, self.sreg)

    def validate(self):
        if self.op not in VECTOR_SCALAR_FUNS:
            raise ProgramError(f"vscalar: unknown op {self.op!r}; known {sorted(VECTOR_SCALAR_FUNS)}")
        _allowed(self, self.op, self.dtype)
        if self.sreg != "-":
            check_dreg_name(self.sreg, self.mnemonic)

    def operands_spec(self):
        return [(False, self.src, self.dtype, self.src_blk, self.src_rep),
                (True, self.dst, self.dtype, self.dst_blk, self.dst_rep)]

    def execute(self, core):
        dt = np_dtype(self.dtype)
        x = self.load(core, self.src, self.dtype, self.src_blk, self.src_rep)
        s = np.asarray(self.scalar).astype(dt)
        with np.errstate(all="ignore"):
            r = VECTOR_SCALAR_FUNS[self.op](x, s)
        self.store(core, self.dst, self.dtype, self.dst_blk, self.dst_rep, np.asarray(r).astype(dt))

    def _fast(self):
        ops = [self._operand(self.src, self.dtype, self.src_blk, self.src_rep),
               self._operand(self.dst, self.dtype, self.dst_blk, self.dst_rep, write=True)]
        if any(o is None for o in ops):
            return None
        dt, fn = np_dtype(self.dtype), VECTOR_SCALAR_FUNS[self.op]
        # self.scalar read per call: a bind (sreg) sets it on every replay; batched only without sreg (batch_key)
        f = lambda x: fn(x, np.asarray(self.scalar).astype(dt))  # noqa: E731
        if isinstance(fn, np.ufunc) and not self.reads_dregs:  # the scalar is fixed: fn(x, s) for _bound_op
            f.ufunc = (fn, np.asarray(self.scalar).astype(dt))
        return ops[:1], ops[1], f, dt


@dataclass
class VDup(VectorInstr):
    """dst[e] = scalar (rounded to dtype)."""
    dtype: str
    dst: object
    scalar: object
    repeat: object = 1
    mask: object = 0
    dst_blk: object = 1
    dst_rep: object = 8
    EXPRS = ("dst", "scalar", "repeat", "mask", "dst_blk", "dst_rep")
    MNEMONIC = "vdup"
    COST = "scalar"

    def validate(self):
        _no_b64(self, self.dtype)

    def flops(self):
        return 0

    def operands_spec(self):
        return [(True, self.dst, self.dtype, self.dst_blk, self.dst_rep)]

    def execute(self, core):
        dt = np_dtype(self.dtype)
        v = np.full((self.repeat, self.mask), np.asarray(self.scalar).astype(dt), dtype=dt)
        self.store(core, self.dst, self.dtype, self.dst_blk, self.dst_rep, v)

    def _fast(self):
        d = self._operand(self.dst, self.dtype, self.dst_blk, self.dst_rep, write=True)
        if d is None:
            return None
        dt, n = np_dtype(self.dtype), self.repeat * self.mask
        return [], d, lambda: np.full(n, np.asarray(self.scalar).astype(dt), dtype=dt), dt  # broadcast over rows


@dataclass
class VBrcb(VectorInstr):
    """Broadcast per block: for r, i in 8 blocks: dst block i of repeat r = src[r*8 + i] repeated.

    Used to broadcast a column (one value per row) across rows. src is read contiguously (8 per repeat).
    """
    dtype: str
    dst: object
    src: object
    repeat: object = 1
    dst_blk: object = 1
    dst_rep: object = 8
    EXPRS = ("dst", "src", "repeat", "dst_blk", "dst_rep")
    MNEMONIC = "vbrcb"
    COST = "scalar"

    def validate(self):
        _no_b64(self, self.dtype)

    @property
    def mask(self):
        return self.lanes

    @mask.setter
    def mask(self, v):
        pass

    def flops(self):
        return 0

    def operands_spec(self):
        es = itemsize(self.dtype)
        # the src read: repeat*8 contiguous elements, expressed as one repeat-like spec below
        return [(True, self.dst, self.dtype, self.dst_blk, self.dst_rep)]

    def accesses(self, core):
        es = itemsize(self.dtype)
        n = self.repeat * 8 * es
        src = Access("UB", False, self.src + np.arange(0, n, 32), 32, self.tag("src"))
        return [src] + super().accesses(core)

    def check(self, core):
        super().check(core)
        core.local("UB", self).check(self.describe(), np.asarray([self.src]), self.repeat * 8 * itemsize(self.dtype))

    def execute(self, core):
        es = itemsize(self.dtype)
        v = core.mem["UB"].view(self.dtype)
        s = v[self.src // es: self.src // es + self.repeat * 8].reshape(self.repeat, 8)
        vals = np.repeat(s, 32 // es, axis=1)  # (repeat, 8 * epb) = lanes
        self.store(core, self.dst, self.dtype, self.dst_blk, self.dst_rep, vals)

    def _fast(self):
        d = self._operand(self.dst, self.dtype, self.dst_blk, self.dst_rep, write=True)
        if d is None:
            return None
        es, n = itemsize(self.dtype), self.repeat
        src = slice(self.src // es, self.src // es + n * 8)

        def fn(s):  # (..., repeat*8) -> (..., repeat*lanes): execute's np.repeat per row of 8
            lead = s.shape[:-1]
            return np.repeat(s.reshape(lead + (n, 8)), 32 // es, axis=-1).reshape(lead + (-1,))
        return [src], d, fn, np_dtype(self.dtype)


REDUCE_MNEMONICS = {"sum": "vcadd", "rmax": "vcmax", "rmin": "vcmin"}


@dataclass
class VReduce(VectorInstr):
    """Reduction. Per repeat (`whole`=0, vcadd/vcmax/vcmin): dst[r] = reduce(src repeat r active elems);
    whole (vredsum/vredmax/vredmin): dst[0] = reduce over all repeats. Sums accumulate in fp32 (numpy
    pairwise order; the hardware's adder-tree order is not published) and round once to the dtype."""
    op: str
    dtype: str
    dst: object
    src: object
    repeat: object = 1
    mask: object = 0
    src_blk: object = 1
    src_rep: object = 8
    whole: object = 0
    EXPRS = ("dst", "src", "repeat", "mask", "src_blk", "src_rep")
    COST = "reduce"

    @property
    def mnemonic(self):
        return ("vred" + self.op.lstrip("r")) if self.whole else REDUCE_MNEMONICS[self.op]

    def validate(self):
        if self.op not in REDUCE_MNEMONICS:
            raise ProgramError(f"vreduce: unknown op {self.op!r}; known {sorted(REDUCE_MNEMONICS)}")
        _allowed(self, self.op, self.dtype)

    def operands_spec(self):
        return [(False, self.src, self.dtype, self.src_blk, self.src_rep)]

    def _dst_bytes(self):
        return (1 if self.whole else self.repeat) * itemsize(self.dtype)

    def check(self, core):
        super().check(core)
        ub = core.local("UB", self)
        ub.check(self.describe(), np.asarray([self.dst]), self._dst_bytes(), align=itemsize(self.dtype))

    def accesses(self, core):
        n = self._dst_bytes()
        lo, hi = self.dst // 32, (self.dst + n - 1) // 32
        return super().accesses(core) + [Access("UB", True, np.arange(lo, hi + 1) * 32, 32, self.tag("dst"))]

    def execute(self, core):
        x = self.load(core, self.src, self.dtype, self.src_blk, self.src_rep).astype(np.float32)
        f = {"sum": np.sum, "rmax": np.max, "rmin": np.min}[self.op]
        r = f(x) if self.whole else f(x, axis=1)
        es = itemsize(self.dtype)
        v = core.mem["UB"].view(self.dtype)
        out = np.atleast_1d(np.asarray(r, dtype=np.float32)).astype(np_dtype(self.dtype))
        v[self.dst // es: self.dst // es + out.size] = out


BLOCK_REDUCE_MNEMONICS = {"sum": "vcgadd", "rmax": "vcgmax", "rmin": "vcgmin"}
F16_MAX = 65504.0


@dataclass
class VBlockReduce(VectorInstr):
    """Block reduction (vcgadd/vcgmax/vcgmin; Ascend C BlockReduceSum/Max/Min): each 32-B block of a repeat
    reduces to one element, dst[(r·dst_rep)·8 + b] = reduce(the active elements of block b of repeat r) — up to 8
    results per repeat, one per block holding an active element (blocks past the mask are not written); dst_rep
    counts one repeat's 8 results (16 B of f16, 32 B of f32; Ascend C's dstRepStride), dst aligned to it. A sum
    adds the block's elements as a binary tree of adjacent pairs in the dtype (f16: every partial rounded to f16,
    a finite overflow saturating at ±65504, as documented); max/min are exact. CANN-INI lists Intrinsic_vcgadd,
    vcgmax, vcgmin for float16 and float32 on Ascend910B1."""
    op: str
    dtype: str
    dst: object
    src: object
    repeat: object = 1
    mask: object = 0
    src_blk: object = 1
    src_rep: object = 8
    dst_rep: object = 1
    EXPRS = ("dst", "src", "repeat", "mask", "src_blk", "src_rep", "dst_rep")
    COST = "block_reduce"

    @property
    def mnemonic(self):
        return BLOCK_REDUCE_MNEMONICS[self.op]

    def validate(self):
        if self.op not in BLOCK_REDUCE_MNEMONICS:
            raise ProgramError(f"vblockreduce: unknown op {self.op!r}; known {sorted(BLOCK_REDUCE_MNEMONICS)}")
        _allowed(self, self.op, self.dtype)

    def operands_spec(self):
        return [(False, self.src, self.dtype, self.src_blk, self.src_rep)]

    def _per_block(self) -> int:
        return 32 // itemsize(self.dtype)

    def _results(self) -> int:
        return ceil_div(self.mask, self._per_block())

    def _dst_offsets(self) -> np.ndarray:
        """Element offsets from dst of every result: (repeat, results per repeat)."""
        return (np.arange(self.repeat) * (self.dst_rep * 8))[:, None] + np.arange(self._results())[None, :]

    def check(self, core):
        super().check(core)
        es = itemsize(self.dtype)
        ub = core.local("UB", self)
        ub.check(self.describe(), np.asarray([self.dst]), 1, align=8 * es)
        ub.check(self.describe(), self.dst + self._dst_offsets().reshape(-1) * es, es, align=es)

    def accesses(self, core):
        es = itemsize(self.dtype)
        blocks = np.unique((self.dst + self._dst_offsets().reshape(-1) * es) // 32) * 32
        return super().accesses(core) + [Access("UB", True, blocks, 32, self.tag("dst"))]

    def execute(self, core):
        x = self.load(core, self.src, self.dtype, self.src_blk, self.src_rep)
        epb, nb = self._per_block(), self._results()
        ident = {"sum": 0, "rmax": -np.inf, "rmin": np.inf}[self.op]
        pad = np.full((x.shape[0], nb * epb - x.shape[1]), ident, dtype=x.dtype)
        x = np.concatenate([x, pad], axis=1).reshape(x.shape[0], nb, epb)
        if self.op == "sum":
            while x.shape[-1] > 1:  # adjacent pairs, each partial rounded to the dtype
                with np.errstate(over="ignore"):
                    s = x[..., 0::2].astype(np.float32) + x[..., 1::2].astype(np.float32)
                    x = s.astype(x.dtype)
                if self.dtype == "f16":  # a finite overflow saturates (BlockReduceSum's documented behaviour)
                    big = np.isfinite(s) & ~np.isfinite(x.astype(np.float32))
                    x = np.where(big, np.sign(s) * F16_MAX, x).astype(x.dtype)
            r = x[..., 0]
        else:
            r = (np.max if self.op == "rmax" else np.min)(x, axis=-1)
        v = core.mem["UB"].view(self.dtype)
        v[(self.dst // itemsize(self.dtype) + self._dst_offsets()).reshape(-1)] = r.reshape(-1)


ROUND_MODES = ("rint", "round", "floor", "ceil", "trunc")
CASTS = {  # CANN-INI vconv list (src, dst) -> allowed round modes
    ("f16", "f32"): ("rint",), ("f32", "f16"): ("rint",), ("bf16", "f32"): ("rint",),
    ("f16", "i32"): ROUND_MODES, ("f32", "i32"): ROUND_MODES, ("bf16", "i32"): ROUND_MODES,
    ("i32", "f16"): ("rint",), ("f16", "i8"): ROUND_MODES, ("i8", "f16"): ("rint",),
    ("f16", "i16"): ROUND_MODES, ("i16", "f16"): ("rint",), ("f32", "i16"): ROUND_MODES,
    ("f32", "f32"): ROUND_MODES, ("i16", "f32"): ("rint",),
    # AscendNPU-IR's vector template library for Ascend910B (`bishengir/lib/Template/lib/Vector/Cast/Cast1D.cpp`,
    # built for aiv/Ascend910B) issues vconv_f322bf16{r,a,f,c,z}, vconv_s322f32{r,a,f,c,z}, vconv_f322s64{r,a,f,c,z},
    # vconv_s642f32{r,a,f,c,z}, vconv_s322s64 and vconv_s642s32; the Ascend C Cast API (CANN 8.0.RC3,
    # atlasascendc_api_07_0073) documents float -> int64_t with these round modes, saturating on overflow.
    ("f32", "bf16"): ROUND_MODES, ("i32", "f32"): ROUND_MODES,
    ("f32", "i64"): ROUND_MODES, ("i64", "f32"): ROUND_MODES, ("i32", "i64"): ("rint",), ("i64", "i32"): ("rint",),
}
# Integer narrowings whose overflow behaviour the CTRL register's bit 59 selects (AscendNPU-IR's CastUtils.h
# set_saturation_ctrl: set around vconv_s642s32 for a truncating cast): "saturate" (bit clear, the default) or
# "wrap" (bit set: the low bits are kept, two's complement). The field stands for that CTRL setting.
OVERFLOW_MODES = {("i64", "i32"): ("saturate", "wrap")}
_ROUND = {"rint": np.rint, "round": lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), "floor": np.floor,
          "ceil": np.ceil, "trunc": np.trunc}
_SIG_BITS = {"f16": 11, "bf16": 8, "f32": 24}  # significand bits of each float type (with the hidden bit)


def _bit_length(m: np.ndarray) -> np.ndarray:
    """Bit length of each uint64 (0 for 0)."""
    n = np.zeros(m.shape, np.int64)
    for s in (32, 16, 8, 4, 2, 1):
        big = (m >> (n + s).astype(np.uint64)) != 0
        n = np.where(big, n + s, n)
    return np.where(m != 0, n + 1, 0)


def _int_to_float(x: np.ndarray, dst: str, mode: str) -> np.ndarray:
    """Integers rounded once to float type ``dst`` with ``mode`` (exact integer arithmetic, any int64)."""
    x = x.astype(np.int64)
    neg = x < 0
    mag = np.where(neg, (-(x + 1)).astype(np.uint64) + np.uint64(1), x.astype(np.uint64))
    shift = np.maximum(_bit_length(mag) - _SIG_BITS[dst], 0).astype(np.uint64)
    q = mag >> shift
    rem = mag - (q << shift)
    half = np.where(shift > 0, np.uint64(1) << np.maximum(shift, np.uint64(1)) - np.uint64(1), np.uint64(0))
    inexact = rem != 0
    up = {"rint": inexact & ((rem > half) | ((rem == half) & (q % np.uint64(2) == 1))),
          "round": inexact & (rem >= half), "trunc": np.zeros_like(inexact),
          "floor": inexact & neg, "ceil": inexact & ~neg}[mode]
    q = q + up.astype(np.uint64)
    v = q.astype(np.float64) * np.exp2(shift.astype(np.float64))  # exact: q <= 2^24, a power-of-two scale
    with np.errstate(over="ignore"):
        return np.where(neg, -v, v).astype(np_dtype(dst))


def _float_narrow(x: np.ndarray, dst: str, mode: str) -> np.ndarray:
    """f32 rounded once to a narrower float type with ``mode`` (overflow gives +-inf, IEEE)."""
    dt = np_dtype(dst)
    with np.errstate(over="ignore"):
        r = x.astype(dt)  # round to nearest even
    if mode == "rint":
        return r
    xd = x.astype(np.float64)
    if mode != "round":  # a directed mode: an overflow to +-inf starts from the largest finite value instead
        big = np.isfinite(xd) & ~np.isfinite(r.astype(np.float64))
        largest = np.nextafter(np.asarray(np.inf, dt), np.asarray(0, dt))
        r = np.where(big, np.where(xd > 0, largest, -largest), r).astype(dt)
    w = r.astype(np.float64)
    finite = np.isfinite(xd) & np.isfinite(w)
    toward_pos = np.nextafter(r, np.full_like(r, np.inf))
    toward_neg = np.nextafter(r, np.full_like(r, -np.inf))
    if mode == "floor":
        return np.where(finite & (w > xd), toward_neg, r)
    if mode == "ceil":
        return np.where(finite & (w < xd), toward_pos, r)
    if mode == "trunc":
        return np.where(finite & (np.abs(w) > np.abs(xd)), np.where(xd > 0, toward_neg, toward_pos), r)
    # round: half away from zero; differs from rint only on a tie that rint broke toward zero
    away = np.where(xd > 0, toward_pos, toward_neg)
    with np.errstate(invalid="ignore"):
            tie = finite & (np.abs(w) < np.abs(xd)) & (np.abs(xd - w) == np.abs(away.astype(np.float64) - xd))
    return np.where(tie, away, r)


def _float_to_int(x: np.ndarray, dst: str, mode: str) -> np.ndarray:
    """Round with ``mode``, saturate to the integer range, NaN -> 0."""
    info = np.iinfo(np_dtype(dst))
    y = _ROUND[mode](x.astype(np.float64))
    out = np.zeros(y.shape, np_dtype(dst))
    hi, lo = y >= float(info.max) + 1, y < float(info.min)  # float(2^63 - 1) rounds to 2^63: compare from above
    mid = ~hi & ~lo & ~np.isnan(y)
    out[mid] = y[mid].astype(np_dtype(dst))
    out[hi], out[lo] = info.max, info.min
    return out


@dataclass
class VCast(VectorInstr):
    """dst[e] = convert(src[e]) with a round mode (CANN-INI vconv suffixes r/a/f/c/z = rint/round/floor/
    ceil/trunc), rounded once from the exact source value. Float->int saturates to the integer range
    (NaN -> 0); i64->i32 saturates or, with ``overflow="wrap"`` (the CTRL bit AscendNPU-IR sets for a
    truncating cast), keeps the low 32 bits; widenings are exact. Lanes = 256 / the wider element size."""
    src_dtype: str
    dst_dtype: str
    dst: object
    src: object
    round_mode: str = "rint"
    repeat: object = 1
    mask: object = 0
    dst_blk: object = 1
    src_blk: object = 1
    dst_rep: object = 8
    src_rep: object = 8
    overflow: str = "saturate"
    EXPRS = ("dst", "src", "repeat", "mask", "dst_blk", "src_blk", "dst_rep", "src_rep")
    MNEMONIC = "vconv"
    COST = "cast"

    def _types(self):
        return (self.src_dtype, self.dst_dtype)

    def validate(self):
        key = (self.src_dtype, self.dst_dtype)
        if key not in CASTS:
            raise ProgramError(f"vconv: cast {key[0]}->{key[1]} not supported (CANN-INI vconv list)")
        if self.round_mode not in CASTS[key]:
            raise ProgramError(f"vconv {key[0]}->{key[1]}: round mode {self.round_mode!r} not supported; "
                               f"allowed {CASTS[key]}")
        if self.overflow not in OVERFLOW_MODES.get(key, ("saturate",)):
            raise ProgramError(f"vconv {key[0]}->{key[1]}: overflow {self.overflow!r} not supported; "
                               f"allowed {OVERFLOW_MODES.get(key, ('saturate',))}")

    def operands_spec(self):
        return [(False, self.src, self.src_dtype, self.src_blk, self.src_rep),
                (True, self.dst, self.dst_dtype, self.dst_blk, self.dst_rep)]

    def execute(self, core):
        x = self.load(core, self.src, self.src_dtype, self.src_blk, self.src_rep)
        s, d, mode = self.src_dtype, self.dst_dtype, self.round_mode
        if s in FLOAT_TYPES and d not in FLOAT_TYPES:
            r = _float_to_int(x, d, mode)
        elif s not in FLOAT_TYPES and d in FLOAT_TYPES:
            r = _int_to_float(x, d, mode)
        elif s == d == "f32":
            r = _ROUND[mode](x).astype(np.float32)
        elif s in FLOAT_TYPES:
            r = x.astype(np_dtype(d)) if itemsize(d) > itemsize(s) else _float_narrow(x, d, mode)
        elif self.overflow == "wrap" or itemsize(d) > itemsize(s):
            r = x.astype(np_dtype(d))  # two's complement: sign-extend, or keep the low bits
        else:
            info = np.iinfo(np_dtype(d))
            r = np.clip(x, info.min, info.max).astype(np_dtype(d))
        self.store(core, self.dst, self.dst_dtype, self.dst_blk, self.dst_rep, r)


COMPARE_FUNS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
                "ge": np.greater_equal}


@dataclass
class VCmp(VectorInstr):
    """Bit mask: bit e of repeat r (at dst + r*lanes/8, little-endian bit order) = src0[e] (op) src1[e];
    inactive lanes give 0. With `scalar_rhs`=1 (vcmps_*) the right operand is `scalar` instead of src1."""
    op: str
    dtype: str
    dst: object
    src0: object
    src1: object = 0
    scalar: object = 0
    scalar_rhs: object = 0
    repeat: object = 1
    mask: object = 0
    src0_blk: object = 1
    src1_blk: object = 1
    src0_rep: object = 8
    src1_rep: object = 8
    EXPRS = ("dst", "src0", "src1", "scalar", "repeat", "mask", "src0_blk", "src1_blk", "src0_rep", "src1_rep")

    @property
    def mnemonic(self):
        return ("vcmps_" if self.scalar_rhs else "vcmp_") + self.op

    def validate(self):
        if self.op not in COMPARE_FUNS:
            raise ProgramError(f"vcmp: unknown op {self.op!r}; known {sorted(COMPARE_FUNS)}")
        if self.dtype not in ("f16", "f32", "i32"):
            raise ProgramError(f"{self.mnemonic}: dtype {self.dtype} not supported (CANN-INI: f16, f32, i32)")

    def operands_spec(self):
        ops = [(False, self.src0, self.dtype, self.src0_blk, self.src0_rep)]
        if not self.scalar_rhs:
            ops.append((False, self.src1, self.dtype, self.src1_blk, self.src1_rep))
        return ops

    def _mask_bytes(self):
        return self.repeat * self.lanes // 8

    def check(self, core):
        super().check(core)
        core.local("UB", self).check(self.describe(), np.asarray([self.dst]), self._mask_bytes())

    def accesses(self, core):
        n = self._mask_bytes()
        return super().accesses(core) + [Access("UB", True, self.dst + np.arange(0, n, 32), min(32, n),
                                                self.tag("dst"))]

    def execute(self, core):
        a = self.load(core, self.src0, self.dtype, self.src0_blk, self.src0_rep)
        if self.scalar_rhs:
            b = np.asarray(self.scalar).astype(np_dtype(self.dtype))
        else:
            b = self.load(core, self.src1, self.dtype, self.src1_blk, self.src1_rep)
        bits = np.zeros((self.repeat, self.lanes), dtype=bool)
        bits[:, : self.mask] = COMPARE_FUNS[self.op](a, b)
        packed = np.packbits(bits, axis=1, bitorder="little").reshape(-1)
        core.mem["UB"].data[self.dst: self.dst + packed.size] = packed

    def fast_effect(self):
        return self._fast_from_batched()

    def _batched(self):
        a = self._operand(self.src0, self.dtype, self.src0_blk, self.src0_rep)
        b = None if self.scalar_rhs else self._operand(self.src1, self.dtype, self.src1_blk, self.src1_rep)
        if a is None or (b is None and not self.scalar_rhs):
            return None
        dt, fn, R, M, L, d0 = np_dtype(self.dtype), COMPARE_FUNS[self.op], self.repeat, self.mask, self.lanes, self.dst
        nbytes = R * L // 8

        def g(ub2, rows):  # execute per row: compare, place in zeroed lane bits, pack little-endian, store bytes
            v = ub2.view(dt)
            x = _rows_get(v, rows, a)
            y = np.asarray(self.scalar).astype(dt) if b is None else _rows_get(v, rows, b).reshape(-1, R, M)
            bits = np.zeros((x.shape[0], R, L), dtype=bool)
            bits[:, :, :M] = fn(x.reshape(-1, R, M), y)
            ub2[rows, d0:d0 + nbytes] = np.packbits(bits, axis=2, bitorder="little").reshape(x.shape[0], -1)
        return g


@dataclass
class VSel(VectorInstr):
    """dst[e] = src0[e] if bit e of repeat r of the mask at `sel` (+ r*lanes/8) else src1[e]."""
    dtype: str
    dst: object
    sel: object
    src0: object
    src1: object
    repeat: object = 1
    mask: object = 0
    dst_blk: object = 1
    src0_blk: object = 1
    src1_blk: object = 1
    dst_rep: object = 8
    src0_rep: object = 8
    src1_rep: object = 8
    EXPRS = ("dst", "sel", "src0", "src1", "repeat", "mask", "dst_blk", "src0_blk", "src1_blk", "dst_rep",
             "src0_rep", "src1_rep")
    MNEMONIC = "vsel"

    def validate(self):
        if self.dtype not in ("f16", "f32"):
            raise ProgramError(f"vsel: dtype {self.dtype} not supported (CANN-INI: f16, f32)")

    def operands_spec(self):
        return [(False, self.src0, self.dtype, self.src0_blk, self.src0_rep),
                (False, self.src1, self.dtype, self.src1_blk, self.src1_rep),
                (True, self.dst, self.dtype, self.dst_blk, self.dst_rep)]

    def accesses(self, core):
        n = self.repeat * self.lanes // 8
        return [Access("UB", False, self.sel + np.arange(0, n, 32), min(32, n), self.tag("sel"))] + super().accesses(core)

    def execute(self, core):
        n = self.repeat * self.lanes // 8
        raw = core.mem["UB"].data[self.sel: self.sel + n].reshape(self.repeat, -1)
        bits = np.unpackbits(raw, axis=1, bitorder="little").astype(bool)[:, : self.mask]
        a = self.load(core, self.src0, self.dtype, self.src0_blk, self.src0_rep)
        b = self.load(core, self.src1, self.dtype, self.src1_blk, self.src1_rep)
        self.store(core, self.dst, self.dtype, self.dst_blk, self.dst_rep, np.where(bits, a, b))

    def fast_effect(self):
        return self._fast_from_batched()

    def _batched(self):
        a = self._operand(self.src0, self.dtype, self.src0_blk, self.src0_rep)
        b = self._operand(self.src1, self.dtype, self.src1_blk, self.src1_rep)
        d = self._operand(self.dst, self.dtype, self.dst_blk, self.dst_rep, write=True)
        if a is None or b is None or d is None:
            return None
        dt, R, M, s0 = np_dtype(self.dtype), self.repeat, self.mask, self.sel
        n = R * self.lanes // 8

        def g(ub2, rows):  # execute per row: the mask bits of each repeat select src0 or src1
            raw = ub2[rows, s0:s0 + n]
            k = raw.shape[0]
            bits = np.unpackbits(raw.reshape(k, R, -1), axis=2, bitorder="little").astype(bool)[:, :, :M]
            v = ub2.view(dt)
            _rows_set(v, rows, d, np.where(bits.reshape(k, R * M), _rows_get(v, rows, a), _rows_get(v, rows, b)))
        return g


@dataclass
class VTranspose(VectorInstr):
    """One 16x16 block of 2-byte elements (512 B): dst[j][i] = src[i][j]. Costs 2 repeats (512 B)."""
    dtype: str
    dst: object
    src: object
    EXPRS = ("dst", "src")
    MNEMONIC = "vtranspose"

    repeat = 2
    mask = 128

    def validate(self):
        if itemsize(self.dtype) != 2:
            raise ProgramError(f"vtranspose: dtype {self.dtype} must be 2 bytes (CANN-INI: u16, i16, f16)")

    def flops(self):
        return 0

    def check(self, core):
        ub = core.local("UB", self)
        ub.check(self.describe(), np.asarray([self.src, self.dst]), 512)

    def accesses(self, core):
        o = np.arange(0, 512, 32)
        return [Access("UB", False, self.src + o, 32, self.tag("src")), Access("UB", True, self.dst + o, 32, self.tag("dst"))]

    def execute(self, core):
        v = core.mem["UB"].view(self.dtype)
        blk = v[self.src // 2: self.src // 2 + 256].reshape(16, 16).T.copy()
        v[self.dst // 2: self.dst // 2 + 256] = blk.reshape(-1)
