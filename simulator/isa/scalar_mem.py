"""PIPE_S data instructions: scalar loads/stores of single UB elements and integer arithmetic on data registers.

Ascend C's ``LocalTensor::GetValue(i)`` / ``SetValue(i, v)`` read and write one element of a local tensor with the
scalar unit (ASCENDC); AscendNPU-IR lowers HIVM ops the vector unit cannot do (i64 arithmetic, compares and
reductions on A2, ``ShouldLowerToScalarLoops.cpp``) to such scalar loops over UB (``HIVMLowerToLoops``)::

    dmov d, expr               d = expr (a scalar-register expression: loop counters, kernel params, immediates)
    ld_ub dtype d addr         d = UB[addr] as dtype                  (GetValue)
    st_ub dtype addr d         UB[addr] = d, wrapped to dtype         (SetValue)
    s<op> dtype dst a [b [c]]  dst = op(a, b, c) over data registers, wrapped to dtype (two's complement)

``<op>``: add sub mul max min and or shl shr (binary), neg abs (unary), cmp_eq/ne/lt/le/gt/ge (1 or 0), sel
(``a != 0 ? b : c``). Data registers are a file of their own, read and written when the instruction executes in
the S stream (phase 2, in order with every pipe), so a loaded value cannot steer control flow or addresses (the
kernels that use these never need it). Integer semantics are exact: Python integers wrapped to the dtype's width,
so i64 add/sub/mul/neg/abs wrap like torch's int64 tensors.

Floats: ``ld_ub``/``st_ub`` also move f16 and f32 elements (``GetValue``/``SetValue`` on a float LocalTensor), and
add sub mul max min neg abs take f16/f32 (the result rounded to the dtype). A float register is what a vector-scalar
instruction reads as its scalar (``vadds ... sreg=d``, isa/vector.py): Ascend C's ``Adds(dst, src, t.GetValue(i))``
after a V→S flag, which AscendNPU-IR emits when it inlines the broadcast of a one-element tensor as a scalar
(``hfusion-inline-brc``, ``extractScalarValue``).

Each instruction costs ``scalar_op_cycles`` (the scalar unit's per-instruction cost, the class ``mov`` pays) and is
a scalar-blocking item: later issue waits for it. Its UB accesses are visible to the hazard checker as pipe S, and
the scalar unit's own program order does not order them against other pipes: a vector or MTE access to the same
bytes needs a set_flag/wait_flag pair with S (ASCENDC HardEvent S_V, V_S, S_MTE3, MTE2_S …) or a
``pipe_barrier(ALL)``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Access, Instr
from ..dtypes import itemsize, np_dtype
from ..errors import MemoryAccessError, ProgramError

INT_DTYPES = ("i8", "u8", "i16", "u16", "i32", "i64")  # ASCENDC GetValue/SetValue on integer LocalTensors
FLOAT_DTYPES = ("f16", "f32")  # ASCENDC GetValue/SetValue on half/float LocalTensors
FLOAT_OPS = ("add", "sub", "mul", "max", "min", "neg", "abs")  # the data-register ops that take a float dtype
SALU_BINARY = ("add", "sub", "mul", "max", "min", "and", "or", "shl", "shr")
SALU_UNARY = ("neg", "abs")
SALU_CMP = ("eq", "ne", "lt", "le", "gt", "ge")
_CMP_FN = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
           "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}
_BIN_FN = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "max": max, "min": min,
           "and": lambda a, b: a & b, "or": lambda a, b: a | b, "shl": lambda a, b: a << b,
           "shr": lambda a, b: a >> b}
SALU_OPS = SALU_BINARY + SALU_UNARY + tuple("cmp_" + p for p in SALU_CMP) + ("sel",)


def wrap(value, dtype: str):
    """``value`` reduced to ``dtype``'s width, two's complement for the signed types (a float rounded to it)."""
    if dtype in FLOAT_DTYPES:
        return float(np_dtype(dtype).type(value))
    bits = 8 * itemsize(dtype)
    v = int(value) & ((1 << bits) - 1)
    if not dtype.startswith("u") and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def _check_dtype(dtype, what, floats=False):
    allowed = INT_DTYPES + (FLOAT_DTYPES if floats else ())
    if dtype not in allowed:
        raise ProgramError(f"{what}: dtype {dtype} not supported (here the scalar data instructions take {allowed})")


def check_dreg_name(name, what):
    """Raise ProgramError unless ``name`` can name a data register (``what``: the instruction, for the message)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ProgramError(f"{what}: bad data register name {name!r}")


def read_dreg(core, ins, reg):
    """The value of data register ``reg`` on ``core``; ProgramError naming ``ins`` if it was never written."""
    try:
        return core.dregs[reg]
    except KeyError:
        raise ProgramError(f"{ins.describe()} on core {core.name}: data register {reg} is read before it is "
                           f"written") from None


