"""Hand-written example kernels (built with ProgramBuilder) and host helpers that run them."""
from .gemm import build_gemm, run_gemm
from .vector_add import build_vector_add, run_vector_add

__all__ = ["build_gemm", "run_gemm", "build_vector_add", "run_vector_add"]
