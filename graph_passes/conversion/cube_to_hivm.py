"""Lower one scheduled cube kernel (``#hfusion.cube_schedule``) to a HIVM function (after AscendNPU-IR's
HFusionToHIVM ``Matmul.cpp``, at the level of one L0 step; docs/cube.md)::

    for t in range(block_idx, items, block_dim):                 # work items, cyclic over the cube cores
      for (b, mi, ni) in the tiles of work item t:               # one tile, a band of tiles or a group of batches
        m0 = mi·BM; n0 = ni·BN
        em = min(BM, m - m0); en = min(BN, n - n0)
        for kk in range(0, kc, L1K):                              # a_l1, b_l1 rotate (ping-pong)
            ek = min(L1K, kc - kk)                                # kc = k; split-K: the chunk of batch b
            hivm.load A box → a_l1;  hivm.load B box → b_l1      # MTE2, GM orientation (transposed in place),
                                                                  # at K index kk (split-K: b·k_chunk + kk)
            for k0 in range(0, ek, BK):                           # a_l0, b_l0 rotate (ping-pong)
                ek0 = min(BK, ek - k0)
                hivm.load_l0a a_l1 → a_l0 (k0, em, ek0);  hivm.load_l0b b_l1 → b_l0 (k0, 0, ek0, en)   # MTE1
                hivm.mmad a_l0, b_l0 → c_l0 (init = kk + k0 == 0, em, ek0, en)                           # M
        hivm.fixpipe c_l0 → out[b, m0:+em, n0:+en]                                                      # FIX

Every alloc is tagged with its buffer in the schedule (``hivm-mark-multi-buffer`` gives it its copies); the
memories (L1, L0A, L0B, L0C) come from ``hivm-infer-mem-scope``, the flags from ``hivm-inject-sync``.
"""

from __future__ import annotations

from ..dialects import hivm, hivm_cube
from ..dialects.func import ReturnOp
from ..dialects.schedule_attrs import CubeSchedule
from ..ir.sizes import as_expr
from ..ir.types import IndexType, MemRefType, TensorType
from ..schedule.cube import FRACTAL, CubeKernel
from ..schedule.record import StaleSchedule
from .hfusion_to_hivm import KernelLowering


