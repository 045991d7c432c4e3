"""The instruction set, grouped by pipe, and the mnemonic table used by the assembly."""
from .base import LANE_NAMES, PIPES, Access, Instr
from .cube import Fixpipe, FixpipeToUb, LoadL1ToL0A, LoadL1ToL0B, Mmad
from .dma import CopyGmToL1, CopyGmToUb, CopyUbToGm
from .index import VCi, VGather
from .scalar import SMov
from .scalar_mem import SALU_OPS, SAlu, SDataMov, SLoadUb, SStoreUb
from .sync import CrossCoreSet, CrossCoreWait, PipeBarrier, SetFlag, WaitFlag
from .vector import (BINARY_FUNS, BLOCK_REDUCE_MNEMONICS, COMPARE_FUNS, REDUCE_MNEMONICS, UNARY_FUNS,
                     VECTOR_SCALAR_FUNS, VBinary, VBlockReduce, VBrcb, VCast, VCmp, VDup, VReduce, VScalar, VSel,
                     VTranspose, VUnary)

# mnemonic -> (class, fixed fields). One table; test_isa checks every entry round-trips through assembly.
MNEMONICS: dict[str, tuple[type, dict]] = {}
for _c in (CopyGmToUb, CopyGmToL1, CopyUbToGm, LoadL1ToL0A, LoadL1ToL0B, Mmad, Fixpipe, FixpipeToUb, SMov,
           SetFlag, WaitFlag, PipeBarrier, CrossCoreSet, CrossCoreWait, VDup, VBrcb, VCast, VSel, VTranspose,
           VCi, VGather, SDataMov, SLoadUb, SStoreUb):
    MNEMONICS[_c.MNEMONIC] = (_c, {})
for _op in SALU_OPS:
    MNEMONICS["s" + _op] = (SAlu, {"op": _op})
for _op in BINARY_FUNS:
    MNEMONICS["v" + _op] = (VBinary, {"op": _op})
for _op in UNARY_FUNS:
    MNEMONICS["v" + _op] = (VUnary, {"op": _op})
for _op in VECTOR_SCALAR_FUNS:
    MNEMONICS["v" + _op] = (VScalar, {"op": _op})
for _op, _m in REDUCE_MNEMONICS.items():
    MNEMONICS[_m] = (VReduce, {"op": _op, "whole": 0})
    MNEMONICS["vred" + _op.lstrip("r")] = (VReduce, {"op": _op, "whole": 1})
for _op, _m in BLOCK_REDUCE_MNEMONICS.items():
    MNEMONICS[_m] = (VBlockReduce, {"op": _op})
for _op in COMPARE_FUNS:
    MNEMONICS["vcmp_" + _op] = (VCmp, {"op": _op, "scalar_rhs": 0})
    MNEMONICS["vcmps_" + _op] = (VCmp, {"op": _op, "scalar_rhs": 1})

__all__ = ["LANE_NAMES", "PIPES", "Access", "Instr", "MNEMONICS", "Fixpipe", "FixpipeToUb", "LoadL1ToL0A",
           "LoadL1ToL0B", "Mmad", "CopyGmToL1", "CopyGmToUb", "CopyUbToGm", "SMov", "SAlu", "SDataMov", "SLoadUb",
           "SStoreUb", "CrossCoreSet", "CrossCoreWait", "PipeBarrier", "SetFlag", "WaitFlag", "VBinary",
           "VBlockReduce", "VBrcb", "VCast", "VCmp", "VDup", "VReduce", "VScalar", "VSel", "VTranspose", "VUnary",
           "VCi", "VGather"]
