"""Conversions between dialects: hfusion tensor kernels → HIVM buffer kernels."""
