"""Hugging Face models end to end: GPT-2, BERT, DistilBERT, Llama, Qwen2, Gemma, Phi, GPT-NeoX, OPT and T5, built
from small configs with random weights (nothing is downloaded) and their default attention, through
``torch.compile(backend="npu")`` — logits and loss in inference, loss and every gradient in a training step —
against eager, with every kernel on the simulator, matmuls included (SINGLE_CUBE kernels): none is interpreted.

The default run holds Llama inference (rotary tables, RMS norm, SiLU MLP, grouped-query attention, the
shifted-label loss), BERT inference (an encoder: bidirectional attention, the masked-LM head), GPT-2 inference
and a GPT-2 training step; the rest is in the ``slow`` tier.
"""

from __future__ import annotations

import re

import pytest
import torch
import transformers

import torch_npu_backend
from tests.helpers import assert_close

VOCAB, SEQ, BATCH = 256, 16, 2


def _build(name: str):
    """A small ``name`` model, random weights, its default attention (``sdpa``: the math composition when traced)."""
    small = dict(vocab_size=VOCAB)
    decoder = dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
                   max_position_embeddings=64, **small)
    if name == "gpt2":
        return transformers.GPT2LMHeadModel(transformers.GPT2Config(
            n_layer=2, n_embd=64, n_head=4, n_positions=64, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
            bos_token_id=0, eos_token_id=0, **small))
    if name == "bert":
        return transformers.BertForMaskedLM(transformers.BertConfig(
            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, **decoder))
    if name == "distilbert":
        return transformers.DistilBertForMaskedLM(transformers.DistilBertConfig(
            n_layers=2, dim=64, n_heads=4, hidden_dim=128, max_position_embeddings=64, dropout=0.0,
            attention_dropout=0.0, **small))
    if name == "llama":
        return transformers.LlamaForCausalLM(transformers.LlamaConfig(num_key_value_heads=2, **decoder))
    if name == "qwen2":
        return transformers.Qwen2ForCausalLM(transformers.Qwen2Config(num_key_value_heads=2, **decoder))
    if name in ("gemma", "gemma_mqa"):  # mqa: one key-value head (its rotary table broadcast over it)
        return transformers.GemmaForCausalLM(transformers.GemmaConfig(
            num_key_value_heads=1 if name == "gemma_mqa" else 2, head_dim=16, **decoder))
    if name == "falcon":  # multi-query attention, q/k/v split by index lists (qkv[..., [-2], :])
        return transformers.FalconForCausalLM(transformers.FalconConfig(
            num_hidden_layers=2, hidden_size=64, num_attention_heads=4, hidden_dropout=0.0, attention_dropout=0.0,
            **small))
    if name == "bloom":  # alibi positions (its slopes repeated per batch row)
        return transformers.BloomForCausalLM(transformers.BloomConfig(
            n_layer=2, hidden_size=64, n_head=4, hidden_dropout=0.0, attention_dropout=0.0, **small))
    if name == "gptj":  # its rotary table gathered by position along dim 1, the positions repeated
        return transformers.GPTJForCausalLM(transformers.GPTJConfig(
            n_layer=2, n_embd=64, n_head=4, rotary_dim=8, n_positions=64, resid_pdrop=0.0, embd_pdrop=0.0,
            attn_pdrop=0.0, bos_token_id=0, eos_token_id=0, **small))
    if name == "mpt":  # alibi slopes as pow(2, -x), sliced to the sequence and squeezed
        return transformers.MptForCausalLM(transformers.MptConfig(
            n_layers=2, d_model=64, n_heads=4, max_seq_len=64, **small))
    if name == "phi":
        return transformers.PhiForCausalLM(transformers.PhiConfig(resid_pdrop=0.0, embd_pdrop=0.0, **decoder))
    if name == "gpt_neox":
        return transformers.GPTNeoXForCausalLM(transformers.GPTNeoXConfig(**decoder))
    if name == "opt":  # positions from the attention mask's cumsum
        return transformers.OPTForCausalLM(transformers.OPTConfig(
            num_hidden_layers=2, hidden_size=64, num_attention_heads=4, ffn_dim=128, max_position_embeddings=64,
            word_embed_proj_dim=64, dropout=0.0, **small))
    if name == "t5":  # encoder-decoder; the labels shifted right by a slice assignment
        return transformers.T5ForConditionalGeneration(transformers.T5Config(
            num_layers=2, num_decoder_layers=2, d_model=64, num_heads=4, d_kv=16, d_ff=128, dropout_rate=0.0,
            decoder_start_token_id=0, pad_token_id=0, **small))
    raise ValueError(name)


