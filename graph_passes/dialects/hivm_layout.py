"""``#hivm.data_layout<…>``: how a cube-path buffer holds its matrix (after AscendNPU-IR's ``HIVM_DataLayoutAttr``).

Printed ``#hivm.data_layout<ND>``, ``#hivm.data_layout<ND, transpose = true>`` or
``#hivm.data_layout<zZ, fractal = [16, 16]>``. The letters name the order of the fractals' elements and then of the
fractals (small letter inside, capital outside; z row-major, n column-major), as the simulated ISA lays them out
(``simulator/isa/cube.py``, HARDWARE.md):

=====  =========================================  ======================================  ==================
kind   element (i, j) of an r × c matrix          where                                   fractal
=====  =========================================  ======================================  ==================
ND     row-major rows (``transpose``: the matrix  GM; L1 boxes (MTE2 copies ND rows)      —
       is held transposed, its rows are columns)
zZ     fractal (i/16, j/k0) row-major over the    L0A (the cube's A operand)              [16, k0]
       fractals, row-major inside
nZ     fractal (i/k0, j/16) row-major over the    L0B (the cube's B operand)              [k0, 16]
       fractals, column-major inside
zN     fractal (i/16, j/16) column-major over     L0C (the f32 accumulator)               [16, 16]
       the fractals, row-major inside
=====  =========================================  ======================================  ==================

``k0`` is 32 B / element (16 for f16/bf16, 8 for f32). ``hivm-infer-data-layout`` sets the layouts; the verifier
checks them here (:func:`check_alloc_layout`, :func:`check_op_layouts`) and codegen reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir.core import Attr, Operation, Value, ViewLike
from ..ir.printer import format_attr
from ..ir.typed_attrs import TypedAttr, register_attr
from ..ir.types import DTYPE_BYTES, MemRefType

LAYOUT_KINDS = ("ND", "zZ", "nZ", "zN")
FRACTAL_BYTES = 32  # one fractal row of an operand: k0 = 32 B / element (HARDWARE.md, cube fractals)


@register_attr
@dataclass(frozen=True)
class DataLayout(TypedAttr):
    """The layout of a buffer's matrix: ``kind``, the ``fractal`` shape in elements (fractal kinds only) and, for
    ND, whether the buffer holds the matrix transposed (a ``.t()`` operand read in place)."""

    mnemonic = "hivm.data_layout"
    positional: ClassVar[tuple[str, ...]] = ("kind",)
    kind: str
    fractal: tuple[int, ...] = ()
    transpose: bool = False

    def __post_init__(self):
        if self.kind not in LAYOUT_KINDS:
            raise ValueError(f"layout must be one of {', '.join(LAYOUT_KINDS)}, got {self.kind!r}")
        if self.kind == "ND" and self.fractal:
            raise ValueError(f"an ND layout has no fractal, got fractal = {list(self.fractal)}")
        if self.kind != "ND" and (len(self.fractal) != 2 or min(self.fractal) < 1):
            raise ValueError(f"a {self.kind} layout needs fractal = [rows, cols] of positive sizes, "
                             f"got {list(self.fractal)}")  # fmt: skip
        if self.kind != "ND" and self.transpose:
            raise ValueError(f"transpose applies to ND layouts only, got {self.kind}")

    def __str__(self) -> str:  # in messages, as printed
        return format_attr(self)


LAYOUT_ATTR = Attr("a #hivm.data_layout", lambda v: isinstance(v, DataLayout), optional=True)


def k0_of(dtype: str) -> int:
    """Elements in one 32-B fractal row of ``dtype``."""
    return FRACTAL_BYTES // DTYPE_BYTES[dtype]


def nd(transpose: bool = False) -> DataLayout:
    return DataLayout("ND", transpose=transpose)


def fractal_layout(kind: str, dtype: str) -> DataLayout:
    """The fractal layout ``kind`` of a buffer of ``dtype`` on the simulated cube (zZ: 16 × k0, nZ: k0 × 16,
    zN: 16 × 16, the f32 accumulator's)."""
    k0 = k0_of(dtype)
    shapes = {"zZ": (16, k0), "nZ": (k0, 16), "zN": (16, 16)}
    if kind not in shapes:
        raise ValueError(f"no fractal layout {kind!r} (fractal kinds: {', '.join(shapes)})")
    return DataLayout(kind, fractal=shapes[kind])


SCOPE_LAYOUTS = {"l1": ("ND",), "l0a": ("zZ",), "l0b": ("nZ",), "l0c": ("zN",), "ub": ("ND",)}
"""Memory scope → the layout kinds its buffers may hold on the simulated chip (L1 boxes are ND rows: its MTE2
copies rows, the MTE1 loads make the fractals)."""


def buffer_layout(v: Value) -> DataLayout | None:
    """The layout of the buffer ``v`` denotes: its alloc's ``layout``, looking through views (the copies of a
    multi-buffered alloc must agree); None for a kernel argument (GM, ND by definition) or an alloc without one."""
    op = getattr(v, "op", None)
    if op is None:
        return None
    if op.has_trait(ViewLike):
        found = {buffer_layout(s) for s in op.operands if isinstance(s.type, MemRefType)}
        if len(found) > 1:
            raise ValueError(f"the copies viewed by '{op.name}' at {op.loc} have different layouts: "
                             f"{', '.join(sorted(str(f) for f in found))}")  # fmt: skip
        return found.pop() if found else None
    if op.name == "hivm.alloc":
        return op.attributes.get("layout")
    return None


def check_alloc_layout(op: Operation) -> None:
    """An alloc's ``layout`` suits its scope and its element type (raises the op's VerifyError)."""
    layout = op.attributes.get("layout")
    if layout is None:
        return
    t = op.result.type
    allowed = SCOPE_LAYOUTS.get(t.scope, LAYOUT_KINDS)
    if layout.kind not in allowed:
        raise op.error(f"a buffer in {t.scope} holds {' or '.join(allowed)}, not {layout}")
    if layout.kind != "ND":
        want = fractal_layout(layout.kind, t.dtype)
        if layout.fractal != want.fractal:
            raise op.error(f"a {layout.kind} buffer of {t.dtype} has fractals of {list(want.fractal)}, "
                           f"not {list(layout.fractal)}")  # fmt: skip


CONVERSIONS = {
    "hivm.load_l0a": ("ND", "zZ"),  # MTE1: an L1 box (ND rows, or transposed) -> L0A fractals
    "hivm.load_l0b": ("ND", "nZ"),  # MTE1: an L1 box -> L0B fractals
    "hivm.fixpipe": ("zN", "ND"),  # FIX: the L0C accumulator -> GM rows
}
"""Op → (source kind, destination kind) of the layout conversion it performs: the only ones the simulated chip has
(HARDWARE.md: MTE1 loads make the fractals, FixPipe turns them back into rows; AscendNPU-IR's
``kSupportedConversion`` lists the same three, ``DOT_ND_TO_zZ/nZ`` and ``zN_TO_ND``)."""
OPERAND_LAYOUTS = {"hivm.mmad": ("zZ", "nZ", "zN")}
"""Op → the layout kind of each buffer operand it reads or writes in place (mmad: L0A, L0B, L0C)."""
LAYOUT_ATTRS = ("src_layout", "dst_layout")


def _layout_of(kind: str, v: Value, transpose: bool) -> DataLayout:
    if kind != "ND":
        return fractal_layout(kind, v.type.dtype)
    return nd(transpose and v.type.scope != "gm")


def required_layouts(op: Operation) -> dict[int, DataLayout]:
    """Operand position → the layout a cube op needs its buffer in ({} for other ops). An ND source of an MTE1
    load is transposed when the load is (the L1 box holds the operand transposed)."""
    if op.name in CONVERSIONS:
        transpose = bool(op.attributes.get("transpose"))
        return {i: _layout_of(kind, op.operands[i], transpose) for i, kind in enumerate(CONVERSIONS[op.name])}
    if op.name in OPERAND_LAYOUTS:
        return {i: _layout_of(kind, op.operands[i], False) for i, kind in enumerate(OPERAND_LAYOUTS[op.name])}
    return {}


def conversion_kind(src: DataLayout, dst: DataLayout) -> str:
    """The counter name of a conversion: ``ND_to_zZ``; a transposed ND source is ``DN`` (``DN_to_nZ``)."""
    def name(layout: DataLayout) -> str:
        return "DN" if layout.transpose else layout.kind

    return f"{name(src)}_to_{name(dst)}"


def check_op_layouts(op: Operation) -> None:
    """A cube op's layouts are consistent (raises the op's VerifyError): ``src_layout``/``dst_layout`` (both or
    neither) are the conversion the op performs, and every buffer operand whose alloc has a layout has the one the
    op needs."""
    given = [a for a in LAYOUT_ATTRS if a in op.attributes]
    if given and len(given) != len(LAYOUT_ATTRS):
        missing = next(a for a in LAYOUT_ATTRS if a not in given)
        raise op.error(f"has {given[0]} but no {missing}: a conversion names both layouts")
    need = required_layouts(op)
    for attr, index in zip(LAYOUT_ATTRS, (0, 1)):
        layout = op.attributes.get(attr)
        if layout is not None and layout != need[index]:
            raise op.error(f"{attr} is {layout}, but the op converts {need[0]} to {need[1]}")
    for index, want in need.items():
        try:
            held = buffer_layout(op.operands[index])
        except ValueError as e:
            raise op.error(str(e)) from None
        if held is not None and held != want:
            raise op.error(f"needs operand {index} ({op.operands[index].type}) as {want}, but its buffer is laid "
                           f"out {held}")  # fmt: skip
