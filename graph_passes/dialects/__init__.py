"""The dialects. Importing this package registers every op (see ``graph_passes.ir.core.OP_REGISTRY``)."""

from . import annotation, arith, builtin, func, hfusion, hivm, hivm_cube, hivm_mix, host, scf, tensor  # noqa: F401
