"""hivm-mark-multi-buffer{depth=2}, hivm-enable-multi-buffer, hivm-plan-memory, hivm-inject-sync on hand-written HIVM
kernels in docs/hivm.md's form, checked by counters, by the plan, and by a small hazard oracle.

The oracle (:func:`check_sync`) is independent of the passes: it runs the kernel's control flow with concrete
loop bounds, lists what each pipe executes, builds "completes before starts" edges (in-order pipes; PIPE_V ordered
only by its barriers and waits; set→wait; PIPE_ALL), and reports every conflicting pair of accesses on
overlapping bytes that no edge chain orders, every wait without a set, every set that may fire before the
previous wait of its id, and every set left unmatched at the end.
"""

from __future__ import annotations

import pytest

from graph_passes.ir.parser import parse_module
from graph_passes.ir.printer import print_module
from graph_passes.passes import PassError, PassManager
from graph_passes.passes.hivm.plan_memory import MemoryPlanOverflow

MODULE = 'module attributes {{symbols = {{s0 = [1, 9223372036854775807]}}, target = "ascend910b1"}} {{\n{}\n}}\n'
GM = "memref<(128*s0)xf16, gm>"
T = "memref<8192xf16, ub>"

ELEMWISE = MODULE.format(f"""
  func.func @main_fused_0(%x: {GM}, %y: {GM}, %z: {GM}, %out: {GM}, %n: index, %n_tiles: index, %block_dim: index) attributes {{core_type = "AIV", fusion_kind = "PURE_ELEMWISE", kernel, output_args = [3]}} {{
    %c0 = arith.constant {{value = 0}} : () -> index
    %c8192 = arith.constant {{value = 8192}} : () -> index
    %bid = hivm.get_block_idx : () -> index
    %ubx = hivm.alloc : () -> {T}
    %uby = hivm.alloc : () -> {T}
    %ubz = hivm.alloc : () -> {T}
    %ubt = hivm.alloc : () -> {T}
    scf.for %bid, %n_tiles, %block_dim ({{
    ^bb0(%t: index):
      %off = arith.muli %t, %c8192 : (index, index) -> index
      %rem = arith.subi %n, %off : (index, index) -> index
      %len = arith.minsi %rem, %c8192 : (index, index) -> index
      hivm.load %x, %ubx, %off, %len : {GM}, {T}, index, index
      hivm.load %y, %uby, %off, %len : {GM}, {T}, index, index
      hivm.load %z, %ubz, %off, %len : {GM}, {T}, index, index
      hivm.vbinary %ubx, %uby, %ubt, %len {{fun = "mul"}} : {T}, {T}, {T}, index
      hivm.vbinary %ubt, %ubz, %ubt, %len {{fun = "add"}} : {T}, {T}, {T}, index
      hivm.store %ubt, %out, %off, %len : {T}, {GM}, index, index
      scf.yield
    }}) : (index, index, index) -> ()
    func.return
  }}""")

G2 = "memref<s0x256xf32, gm>"
R = "memref<16x256xf32, ub>"
R1 = "memref<16x1xf32, ub>"
ROWS = MODULE.format(f"""
  func.func @rows_fused_0(%x: {G2}, %out: {G2}, %rows: index, %n_tiles: index, %block_dim: index) attributes {{core_type = "AIV", fusion_kind = "LAST_AXIS_PBR", kernel, output_args = [1]}} {{
    %c0 = arith.constant {{value = 0}} : () -> index
    %c16 = arith.constant {{value = 16}} : () -> index
    %c256 = arith.constant {{value = 256}} : () -> index
    %bid = hivm.get_block_idx : () -> index
    %ubx = hivm.alloc : () -> {R}
    %ubm = hivm.alloc : () -> {R1}
    %ubb = hivm.alloc : () -> {R}
    %ubs = hivm.alloc : () -> {R}
    %ube = hivm.alloc : () -> {R}
    scf.for %bid, %n_tiles, %block_dim ({{
    ^bb0(%t: index):
      %off = arith.muli %t, %c16 : (index, index) -> index
      %rem = arith.subi %rows, %off : (index, index) -> index
      %len = arith.minsi %rem, %c16 : (index, index) -> index
      hivm.load %x, %ubx, %off, %c0, %len, %c256 : {G2}, {R}, index, index, index, index
      hivm.vreduce %ubx, %ubm, %len, %c256 {{dims = [1], kind = "max"}} : {R}, {R1}, index, index
      hivm.vbrc %ubm, %ubb, %len, %c256 {{dims = [1]}} : {R1}, {R}, index, index
      hivm.vbinary %ubx, %ubb, %ubs, %len, %c256 {{fun = "sub"}} : {R}, {R}, {R}, index, index
      hivm.vunary %ubs, %ube, %len, %c256 {{fun = "exp"}} : {R}, {R}, index, index
      hivm.store %ube, %out, %off, %c0, %len, %c256 : {R}, {G2}, index, index, index, index
      scf.yield
    }}) : (index, index, index) -> ()
    func.return
  }}""")

