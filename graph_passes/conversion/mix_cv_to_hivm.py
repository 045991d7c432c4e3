"""Lower one scheduled MIX_CV kernel (a matmul and its elementwise epilogue; graph_passes/schedule/mix_cv.py) to its
two HIVM functions, as AscendNPU-IR's ``hivm-split-mix-kernel`` leaves them (docs/cube.md, *Cube–vector fusion*).

The **AIC part** (``@k``, the function the host launches) is the cube kernel's loop nest (cube_to_hivm.py; with
cv-pipelining each part its own K loop, :meth:`MixCubeLowering.tile`) whose drains write the GM workspace, each
followed by a cross-core flag set on the FIX pipe::

    for t in range(block_idx, items, block_dim):
        … K loops; in the last L1 step, per accumulator part h (a column slice of the tile):
            hivm.fixpipe c_l0 → ws[m0:+em, n0 + h·W:+en_h]
            hivm.sync_block_set {pipe = "PIPE_FIX", flag = TILE_READY}  # after the drain, in FIX order

The **AIV part** (``@k_aiv``), run by both vector cores of each group, walks the same tiles in the same order; the
vector core ``sb`` (``hivm.get_sub_block_idx``) takes rows ``[sb·H, min((sb+1)·H, em))`` of each (``H`` =
⌈base_m / 2⌉), in chunks of the epilogue schedule's rows::

    sb = hivm.get_sub_block_idx
    sync_block_set {pipe = "PIPE_MTE2", flag = SLOT_FREE[sb]} × ws_slots        # ring workspace: every slot free
    for t in range(block_idx, items, block_dim):
        for h in range(parts):                                          # as the cube drains them
            for r0 in range(0, rows(sb), R):
                load the epilogue's other inputs (bias row, residual rows)
                if r0 == 0: hivm.sync_block_wait {flag = TILE_READY}    # part h of tile t is in the workspace
                load ws[m0 + sb·H + r0 : +r, n0 + h·W : +en_h]          # ring: ws[slot row + sb·H + r0, 0 : +en_h]
                compute, store
            (a core without rows of the part waits for its flag all the same)
            sync_block_set {pipe = "PIPE_MTE2", flag = SLOT_FREE[sb]}   # ring workspace: read, the cube may refill

So the vector cores work on part 0 while the cube computes and drains part 1 (and the next tile). With a ring
workspace (schedule ``ws_slots``, cv-pipelining) part ``p`` of a group (its counter over the group's work items)
is in slot ``p mod ws_slots`` of the group's; the AIC part waits for both vector cores' ``SLOT_FREE`` before each
drain and consumes the pre-armed ones after its loop.

Both functions take the kernel's arguments and tiling parameters in the same order: the mix launch passes one set.
"""

from __future__ import annotations

from ..dialects import hivm, hivm_cube
from ..dialects.func import ReturnOp
from ..dialects.hivm_cube import FixpipeOp
from ..dialects.hivm_mix import GetSubBlockIdxOp, SyncBlockSetOp, SyncBlockWaitOp
from ..ir.builder import Builder
from ..ir.types import IndexType, MemRefType, TensorType
from .cube_to_hivm import CubeLowering
from .hfusion_to_hivm import KernelLowering, gm_types

TILE_READY = 0  # the cross-core flag id: a tile of the product is in the workspace
SLOT_FREE = (1, 2)  # the flag ids vector core 0 / 1 raise when they have read a ring slot (cube: may refill it)


def ring_slot(low, t, h, schedule):
    """The ring workspace's first row for part ``h`` of work item ``t``: slot ``p mod ws_slots`` of the group
    (``p`` = the group's part counter, ``(t // block_dim)·acc_parts + h``; the group is ``t mod block_dim``)."""
    bd = low.param("block_dim")
    p = low.arith("addi", low.arith("muli", low.arith("floordivsi", t, bd), low.const(schedule.acc_parts)), h, "p")
    slot = low.arith("remsi", p, low.const(schedule.ws_slots), "slot")
    group = low.arith("muli", low.arith("remsi", t, bd), low.const(schedule.ws_slots))
    return low.arith("muli", low.arith("addi", group, slot), low.const(schedule.base_m), "ws_row")


