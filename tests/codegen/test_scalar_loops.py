"""i64 ops as scalar loops over UB (codegen.scalar_loops) from the real pipeline: exact against numpy with wrapping,
synchronised with PIPE_S flags (dropping one is a race the hazard checker reports), assembly round trip."""

import numpy as np
import pytest

from simulator import RaceError, parse, to_text

from .helpers import drop_one_sync, lower, only_kernel, run_kernel

I64 = "tensor<s0x40xi64>"
MUL_ADD = """module attributes {symbols = {s0 = [1, 4096]}} {
  func.func @main(%x: tensor<s0x40xi64>, %y: tensor<s0x40xi64>) -> (tensor<s0x40xi64>) {
    %m = hfusion.elemwise_binary %x, %y {fun = "mul"} : (tensor<s0x40xi64>, tensor<s0x40xi64>) -> tensor<s0x40xi64>
    %n = hfusion.elemwise_unary %m {fun = "neg"} : (tensor<s0x40xi64>) -> tensor<s0x40xi64>
    %a = hfusion.elemwise_binary %n, %x {fun = "max"} : (tensor<s0x40xi64>, tensor<s0x40xi64>) -> tensor<s0x40xi64>
    func.return %a : tensor<s0x40xi64>
  }
}"""


def _ints(shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, shape, dtype=np.int64, endpoint=True)
    x.reshape(-1)[:4] = [np.iinfo(np.int64).min, np.iinfo(np.int64).max, -1, 0]
    return x


@pytest.mark.parametrize("rows", [1, 7, 66])
def test_i64_mul_neg_max_wraps_like_numpy(rows):
    ck = only_kernel(lower(MUL_ADD))
    x, y = _ints((rows, 40), 1), _ints((rows, 40), 2)
    (out,), res = run_kernel(ck, [x, y], {"s0": rows})
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out.reshape(x.shape), np.maximum(-(x * y), x))
    # per element: mul (ld, ld, smul, st), neg (ld, sneg, st), max (ld, ld, smax, st), one scalar cycle each
    assert res.stats.hazards_checked and res.stats.busy["S"] == 11 * rows * 40


def test_dropped_scalar_wait_is_a_race():
    module = lower(MUL_ADD)
    ck = only_kernel(module)
    broken = drop_one_sync(ck, module, src="PIPE_MTE2", dst="PIPE_S")
    x = _ints((9, 40), 3)
    with pytest.raises(RaceError, match=r"race on UB.*(ld_ub \(S|copy_gm_to_ub \(MTE2).*(copy_gm_to_ub|ld_ub)"):
        run_kernel(broken, [x, x], {"s0": 9})


def test_assembly_round_trip_and_scalar_instructions():
    ck = only_kernel(lower(MUL_ADD))
    text = ck.assembly()
    assert "ld_ub dtype=i64" in text and "smul dtype=i64" in text and "st_ub dtype=i64" in text
    assert "wait_flag src_pipe=MTE2 dst_pipe=S" in text and "set_flag src_pipe=S dst_pipe=MTE3" in text
    assert to_text(parse(text)) == to_text(ck.program)
