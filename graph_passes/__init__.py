"""The compiler's IR, dialects, rewriting machinery and passes. Imports neither torch nor the simulator."""

from . import dialects  # noqa: F401  (registers every op)
