"""Vector regions whose innermost spanned dim is strided: a buffer whose last dim is 1 is stored one element per
32-B block (its rows padded), so a region over the dims above it steps whole blocks per element. Such a region runs
as one-element repeats (mask 1, the repeat stride that many blocks) instead of going to the reference interpreter;
broadcasts of packed column buffers (``[R, 1, 1] -> [R, C, 1]``) are column broadcasts without the unit dims."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import torch_npu_backend

CASES = {
    # glu over a last dim of 2: the halves are [2, 3, 1] columns, one element per 32-B block
    "glu_last_dim_of_two": (lambda x: F.glu(x, -1), [(2, 3, 2)]),
    # (10, 1, 5) % (10, 5): the divisor is a [1, 10, 5] row broadcast, the region over [10, 10, 5] tiles
    "remainder_broadcast": (lambda x, y: torch.remainder(x, y), [(10, 1, 5), (10, 5)]),
    # a keepdim reduction over the first and last dims leaves [1, 2, 1, 1]: logical_not over the strided dim
    "all_keepdim": (lambda x: torch.all(x, dim=(0, -1), keepdim=True), [(3, 2, 1, 2)]),
    # the i32 index grids of diag_embed are packed columns [7, 256, 1, 1] broadcast along their dims above the last
    "diag_embed_columns": (lambda x: torch.diag_embed(x, 2, 0, 1), [(5, 5, 5)]),
}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "remainder_broadcast" else n
                                  for n in sorted(CASES)])
def test_strided_region_runs_on_the_simulator(fresh_dynamo, name):
    fn, shapes = CASES[name]
    torch.manual_seed(0)
    args = [torch.randn(s) for s in shapes]
    compiled = torch.compile(fn, backend="npu", options={"cache": False})
    with torch_npu_backend.profile(trace=False) as prof:
        got = compiled(*args)
    torch.testing.assert_close(got, fn(*args), rtol=1.3e-6, atol=1e-5)
    assert prof.records and not prof.interpreted(), [(r.kernel, r.reason) for r in prof.interpreted()]


def test_strided_region_emits_one_element_repeats(fresh_dynamo, tmp_path):
    """glu's sigmoid over a [2, 3, 1] half: one repeat per element (mask 1), the repeat stride one 32-B block."""
    fn = torch.compile(lambda x: F.glu(x, -1), backend="npu", options={"cache": False, "debug_dir": str(tmp_path)})
    fn(torch.randn(2, 3, 2))
    asm = "\n".join(p.read_text() for p in tmp_path.rglob("kernel_*.s"))
    lines = [ln.split() for ln in asm.splitlines() if ln.split()[:1] in (["vexp"], ["vmuls"])]
    assert lines, asm[:2000]
    for ln in lines:  # the 2 x 3 strided elements in one instruction: 6 repeats of one lane, a block apart
        assert {"repeat=6", "mask=1", "dst_rep=1", "src_rep=1"} <= set(ln), ln
