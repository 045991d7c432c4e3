"""Cycle counts pinned: the simulator's speed work must not move a single cycle.

The numbers were recorded with the simulator before its speed-ups (docs/simulator.md, *Simulator speed*): the
hand-written examples (single/double-buffered vector add on 8 and 48 cores, the balanced and round-robin GEMM) and
every launch of a small compiled model's forward and backward (a linear layer, layer norm, softmax, an embedding
gather at data-computed addresses, a mean, and their gradients). Each launch runs the full simulation with the hazard
checker on; cycles are compared exactly, with the instruction count beside them.
"""
import numpy as np
import pytest

from simulator.examples import run_gemm, run_vector_add

EXAMPLES = {
    # (kernel, buffers or balance, block dim or matrix size): cycles
    ("vector_add", 1, 8): 4325.756055127171,
    ("vector_add", 1, 48): 2738.890909090909,
    ("vector_add", 2, 8): 3801.805073995772,
    ("vector_add", 2, 48): 2738.890909090909,
    ("gemm", True, 256): 4682.145454545454,
    ("gemm", False, 256): 7101.745454545454,
    ("gemm", True, 512): 7151.090909090908,
    ("gemm", False, 512): 9149.745454545455,
}
SLOW = {("gemm", True, 512), ("gemm", False, 512)}  # a few seconds each; 256^3 covers the same kernel

MODEL = [
    # (graph kind, kernel, block dim, cycles, instructions)
    ("forward", "main_fused_1", 8, 1500.7432383919534, 384),
    ("forward", "main_fused_0", 4, 3338.8752293451603, 596),
    ("forward", "main_fused_2", 1, 1099.2593172667962, 47),
    ("backward", "main_fused_0", 32, 2183.8125521239, 3264),
    ("backward", "main_fused_1", 8, 929.7858095979884, 464),
    ("backward", "main_fused_3", 8, 506.6429047989942, 304),
    ("backward", "main_fused_4", 32, 607.2232157749686, 1888),
    ("backward", "main_fused_5", 16, 1452.1716191959767, 768),
    # Re-pinned when Cube-Vector fusion (hfusion-fuse-mix-cv) landed: the backward's kernel list changed (a MIX_CV
    # launch in place of main_fused_2, 16 cores, 1452.17 cycles, and main_fused_6, 48 cores, 1023.14 cycles). A
    # compiler change, not a simulator one: every launch the compiler left alone kept its cycles.
    ("backward", "main_fused_6_mix", 16, 3051.314523994971, 2352),
]


@pytest.mark.parametrize("key", [pytest.param(k, marks=pytest.mark.slow) if k in SLOW else k for k in EXAMPLES],
                         ids=lambda k: "-".join(map(str, k)))
def test_example_cycles_pinned(key):
    rng = np.random.default_rng(0)
    kind, variant, dim = key
    if kind == "vector_add":
        n = 16384 * 20
        x, y = rng.standard_normal(n).astype(np.float16), rng.standard_normal(n).astype(np.float16)
        z, res = run_vector_add(x, y, buffers=variant, block_dim=dim)
        np.testing.assert_array_equal(z, x + y)
    else:
        A = rng.uniform(-1, 1, (dim, dim)).astype(np.float16)
        B = rng.uniform(-1, 1, (dim, dim)).astype(np.float16)
        _, res = run_gemm(A, B, balance=variant, block_dim=24)
    assert res.stats.cycles == EXAMPLES[key]


@pytest.mark.parametrize("backward", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["forward", "step"])
def test_model_cycles_pinned(backward):
    torch = pytest.importorskip("torch")
    import torch_npu_backend

    torch.manual_seed(0)

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin, self.norm = torch.nn.Linear(64, 64), torch.nn.LayerNorm(64)

        def forward(self, x, idx):
            rows = torch.nn.functional.embedding(idx, self.lin.weight)
            return torch.softmax(self.norm(self.lin(x)) + rows, -1).square().mean()

    compiled = torch.compile(Model(), backend="npu", options={"simulate": "every", "cache": False})
    x, idx = torch.randn(32, 64), torch.randint(0, 64, (32,))
    with torch_npu_backend.profile() as prof:
        loss = compiled(x, idx)
        if backward:
            loss.backward()
    got = [(r.graph.rsplit("_", 1)[-1], r.kernel, r.block_dim, r.cycles, r.result.stats.instructions) for r in prof.simulated()]
    assert all(r.result.stats.hazards_checked for r in prof.simulated())
    assert got == (MODEL if backward else [m for m in MODEL if m[0] == "forward"])
