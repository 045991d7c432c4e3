"""IR types: scalars, ``index``, ``tensor<…>`` and ``memref<…>``, whose dims are sympy expressions.

Text forms::

    f32  f16  bf16  i1  i8  i32  i64  index
    tensor<s0x128xf16>          dims separated by ``x``; a compound dim is parenthesised: tensor<(s0*128)xf32>
    memref<64x128xf16, ub>      a buffer in a memory scope (gm, l1, l0a, l0b, l0c, ub)
    memref<64x128xf16>          a buffer whose scope is not decided yet
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from .sizes import as_expr, expr_str

FLOAT_DTYPES = ("f16", "bf16", "f32", "f64")
INT_DTYPES = ("i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64")
COMPLEX_DTYPES = ("c32", "c64", "c128")  # host values only (no device op computes on them)
DTYPES = FLOAT_DTYPES + INT_DTYPES + COMPLEX_DTYPES
INT_LIMITS = {"i1": (0, 1), "i8": (-(2**7), 2**7 - 1), "ui8": (0, 255), "i16": (-(2**15), 2**15 - 1),
              "i32": (-(2**31), 2**31 - 1), "i64": (-(2**63), 2**63 - 1), "ui16": (0, 2**16 - 1),
              "ui32": (0, 2**32 - 1), "ui64": (0, 2**64 - 1)}  # fmt: skip
"""The least and greatest value of each integer dtype."""
DTYPE_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i1": 1, "i8": 1, "ui8": 1, "i16": 2, "i32": 4, "i64": 8,
               "ui16": 2, "ui32": 4, "ui64": 8, "c32": 4, "c64": 8, "c128": 16}  # fmt: skip
MEMORY_SCOPES = ("gm", "l1", "l0a", "l0b", "l0c", "ub")


class Type:
    """Base of all IR types; types are immutable values compared structurally."""


@dataclass(frozen=True)
class ScalarType(Type):
    dtype: str

    def __post_init__(self):
        if self.dtype not in DTYPES:
            raise ValueError(f"unknown scalar dtype {self.dtype!r}; known: {', '.join(DTYPES)}")

    def __str__(self) -> str:
        return self.dtype

    @property
    def is_float(self) -> bool:
        return self.dtype in FLOAT_DTYPES


@dataclass(frozen=True)
class IndexType(Type):
    def __str__(self) -> str:
        return "index"


def _dims_str(shape) -> str:
    parts = []
    for d in shape:
        s = expr_str(d)
        parts.append(s if (d.is_Integer or d.is_Symbol) else f"({s})")
    return "".join(p + "x" for p in parts)


@dataclass(frozen=True)
class ShapedType(Type):
    shape: tuple
    dtype: str

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(as_expr(d) for d in self.shape))
        if self.dtype not in DTYPES:
            raise ValueError(f"unknown element dtype {self.dtype!r}; known: {', '.join(DTYPES)}")

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def element_bytes(self) -> int:
        return DTYPE_BYTES[self.dtype]

    @property
    def is_static(self) -> bool:
        return all(d.is_Integer for d in self.shape)

    def static_shape(self) -> tuple[int, ...]:
        if not self.is_static:
            raise ValueError(f"{self} has symbolic dims")
        return tuple(int(d) for d in self.shape)

    def numel(self) -> sympy.Expr:
        return sympy.Mul(*self.shape) if self.shape else sympy.Integer(1)

    @property
    def free_symbols(self) -> set[str]:
        return {s.name for d in self.shape for s in d.free_symbols}


@dataclass(frozen=True)
class TensorType(ShapedType):
    def __str__(self) -> str:
        return f"tensor<{_dims_str(self.shape)}{self.dtype}>"

    def with_shape(self, shape) -> "TensorType":
        return TensorType(tuple(shape), self.dtype)

    def with_dtype(self, dtype: str) -> "TensorType":
        return TensorType(self.shape, dtype)


@dataclass(frozen=True)
class MemRefType(ShapedType):
    """A buffer. ``scope`` is the memory it lives in; ``None`` until ``hivm-infer-mem-scope`` decides it."""

    scope: str | None = None

    def __post_init__(self):
        super().__post_init__()
        if self.scope is not None and self.scope not in MEMORY_SCOPES:
            raise ValueError(f"unknown memory scope {self.scope!r}; known: {', '.join(MEMORY_SCOPES)}")

    def __str__(self) -> str:
        scope = f", {self.scope}" if self.scope else ""
        return f"memref<{_dims_str(self.shape)}{self.dtype}{scope}>"

    @property
    def nbytes(self):
        return self.numel() * self.element_bytes

    def with_shape(self, shape) -> "MemRefType":
        return MemRefType(tuple(shape), self.dtype, self.scope)

    def with_scope(self, scope: str) -> "MemRefType":
        return MemRefType(self.shape, self.dtype, scope)


@dataclass(frozen=True)
class FunctionType(Type):
    inputs: tuple
    results: tuple

    def __str__(self) -> str:
        return f"({', '.join(map(str, self.inputs))}) -> ({', '.join(map(str, self.results))})"


def dtype_of(t: Type) -> str:
    """Element dtype of a shaped type, or the dtype of a scalar (``index`` counts as i64)."""
    if isinstance(t, ShapedType):
        return t.dtype
    if isinstance(t, ScalarType):
        return t.dtype
    if isinstance(t, IndexType):
        return "i64"
    raise TypeError(f"type {t} has no dtype")


def is_float_dtype(dtype: str) -> bool:
    return dtype in FLOAT_DTYPES