class _ScalarData(Instr):
    PIPE = "S"

    def check(self, core):
        pass

    def cycles(self, chip):
        return chip.scalar_op_cycles  # model (presets.py): one scalar instruction, the cost of a mov


@dataclass
class SDataMov(_ScalarData):
    """``dmov``: a data register = a scalar-register expression (wrapped to i64), or a float immediate (a float
    operand of the f16/f32 data-register ops, which round their results to their dtype)."""
    dreg: str
    value: object
    EXPRS = ("value",)
    MNEMONIC = "dmov"

    def validate(self):
        check_dreg_name(self.dreg, "dmov")

    def execute(self, core):
        core.dregs[self.dreg] = self._value()

    def _value(self):
        if isinstance(self.value, float) and not self.value.is_integer():
            return self.value
        return wrap(int(self.value), "i64")

    def fast_effect(self):  # the resolved value, wrapped once
        reg, v = self.dreg, self._value()

        def effect(core):
            core.dregs[reg] = v
        return effect


@dataclass
class _UbElement(_ScalarData):
    dtype: str
    dreg: str
    addr: object
    EXPRS = ("addr",)

    def validate(self):
        _check_dtype(self.dtype, self.MNEMONIC, floats=True)
        check_dreg_name(self.dreg, self.MNEMONIC)

    def _index(self, core) -> int:
        es = itemsize(self.dtype)
        core.local("UB", self).check(self.describe(), np.array([self.addr]), es, align=1)
        if self.addr % es:
            raise MemoryAccessError(f"{self.describe()}: UB address {self.addr:#x} is not aligned to its {es}-byte "
                                    f"{self.dtype} element")
        return self.addr // es

    def check(self, core):
        self._index(core)

    def accesses(self, core):
        return [Access("UB", self.MNEMONIC == "st_ub", np.array([self.addr]), itemsize(self.dtype), self.tag("addr"))]


@dataclass
class SLoadUb(_UbElement):
    """``ld_ub``: GetValue — one UB element into a data register."""
    MNEMONIC = "ld_ub"

    def execute(self, core):
        i = self._index(core)
        v = core.local("UB", self).view(self.dtype)[i]
        core.dregs[self.dreg] = float(v) if self.dtype in FLOAT_DTYPES else int(v)

    def fast_effect(self):  # the element's index checked once (a replayed launch's addresses are the recorded ones)
        i, dt, reg = self.addr // itemsize(self.dtype), self.dtype, self.dreg
        cast = float if dt in FLOAT_DTYPES else int

        def effect(core):
            core.dregs[reg] = cast(core.mem["UB"].view(dt)[i])
        return effect


@dataclass
class SStoreUb(_UbElement):
    """``st_ub``: SetValue — a data register into one UB element (wrapped to the dtype)."""
    MNEMONIC = "st_ub"

    def execute(self, core):
        i = self._index(core)
        core.local("UB", self).view(self.dtype)[i] = np_dtype(self.dtype).type(wrap(read_dreg(core, self, self.dreg),
                                                                                  self.dtype))

    def fast_effect(self):  # as SLoadUb's
        i, dt, typ = self.addr // itemsize(self.dtype), self.dtype, np_dtype(self.dtype).type

        def effect(core):
            core.mem["UB"].view(dt)[i] = typ(wrap(read_dreg(core, self, self.dreg), dt))
        return effect


@dataclass
class SAlu(_ScalarData):
    """``s<op>``: integer arithmetic on data registers, wrapped to ``dtype`` (see the module docstring)."""
    op: str
    dtype: str
    dst: str
    a: str
    b: str = "-"
    c: str = "-"

    @property
    def mnemonic(self):
        return "s" + self.op

    def validate(self):
        if self.op not in SALU_OPS:
            raise ProgramError(f"salu: unknown op {self.op!r}; ops are {SALU_OPS}")
        _check_dtype(self.dtype, self.mnemonic, floats=self.op in FLOAT_OPS)
        need = 1 if self.op in SALU_UNARY else 3 if self.op == "sel" else 2
        for r in (self.dst, self.a, self.b, self.c)[: need + 1]:
            check_dreg_name(r, self.mnemonic)

    def execute(self, core):
        op = self.op
        a = read_dreg(core, self, self.a)
        if op == "neg":
            v = -a
        elif op == "abs":
            v = abs(a)
        elif op == "sel":
            v = read_dreg(core, self, self.b) if a else read_dreg(core, self, self.c)
        elif op.startswith("cmp_"):
            v = int(_CMP_FN[op[4:]](a, read_dreg(core, self, self.b)))
        else:
            b = read_dreg(core, self, self.b)
            if op in ("shl", "shr") and not 0 <= b < 64:
                raise ProgramError(f"{self.describe()}: shift by {b} (must be in [0, 64))")
            v = _BIN_FN[op](a, b)
        core.dregs[self.dst] = wrap(v, self.dtype)