G = "memref<(128*s0)xf32, gm>"
F = "memref<4096xf32, ub>"
TWO_LOOPS = MODULE.format(f"""
  func.func @two_fused_0(%x: {G}, %y: {G}, %out1: {G}, %out2: {G}, %n: index, %n_tiles: index, %block_dim: index) attributes {{core_type = "AIV", fusion_kind = "ANY_PB", kernel, output_args = [2, 3]}} {{
    %c0 = arith.constant {{value = 0}} : () -> index
    %c4096 = arith.constant {{value = 4096}} : () -> index
    %bid = hivm.get_block_idx : () -> index
    %acc = hivm.alloc : () -> {F}
    %uba = hivm.alloc : () -> {F}
    %ube = hivm.alloc : () -> {F}
    %ubb = hivm.alloc : () -> {F}
    %ubp = hivm.alloc : () -> {F}
    hivm.vfill %acc, %c4096 {{value = 0.0}} : {F}, index
    scf.for %bid, %n_tiles, %block_dim ({{
    ^bb0(%t: index):
      %off = arith.muli %t, %c4096 : (index, index) -> index
      %rem = arith.subi %n, %off : (index, index) -> index
      %len = arith.minsi %rem, %c4096 : (index, index) -> index
      hivm.load %x, %uba, %off, %len : {G}, {F}, index, index
      hivm.vunary %uba, %ube, %len {{fun = "exp"}} : {F}, {F}, index
      hivm.vbinary %acc, %ube, %acc, %len {{fun = "add"}} : {F}, {F}, {F}, index
      hivm.store %ube, %out1, %off, %len : {F}, {G}, index, index
      scf.yield
    }}) : (index, index, index) -> ()
    scf.for %bid, %n_tiles, %block_dim ({{
    ^bb0(%t: index):
      %off = arith.muli %t, %c4096 : (index, index) -> index
      %rem = arith.subi %n, %off : (index, index) -> index
      %len = arith.minsi %rem, %c4096 : (index, index) -> index
      hivm.load %y, %ubb, %off, %len : {G}, {F}, index, index
      hivm.vbinary %ubb, %acc, %ubp, %len {{fun = "mul"}} : {F}, {F}, {F}, index
      hivm.store %ubp, %out2, %off, %len : {F}, {G}, index, index
      scf.yield
    }}) : (index, index, index) -> ()
    func.return
  }}""")

KERNELS = {"elemwise": ELEMWISE, "rows": ROWS, "two_loops": TWO_LOOPS}
SYNC = "hivm-plan-memory,hivm-inject-sync"
PIPELINES = {
    "depth1": "hivm-mark-multi-buffer{depth=1}," + SYNC,
    "depth2": "hivm-mark-multi-buffer{depth=2},hivm-enable-multi-buffer," + SYNC,
    "depth3": "hivm-mark-multi-buffer{depth=3},hivm-enable-multi-buffer," + SYNC,
    # ARCHITECTURE.md's order: plan and sync the marked buffers, split them last
    "enable-last": "hivm-mark-multi-buffer{depth=2},hivm-plan-memory,hivm-inject-sync,hivm-enable-multi-buffer",
    "no-plan": "hivm-mark-multi-buffer{depth=2},hivm-enable-multi-buffer,hivm-inject-sync",
    "barrier-all": "hivm-mark-multi-buffer{depth=2},hivm-enable-multi-buffer,hivm-plan-memory,hivm-inject-sync{mode=barrier-all}",
}


