"""Test helpers: run a few vector / cube instructions on one core with data staged through GM."""
import numpy as np

from simulator import GlobalMemory, ProgramBuilder, launch


def run_vector(body, inputs, out_bytes, ub_in=None, ub_out=96 * 1024, chip="ascend910b1", pipe="V",
               check_hazards=True):
    """inputs: list of arrays copied to UB at 32 KiB slots (or ub_in addresses); body(b) emits work on ``pipe``
    (V, or S for scalar UB accesses) between MTE2 -> pipe and pipe -> MTE3 flags;
    returns (UB bytes [ub_out, ub_out+out_bytes) as uint8 array, LaunchResult)."""
    gm = GlobalMemory()
    ub_in = ub_in or [i * 32 * 1024 for i in range(len(inputs))]
    addrs = [gm.put(np.ascontiguousarray(a)) for a in inputs]
    out = gm.alloc(out_bytes)
    b = ProgramBuilder("t", "aiv", [])
    for a, g, u in zip(inputs, addrs, ub_in):
        b.copy_gm_to_ub(u, g, a.nbytes)
    b.set_flag("MTE2", pipe, 0)
    b.wait_flag("MTE2", pipe, 0)
    body(b)
    b.set_flag(pipe, "MTE3", 0)
    b.wait_flag(pipe, "MTE3", 0)
    b.copy_ub_to_gm(out, ub_out, out_bytes)
    res = launch(b.build(), chip=chip, block_dim=1, args={}, gm=gm, check_hazards=check_hazards)
    return gm.read(out, np.uint8, (out_bytes,)), res


def event_cycles(res, mnemonic):
    return [dur for _, _, m, _, dur, _ in res.events if m == mnemonic]
