"""One core and its scalar unit (phase 1 of a launch).

The scalar unit walks the structured program in order, evaluating registers, loop bounds and operand
expressions, and issues every non-scalar instruction into its pipe's in-order queue. It pays
`scalar_op_cycles` per `mov`, `issue_cycles` per issued instruction and `loop_iter_cycles` per loop
iteration. Issue times are recorded relative to the last scalar-blocking instruction (pipe_barrier(ALL),
cross_wait, set_flag/wait_flag with the S pipe, or an S data instruction such as ld_ub/st_ub), whose
completion time is only known during timing (phase 2, timing.py):

    issue_time(x) = end(S item number x.seg - 1) + x.sofs       (or x.sofs when x.seg == 0)

An instruction with a data-register operand (a DMA whose GM address the scalar unit computed from a value it loaded
from UB, isa/dma.py) is listed in ``pending[x.seg]``: phase 2 reads the register once S item x.seg - 1 has run, which
is what the scalar unit would hold when issuing it.
"""
from __future__ import annotations

from .errors import ProgramError
from .isa.base import PIPES
from .memory import LocalMemory
from .program import If, Loop

AIV_PIPES = ("S", "MTE2", "MTE3", "V")
AIC_PIPES = ("S", "MTE2", "MTE1", "M", "FIX")
AIV_SCOPES = ("UB",)
AIC_SCOPES = ("L1", "L0A", "L0B", "L0C")
KIND_SCOPES = {"aiv": AIV_SCOPES, "aic": AIC_SCOPES, "coupled": AIV_SCOPES + AIC_SCOPES}
MAX_ISSUED = 20_000_000


class Core:
    """A core: kind 'aiv', 'aic' or 'coupled' (all pipes and scopes), its memories and pipe queues."""

    def __init__(self, index: int, name: str, kind: str, chip, gm, group: int, mem: dict | None = None):
        self.index, self.name, self.kind, self.chip, self.gm, self.group = index, name, kind, chip, gm, group
        pipes = {"aiv": AIV_PIPES, "aic": AIC_PIPES, "coupled": PIPES}[kind]
        scopes = KIND_SCOPES[kind]
        self.pipes = pipes
        # mem: the scopes' memories when the caller provides them (launch replay stacks the cores' memories)
        self.mem = mem if mem is not None else {s: LocalMemory(s, chip.capacity(s), chip.align[s]) for s in scopes}
        self.queues: dict[str, list] = {p: [] for p in pipes if p != "S"}
        self.s_items: list = []
        self.end_seg = 0
        self.end_sofs = 0
        self.scalar_instructions = 0
        self.dregs: dict[str, int] = {}  # data registers of the S data instructions (isa/scalar_mem.py)
        self.pending: dict[int, list] = {}  # seg -> issued instructions reading data registers (bound in phase 2)

    def local(self, scope: str, ins) -> LocalMemory:
        try:
            return self.mem[scope]
        except KeyError:
            raise ProgramError(f"{ins.describe()}: core {self.name} ({self.kind}) has no {scope}") from None

    # ---- phase 1 -----------------------------------------------------------------------------------
    def issue(self, program, env: dict, checked: dict | None = None) -> None:
        """Walk ``program`` and fill the pipe queues. ``checked``: resolved instructions already checked on a core of
        this kind, by static key, shared by a launch's cores (a check depends on the instruction's operands, the
        scope capacities of the core's kind and the GM; it may normalise fields, which the copy keeps)."""
        chip = self.chip
        if checked is None:
            checked = {}
        kind = self.kind
        op_c, iss_c, loop_c = chip.scalar_op_cycles, chip.issue_cycles, chip.loop_iter_cycles
        queues, s_items, pipes = self.queues, self.s_items, self.pipes
        state = [0, 0, 0]  # seg, sofs, issued

        def run(body):
            for node in body:
                if isinstance(node, Loop):
                    start, stop, step = (node.start.value if hasattr(node.start, "value") else _ev(node.start, env),
                                         _ev(node.stop, env), _ev(node.step, env))
                    if step == 0:
                        raise ProgramError(f"{program.name}: loop {node.var} has step 0")
                    state[1] += op_c
                    for v in range(start, stop, step):
                        env[node.var] = v
                        state[1] += loop_c
                        run(node.body)
                    continue
                if isinstance(node, If):
                    state[1] += op_c
                    run(node.then if _ev(node.cond, env) else node.orelse)
                    continue
                if node.KIND == "scalar":
                    env[node.reg] = _ev(node.value, env)
                    state[1] += op_c
                    self.scalar_instructions += 1
                    continue
                r = node.resolve(env)
                pipe = r.pipe
                if pipe not in pipes:
                    raise ProgramError(f"{r.describe()} in {program.name}: core {self.name} ({self.kind}) has no "
                                       f"pipe {pipe}; its pipes are {pipes}")
                if r.reads_dregs:
                    r.check(self)
                else:  # a static key: equal keys access the same bytes (hazards.py caches by it)
                    key = r.skey = (id(node),) + tuple([r.__dict__[n] for n in node.EXPRS])
                    done = checked.get((kind, key))
                    if done is None:
                        r.check(self)
                        checked[(kind, key)] = dict(r.__dict__)
                    else:  # checked before, on this core or another of its kind: the checked fields
                        r.__dict__.update(done)
                if pipe != "S" or r.KIND != "op":  # an S data instruction pays its own cycles when it runs
                    state[1] += iss_c
                state[2] += 1
                if state[2] > MAX_ISSUED:
                    raise ProgramError(f"{program.name} on {self.name}: more than {MAX_ISSUED} instructions issued")
                r.core = self
                r.seg, r.sofs = state[0], state[1]
                if r.reads_dregs:  # its data registers hold what the S items before it left there
                    self.pending.setdefault(state[0], []).append(r)
                if pipe == "S":
                    r.need = {p: len(q) for p, q in queues.items()}
                    s_items.append(r)
                    state[0] += 1
                    state[1] = 0
                else:
                    queues[pipe].append(r)

        run(program.body)
        self.end_seg, self.end_sofs = state[0], state[1]

    def n_issued(self) -> int:
        return sum(len(q) for q in self.queues.values()) + len(self.s_items)


_cache: dict = {}


def _ev(e, env):
    f = _cache.get(id(e))
    if f is None or f[0] is not e:
        from .expr import compile_expr
        f = _cache[id(e)] = (e, compile_expr(e))
    return f[1](env)