def run(text: str, pipeline: str):
    m = parse_module(text)
    ctx = PassManager.from_pipeline(pipeline).run(m)
    return m, ctx


def kernel(m):
    return next(op for op in m.walk() if op.name == "func.func")


def allocs(m):
    return [op for op in m.walk() if op.name == "hivm.alloc"]


# ---------------------------------------------------------------------------------------------------------------
# The hazard oracle

ARITH = {
    "arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b, "arith.muli": lambda a, b: a * b,
    "arith.floordivsi": lambda a, b: a // b, "arith.ceildivsi": lambda a, b: -(-a // b),
    "arith.remsi": lambda a, b: a % b, "arith.minsi": min, "arith.maxsi": max,
}  # fmt: skip
IN_ORDER = ("PIPE_MTE1", "PIPE_MTE2", "PIPE_MTE3", "PIPE_FIX", "PIPE_M", "PIPE_S")
PIPE_OPS = {"hivm.load": "PIPE_MTE2", "hivm.store": "PIPE_MTE3"}


def _pipe(op):
    if op.name in PIPE_OPS:
        return PIPE_OPS[op.name]
    return "PIPE_V" if op.name.startswith("hivm.v") or op.name == "hivm.copy" else None


def _region(buf):
    """(space, lo, hi) of a concrete buffer: ('arg', value) or an alloc copy, placed by its offsets if planned."""
    kind, obj, copy = buf
    if kind == "arg":
        return ("arg", id(obj)), 0, float("inf")
    t = obj.result.type
    size = int(t.nbytes)
    offs = obj.attributes.get("offsets")
    if offs is not None:
        return ("scope", t.scope), offs[copy], offs[copy] + size
    return ("alloc", id(obj), copy), 0, size


def _overlap(a, b):
    (sa, la, ha), (sb, lb, hb) = _region(a), _region(b)
    return sa == sb and la < hb and lb < ha