_MATMUL_NODE = re.compile(r"(mm|bmm|addmm|baddbmm)(_\d+)?")


def _check_kernels(prof):
    """Every kernel ran on the simulator, none in the reference interpreter and no op on the host, and every matmul
    of the graphs (an FX node ``mm``, ``bmm``, ``addmm`` … named in a kernel's sources) is in a kernel of the Cube
    unit: SINGLE_CUBE (AIC) or MIX_CV (MIX, the cube part with its vector epilogue)."""
    assert prof.records and not prof.interpreted(), [(r.kernel, r.source, r.reason) for r in prof.interpreted()]
    assert not prof.fallbacks(), [(r.kernel, r.source, r.reason) for r in prof.fallbacks()]
    matmuls = {(r.graph, s) for r in prof.records for s in r.source if _MATMUL_NODE.fullmatch(s)}
    on_cube = {(r.graph, s) for r in prof.records if r.core_type in ("AIC", "MIX") for s in r.source}
    assert matmuls and matmuls <= on_cube, sorted(matmuls - on_cube)


def _inputs(seed):
    ids = torch.randint(0, VOCAB, (BATCH, SEQ), generator=torch.Generator().manual_seed(seed))
    return dict(input_ids=ids, labels=ids)


def _inference(name, fresh_dynamo, dtype=torch.float32):
    torch.manual_seed(0)
    model = _build(name).to(dtype).eval()
    kw = _inputs(1)
    with torch.no_grad():
        expected = model(**kw)
        compiled = torch.compile(model, backend="npu")
        with torch_npu_backend.profile(trace=False) as prof:
            got = compiled(**kw)
    assert_close(got.logits, expected.logits, f"{name} logits")
    # the loss is f32 (transformers upcasts the logits): at the model's dtype's tolerance, as its logits are
    assert_close(got.loss.to(dtype), expected.loss.to(dtype), f"{name} loss")
    _check_kernels(prof)


def test_llama_inference(fresh_dynamo):
    _inference("llama", fresh_dynamo)


def _slow(*names):
    return [pytest.param(n, marks=pytest.mark.slow) for n in names]


@pytest.mark.parametrize("name", ["bert", "gpt2", *_slow("distilbert", "qwen2", "gemma", "gemma_mqa", "phi",
                                                         "gpt_neox", "opt", "t5", "falcon", "bloom", "gptj", "mpt")])
def test_inference(name, fresh_dynamo):
    _inference(name, fresh_dynamo)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_llama_low_precision_inference(dtype, fresh_dynamo):
    """In bf16 and f16 (the rotary table is cast after cos: its collapse moves up through both)."""
    _inference("llama", fresh_dynamo, dtype)


def _training_step(name, model, compiled, kw):
    model.zero_grad()
    expected = model(**kw).loss
    expected.backward()
    want = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad()
    with torch_npu_backend.profile(trace=False) as prof:
        got = compiled(**kw).loss
        got.backward()
    assert_close(got.detach(), expected.detach(), f"{name} loss")
    assert want
    for n, p in model.named_parameters():
        if n in want:
            assert_close(p.grad, want[n], f"{name} grad of {n}")
    _check_kernels(prof)


@pytest.mark.parametrize("name", ["gpt2", *_slow("bert", "llama", "opt", "t5")])
def test_training_step(name, fresh_dynamo):
    torch.manual_seed(0)
    model = _build(name).train()
    _training_step(name, model, torch.compile(model, backend="npu"), _inputs(2))


