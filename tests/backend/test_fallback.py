"""Per-op host fallback: an aten op the backend cannot compile runs eagerly on the host inside the compiled graph,
the kernels around it on the simulator; every fallback is in the profile (op, FX node, reason, bytes each way) and
in one warning per graph; ``fallback="error"`` names every unsupported node at once.

Ops chosen to stay without a lowering: ``kthvalue`` (a selection), ``special_bessel_j0`` and ``special_erfcx``
(special functions).
"""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.functional as F

import torch_npu_backend
from torch_npu_backend import OptionsError
from torch_npu_backend.errors import UnsupportedOpError
from tests.helpers import assert_close

pytestmark = pytest.mark.filterwarnings("default:npu. ")  # fallbacks are expected here (setup.cfg makes them errors)


def _middle(x):
    y = torch.sigmoid(x) * 2
    v, i = torch.kthvalue(y, 2, dim=1)
    return torch.special.bessel_j0(v + 1) * 3, i


def _run(fn, *args, options=None, dynamic=False):
    """Compile and run ``fn``; returns (outputs, profile, npu warnings)."""
    compiled = torch.compile(fn, backend="npu", options=options, dynamic=dynamic)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch_npu_backend.profile(trace=False) as prof:
            out = compiled(*args)
    return out, prof, [str(w.message) for w in caught if str(w.message).startswith("npu:")]


def test_unknown_ops_in_the_middle_run_on_the_host(fresh_dynamo):
    x = torch.randn(8, 16)
    (vals, idx), prof, warned = _run(_middle, x)
    want_vals, want_idx = _middle(x)
    assert_close(vals, want_vals, "values")
    assert torch.equal(idx, want_idx)
    fallbacks = prof.fallbacks()
    assert [(r.kernel, r.source, r.reason) for r in fallbacks] == [
        ("aten.kthvalue.default", ("kthvalue",), "no lowering"),
        ("aten.special_bessel_j0.default", ("special_bessel_j0",), "no lowering")]
    # kthvalue reads f32[8, 16] and returns f32[8] and i64[8]; bessel_j0 reads and returns f32[8]
    assert [(r.d2h_bytes, r.h2d_bytes) for r in fallbacks] == [(8 * 16 * 4, 8 * 4 + 8 * 8), (8 * 4, 8 * 4)]
    assert all(r.fusion_kind == "host fallback" and r.executed == "host" for r in fallbacks)
    assert prof.transfer_bytes() == 512 + 96 + 32 + 32
    assert len(prof.simulated()) == 3 and not prof.interpreted()  # sigmoid·2, +1, ·3: kernels around the fallbacks
    assert fresh_dynamo["host_fallbacks"] == 2 and fresh_dynamo["ops_fallen_back"] == 2
    assert len(warned) == 1, warned  # one warning for the graph, naming both
    assert "2 op(s) run eagerly on the host" in warned[0] and "FX node 'kthvalue'" in warned[0]
    assert "FX node 'special_bessel_j0'" in warned[0]
    table = prof.table()
    assert "host fallback (no lowering); 512 B to host, 96 B back" in table
    assert table.endswith("; 2 host fallbacks moving 672 B (no time charged)") and "total: 3 launches" in table