class Trace:
    """Per-pipe execution of a kernel with concrete bounds; ``problems`` lists races and sync errors."""

    def __init__(self, func, bindings: dict[str, int]):
        self.nodes = []  # (label, pipe, reads, writes)
        self.preds: list[set[int]] = []
        self.problems: list[str] = []
        self.flags = {}  # (src, dst, id) -> pending set node
        self.last_wait = {}  # (src, dst, id) -> last wait node
        self.last_on = {}  # in-order pipe -> last node
        self.v_nodes: list[int] = []
        self.v_fence = None
        self.all_fence = None
        env = {}
        for a in func.body.args:
            env[a] = ("arg", a, 0) if hasattr(a.type, "scope") else bindings[a.name_hint]
        self.block(func.body, env)
        for key, node in self.flags.items():
            if node is not None:
                self.problems.append(f"unmatched set_flag {key} ({self.nodes[node][0]})")
        self.anc = []
        for j, ps in enumerate(self.preds):
            acc = 0
            for p in ps:
                acc |= self.anc[p] | (1 << p)
            self.anc.append(acc)
        self.races()

    def block(self, block, env):
        for op in block.ops:
            self.op(op, env)

    def op(self, op, env):
        name = op.name
        if name == "arith.constant":
            env[op.result] = op.attributes["value"]
        elif name in ARITH:
            env[op.result] = ARITH[name](env[op.operands[0]], env[op.operands[1]])
        elif name == "hivm.get_block_idx":
            env[op.result] = 0
        elif name == "hivm.alloc":
            env[op.result] = ("alloc", op, 0)
        elif name == "hivm.multi_buffer_select":
            copies = op.operands[1:]
            env[op.result] = env[copies[env[op.operands[0]] % len(copies)]]
        elif name == "scf.for":
            lb, ub, step = (env[v] for v in op.operands[:3])
            for t in range(lb, ub, step):
                env[op.body.args[0]] = t
                self.block(op.body, env)
        elif name in ("hivm.set_flag", "hivm.wait_flag"):
            ids = op.attributes["event_ids"]
            eid = ids[env[op.operands[0]] % len(ids)] if op.operands else ids[0]
            key = (op.attributes["src_pipe"], op.attributes["dst_pipe"], eid)
            self.flag(name == "hivm.set_flag", key, f"{name} {key}")
        elif name == "hivm.pipe_barrier":
            self.barrier(op.attributes["pipe"])
        elif _pipe(op):
            reads = [env[v] for v in op.reads()]
            writes = [env[v] for v in op.writes()]
            label = f"{name} {op.attributes.get('fun', '')} w={[_region(w)[0] for w in writes]}"
            self.add(label, _pipe(op), reads, writes, self.order_preds(_pipe(op)))

    def add(self, label, pipe, reads, writes, preds):
        j = len(self.nodes)
        self.nodes.append((label, pipe, reads, writes))
        if self.all_fence is not None:
            preds.add(self.all_fence)
        self.preds.append(preds)
        if pipe in IN_ORDER:
            self.last_on[pipe] = j
        if pipe == "PIPE_V":
            self.v_nodes.append(j)
        return j

    def order_preds(self, pipe) -> set[int]:
        if pipe in IN_ORDER:
            return {self.last_on[pipe]} if pipe in self.last_on else set()
        return {self.v_fence} if self.v_fence is not None else set()  # V: only waits/barriers order it

    def flag(self, is_set, key, label):
        src, dst = key[0], key[1]
        if is_set:
            preds = self.order_preds(src)
            if src == "PIPE_V":
                preds |= set(self.v_nodes)  # a set fires once the pipe's earlier work is done
            if self.flags.get(key) is not None:
                self.problems.append(f"double set_flag {key}")
            j = self.add(label, src, [], [], preds)
            prev = self.last_wait.get(key)
            if prev is not None and not self._reaches(prev, j):
                self.problems.append(f"set_flag {key} may fire before the previous wait of that id")
            self.flags[key] = j
        else:
            s = self.flags.get(key)
            if s is None:
                self.problems.append(f"wait_flag {key} without a pending set")
                s_preds = set()
            else:
                s_preds = {s}
            j = self.add(label, dst, [], [], self.order_preds(dst) | s_preds)
            self.flags[key] = None
            self.last_wait[key] = j
            if dst == "PIPE_V":
                self.v_fence = j

    def barrier(self, pipe):
        if pipe == "PIPE_ALL":
            self.all_fence = self.add("pipe_barrier ALL", "PIPE_ALL", [], [], set(range(len(self.nodes))))
        elif pipe == "PIPE_V":
            self.v_fence = self.add("pipe_barrier V", "PIPE_V", [], [], set(self.v_nodes))
        else:
            self.add(f"pipe_barrier {pipe}", pipe, [], [], self.order_preds(pipe))

    def _reaches(self, a, b) -> bool:
        seen, stack = set(), [b]
        while stack:
            x = stack.pop()
            if x == a:
                return True
            for p in self.preds[x]:
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
        return False

    def races(self):
        for j, (lj, _, rj, wj) in enumerate(self.nodes):
            for i in range(j):
                li, _, ri, wi = self.nodes[i]
                hit = any(_overlap(a, b) for a in wi for b in rj + wj) or any(_overlap(a, b) for a in ri for b in wj)
                if hit and not (self.anc[j] >> i) & 1:
                    self.problems.append(f"race: #{i} {li}  vs  #{j} {lj}")


def check_sync(m, n_tiles: int = 5) -> list[str]:
    """Problems found in every kernel of ``m`` for ``n_tiles`` iterations (block_dim 1) and for one iteration."""
    problems = []
    for func in [op for op in m.walk() if op.name == "func.func"]:
        for tiles in (n_tiles, 1):
            names = {a.name_hint for a in func.body.args}
            b = {"n": tiles * 8192, "rows": tiles * 16, "n_tiles": tiles, "block_dim": 1}
            problems += Trace(func, {k: v for k, v in b.items() if k in names}).problems
    return problems


# ---------------------------------------------------------------------------------------------------------------
# Multi-buffering


