"""Small models end to end: a GPT-style block (embedding, layer norm, attention with a causal mask, GELU MLP,
cross-entropy) trains one step through torch.compile(backend="npu") with eager's loss and gradients."""

from __future__ import annotations

import pytest
import torch

import torch_npu_backend
from examples.gpt_block import GPTBlock
from tests.helpers import assert_close

# Every kernel of the training step runs on the simulator: the matmuls (SINGLE_CUBE kernels, forward and both
# gradient products), the embedding rows (a register-addressed DMA per row), transposes, the attention heads' split
# and merge, the qkv concat, the causal mask (one arange as row and column) and cross-entropy (its gather's index
# column and squeezed result, moved to the kernel's boundary by hfusion-propagate-reshape{outlined=true}; its
# backward).


def _grads(model):
    return {n: p.grad.detach().clone() for n, p in model.named_parameters()}


@pytest.mark.parametrize("dynamic", [False, True])
def test_tiny_block_training_step(fresh_dynamo, dynamic):
    torch.manual_seed(0)
    model = GPTBlock()
    compiled = torch.compile(model, backend="npu", dynamic=dynamic)
    for batch in (2, 3) if dynamic else (2,):
        idx = torch.randint(0, 50, (batch, 8))
        model.zero_grad()
        expected = model(idx)
        expected.backward()
        want = _grads(model)
        model.zero_grad()
        with torch_npu_backend.profile(trace=False) as prof:
            got = compiled(idx)
            got.backward()
        assert_close(got.detach(), expected.detach(), "loss")
        for name, g in _grads(model).items():
            assert_close(g, want[name], f"grad of {name}")
        assert not prof.interpreted(), [(r.kernel, r.source, r.reason) for r in prof.interpreted()]
        # the matmuls: SINGLE_CUBE kernels, or MIX_CV ones with their fused epilogue (hfusion-fuse-mix-cv)
        cubes = [r for r in prof.records if r.fusion_kind in ("SINGLE_CUBE", "MIX_CV")]
        assert len(cubes) >= 9 and all(r.core_type in ("AIC", "MIX") for r in cubes), [r.kernel for r in cubes]
        lookups = [r for r in prof.records if r.source == ("embedding",)]  # the forward's embedding rows
        assert lookups and all(r.simulated for r in lookups), [(r.kernel, r.reason) for r in lookups]
        picked = [r for r in prof.records if "gather" in r.source]  # cross-entropy's picked log-probabilities
        assert picked and all(r.simulated for r in picked), [(r.kernel, r.reason) for r in picked]
    assert fresh_dynamo["graphs_forward"] == 1 and fresh_dynamo["graphs_backward"] == 1


@pytest.mark.parametrize("causal", [False, True])
def test_scaled_dot_product_attention_trains(fresh_dynamo, causal):
    """F.scaled_dot_product_attention traces as its math composition: the forward and the backward compile (on CPU
    the fused flash kernel's backward op had no lowering: a Hugging Face model's default attention could not
    train), equal to eager, with every kernel on the simulator, the matmuls as cube kernels."""
    gen = torch.Generator().manual_seed(5)
    q, k, v = (torch.randn(2, 4, 16, 8, generator=gen, requires_grad=True) for _ in range(3))
    mask = None if causal else torch.randn(16, 16, generator=gen)

    def attend(q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal).sum()

    expected = attend(q, k, v)
    want = torch.autograd.grad(expected, (q, k, v))
    with torch_npu_backend.profile(trace=False) as prof:
        got = torch.compile(attend, backend="npu")(q, k, v)
        grads = torch.autograd.grad(got, (q, k, v))
    assert_close(got.detach(), expected.detach(), "attention")
    for name, g, w in zip("qkv", grads, want):
        assert_close(g, w, f"grad of {name}")
    assert prof.records and not prof.interpreted(), [(r.kernel, r.source, r.reason) for r in prof.interpreted()]
    assert any(r.fusion_kind == "SINGLE_CUBE" for r in prof.records)
