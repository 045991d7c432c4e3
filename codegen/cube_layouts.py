"""The data layouts the cube instructions implement, checked against the ones the IR records.

``hivm-infer-data-layout`` writes each cube buffer's ``#hivm.data_layout`` on its alloc and each conversion's
``src_layout``/``dst_layout`` on the MTE1 loads and the fixpipe. The cube emitters read them here instead of
assuming them: an op whose layouts the simulated instruction does not implement (or that has none) is a
CodegenError naming the op, the instruction and both layouts. The instructions' layouts are the simulator's
(``simulator/isa/cube.py``): ``load_l1_to_l0a`` reads ND rows of an L1 box (``transpose``: the box holds A^T) and
writes zZ fractals of 16 × k0, ``load_l1_to_l0b`` writes nZ fractals of k0 × 16, ``mmad`` reads zZ and nZ and
accumulates into zN fractals of 16 × 16, ``fixpipe`` reads zN and writes ND rows.
"""

from __future__ import annotations

from graph_passes.dialects.hivm_layout import LAYOUT_ATTRS, buffer_layout
from simulator.isa.cube import k0_of

from .errors import CodegenError

# op -> (the instruction, the layout kind of each buffer operand it reads or writes)
INSTRUCTION_LAYOUTS = {
    "hivm.load_l0a": ("load_l1_to_l0a", ("ND", "zZ")),
    "hivm.load_l0b": ("load_l1_to_l0b", ("ND", "nZ")),
    "hivm.mmad": ("mmad", ("zZ", "nZ", "zN")),
    "hivm.fixpipe": ("fixpipe", ("zN", "ND")),
}
FRACTALS = {"zZ": lambda k0: (16, k0), "nZ": lambda k0: (k0, 16), "zN": lambda k0: (16, 16)}  # rows x cols


def _implements(layout, kind: str, dtype: str) -> bool:
    if layout is None or layout.kind != kind:
        return False
    return kind == "ND" or tuple(layout.fractal) == FRACTALS[kind](k0_of(dtype))


def _expected(kind: str, dtype: str) -> str:
    if kind == "ND":
        return "ND rows"
    r, c = FRACTALS[kind](k0_of(dtype))
    return f"{kind} fractals of {r} x {c} {dtype}"


def _held(op, index: int):
    v = op.operands[index]
    if v.type.scope == "gm":
        return None  # a kernel argument: ND rows, its layout the op's attribute
    try:
        held = buffer_layout(v)
    except ValueError as e:
        raise CodegenError(op, str(e)) from None
    if held is None:
        raise CodegenError(op, f"operand {index} ({v.type}) has no data layout (run hivm-infer-data-layout)")
    return held


def read_layouts(op) -> bool:
    """Check ``op``'s layouts against its instruction's; return whether the L1 box an MTE1 load reads holds the
    operand transposed (its ND source layout's ``transpose``; False for the other ops)."""
    instr, kinds = INSTRUCTION_LAYOUTS[op.name]
    declared = [None] * len(kinds)
    if op.name != "hivm.mmad":  # a conversion: its src/dst layouts are on the op
        missing = [a for a in LAYOUT_ATTRS if a not in op.attributes]
        if missing:
            raise CodegenError(op, f"has no {missing[0]} (run hivm-infer-data-layout); {instr} converts "
                                   f"{kinds[0]} to {kinds[1]}")  # fmt: skip
        declared = [op.attributes[a] for a in LAYOUT_ATTRS]
    for i, kind in enumerate(kinds):
        held, given = _held(op, i), declared[i]
        if given is not None and held is not None and held != given:
            raise CodegenError(op, f"{LAYOUT_ATTRS[i]} is {given}, but operand {i} ({op.operands[i].type}) is laid "
                                   f"out {held}")  # fmt: skip
        layout = given if given is not None else held
        dtype = op.operands[i].type.dtype
        if not _implements(layout, kind, dtype):
            raise CodegenError(op, f"{instr} takes operand {i} ({op.operands[i].type}) as {_expected(kind, dtype)}, "
                                   f"the IR lays it out {layout}")  # fmt: skip
    if op.name not in ("hivm.load_l0a", "hivm.load_l0b"):
        return False
    transpose, flag = bool(declared[0].transpose), bool(op.attributes.get("transpose"))
    if transpose != flag:
        raise CodegenError(op, f"src_layout {declared[0]} and transpose = {str(flag).lower()} disagree about the L1 "
                               "box's orientation")  # fmt: skip
    return transpose