def test_mark_counts_load_and_store_buffers():
    m, ctx = run(ELEMWISE, "hivm-mark-multi-buffer{depth=2}")
    assert ctx.counter("hivm-mark-multi-buffer", "buffers-marked") == 4
    assert all(a.attributes.get("multi_buffer") == 2 for a in allocs(m))
    m, ctx = run(ROWS, "hivm-mark-multi-buffer{depth=3}")
    marked = {a.result.name_hint: a.attributes.get("multi_buffer") for a in allocs(m)}
    assert marked == {"ubx": 3, "ubm": None, "ubb": None, "ubs": None, "ube": 3}  # vector-only buffers stay single
    for off in ("hivm-mark-multi-buffer{depth=1}", "hivm-mark-multi-buffer{enable=false}"):
        m, ctx = run(ELEMWISE, off)
        assert ctx.counter("hivm-mark-multi-buffer", "buffers-marked") == 0


def test_depth_changes_allocs_and_planned_bytes():
    results = {}
    for depth in (1, 2):
        m, ctx = run(ELEMWISE, f"hivm-mark-multi-buffer{{depth={depth}}},hivm-enable-multi-buffer,hivm-plan-memory{{inplace=false}}")
        results[depth] = (len(allocs(m)), ctx.counter("hivm-plan-memory", "bytes-planned-ub"),
                          ctx.counter("hivm-enable-multi-buffer", "buffers-multiplied"))  # fmt: skip
    assert results[1] == (4, 4 * 16384, 0)
    assert results[2] == (8, 8 * 16384, 4)


def test_enable_selects_copy_by_iteration_number():
    m, _ = run(ELEMWISE, "hivm-mark-multi-buffer{depth=2},hivm-enable-multi-buffer")
    loop = next(op for op in m.walk() if op.name == "scf.for")
    names = [op.name for op in loop.body.ops[:6]]
    assert names == ["arith.subi", "arith.floordivsi"] + ["hivm.multi_buffer_select"] * 4
    sub, div = loop.body.ops[:2]
    assert sub.operands[0] is loop.body.args[0] and sub.operands[1] is loop.operands[0]
    assert div.operands[1] is loop.operands[2]
    sel = loop.body.ops[2]
    assert sel.operands[0] is div.result and all(v.op.parent is kernel(m).body for v in sel.operands[1:])


# ---------------------------------------------------------------------------------------------------------------
# Memory planning


def test_plan_reuses_space_of_dead_buffers():
    m, ctx = run(TWO_LOOPS, "hivm-plan-memory{inplace=false}")
    sizes = sum(int(a.result.type.nbytes) for a in allocs(m))
    peak = ctx.counter("hivm-plan-memory", "bytes-planned-ub")
    assert peak < sizes
    offs = {a.result.name_hint: a.attributes["offsets"][0] for a in allocs(m)}
    # loop 2's buffers reuse loop 1's space; acc lives across both loops and keeps its own
    assert {offs["ubb"], offs["ubp"]} <= {offs["uba"], offs["ube"]}
    assert offs["acc"] not in {offs["uba"], offs["ube"], offs["ubb"], offs["ubp"]}
    assert all(o % 32 == 0 for o in offs.values())


def test_plan_writes_in_place():
    m, ctx = run(ELEMWISE, "hivm-plan-memory")
    assert ctx.counter("hivm-plan-memory", "inplace-reuses") == 1
    vmul = next(op for op in m.walk() if op.attributes.get("fun") == "mul")
    assert vmul.operands[2] is vmul.operands[0]  # dst is now %ubx, whose last use this is
    assert len(allocs(m)) == 3 and ctx.counter("hivm-plan-memory", "bytes-planned-ub") == 3 * 16384


def test_plan_multi_buffer_copies_get_one_offset_each():
    m, _ = run(ELEMWISE, "hivm-mark-multi-buffer{depth=2},hivm-plan-memory")
    offs = [o for a in allocs(m) for o in a.attributes["offsets"]]
    assert all(len(a.attributes["offsets"]) == 2 for a in allocs(m))
    assert len(set(offs)) == 8  # copies are live together


def test_overflow_is_a_one_line_summary():
    big = ELEMWISE.replace("8192xf16, ub", "32768xf16, ub")
    with pytest.raises(MemoryPlanOverflow) as info:
        run(big, "hivm-mark-multi-buffer{depth=2},hivm-plan-memory")
    e = info.value
    assert isinstance(e, PassError)
    assert (e.kernel, e.scope, e.needed, e.available, e.multi_buffered) == ("main_fused_0", "ub", 524288, 196608, 4)
    assert str(e) == ("hivm-plan-memory: UB overflow in kernel main_fused_0: needs 524288 B, 196608 B available; "
                      "largest buffers: %ubt (65536 B ×2), %ubx (65536 B ×2), %uby (65536 B ×2)")  # fmt: skip
    assert "\n" not in str(e)


