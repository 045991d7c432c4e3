"""IR core: types, symbolic sizes, SSA values, operations, blocks, regions, builder, verifier."""

from .builder import Builder
from .core import (
    OP_REGISTRY,
    Block,
    BlockArgument,
    Broadcast,
    Constant,
    Cube,
    Elementwise,
    IsolatedFromAbove,
    MemoryEffect,
    OpResult,
    Operation,
    Pure,
    Reduction,
    Region,
    Terminator,
    Trait,
    Value,
    Vector,
    VerifyError,
    ViewLike,
    register_op,
)
from .sizes import INF, SizeVars, as_expr, evaluate, expr_str, parse_expr, sym
from .types import (
    DTYPE_BYTES,
    DTYPES,
    FunctionType,
    IndexType,
    MemRefType,
    ScalarType,
    ShapedType,
    TensorType,
    Type,
    dtype_of,
)
from .verifier import verify

__all__ = [name for name in dir() if not name.startswith("_")]
