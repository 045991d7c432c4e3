"""Kernel programs: a structured body of instructions, `Loop`s over scalar registers and `If`s.

Build one with `ProgramBuilder` (the API codegen uses); every operand may be an int, a register name
(str), or an expression over registers (`b.reg("n") * 2 + 64`). One program serves every shape: sizes,
trip counts and GM base addresses are kernel params bound at launch.

    b = ProgramBuilder("scale", core_type="aiv", params=["x", "n"])
    with b.loop("i", 0, b.reg("n") // 128) as i:
        b.copy_gm_to_ub(0, b.reg("x") + i * 256, 256)
        ...
    prog = b.build()

Predefined registers: block_idx, block_num (cores of this kind in the launch), subblock_idx (0/1 for the
two AIVs of a mix group, else 0), subblock_num.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field, fields

from .expr import Expr, Reg, as_expr
from .errors import ProgramError
from .isa import MNEMONICS, Instr

CORE_TYPES = ("aiv", "aic")


@dataclass
class Loop:
    """for var in range(start, stop, step): body  (scalar unit pays loop_iter_cycles per iteration)."""
    var: str
    start: Expr
    stop: Expr
    step: Expr
    body: list = field(default_factory=list)


@dataclass
class If:
    """if cond != 0: then else: orelse."""
    cond: Expr
    then: list = field(default_factory=list)
    orelse: list = field(default_factory=list)


@dataclass
class Program:
    """One core's kernel. core_type 'aiv' runs on vector cores, 'aic' on cube cores."""
    name: str
    core_type: str
    params: list
    body: list

    def __post_init__(self):
        if self.core_type not in CORE_TYPES:
            raise ProgramError(f"program {self.name}: core_type {self.core_type!r} must be one of {CORE_TYPES}")
        number(self.body, 0)

    def instructions(self):
        """All instructions in text order."""
        return list(walk(self.body))


@dataclass
class MixProgram:
    """A mix kernel: per block, one AIC runs `aic` and two AIVs run `aiv` (subblock_idx 0, 1)."""
    name: str
    params: list
    aic: Program
    aiv: Program
    core_type: str = "mix"


def walk(body):
    """The instructions of a structured body (loops' and ifs' included), in text order."""
    for n in body:
        if isinstance(n, Loop):
            yield from walk(n.body)
        elif isinstance(n, If):
            yield from walk(n.then)
            yield from walk(n.orelse)
        else:
            yield n


def number(body, pc: int) -> int:
    """Assign program counters in text order."""
    for ins in walk(body):
        ins.pc = pc
        pc += 1
    return pc


class ProgramBuilder:
    """Builds a Program. Any mnemonic is a method: b.vadd("f16", dst, src0, src1, repeat=128)."""

    def __init__(self, name: str, core_type: str = "aiv", params=()):
        self.name, self.core_type, self.params = name, core_type, list(params)
        self._stack: list[list] = [[]]
        self._last_if: If | None = None

    def reg(self, name: str) -> Reg:
        return Reg(name)

    def emit(self, ins: Instr) -> Instr:
        self._stack[-1].append(ins)
        return ins

    def mov(self, reg: str, value) -> Reg:
        self.emit(MNEMONICS["mov"][0](reg, value))
        return Reg(reg)

    @contextmanager
    def loop(self, var: str, start, stop, step=1):
        node = Loop(var, as_expr(start), as_expr(stop), as_expr(step))
        self.emit(node)
        self._stack.append(node.body)
        try:
            yield Reg(var)
        finally:
            self._stack.pop()

    @contextmanager
    def if_(self, cond):
        node = If(as_expr(cond))
        self.emit(node)
        self._stack.append(node.then)
        try:
            yield
        finally:
            self._stack.pop()
            self._last_if = node

    @contextmanager
    def else_(self):
        node = self._last_if
        if node is None or self._stack[-1][-1] is not node:
            raise ProgramError("else_() must directly follow an if_() block")
        self._stack.append(node.orelse)
        try:
            yield
        finally:
            self._stack.pop()

    def build(self) -> Program:
        if len(self._stack) != 1:
            raise ProgramError(f"program {self.name}: unclosed loop/if")
        return Program(self.name, self.core_type, self.params, self._stack[0])

    def __getattr__(self, mnemonic):
        if mnemonic.startswith("_") or mnemonic not in MNEMONICS:
            raise AttributeError(f"ProgramBuilder has no instruction {mnemonic!r}")
        cls, fixed = MNEMONICS[mnemonic]
        names = [f.name for f in fields(cls) if f.name not in fixed]

        def make(*args, tags: dict | None = None, **kwargs):
            if len(args) > len(names):
                raise ProgramError(f"{mnemonic}: too many positional operands ({len(args)} > {len(names)})")
            kw = dict(zip(names, args))
            dup = set(kw) & set(kwargs)
            if dup:
                raise ProgramError(f"{mnemonic}: operand(s) {sorted(dup)} given twice")
            kw.update(kwargs)
            kw.update(fixed)
            try:
                ins = cls(**kw)
            except TypeError as e:
                raise ProgramError(f"{mnemonic}: {e}") from None
            if tags:
                unknown = sorted(set(tags) - {f.name for f in fields(cls)})
                if unknown:
                    raise ProgramError(f"{mnemonic}: tags name {unknown}, which are not operands of {mnemonic}")
                ins.tags = dict(tags)
            return self.emit(ins)
        return make
