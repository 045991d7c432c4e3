"""Math funs with no vector instruction: the f32 temporaries their instruction sequences take, and the powers that
are one instruction."""

from __future__ import annotations

MATH_TEMPS = {"erf": 4, "gelu_erf": 4, "sin": 4, "cos": 4}  # f32 temporaries of each fun's instruction sequence
ONE_INSTRUCTION_POW = (0.0, 1.0, 2.0, 0.5, -0.5, -1.0)  # x ** e emitted as one instruction in the op's dtype


def math_temps(fun: str, dtype: str, exponent=None) -> int:
    """f32 temporaries (each the destination's element count × 4 B) that the instruction sequence for ``fun`` needs in
    scratch (``exponent``: pow's constant exponent, None when unknown or for a scalar base)."""
    if fun in MATH_TEMPS:
        n = MATH_TEMPS[fun]
    elif fun == "pow":
        if exponent is not None and float(exponent) in ONE_INSTRUCTION_POW:
            return 0
        n = 2 if exponent is not None and float(exponent).is_integer() else 0  # square-and-multiply: base, product
    else:
        return 0
    return n + (2 if dtype == "f16" else 0)  # f16 computes in f32: the input and the result