# ---------------------------------------------------------------------------------------------------------------
# Synchronisation


def _flags(block, name=None):
    return [(op.name.split(".")[1], op.attributes.get("src_pipe"), op.attributes.get("dst_pipe"),
             op.attributes.get("event_ids") or op.attributes.get("pipe"), len(op.operands))
            for op in block.ops if op.name in ("hivm.set_flag", "hivm.wait_flag", "hivm.pipe_barrier")]  # fmt: skip


def test_inject_sync_on_docs_kernel():
    m, ctx = run(ELEMWISE, PIPELINES["depth2"])
    func = kernel(m)
    loop = next(op for op in func.body.ops if op.name == "scf.for")
    top = _flags(func.body)
    # pre-arm both copies of the V→MTE2 (buffer free) and MTE3→V (%ubt free) flags, drain them after the loop
    assert top[:4] == [("set_flag", "PIPE_V", "PIPE_MTE2", [0], 0), ("set_flag", "PIPE_V", "PIPE_MTE2", [1], 0),
                       ("set_flag", "PIPE_MTE3", "PIPE_V", [0], 0), ("set_flag", "PIPE_MTE3", "PIPE_V", [1], 0)]
    assert top[4:] == [("wait_flag", "PIPE_V", "PIPE_MTE2", [0], 0), ("wait_flag", "PIPE_V", "PIPE_MTE2", [1], 0),
                       ("wait_flag", "PIPE_MTE3", "PIPE_V", [0], 0), ("wait_flag", "PIPE_MTE3", "PIPE_V", [1], 0),
                       ("pipe_barrier", None, None, "PIPE_ALL", 0)]  # fmt: skip
    body = [op.name for op in loop.body.ops]
    first_load = body.index("hivm.load")
    assert loop.body.ops[first_load - 1].name == "hivm.wait_flag"  # copy k%2 is free
    assert loop.body.ops[first_load - 1].attributes["src_pipe"] == "PIPE_V"
    inside = _flags(loop.body)
    pairs = {(f[1], f[2]) for f in inside if f[0] == "set_flag"}
    assert pairs == {("PIPE_MTE2", "PIPE_V"), ("PIPE_V", "PIPE_MTE3"), ("PIPE_V", "PIPE_MTE2"), ("PIPE_MTE3", "PIPE_V")}
    assert all(len(f[3]) == 2 and f[4] == 1 for f in inside if f[0] != "pipe_barrier")  # rotating, selector %k
    vadd = next(op for op in loop.body.ops if op.attributes.get("fun") == "add")
    assert loop.body.ops[body.index("hivm.vbinary", body.index("hivm.vbinary") + 1) - 1].attributes.get("pipe") == "PIPE_V"
    assert vadd is loop.body.ops[body.index("hivm.vbinary", body.index("hivm.vbinary") + 1)]
    sets = sum(1 for op in func.walk() if op.name == "hivm.set_flag")
    waits = sum(1 for op in func.walk() if op.name == "hivm.wait_flag")
    c = ctx.counters["hivm-inject-sync"]
    assert (c["set-flags"], c["wait-flags"]) == (sets, waits) and sets == waits
    ids = {}
    for op in func.walk():
        if op.name == "hivm.set_flag":
            ids.setdefault((op.attributes["src_pipe"], op.attributes["dst_pipe"]), set()).update(op.attributes["event_ids"])
    assert all(max(v) < 8 for v in ids.values()) and c["event-ids-used"] == sum(len(v) for v in ids.values())
    assert check_sync(m) == []


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("name", KERNELS)
def test_oracle_finds_no_race(name, pipeline):
    m, ctx = run(KERNELS[name], PIPELINES[pipeline])
    assert check_sync(m) == [], print_module(m)
    assert ctx.counter("hivm-inject-sync", "pipe-barriers") >= 1