@pytest.mark.slow
def test_gpt2_training_dynamic_sequence_length(fresh_dynamo):
    """dynamic=True training at two sequence lengths, loss and gradients equal to eager, one set of graphs. The
    forward graph saves its host f64 scalars (the GELU's sqrt(2 / pi)) for the backward graph — the host returns
    them in f64 — and the loss graph's logits and labels, sized by symbols of their own, meet through dynamo's guard
    ``Eq(s3*s88, s38*s97)`` (both failed to compile: "unsupported dtype torch.float64", then the backward's
    scatter "index ... must match input ... outside dim 1")."""
    torch.manual_seed(0)
    model = _build("gpt2").train()
    compiled = torch.compile(model, backend="npu", dynamic=True)
    graphs = []
    for seq in (16, 12):
        ids = torch.randint(0, VOCAB, (BATCH, seq), generator=torch.Generator().manual_seed(seq))
        _training_step("gpt2", model, compiled, dict(input_ids=ids, labels=ids))
        graphs.append(fresh_dynamo["graphs_compiled"])
    assert graphs[0] == graphs[1], graphs


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gpt2", "bert", "qwen2", "opt", "t5"])
def test_inference_dynamic_sequence_length(fresh_dynamo, name):
    """dynamic=True: the graphs compiled for one sequence length serve another, logits and loss equal to eager, the
    same kernels simulated as statically — OPT's positions (the mask's cumsum over the sequence) as a product with
    a triangle of ones; GPT-2's loss target gather over labels sized apart from the logits (a guard ties them).
    GPT-2's tanh GELU computes sqrt(2 / pi) in f64 from ``math.pi``, which dynamo passes as a 0-d f64 input: that
    runs on the host."""
    torch.manual_seed(0)
    model = _build(name).eval()
    compiled = torch.compile(model, backend="npu", dynamic=True)
    graphs = []
    for seq in (16, 12):
        ids = torch.randint(0, VOCAB, (BATCH, seq), generator=torch.Generator().manual_seed(seq))
        with torch.no_grad(), torch_npu_backend.profile(trace=False) as prof:
            expected = model(input_ids=ids, labels=ids)
            got = compiled(input_ids=ids, labels=ids)
        assert_close(got.logits, expected.logits, f"{name} logits at {seq}")
        assert_close(got.loss, expected.loss, f"{name} loss at {seq}")
        _check_kernels(prof)
        graphs.append(fresh_dynamo["graphs_compiled"])
    assert graphs[0] == graphs[1], graphs  # the second length reuses the first's graphs


@pytest.mark.slow
def test_llama_inference_dynamic_sequence_length(fresh_dynamo):
    """dynamic=True: one compile serves two sequence lengths, logits and loss equal to eager, and every kernel runs
    on the simulator: the causal mask beside the positions cast from its arange, the rotary kernel
    (its table scaled by a host scalar), and the safe softmax's row ``any`` over the unbounded sequence length (a
    looped reduction whose partials share its result's padded column layout)."""
    torch.manual_seed(0)
    model = _build("llama").eval()
    compiled = torch.compile(model, backend="npu", dynamic=True)
    with torch.no_grad(), torch_npu_backend.profile(trace=False) as prof:
        for seq in (16, 12):
            ids = torch.randint(0, VOCAB, (BATCH, seq), generator=torch.Generator().manual_seed(seq))
            expected = model(input_ids=ids, labels=ids)
            got = compiled(input_ids=ids, labels=ids)
            assert_close(got.logits, expected.logits, f"logits at {seq}")
            assert_close(got.loss, expected.loss, f"loss at {seq}")
    assert fresh_dynamo["graphs_compiled"] == 1
    rotary = [r for r in prof.records if "cos" in r.source]
    assert rotary and all(r.simulated for r in rotary), [(r.kernel, r.reason) for r in rotary]
    _check_kernels(prof)
