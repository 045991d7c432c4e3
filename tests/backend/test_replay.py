"""simulate="once" (the default): a compiled graph's second call replays each launch recorded by its first call.

Every replayed launch is checked against a full simulation of the same arguments (``simulate="every"``, run beside
it by the ``verify_replays`` fixture): outputs equal bit for bit, cycles equal. The second call gets new data (same
shapes), so a replay that copied the first call's outputs would fail. Launches whose DMAs take GM addresses from
data registers (embedding rows, gathers) replay while those addresses equal the recorded ones and are simulated
again, with the reason in the profile record, when they differ.

Default tier: a few op-suite cases of different kernel kinds, the embedding, the tiny GPT-style block's training
step; ``slow``: every case of the op suite, the small Hugging Face GPT-2 and Llama forward and training step.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torch_npu_backend
from codegen.kernel import CompiledKernel
from tests.backend.op_cases import CASES
from tests.backend.test_ops import NO_KERNEL

_FAST = ("add_broadcast", "softmax", "layer_norm", "sum", "mm", "cumsum_int", "index_select", "cross_entropy",
         "embedding")


@pytest.fixture
def verify_replays(monkeypatch):
    """Wrap CompiledKernel.run: every replayed launch is simulated again in full and compared (outputs, cycles)."""
    checked = []
    run = CompiledKernel.run

    def verified(self, gm_arrays, bindings, chip=None, check_hazards=True, trace=False, simulate="every", jobs=None):
        assert jobs is None  # NPU_WORKERS=1 (tests/conftest.py): launches simulated in full at once
        outs, res = run(self, gm_arrays, bindings, chip, check_hazards, trace, simulate)
        if res is not None and res.replayed:
            want, full = run(self, gm_arrays, bindings, chip, check_hazards, trace, "every")
            assert not full.replayed and full.recording is None
            for k, (o, w) in enumerate(zip(outs, want)):
                assert o.dtype == w.dtype and o.shape == w.shape and o.tobytes() == w.tobytes(), (
                    f"{self.name}: output {k} of the replay differs from the full simulation")
            assert res.stats.cycles == full.stats.cycles, (self.name, res.stats.cycles, full.stats.cycles)
            checked.append(self.name)
        return outs, res

    monkeypatch.setattr(CompiledKernel, "run", verified)
    return checked


def _flat(x):
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _flat(v)]
    return []


def _call(compiled, inputs, backward):
    """Forward (and the gradients of the inputs that require grad, random cotangents) under the profile API."""
    with torch_npu_backend.profile(trace=False) as prof:
        outs = _flat(compiled(*inputs))
        if backward:
            wrt = [x for x in inputs if isinstance(x, torch.Tensor) and x.requires_grad]
            outs_g = [o for o in outs if o.requires_grad]
            gen = torch.Generator().manual_seed(3)
            cot = [torch.randn(o.shape, generator=gen).to(o.dtype) for o in outs_g]
            outs += [g for g in torch.autograd.grad(outs_g, wrt, cot, allow_unused=True) if g is not None]
    return outs, prof


def _check_second_call(prof, checked, before=0):
    """Every launch replayed (and verified), or simulated again because a register-computed address differed."""
    sim = prof.simulated()
    assert sim, "no simulated launch"
    for r in sim:
        assert r.replayed or (r.reason and "register-computed GM address" in r.reason), (r.kernel, r.reason)
        assert r.cycles is not None and r.us is not None
    assert len(checked) - before == len(prof.replayed())


def _op_case(case, checked):
    """Call 1 records; call 2 (new data) replays, or simulates again a launch whose register-computed addresses
    differ; call 3 (call 2's inputs again) replays every launch."""
    torch._dynamo.reset()
    compiled = torch.compile(case.fn, backend="npu")
    dtype = torch.float32 if case.floats else None
    _, prof1 = _call(compiled, case.make(dtype, torch.Generator().manual_seed(0)), case.backward)
    if case.name in NO_KERNEL:
        assert not prof1.records
        return
    # call 1 replays only a launch of a kernel shared with an earlier one of the call (codegen/kernel_key.py), checked
    assert len(checked) == len(prof1.replayed())
    n = len(checked)
    _, prof2 = _call(compiled, case.make(dtype, torch.Generator().manual_seed(1)), case.backward)
    _check_second_call(prof2, checked, n)
    n = len(checked)
    _, prof3 = _call(compiled, case.make(dtype, torch.Generator().manual_seed(1)), case.backward)
    assert len(prof3.replayed()) == len(prof3.simulated()) == len(prof2.simulated())
    assert len(checked) - n == len(prof3.replayed())
    torch._dynamo.reset()


@pytest.mark.parametrize("case", [c for c in CASES if c.name in _FAST], ids=lambda c: c.name)
def test_op_second_call_replays(case, verify_replays):
    _op_case(case, verify_replays)


@pytest.mark.slow
@pytest.mark.parametrize("case", [c for c in CASES if c.name not in _FAST], ids=lambda c: c.name)
def test_every_op_second_call_replays(case, verify_replays):
    _op_case(case, verify_replays)


def test_embedding_replays_while_its_rows_are_the_same(verify_replays, fresh_dynamo):
    """The embedding's row copies take their GM address from the index (a data register): same indices replay,
    other indices are simulated again (the record says why) and recorded; equal to a full simulation either way."""
    weight = torch.randn(40, 24)
    compiled = torch.compile(lambda w, i: torch.nn.functional.embedding(i, w) * 2, backend="npu")
    ids = torch.tensor([[3, 0, 39], [7, 7, 1]])
    other = torch.tensor([[5, 5, 2], [38, 0, 9]])
    runs = []
    for w, i in ((weight, ids), (weight + 1, ids), (weight, other), (weight - 1, other)):
        with torch_npu_backend.profile(trace=False) as prof:
            out = compiled(w, i)
        assert torch.equal(out, torch.nn.functional.embedding(i, w) * 2)
        runs.append(prof.simulated())
    lookup = [k for k, r in enumerate(runs[0]) if "embedding" in r.source]
    assert lookup, [r.source for r in runs[0]]
    k = lookup[0]
    assert not runs[0][k].replayed and runs[1][k].replayed  # same indices, new table
    assert not runs[2][k].replayed and "register-computed GM address" in runs[2][k].reason
    assert runs[3][k].replayed  # the other indices were recorded
    assert len(verify_replays) >= 2


def test_simulate_every_never_replays(fresh_dynamo):
    compiled = torch.compile(lambda x: torch.softmax(x, -1), backend="npu", options={"simulate": "every"})
    x = torch.randn(8, 32)
    for _ in range(2):
        with torch_npu_backend.profile(trace=False) as prof:
            compiled(x)
        assert prof.simulated() and not prof.replayed()


def test_simulate_option_is_validated():
    from torch_npu_backend.options import NpuOptions, OptionsError

    with pytest.raises(OptionsError, match=r"option simulate='twice' is not supported; valid: once, every"):
        NpuOptions.from_dict({"simulate": "twice"})


def test_profile_table_says_replayed(fresh_dynamo):
    compiled = torch.compile(lambda x: x.exp() + 1, backend="npu")
    x = torch.randn(64, 64)
    compiled(x)
    with torch_npu_backend.profile(trace=False) as prof:
        compiled(x)
    (r,) = prof.simulated()
    assert r.replayed and r.cycles > 0 and r.us > 0
    table = prof.table()
    assert "timing" in table.splitlines()[0] and "replayed" in table.splitlines()[2]
    assert "1 of them replayed" in table


def _gpt_block_step(compiled, model, idx):
    model.zero_grad()
    with torch_npu_backend.profile(trace=False) as prof:
        loss = compiled(idx)
        loss.backward()
    return [loss.detach()] + [p.grad.clone() for p in model.parameters()], prof


def test_gpt_block_training_step_replays(verify_replays, fresh_dynamo):
    from examples.gpt_block import GPTBlock

    torch.manual_seed(0)
    model = GPTBlock()
    compiled = torch.compile(model, backend="npu")
    idx = torch.randint(0, 50, (2, 8))
    first, prof1 = _gpt_block_step(compiled, model, idx)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(0.5)  # new weights, the same indices
    second, prof2 = _gpt_block_step(compiled, model, idx)
    assert len(prof2.replayed()) == len(prof2.simulated()) == len(prof1.simulated()) > 20
    # both calls' replays are checked: the first call's are launches of a kernel shared with an earlier launch
    assert len(verify_replays) == len(prof1.replayed()) + len(prof2.replayed())
    assert not torch.equal(first[0], second[0])


def test_mix_launch_replays_in_rounds_across_cores(verify_replays, fresh_dynamo):
    """A matmul with a GELU epilogue runs as one MIX_CV launch whose vector cores read the cube cores' GM workspace
    tiles: its cores share GM, and the replay still batches them (rounds with GM dependencies, replay_batch.py), bit
    for bit with a full simulation (verify_replays)."""
    torch.manual_seed(0)
    lin = torch.nn.Linear(64, 256)
    compiled = torch.compile(lambda x: torch.nn.functional.gelu(lin(x), approximate="tanh"), backend="npu")
    with torch.no_grad():
        compiled(torch.randn(32, 64))
        x = torch.randn(32, 64)
        with torch_npu_backend.profile(trace=False) as prof:
            out = compiled(x)
        want = torch.nn.functional.gelu(lin(x), approximate="tanh")
    mix = [r for r in prof.replayed() if r.core_type == "MIX"]
    assert mix, [(r.kernel, r.core_type) for r in prof.records]
    rec = mix[0].result.recording
    kinds = {kind for _, _, kind, _ in rec.cores}
    assert kinds == {"aic", "aiv"} and len(rec.plan) * 8 < len(rec.steps)  # hundreds of steps, a few dozen rounds
    assert len(verify_replays) == len(prof.replayed())
    torch.testing.assert_close(out, want, rtol=1e-4, atol=1e-5)


def _hf(name):
    import transformers

    cfg = dict(vocab_size=256)
    if name == "gpt2":
        return transformers.GPT2LMHeadModel(transformers.GPT2Config(
            n_layer=2, n_embd=64, n_head=4, n_positions=64, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
            bos_token_id=0, eos_token_id=0, **cfg))
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(
        num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128, max_position_embeddings=64,
        num_key_value_heads=2, **cfg))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gpt2", "llama"])
@pytest.mark.parametrize("train", [False, True], ids=["forward", "train"])
def test_hf_model_second_call_replays(name, train, verify_replays, fresh_dynamo):
    torch.manual_seed(0)
    model = _hf(name).train(train)
    compiled = torch.compile(model, backend="npu")
    ids = torch.randint(0, 256, (2, 16))
    outs, replays = [], 0
    for _ in range(2):
        model.zero_grad()
        replays = len(verify_replays)  # the first call replays the second layer's kernels (codegen/kernel_key.py)
        with torch.set_grad_enabled(train), torch_npu_backend.profile(trace=False) as prof:
            out = compiled(input_ids=ids, labels=ids)
            if train:
                out.loss.backward()
        outs.append(out.logits.detach())
        if train:
            with torch.no_grad():
                for p in model.parameters():
                    p.sub_(0.1 * p.grad)
    assert len(prof.replayed()) == len(prof.simulated()) > 20
    assert len(verify_replays) - replays == len(prof.replayed())
    assert not np.array_equal(outs[0].numpy(), outs[1].numpy()) if train else True
