"""z = x + y over n elements on all vector cores, single- or double-buffered (the example kernel).

Tiles of `tile` elements are dealt round-robin to cores; buffer b = (local tile count) % buffers:

    set V->MTE2 b; set MTE3->V b                    for every buffer b (buffers start free)
    for t in range(block_idx, n_tiles, block_num):
        MTE2: wait V->MTE2 b;  x_b <- x[t], y_b <- y[t];  set MTE2->V b
        V:    wait MTE2->V b;  wait MTE3->V b;  z_b = x_b + y_b;  set V->MTE2 b;  set V->MTE3 b
        MTE3: wait V->MTE3 b;  z[t] <- z_b;  set MTE3->V b
    wait V->MTE2 b; wait MTE3->V b                  for every buffer b (consume the last sets)

With buffers=2 the loads of tile t+1 overlap the add and store of tile t; with 1 they wait for the add.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import dtype_name, itemsize
from ..errors import ProgramError
from ..launch import launch
from ..memory import GlobalMemory
from ..program import ProgramBuilder


def build_vector_add(dtype: str = "f16", tile: int = 16384, buffers: int = 2, drop_wait: str | None = None):
    """Program params: x, y, z (GM addresses), n_tiles. `drop_wait` removes one wait (for hazard tests):
    'MTE2->V' or 'V->MTE2'."""
    es = itemsize(dtype)
    lanes = 256 // es
    if tile % lanes or tile // lanes > 255:
        raise ProgramError(f"vector_add: tile={tile} must be a multiple of {lanes} and at most 255 repeats")
    tb = tile * es
    if 3 * buffers * tb > 192 * 1024:
        raise ProgramError(f"vector_add: {buffers} buffers x 3 x {tb} B exceed UB")
    b = ProgramBuilder(f"vector_add_{dtype}_x{buffers}", "aiv", ["x", "y", "z", "n_tiles"])
    for buf in range(buffers):
        b.set_flag("V", "MTE2", buf)
        b.set_flag("MTE3", "V", buf)
    cnt = b.mov("cnt", 0)
    with b.loop("t", b.reg("block_idx"), b.reg("n_tiles"), b.reg("block_num")) as t:
        buf = b.mov("buf", cnt % buffers)
        b.mov("cnt", cnt + 1)
        ux, uy, uz = buf * (3 * tb), buf * (3 * tb) + tb, buf * (3 * tb) + 2 * tb
        off = t * tb
        if drop_wait != "V->MTE2":
            b.wait_flag("V", "MTE2", buf)
        b.copy_gm_to_ub(ux, b.reg("x") + off, tb)
        b.copy_gm_to_ub(uy, b.reg("y") + off, tb)
        b.set_flag("MTE2", "V", buf)
        if drop_wait != "MTE2->V":
            b.wait_flag("MTE2", "V", buf)
        b.wait_flag("MTE3", "V", buf)
        b.vadd(dtype, uz, ux, uy, repeat=tile // lanes)
        b.set_flag("V", "MTE2", buf)
        b.set_flag("V", "MTE3", buf)
        b.wait_flag("V", "MTE3", buf)
        b.copy_ub_to_gm(b.reg("z") + off, uz, tb)
        b.set_flag("MTE3", "V", buf)
    for buf in range(buffers):
        b.wait_flag("V", "MTE2", buf)
        b.wait_flag("MTE3", "V", buf)
    return b.build()


def run_vector_add(x: np.ndarray, y: np.ndarray, *, chip="ascend910b1", block_dim=48, buffers=2, tile=16384,
                   check_hazards=True, trace=True):
    """Host side: place x, y in GM, launch, return (z, LaunchResult)."""
    dtype = dtype_name(x.dtype)
    n = x.size
    if n % tile:
        raise ProgramError(f"run_vector_add: n={n} must be a multiple of tile={tile}")
    gm = GlobalMemory()
    ax, ay, az = gm.put(x), gm.put(y), gm.alloc(x.nbytes)
    prog = build_vector_add(dtype, tile, buffers)
    res = launch(prog, chip=chip, block_dim=block_dim, args=dict(x=ax, y=ay, z=az, n_tiles=n // tile), gm=gm,
                 check_hazards=check_hazards, trace=trace)
    return gm.read(az, x.dtype, x.shape), res