class CubeLowering(KernelLowering):
    """Builds the HIVM function of a cube kernel (shares the index and loop helpers of the vector lowering)."""

    stage_tag = None

    def __init__(self, ck: CubeKernel, schedule: CubeSchedule, tiling: dict):
        if schedule.k_chunk != ck.k_chunk:
            raise StaleSchedule(f"{ck.op.name}: the schedule's k_chunk = {schedule.k_chunk} is not the product's "
                             f"k_chunk = {ck.k_chunk}")
        self.ck, self.schedule, self.tiling = ck, schedule, tiling
        self.info = _Info(ck.func, [ck.op])
        self.counts = {"loads": 0, "cube-ops": 0, "fixpipes": 0}

    def build(self):
        ck, s = self.ck, self.schedule
        old_args = list(ck.func.body.args)
        arg_types = [MemRefType(tuple(a.type.shape), a.type.dtype, "gm") if isinstance(a.type, TensorType) else a.type
                     for a in old_args]  # fmt: skip
        new = self.begin_function(old_args, arg_types)
        self.loc = ck.op.loc or self.kernel_loc
        bid = self.op(hivm.GetBlockIdxOp, [], [IndexType()]).result
        bid.name_hint = "bid"
        bufs = {}
        for i, decl in enumerate(s.buffers):
            alloc = self.op(hivm.AllocOp, [], [MemRefType(tuple(decl.shape), decl.dtype)], buffer=i)
            alloc.result.name_hint = decl.role
            bufs[decl.role] = alloc.result
        loop = self.open_loop(bid, self.param("items"), self.params["block_dim"], "t")
        self.work_item(loop.body.args[0], bufs)
        self.close_loop(loop)
        self.create(ReturnOp, [], [])
        new.set_function_type()
        return new

    def param(self, name: str):
        """A tiling parameter (a constant when the host tiling function gives an int)."""
        value = self.tiling[name]
        return self.const(int(value)) if as_expr(value).is_Integer else self.params[name]

    def extent(self, lo, tile: int, size_name: str, hint: str):
        """min(tile, size - lo): a constant when every tile of the dim is whole."""
        size = as_expr(self.tiling[size_name])
        if size.is_Integer and int(size) % tile == 0:
            return self.const(tile)
        rest = self.arith("subi", self.param(size_name), lo)
        return self.arith("minsi", rest, self.const(tile), hint)

    def work_item(self, t, bufs) -> None:
        """Work item ``t``: a tile (b, mi, ni), a band (b, mi) of every ni, or a group of batches, every tile of
        each (``batch_group`` batches from ``t · batch_group``)."""
        ck, s = self.ck, self.schedule
        batched = self.args[ck.func.body.args[ck.out]].type.rank == 3
        item = s.work_item
        loops = []
        if item == "batch":
            group = self.param("batch_group")
            first = self.arith("muli", t, group, "b_first")
            end = self.arith("minsi", self.arith("addi", first, group), self.param("batch"), "b_end")
            loops.append(self.open_loop(first, end, self.const(1), "b"))
            b = loops[-1].body.args[0]
            r = None
        else:
            b, r = None, t
            if batched:
                per_batch = (self.arith("muli", self.param("m_tiles"), self.param("n_tiles"), "per_batch")
                             if item == "tile" else self.param("m_tiles"))
                b = self.arith("floordivsi", t, per_batch, "b")
                r = self.arith("remsi", t, per_batch, "r")
        cols = None
        if item == "tile" and s.tail_strips > 1:  # unbatched, every tile whole (schedule/cube.py)
            r, cols = self.tail_strip(t)
        if item == "batch":
            loops.append(self.open_loop(self.const(0), self.param("m_tiles"), self.const(1), "mi"))
            mi = loops[-1].body.args[0]
        else:
            mi = r if item == "band" else self.arith("floordivsi", r, self.param("n_tiles"), "mi")
        if item == "tile":
            ni = self.arith("remsi", r, self.param("n_tiles"), "ni")
        else:
            loops.append(self.open_loop(self.const(0), self.param("n_tiles"), self.const(1), "ni"))
            ni = loops[-1].body.args[0]
        self.tile(b, mi, ni, bufs, cols)
        for loop in reversed(loops):
            self.close_loop(loop)

    def tail_strip(self, t):
        """Work item ``t`` of a kernel whose last wave's tiles are cut into ``S`` column strips: the tile
        ``q = min(t, F) + max(t − F, 0) // S`` (``F`` = ``full_items``, the whole tiles) and its strip
        ``j = max(t − F, 0) % S``, columns ``[j·U // S, (j + 1)·U // S)`` fractals of the tile's ``U`` (a whole tile is
        the strip 0 of 1). Returns (q, (column offset in the tile, width)), index values."""
        s = self.schedule
        full, strips, units = self.const(int(self.tiling["full_items"])), s.tail_strips, s.base_n // FRACTAL
        late = self.arith("maxsi", self.arith("subi", t, full), self.const(0), "late")
        q = self.arith("addi", self.arith("minsi", t, full), self.arith("floordivsi", late, self.const(strips)), "q")
        past = self.arith("maxsi", self.arith("subi", self.arith("addi", t, self.const(1)), full), self.const(0))
        in_tail = self.arith("minsi", past, self.const(1), "in_tail")  # 1 from F on, else 0
        count = self.arith("addi", self.const(1), self.arith("muli", in_tail, self.const(strips - 1)), "strips")
        j = self.arith("remsi", late, self.const(strips), "j")
        first = self.arith("floordivsi", self.arith("muli", j, self.const(units)), count)
        after = self.arith("addi", j, self.const(1))
        end = self.arith("floordivsi", self.arith("muli", after, self.const(units)), count)
        off = self.arith("muli", first, self.const(FRACTAL), "strip_off")
        width = self.arith("muli", self.arith("subi", end, first), self.const(FRACTAL), "strip_w")
        return q, (off, width)

    def tile(self, b, mi, ni, bufs, cols=None) -> None:
        """One output tile (or, with ``cols`` = (offset, width), a column strip of it): the K loops into the
        accumulator, then the fixpipe."""
        ck, s = self.ck, self.schedule
        m0 = self.arith("muli", mi, self.const(s.base_m), "m0")
        n0 = self.arith("muli", ni, self.const(s.base_n), "n0")
        em = self.extent(m0, s.base_m, "m", "em")
        if cols is None:
            en = self.extent(n0, s.base_n, "n", "en")
        else:  # the tail is cut only when every tile is whole: a strip's columns are all inside the output
            n0 = self.arith("addi", n0, cols[0], "n0s")
            en = cols[1]
        # a padded product (pad_n): the drain writes the result's columns, the zero ones of the last fractal too
        en_out = self.extent(n0, s.base_n, "n_out", "en_out") if self.ck.pad_n else en
        c0, c1 = self.const(0), self.const(1)
        k_lo, kc, kc_static = self.k_span(b)
        self.whole_k = kc_static is not None and kc_static % s.l1_k == 0
        kloop = self.open_loop(c0, kc, self.const(s.l1_k), "kk")
        kk = kloop.body.args[0]
        ek = self.const(s.l1_k) if self.whole_k else self.arith(
            "minsi", self.arith("subi", kc, kk), self.const(s.l1_k), "ek")
        kg = kk if k_lo is None else self.arith("addi", k_lo, kk, "kg")  # the step's first K index in the operands
        a_box = ([kg, m0], [ek, em]) if ck.transpose_a else ([m0, kg], [em, ek])
        b_box = ([n0, kg], [en, ek]) if ck.transpose_b else ([kg, n0], [ek, en])
        self.load(ck.a, ck.batched_a, b, a_box, bufs["a_l1"])
        self.load(ck.b, ck.batched_b, b, b_box, bufs["b_l1"])
        # the drains run in the last L1 step only: a loop of one trip there and none before
        last_kk = self.const((kc_static - 1) // s.l1_k * s.l1_k) if kc_static is not None else self.arith(
            "muli", self.arith("floordivsi", self.arith("subi", kc, c1), self.const(s.l1_k)),
            self.const(s.l1_k), "last_kk")
        is_last = self.arith("subi", c1, self.arith("minsi", self.arith("subi", last_kk, kk), c1), "is_last")
        self.parts(kk, ek, m0, n0, em, (en, en_out), b, is_last, bufs)
        self.close_loop(kloop)

    def k_span(self, b):
        """The K range of one product: (first K index or None for 0, length, the length when static). Split-K partial
        products (``k_chunk``) take the chunk ``[b·k_chunk, min((b + 1)·k_chunk, k))`` of K for batch ``b``."""
        k = as_expr(self.tiling["k"])
        chunk = self.ck.k_chunk
        if not chunk:
            return None, self.param("k"), int(k) if k.is_Integer else None
        k_lo = self.arith("muli", b, self.const(chunk), "k_lo")
        if int(k) % chunk == 0:
            return k_lo, self.const(chunk), chunk
        return k_lo, self.arith("minsi", self.arith("subi", self.param("k"), k_lo), self.const(chunk), "kc"), None

    def parts(self, kk, ek, m0, n0, em, ens, b, is_last, bufs) -> None:
        """The accumulator's column parts of one L1 step: part h's mmads, then (when ``is_last``) its drain, which
        runs on FixPipe while the cube works on part h + 1 (``c_l0`` rotates over the part loop). ``ens``: the
        tile's columns of ``op(b)`` and of the result (more by the zero columns of a padded product)."""
        ck, s = self.ck, self.schedule
        c0, c1 = self.const(0), self.const(1)
        width = s.base_n // s.acc_parts
        en, en_out = ens
        if s.acc_parts == 1:
            c_off, en_h, en_h_out, hloop = c0, en, en_out, None
        else:
            n = as_expr(self.tiling["n"])
            whole = n.is_Integer and int(n) % s.base_n == 0 and s.tail_strips == 1
            count = self.const(s.acc_parts) if whole else self.arith(
                "ceildivsi", en, self.const(width), "parts")
            hloop = self.open_loop(c0, count, c1, "h")
            h = hloop.body.args[0]
            c_off = self.arith("muli", h, self.const(width), "c_off")
            en_h = self.const(width) if whole else self.arith(
                "minsi", self.arith("subi", en, c_off), self.const(width), "en_h")
            en_h_out = en_h if en_out is en else self.arith(
                "minsi", self.arith("subi", en_out, c_off), self.const(width), "en_h_out")
        inner = self.open_loop(c0, ek, self.const(s.base_k), "k0")
        k0 = inner.body.args[0]
        ek0 = self.const(s.base_k) if self.whole_k else self.arith(
            "minsi", self.arith("subi", ek, k0), self.const(s.base_k), "ek0")
        self.create(hivm_cube.LoadL0AOp, [bufs["a_l1"], bufs["a_l0"], k0, em, ek0], [], transpose=ck.transpose_a)
        self.create(hivm_cube.LoadL0BOp, [bufs["b_l1"], bufs["b_l0"], k0, c_off, ek0, en_h], [],
                    transpose=ck.transpose_b)
        started = self.arith("minsi", self.arith("addi", kk, k0), c1)
        init = self.arith("subi", c1, started, "init")
        self.create(hivm_cube.MmadOp, [bufs["a_l0"], bufs["b_l0"], bufs["c_l0"], init, em, ek0, en_h], [])
        self.counts["cube-ops"] += 1
        self.close_loop(inner)
        drain = self.open_loop(c0, is_last, c1, "drain")
        out = self.args[ck.func.body.args[ck.out]]
        col = self.arith("addi", n0, c_off) if s.acc_parts > 1 else n0
        offsets = ([b] if out.type.rank == 3 else []) + [m0, col]
        self.create(hivm_cube.FixpipeOp, [bufs["c_l0"], out, *offsets, em, en_h_out], [])
        self.counts["fixpipes"] += 1
        self.close_loop(drain)
        if hloop is not None:
            self.close_loop(hloop)

    def load(self, arg: int, batched: bool, b, box, buf) -> None:
        """GM → L1: the operand's box, in its GM orientation (the batch dim selected when it has one)."""
        gm = self.args[self.ck.func.body.args[arg]]
        offsets, extents = box
        attrs = {}
        if batched:
            offsets = [b] + offsets
            attrs["dims"] = [1, 2]
        self.create(hivm.LoadOp, [gm, buf, *offsets, *extents], [], **attrs)
        self.counts["loads"] += 1


class _Info:
    """The parts of a kernel's analysis the shared lowering helpers read (its function and body ops)."""

    def __init__(self, func, ops):
        self.func, self.ops = func, ops
