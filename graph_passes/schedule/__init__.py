"""Scheduling vector kernels: the kernel's iteration domain, its local buffers and its tiling (docs/schedule.md)."""