def test_removing_a_wait_is_a_race():
    m, _ = run(ELEMWISE, PIPELINES["depth2"])
    loop = next(op for op in kernel(m).body.ops if op.name == "scf.for")
    wait = next(op for op in loop.body.ops if op.name == "hivm.wait_flag" and op.attributes["src_pipe"] == "PIPE_MTE2")
    wait.erase()
    problems = check_sync(m)
    assert any(p.startswith("race: ") and "hivm.load" in p and "hivm.vbinary" in p for p in problems), problems


def test_removing_a_barrier_is_a_race():
    m, _ = run(ROWS, PIPELINES["depth2"])
    loop = next(op for op in kernel(m).body.ops if op.name == "scf.for")
    next(op for op in loop.body.ops if op.name == "hivm.pipe_barrier").erase()
    assert any(p.startswith("race: ") for p in check_sync(m))


def test_barrier_all_mode_uses_no_flags():
    m, ctx = run(ELEMWISE, PIPELINES["barrier-all"])
    assert ctx.counter("hivm-inject-sync", "set-flags") == 0
    assert ctx.counter("hivm-inject-sync", "pipe-barriers") == 7  # one per pipe op + the kernel end


def test_too_many_event_ids_fall_back_race_free():
    """Six loads each read by a vector op right after it (interleaved: no flag can be widened over another), then
    the kernel's own loads: at depth 1 eight single MTE2→V ids (the limit); double buffered they would need 16. The pass merges/fences syncs of the pair instead of failing, and the oracle finds
    no race."""
    pairs = "\n".join(f"      hivm.load %x, %u{i}, %off, %len : {GM}, {T}, index, index\n"
                      f'      hivm.vunary %u{i}, %u{i}, %len {{fun = "exp"}} : {T}, {T}, index' for i in range(6))
    text = ELEMWISE.replace("""      hivm.load %x, %ubx, %off, %len""", pairs + "\n      hivm.load %x, %ubx, %off, %len")
    text = text.replace("    %ubx = hivm.alloc", "\n".join(f"    %u{i} = hivm.alloc : () -> {T}" for i in range(6))
                        + "\n    %ubx = hivm.alloc")  # fmt: skip
    m, ctx = run(text, "hivm-mark-multi-buffer{depth=1},hivm-inject-sync")  # 8 single MTE2→V ids: at the limit
    assert check_sync(m) == [] and ctx.counter("hivm-inject-sync", "event-ids-used") >= 8
    assert ctx.counter("hivm-inject-sync", "syncs-merged-for-ids") == 0
    m, ctx = run(text, "hivm-mark-multi-buffer{depth=2},hivm-enable-multi-buffer,hivm-inject-sync")  # 8 rotating pairs
    assert ctx.counter("hivm-inject-sync", "syncs-merged-for-ids") > 0
    assert check_sync(m) == [] and check_sync(m, 1) == []
    ids = [i for op in m.walk() if op.name in ("hivm.set_flag", "hivm.wait_flag") for i in op.attributes["event_ids"]]
    assert ids and max(ids) < 8


@pytest.mark.parametrize("name", ["elementwise", "bias_relu", "softmax", "column_sum", "norm_affine"])
def test_oracle_on_convert_to_hivm_output(name):
    """The whole HIVM chain on what hfusion-auto-schedule + convert-to-hivm produce (tests/passes/vector_kernels)."""
    from tests.passes import vector_kernels as vk

    m = getattr(vk, name)()
    run_pipeline = ("hfusion-auto-schedule,convert-to-hivm,hivm-infer-core-type,hivm-infer-mem-scope,"
                    "hivm-mark-multi-buffer{depth=2},hivm-enable-multi-buffer,hivm-plan-memory,hivm-inject-sync")  # fmt: skip
    ctx = PassManager.from_pipeline(run_pipeline).run(m)
    assert ctx.counter("hivm-inject-sync", "set-flags") > 0
    k = m.lookup("main_fused_0")
    for tiles in (3, 1):  # every tiling parameter bound small, one core
        b = {a.name_hint: (1 if a.name_hint == "block_dim" else tiles) for a in k.body.args if not hasattr(a.type, "scope")}
        assert Trace(k, b).problems == []
