"""PIPE_S: scalar register moves/arithmetic. Executed by the scalar unit at issue; never queued.

    mov r, expr      r = expr   (expressions over registers, kernel params, block_idx, block_num ...)
"""
from __future__ import annotations

from dataclasses import dataclass

from .base import Instr
from ..errors import ProgramError


@dataclass
class SMov(Instr):
    reg: str
    value: object
    EXPRS = ("value",)
    MNEMONIC = "mov"
    KIND = "scalar"

    def validate(self):
        if not isinstance(self.reg, str) or not self.reg.isidentifier():
            raise ProgramError(f"mov: bad register name {self.reg!r}")
