"""Instruction base class: expression operands, resolution at issue, and the Access record.

An instruction is a small dataclass. Fields listed in `EXPRS` are expressions over scalar registers; the
scalar unit resolves them at issue time (`resolve`) into a copy holding plain ints, which is what the pipes
execute, cost and hazard-check.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar, NamedTuple

import numpy as np

from ..expr import Imm, as_expr, compile_expr

PIPES = ("S", "MTE1", "MTE2", "MTE3", "M", "V", "FIX")
PIPE_INDEX = {p: i for i, p in enumerate(PIPES)}
LANE_NAMES = {"S": "SCALAR", "MTE1": "MTE1", "MTE2": "MTE2", "MTE3": "MTE3", "M": "CUBE", "V": "VECTOR",
              "FIX": "FIXP"}  # msprof's lane names


class Access(NamedTuple):
    """Bursts [s, s+length) for s in starts, in `scope` (GM or a local scope), read or written."""
    scope: str
    write: bool
    starts: np.ndarray
    length: int
    tag: str | None = None  # the logical buffer the program means (UB operands; the buffer-tag check)


@dataclass
class Instr:
    """Base. Subclasses set MNEMONIC (or override `mnemonic`), PIPE (or override `pipe`), EXPRS."""

    MNEMONIC: ClassVar[str] = ""
    PIPE: ClassVar[str] = "S"
    EXPRS: ClassVar[tuple] = ()
    KIND: ClassVar[str] = "op"   # op | dma | sync
    OPTIONAL: ClassVar[dict] = {}  # field -> default text: the assembly omits the field at that value
    reads_dregs: ClassVar[bool] = False  # an operand is a data register read at issue (bind) in phase 2
    tags: ClassVar[dict | None] = None  # per instance: operand field -> logical buffer tag (ProgramBuilder tags=)
    READS_PADDING: ClassVar[bool] = False  # reads whole blocks, padding never written included (buffer-tag check)
    skey: ClassVar[tuple | None] = None  # per resolved instance: (program node, operand values), set at issue (core.py)

    def __post_init__(self):
        for name in self.EXPRS:
            setattr(self, name, as_expr(getattr(self, name)))
        self.pc = -1
        self._compiled = None
        self.validate()

    def __getstate__(self) -> dict:
        """Pickled without the resolution closures (``_compiled``), rebuilt at the first issue after loading."""
        state = dict(self.__dict__)
        state["_compiled"] = None
        state.pop("_consts", None)
        return state

    # ---- identity ----------------------------------------------------------------------------------
    @property
    def mnemonic(self) -> str:
        return self.MNEMONIC

    @property
    def pipe(self) -> str:
        return self.PIPE

    def validate(self) -> None:
        """Static checks on non-expression fields (dtypes, modes)."""

    def bind(self, core) -> None:
        """Read the data-register operands (``reads_dregs``): called in phase 2 once the S data instructions issued
        before this instruction have run."""

    def bound_addresses(self):
        """What a bind decided that timing depends on (a register-computed GM address), or None (a bind that only
        feeds a value). Launch replay (replay.py) compares it with the recorded launch's."""
        return None

    def tag(self, field: str) -> str | None:
        """The logical buffer operand ``field`` names (None: untagged, not checked by the buffer-tag check)."""
        return self.tags.get(field) if self.tags else None

    def describe(self) -> str:
        return f"{self.mnemonic} (pc {self.pc})"

    # ---- resolution --------------------------------------------------------------------------------
    def resolve(self, env: dict) -> "Instr":
        comp = self._compiled
        if comp is None:
            comp = self._compiled = [(n, compile_expr(getattr(self, n))) for n in self.EXPRS
                                     if not isinstance(getattr(self, n), Imm)]
            self._consts = [(n, getattr(self, n).value) for n in self.EXPRS
                            if isinstance(getattr(self, n), Imm)]
        r = object.__new__(type(self))  # a shallow copy (copy.copy would go through __getstate__)
        d = r.__dict__
        d.update(self.__dict__)
        for n, v in self._consts:
            d[n] = v
        for n, f in comp:
            d[n] = f(env)
        return r

    # ---- behaviour (resolved instances) ------------------------------------------------------------
    def accesses(self, core) -> list[Access]:
        return []

    def execute(self, core) -> None:
        pass

    def fast_effect(self):
        """None, or a function ``f(core)`` with exactly ``execute``'s effect on this resolved instruction, built once
        for launch replay (replay.py) with what can be decided ahead (operand spans). It may assume numpy's errors
        are ignored (the replay runs under ``np.errstate(all="ignore")``: that changes no value)."""
        return None

    def cycles(self, chip) -> int:
        """Busy cycles excluding start-up/head latency (see `head`)."""
        return 1

    def head(self, chip) -> int:
        """Extra cycles paid when the pipe was idle before this instruction."""
        return 0

    def flops(self) -> int:
        return 0

    def path_bytes(self) -> tuple[str, int] | None:
        """(data path name, bytes) for the stats."""
        return None

    def batch_key(self):
        """None, or a key equal for the instructions (of cores of one kind) whose effects ``batch_effect`` can apply
        to all their cores at once: everything but the GM address (replay_batch.py)."""
        return None

    def batch_effect(self):
        """``(scope, g)``: ``g(stack, rows, gm, gm_addresses)`` applies execute's effect of every instruction with
        this batch key to the rows ``rows`` of ``stack`` (the cores' ``scope`` memories, one row each), each with
        its own GM address (:meth:`batch_gm_address`, in row order)."""
        raise NotImplementedError

    def batch_gm_address(self) -> int:
        return 0

    def _field_key(self):
        return (type(self), self.pc) + tuple(getattr(self, f.name) for f in fields(self))

    # ---- text --------------------------------------------------------------------------------------
    def operands(self) -> list[tuple[str, object]]:
        """(name, value) pairs printed as name=value, in declaration order."""
        return [(f.name, getattr(self, f.name)) for f in fields(self)]