def test_fallback_under_dynamic_shapes(fresh_dynamo):
    """A size argument of the fallen-back op is a size expression evaluated per run (k = n // 2)."""

    def fn(x):
        v, _ = torch.kthvalue(x * 2, x.shape[1] // 2, dim=1)
        return v + 1

    compiled = torch.compile(fn, backend="npu", dynamic=True)
    for rows, cols in ((6, 10), (5, 7)):
        x = torch.randn(rows, cols)
        with torch_npu_backend.profile(trace=False) as prof:
            got = compiled(x)
        assert_close(got, fn(x), f"{rows}x{cols}")
        (fb,) = prof.fallbacks()
        assert fb.d2h_bytes == rows * cols * 4 and fb.h2d_bytes == rows * 4  # the unread indices stay on the host
        assert not prof.interpreted() and len(prof.simulated()) == 2
    assert fresh_dynamo["graphs_compiled"] == 1


def test_random_op_sized_by_a_symbol(fresh_dynamo):
    """dynamic=True: rand's size argument is a size expression the run's bindings evaluate; eager's draws."""

    def fn(x):
        return x * torch.rand(x.shape[0], 3) + 1

    compiled = torch.compile(fn, backend="npu", dynamic=True)
    for rows in (5, 7):
        x = torch.randn(rows, 3)
        torch.manual_seed(rows)
        got = compiled(x)
        torch.manual_seed(rows)
        assert torch.equal(got, fn(x)), rows
    assert fresh_dynamo["graphs_compiled"] == 1


def test_i64_host_results_feed_kernels(fresh_dynamo):
    """kthvalue's indices and randint's draws (i64, beyond i32) go back to the device: the kernels reading them make
    no assumption about their range (i64 arithmetic is not narrowed to i32 there)."""

    def fn(x):
        v, i = torch.kthvalue(x, 3, dim=1)
        r = torch.randint(0, 2**40, (x.shape[0],))
        return i * 3000000000 + r, (i.float() + v).sum()

    x = torch.randn(6, 9)
    with torch_npu_backend.profile(trace=False) as prof:
        torch.manual_seed(1)
        got = torch.compile(fn, backend="npu")(x)
    torch.manual_seed(1)
    want = fn(x)
    assert torch.equal(got[0], want[0])
    assert_close(got[1], want[1], "sum")
    assert [r.kernel for r in prof.fallbacks()] == ["aten.kthvalue.default", "aten.randint.low"]
    assert prof.simulated() and not prof.interpreted()


def test_fallback_error_names_every_unsupported_op(fresh_dynamo):
    with pytest.raises(Exception) as info:
        torch.compile(_middle, backend="npu", options={"fallback": "error"})(torch.randn(8, 16))
    err = info.value
    while err is not None and not isinstance(err, UnsupportedOpError):
        err = err.__cause__ or err.__context__
    assert err is not None, info.value
    assert [(f.op, f.node) for f in err.unsupported] == [("aten.kthvalue.default", "kthvalue"),
                                                          ("aten.special_bessel_j0.default", "special_bessel_j0")]
    assert str(err).startswith("no npu lowering for 2 aten ops: aten.kthvalue.default (FX node 'kthvalue')")
    assert "aten.special_bessel_j0.default (FX node 'special_bessel_j0')" in str(err)


def test_fallback_option_is_validated():
    with pytest.raises(OptionsError, match="option fallback='eager' is not supported; valid: auto, error"):
        torch_npu_backend.NpuOptions.from_dict({"fallback": "eager"})


def test_training_through_a_fallback_op(fresh_dynamo):
    """erfcx has no lowering: it runs on the host in the forward graph; its backward (2x·erfcx(x) - 2/sqrt(pi))
    reads the saved host result on the simulator, and the gradients flow through it to the kernels before it."""

    def fn(x, w):
        return (torch.special.erfcx(torch.tanh(x) * w) * w).sum(-1)

    x, w = torch.randn(4, 8), torch.randn(8)
    xe, we = x.clone().requires_grad_(), w.clone().requires_grad_()
    xc, wc = x.clone().requires_grad_(), w.clone().requires_grad_()
    fn(xe, we).sum().backward()
    with torch_npu_backend.profile(trace=False) as prof:
        out = torch.compile(fn, backend="npu")(xc, wc)
        out.sum().backward()
    assert_close(out, fn(x, w), "output")
    assert_close(xc.grad, xe.grad, "grad x")
    assert_close(wc.grad, we.grad, "grad w")
    assert [(r.graph.split("_")[-1], r.kernel) for r in prof.fallbacks()] == [("forward", "aten.special_erfcx.default")]
    assert any(r.graph.endswith("backward") for r in prof.simulated()) and not prof.interpreted()


def test_a_refused_argument_combination_falls_back(fresh_dynamo):
    """x[i, :, j] with index tensors on dims that are not adjacent: the index lowering refuses it (eager moves their
    shape first); what it had emitted is removed and the node runs on the host, with the lowering's reason."""

    def fn(x, i, j):
        return x[i, :, j] * 2

    x, i, j = torch.randn(3, 4, 8), torch.tensor([0, 1, 2]), torch.tensor([2, 3, 7])
    got, prof, _ = _run(fn, x, i, j)
    assert_close(got, fn(x, i, j), "output")
    (fb,) = prof.fallbacks()
    assert fb.kernel == "aten.index.Tensor" and "not adjacent" in fb.reason
    assert not prof.interpreted()


def test_float64_values_stay_on_the_host(fresh_dynamo):
    """The device holds no float64: the f64 ops run on the host, the f32 ones around them on the simulator."""

    def fn(x):
        y = torch.exp(x) + 1
        z = y.to(torch.float64) * 3.0
        return z.to(torch.float32) - 2

    x = torch.randn(4, 8)
    got, prof, _ = _run(fn, x)
    assert_close(got, fn(x), "output")
    nodes = [r.source[0] for r in prof.fallbacks()]
    assert nodes == ["_to_copy", "mul", "_to_copy_1"], nodes
    assert all("float64" in r.reason for r in prof.fallbacks())
    assert len(prof.simulated()) == 2 and not prof.interpreted()


def test_float64_input_and_output(fresh_dynamo):
    def fn(x, y):
        return x * 2, y.sin()

    x, y = torch.randn(5, dtype=torch.float64), torch.randn(5)
    (a, b), prof, _ = _run(fn, x, y)
    assert a.dtype == torch.float64 and torch.equal(a, x * 2)
    assert_close(b, y.sin(), "sin")
    assert [r.kernel for r in prof.fallbacks()] == ["aten.mul.Tensor"]


def test_complex_values_stay_on_the_host(fresh_dynamo):
    """complex64 is a host dtype too: view_as_complex, the complex product, abs and view_as_real run on the host,
    the f32 work before and after on the simulator."""

    def fn(x):
        c = torch.view_as_complex(torch.sigmoid(x))
        c = c * c
        return torch.view_as_real(c) + 1, c.abs()

    x = torch.randn(4, 8, 2)
    (re, mag), prof, _ = _run(fn, x)
    want_re, want_mag = fn(x)
    assert_close(re, want_re, "view_as_real + 1")
    assert_close(mag, want_mag, "abs")
    assert [r.kernel for r in prof.fallbacks()] == ["aten.view_as_complex.default", "aten.mul.Tensor",
                                                    "aten.view_as_real.default", "aten.abs.default"]
    assert len(prof.simulated()) == 2 and not prof.interpreted()


def test_random_ops_match_eager_under_one_seed(fresh_dynamo):
    """rand, randn_like, bernoulli and dropout draw on the host with torch's generator, in eager's order: the same
    seed gives bit-identical values, and two rand calls stay two draws."""

    def fn(x, p):
        a = torch.rand(4, 8) + x
        b = torch.rand(4, 8) + x
        c = torch.randn_like(x) * 2
        d = torch.bernoulli(p)
        e = F.dropout(x, 0.3, training=True)
        return a, b, c, d, e

    x, p = torch.randn(4, 8), torch.rand(4, 8)
    compiled = torch.compile(fn, backend="npu")
    with torch_npu_backend.profile(trace=False) as prof:
        torch.manual_seed(3)
        got = compiled(x, p)
    torch.manual_seed(3)
    want = fn(x, p)
    for k, (g, w) in enumerate(zip(got, want)):
        assert torch.equal(g, w), f"output {k} differs from eager"
    assert not torch.equal(got[0], got[1])
    assert {r.kernel for r in prof.fallbacks()} == {"aten.rand.default", "aten.randn_like.default",
                                                    "aten.bernoulli.default", "aten.native_dropout.default"}
    assert all(r.reason.startswith("random op") for r in prof.fallbacks())
    assert not prof.interpreted()
    torch.manual_seed(4)
    assert not torch.equal(compiled(x, p)[0], got[0])  # a new seed, new draws


def test_fallback_in_interpret_mode(fresh_dynamo):
    x = torch.randn(8, 16)
    (vals, idx), prof, _ = _run(_middle, x, options={"execute": "interpret"})
    want_vals, want_idx = _middle(x)
    assert_close(vals, want_vals, "values")
    assert torch.equal(idx, want_idx)
    assert len(prof.fallbacks()) == 2


def test_gpt2_default_dropout_trains_like_eager(fresh_dynamo):
    """GPT-2 with its default config (dropout 0.1 on embeddings, attention and residuals) trains one step: each
    dropout is drawn on the host, so under one seed the compiled loss is eager's bit for bit and the gradients
    agree; every other kernel runs on the simulator. A different seed gives another loss (the masks matter)."""
    import transformers

    config = transformers.GPT2Config(n_layer=1, n_embd=32, n_head=2, n_positions=16, vocab_size=64,
                                     bos_token_id=0, eos_token_id=0)  # fmt: skip
    assert config.resid_pdrop == config.embd_pdrop == config.attn_pdrop == 0.1
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(config).train()
    ids = torch.randint(0, 64, (2, 8), generator=torch.Generator().manual_seed(1))
    torch.manual_seed(7)
    expected = model(input_ids=ids, labels=ids).loss
    expected.backward()
    want = {n: p.grad.clone() for n, p in model.named_parameters()}
    model.zero_grad()
    compiled = torch.compile(model, backend="npu")
    with torch_npu_backend.profile(trace=False) as prof:
        torch.manual_seed(7)
        got = compiled(input_ids=ids, labels=ids).loss
        got.backward()
    assert torch.equal(got.detach(), expected.detach()), (got.item(), expected.item())
    for n, p in model.named_parameters():
        assert_close(p.grad, want[n], f"grad of {n}")
    assert {r.kernel for r in prof.fallbacks()} == {"aten.native_dropout.default"}
    assert len(prof.fallbacks()) == 4 and not prof.interpreted() and prof.simulated()  # embeddings, attention,
    # the attention's and the MLP's residual branches
    torch.manual_seed(8)
    assert not torch.equal(compiled(input_ids=ids, labels=ids).loss.detach(), got.detach())