class MixCubeLowering(CubeLowering):
    """The AIC part: the cube kernel, a flag to the group's vector cores after each drain of an accumulator part.
    With a ring workspace (``ws_slots``) each drain first waits until both vector cores have read the slot it
    refills (their ``SLOT_FREE`` flags, pre-armed once per slot by the vector cores and consumed after the loop)."""

    def __init__(self, ck, schedule, tiling: dict, ws_type=None):
        super().__init__(ck, schedule, tiling)
        self.ws_type = ws_type

    def begin_function(self, old_args, arg_types):
        if self.schedule.ws_slots:  # the kernel's ring workspace, not the product the analysis part shows
            arg_types = list(arg_types)
            arg_types[self.ck.out] = MemRefType(tuple(self.ws_type.shape), self.ws_type.dtype, "gm")
        return super().begin_function(old_args, arg_types)

    def build(self):
        new = super().build()
        if self.schedule.ws_slots:  # consume the vector cores' pre-armed slot flags (every set waited for)
            ret = new.body.ops[-1]
            self.b = Builder(new.body, len(new.body.ops) - 1, ret.loc)
            for _ in range(self.schedule.ws_slots):
                for flag in SLOT_FREE:
                    self.create(SyncBlockWaitOp, [], [], flag=flag)
        return new

    def work_item(self, t, bufs) -> None:
        self.item = t
        super().work_item(t, bufs)

    def create(self, cls, operands=(), result_types=(), regions=(), **attrs):
        if cls is FixpipeOp and self.schedule.ws_slots:  # the slot is free once both vector cores have read it
            for flag in SLOT_FREE:
                super().create(SyncBlockWaitOp, [], [], flag=flag)
        op = super().create(cls, operands, result_types, regions, **attrs)
        if cls is FixpipeOp:  # in the FIX queue after the drain: the part is in the workspace when the flag is seen
            super().create(SyncBlockSetOp, [], [], pipe="PIPE_FIX", flag=TILE_READY)
            self.counts["cross-core-sets"] = self.counts.get("cross-core-sets", 0) + 1
        return op

    def tile(self, b, mi, ni, bufs, cols=None) -> None:
        """cv-pipelining (``resident_a``): each piece (an accumulator part of ``W`` columns) is a whole K loop of
        its own, drained as soon as it is done; piece 0 loads the tile's A rows, a box per K step that the later
        pieces reuse (``a_l1`` has a copy per K step, selected by the step)::

            for h in range(pieces):
                for kk in range(0, K, L1K):
                    for _ in range(1 if h == 0 else 0):
                        hivm.load A[m0:+em, kk:+ek] → a_l1[kk / L1K]
                    hivm.load B[kk:+ek, n0 + h·W:+W] → b_l1                  # ping-pong
                    for k0 in range(0, ek, BK):
                        load_l0a a_l1 (k0) → a_l0; load_l0b b_l1 (k0) → b_l0; mmad → c_l0 (init at K 0)
                sync_block_wait SLOT_FREE × 2                                 # with a ring workspace
                hivm.fixpipe c_l0 → ws slot (or ws[m0:+em, n0 + h·W:+W]); sync_block_set TILE_READY
        """
        s = self.schedule
        if not s.resident_a:
            return super().tile(b, mi, ni, bufs, cols)
        ck = self.ck
        m0 = self.arith("muli", mi, self.const(s.base_m), "m0")
        n0 = self.arith("muli", ni, self.const(s.base_n), "n0")
        em = self.extent(m0, s.base_m, "m", "em")
        en = self.extent(n0, s.base_n, "n", "en") if cols is None else cols[1]
        if cols is not None:
            n0 = self.arith("addi", n0, cols[0], "n0s")
        c0, c1 = self.const(0), self.const(1)
        k_total = int(self.tiling["k"])
        kc = self.const(k_total)
        self.whole_k = k_total % s.l1_k == 0
        width = s.base_n // s.acc_parts
        whole = int(self.tiling["n"]) % s.base_n == 0 and s.tail_strips == 1
        count = self.const(s.acc_parts) if whole else self.arith("ceildivsi", en, self.const(width), "parts")
        hloop = self.open_loop(c0, count, c1, "h")
        c_off = self.arith("muli", hloop.body.args[0], self.const(width), "c_off")
        en_h = self.const(width) if whole else self.arith(
            "minsi", self.arith("subi", en, c_off), self.const(width), "en_h")
        col = self.arith("addi", n0, c_off, "col")
        kloop = self.open_loop(c0, kc, self.const(s.l1_k), "kk")
        kk = kloop.body.args[0]
        ek = self.const(s.l1_k) if self.whole_k else self.arith(
            "minsi", self.arith("subi", kc, kk), self.const(s.l1_k), "ek")
        first = self.arith("subi", c1, self.arith("minsi", hloop.body.args[0], c1), "first")
        once = self.open_loop(c0, first, c1, "a_once")  # piece 0 loads the A rows of its K step: a loop of one trip
        a_box = ([kk, m0], [ek, em]) if ck.transpose_a else ([m0, kk], [em, ek])
        self.load(ck.a, False, None, a_box, bufs["a_l1"])
        self.close_loop(once)
        b_box = ([col, kk], [en_h, ek]) if ck.transpose_b else ([kk, col], [ek, en_h])
        self.load(ck.b, False, None, b_box, bufs["b_l1"])
        inner = self.open_loop(c0, ek, self.const(s.base_k), "k0")
        k0 = inner.body.args[0]
        ek0 = self.const(s.base_k) if self.whole_k else self.arith(
            "minsi", self.arith("subi", ek, k0), self.const(s.base_k), "ek0")
        ka = self.arith("addi", kk, k0, "ka")  # the K index: the accumulator starts at 0
        self.create(hivm_cube.LoadL0AOp, [bufs["a_l1"], bufs["a_l0"], k0, em, ek0], [], transpose=ck.transpose_a)
        self.create(hivm_cube.LoadL0BOp, [bufs["b_l1"], bufs["b_l0"], k0, c0, ek0, en_h], [],
                    transpose=ck.transpose_b)
        init = self.arith("subi", c1, self.arith("minsi", ka, c1), "init")
        self.create(hivm_cube.MmadOp, [bufs["a_l0"], bufs["b_l0"], bufs["c_l0"], init, em, ek0, en_h], [])
        self.counts["cube-ops"] += 1
        self.close_loop(inner)
        self.close_loop(kloop)
        if s.ws_slots:  # slot (p mod ws_slots) of the group's ring
            row, col = ring_slot(self, self.item, hloop.body.args[0], s), c0
        else:
            row = m0
        self.create(FixpipeOp, [bufs["c_l0"], self.args[ck.func.body.args[ck.out]], row, col, em, en_h], [])
        self.counts["fixpipes"] += 1
        self.close_loop(hloop)


class MixVectorLowering(KernelLowering):
    """The AIV part: the epilogue over half of each tile the group's cube core computes. The tile coordinates are
    the cube lowering's (``CubeLowering.tail_strip``/``extent``/``param`` read only ``schedule``, ``tiling`` and
    the index helpers both lowerings share)."""

    def __init__(self, info, schedule, plan, tiling: dict, ub_align: int, cube_schedule, kernel_args: list,
                 positions: list, ws_position: int):
        """``kernel_args``: the MIX_CV kernel's arguments; ``positions``: where each of the epilogue part's is;
        ``ws_position``: the workspace's."""
        super().__init__(info, schedule, plan, tiling, ub_align)
        self.schedule = cube_schedule  # what CubeLowering's helpers read
        self.kernel_args, self.positions, self.ws_position = kernel_args, positions, ws_position
        self.ws_arg = info.func.body.args[positions.index(ws_position)]
        self.counts["cross-core-waits"] = 0

    def wait_tile(self, trips) -> None:
        """Wait for the part's ``TILE_READY`` flag in a loop of ``trips`` (0 or 1) trips."""
        loop = self.open_loop(self.const(0), trips, self.const(1), "ready")
        self.create(SyncBlockWaitOp, [], [], flag=TILE_READY)
        self.counts["cross-core-waits"] += 1
        self.close_loop(loop)

    def _emit(self, v) -> None:
        """The workspace is read after the part's flag (waited for in the first chunk: the epilogue's other inputs
        load before it), at the part's ring slot (``ws_dims``); every other value at the tile's rows."""
        if v is not self.ws_arg:
            return super()._emit(v)
        self.wait_tile(self.first_chunk)
        if getattr(self, "ws_dims", None) is None:
            return super()._emit(v)
        saved, self.dims = self.dims, self.ws_dims
        try:
            super()._emit(v)
        finally:
            self.dims = saved

    param = CubeLowering.param
    extent = CubeLowering.extent
    tail_strip = CubeLowering.tail_strip

    def build(self):
        info, func = self.info, self.info.func
        gm = gm_types(info)
        own = dict(zip(self.positions, func.body.args))
        # every argument of the kernel, in order (the AIC part's list): the epilogue's own, the others unused
        old_args = [own.get(i, a) for i, a in enumerate(self.kernel_args)]
        types = [gm[a] if a in gm else MemRefType(tuple(a.type.shape), a.type.dtype, "gm")
                 if isinstance(a.type, TensorType) else a.type for a in old_args]  # fmt: skip
        if self.schedule.ws_slots:  # the ring workspace's own type (the analysis part shows the product)
            ws = self.kernel_args[self.ws_position]
            types[self.ws_position] = MemRefType(tuple(ws.type.shape), ws.type.dtype, "gm")
        new, bid = self.begin_kernel(old_args, types)
        sb = self.op(GetSubBlockIdxOp, [], [IndexType()]).result
        sb.name_hint = "sb"
        self.bufs = {}
        for buf in self.plan.buffers:
            with self.located(buf.values[0] if buf.values else func):
                alloc = self.op(hivm.AllocOp, [], [MemRefType(tuple(buf.shape(self.tile, self.ub_align)),
                                                                   buf.dtype)], buffer=buf.index)
            alloc.result.name_hint = f"ub{buf.index}"
            self.bufs[buf.index] = alloc.result
        if self.scratch:
            alloc = self.op(hivm.AllocOp, [], [MemRefType((self.scratch,), "i8")], scratch=True)
            alloc.result.name_hint = "scratch"
        self.hoisted = set()
        self.sb = sb
        for _ in range(self.schedule.ws_slots):  # every slot starts free
            self.slot_free(sb)
        loop = self.open_loop(bid, self.param("items"), self.params["block_dim"], "t")
        self.half_tile(loop.body.args[0], sb)
        self.close_loop(loop)
        self.create(ReturnOp, [], [])
        new.set_function_type()
        return new

    def slot_free(self, sb) -> None:
        """Raise this vector core's ``SLOT_FREE`` flag from MTE2 (after its workspace reads): a loop of one trip
        for the core whose flag it is (the flag id is an attribute, the sub-block index a value)."""
        for i, flag in enumerate(SLOT_FREE):
            mine = self.arith("subi", self.const(1), sb) if i == 0 else sb
            loop = self.open_loop(self.const(0), mine, self.const(1), f"sb{i}")
            self.create(SyncBlockSetOp, [], [], pipe="PIPE_MTE2", flag=flag)
            self.close_loop(loop)

    def half_tile(self, t, sb) -> None:
        """Work item ``t``: wait for the tile, then this vector core's rows of it, chunk by chunk."""
        s = self.schedule
        r, cols = self.tail_strip(t) if s.tail_strips > 1 else (t, None)
        mi = self.arith("floordivsi", r, self.param("n_tiles"), "mi")
        ni = self.arith("remsi", r, self.param("n_tiles"), "ni")
        m0 = self.arith("muli", mi, self.const(s.base_m), "m0")
        n0 = self.arith("muli", ni, self.const(s.base_n), "n0")
        em = self.extent(m0, s.base_m, "m", "em")
        if cols is None:
            en = self.extent(n0, s.base_n, "n", "en")
        else:
            n0, en = self.arith("addi", n0, cols[0], "n0s"), cols[1]
        whole = int(self.tiling["n"]) % s.base_n == 0 and s.tail_strips == 1
        width = s.base_n // s.acc_parts
        parts = self.const(s.acc_parts) if whole else self.arith("ceildivsi", en, self.const(width), "parts")
        half = (s.base_m + 1) // 2
        skip = self.arith("muli", sb, self.const(half), "skip")
        row0 = self.arith("addi", m0, skip, "row0")
        left = self.arith("maxsi", self.arith("subi", em, skip), self.const(0))
        rows = self.arith("minsi", left, self.const(half), "rows")
        hloop = self.open_loop(self.const(0), parts, self.const(1), "h")  # the accumulator parts, drained in order
        c_off = self.arith("muli", hloop.body.args[0], self.const(width), "c_off")
        en_h = self.const(width) if whole else self.arith(
            "minsi", self.arith("subi", en, c_off), self.const(width), "en_h")
        c0 = self.const(0)
        ws_row = ring_slot(self, t, hloop.body.args[0], s) if s.ws_slots else None
        step = self.tile[0]
        chunks = self.open_loop(self.const(0), rows, self.const(step), "r0")
        r0 = chunks.body.args[0]
        vr = self.arith("minsi", self.arith("subi", rows, r0), self.const(step), "vr")
        self.dims = {0: (self.arith("addi", row0, r0, "row"), vr), 1: (self.arith("addi", n0, c_off, "col"), en_h)}
        if s.ws_slots:  # the workspace is read at the part's ring slot, the other operands at the tile's rows
            self.ws_dims = {0: (self.arith("addi", self.arith("addi", ws_row, skip), r0, "ws_r"), vr), 1: (c0, en_h)}
        self.ready = set()
        self.first_chunk = self.arith("subi", self.const(1), self.arith("minsi", r0, self.const(1)), "first_chunk")
        self.load_stage(self.info.results)
        for out, res in zip(self.info.outputs, self.info.results):
            self.emit(res)
            self.store(res, out)
        self.close_loop(chunks)
        none = self.arith("subi", self.const(1), self.arith("minsi", rows, self.const(1)), "no_rows")
        self.wait_tile(none)  # a core without rows of this tile still takes its flag
        if s.ws_slots:
            self.slot_free(sb)
        self.close_loop(hloop)
