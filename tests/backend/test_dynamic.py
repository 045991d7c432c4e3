"""Dynamic shapes: one compile serves several batch sizes, the IR keeps symbolic dims, results match eager."""

from __future__ import annotations

import math
import re

import pytest
import torch
import torch.nn.functional as F
from torch._dynamo.testing import CompileCounterWithBackend

import torch_npu_backend
from tests.helpers import assert_close, check_model


class _Model(torch.nn.Module):
    """Parameters keep static shapes under dynamic=True (dynamo's force_parameter_static_shapes)."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(128, 16)

    def forward(self, x):
        return torch.softmax(self.proj(x), -1).sum(1, keepdim=True) + x.mean(1, keepdim=True) * 2


def test_one_compile_for_three_batch_sizes(fresh_dynamo, tmp_path):
    model = _Model()
    counter = CompileCounterWithBackend("npu")
    compiled = torch.compile(model, backend=counter, dynamic=True)
    npu = torch.compile(model, backend="npu", dynamic=True, options={"debug_dir": str(tmp_path)})
    with torch.no_grad():
        for batch in (3, 5, 7):
            x = torch.randn(batch, 128)
            assert_close(compiled(x), model(x), f"batch {batch} (counter)")
            assert_close(npu(x), model(x), f"batch {batch}")
    assert counter.frame_count == 1
    assert fresh_dynamo["backend_calls"] == 2  # one per torch.compile above: the "npu" one compiled once
    ir = (tmp_path / "graph_001_inference" / "000_input.mlir").read_text()
    assert re.search(r"tensor<s\d+x128xf32>", ir), ir
    assert re.search(r"symbols = \{[^}]*s\d+ = \[2, 9223372036854775807\]", ir), ir


def test_symbolic_expression_survives_into_types(fresh_dynamo, tmp_path):
    def fn(x):
        return x.view(-1, 64).sum(1) * 2

    npu = torch.compile(fn, backend="npu", options={"debug_dir": str(tmp_path)})
    for batch in (2, 3, 4):
        x = torch.randn(batch, 128)
        torch._dynamo.mark_dynamic(x, 0)  # only the batch dim is symbolic
        assert_close(npu(x), fn(x), f"batch {batch}")
    assert fresh_dynamo["graphs_compiled"] == 1
    ir = (tmp_path / "graph_000_inference" / "000_input.mlir").read_text()
    assert re.search(r"tensor<\(2\*s\d+\)x64xf32>", ir), ir


@pytest.mark.parametrize("name, fn, make", [
    ("mlp", lambda x, w, b: F.gelu(F.linear(x, w, b)).mean(-1),
     lambda n: [torch.randn(n, 8, requires_grad=True), torch.randn(16, 8, requires_grad=True),
                torch.randn(16, requires_grad=True)]),
    ("layer_norm", lambda x, w: F.layer_norm(x, (8,), w) * x.var(0, keepdim=True),
     lambda n: [torch.randn(n, 8, requires_grad=True), torch.randn(8, requires_grad=True)]),
    ("embedding_slice", lambda w, i: F.embedding(i, w)[:, 1:].log_softmax(-1),
     lambda n: [torch.randn(10, 4, requires_grad=True), torch.randint(0, 10, (n, 5))]),
])  # fmt: skip
def test_dynamic_forward_and_backward(name, fn, make):
    for n in (3, 6):
        check_model(fn, make(n), backward=True, dynamic=True)


def test_float_attribute_becomes_an_f32_host_scalar(fresh_dynamo):
    """With dynamic=True, dynamo passes a module's float attribute as a 0-d f64 tensor, converted to f32 where used
    (a rotary embedding's attention scaling): it is an f32 scalar argument, and a new value needs no recompile."""

    class Scaled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = 0.5

        def forward(self, x):
            return (x * self.scale).cos() * self.scale

    model = Scaled()
    compiled = torch.compile(model, backend="npu", dynamic=True)
    for scale, rows in ((0.5, 3), (0.7, 5)):
        model.scale = scale
        x = torch.randn(rows, 8)
        assert_close(compiled(x), model(x), f"scale {scale}")
    assert fresh_dynamo["graphs_compiled"] == 1


class _FloatAttributeGelu(torch.nn.Module):
    """A tanh GELU over a float attribute: with dynamic=True, ``math.sqrt(2.0 / self.c)`` is f64 graph arithmetic."""

    def __init__(self):
        super().__init__()
        self.c = 3.14159

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / self.c) * (x + 0.044715 * torch.pow(x, 3.0))))


def test_float_arithmetic_runs_on_the_host(fresh_dynamo, tmp_path):
    """With dynamic=True, ``math.sqrt(2.0 / self.c)`` over a float attribute is f64 arithmetic in the graph
    (GPT-2's tanh GELU over ``math.pi`` failed to compile: no f64 on the device). It runs on the host before each
    call, in f64 as eager does, its f32 result a new input of the device graph; a new value needs no recompile."""

    model = _FloatAttributeGelu()
    compiled = torch.compile(model, backend="npu", dynamic=True, options={"debug_dir": str(tmp_path)})
    for c, rows in ((3.14159, 3), (2.5, 5)):
        model.c = c
        x = torch.randn(rows, 8)
        with torch_npu_backend.profile(trace=False) as prof:
            got = compiled(x)
        assert_close(got, model(x), f"c {c}")
        assert all(r.simulated for r in prof.records), [(r.kernel, r.reason) for r in prof.records]
    assert fresh_dynamo["graphs_compiled"] == 1
    prologue = next(tmp_path.glob("graph_*/000_host_prologue.txt")).read_text()
    assert "aten.sqrt" in prologue and "f64" in prologue, prologue


def test_float_arithmetic_saved_for_backward_stays_f64(fresh_dynamo):
    """In training the forward graph returns its host f64 scalars (``sqrt(2 / c)``) for the backward graph: the host
    returns them itself, in f64 (GPT-2 training with dynamic=True failed: "unsupported dtype torch.float64"), and
    the backward graph's f64 inputs run on the host the same way. Gradients equal eager's at two sizes."""

    model = _FloatAttributeGelu()
    compiled = torch.compile(model, backend="npu", dynamic=True)
    for rows in (3, 5):
        x = torch.randn(rows, 8, requires_grad=True)
        xc = x.detach().clone().requires_grad_()
        with torch_npu_backend.profile(trace=False) as prof:
            got = compiled(xc)
            got.sum().backward()
        expected = model(x)
        expected.sum().backward()
        assert_close(got, expected, f"rows {rows}")
        assert_close(xc.grad, x.grad, f"grad at rows {rows}")
        assert all(r.simulated for r in prof.records), [(r.kernel, r.reason) for r in prof.records]


def test_loss_over_logits_and_labels_sized_apart(fresh_dynamo, tmp_path):
    """Logits and labels come with their own size symbols; only a guard ties them (``Eq(s0*s1, s2*s3)``). The
    importer writes the labels' flattened size as the logits' one and the module records the equality, so the
    labels' reshape verifies and the target gather meets equal sizes (it was interpreted, "does not match domain
    dim", and the backward's scatter failed to compile). Every kernel is simulated: the backward's one-hot compares
    the labels with i32 positions over the vocabulary, a size symbol without bound, so the backward graph checks
    ``vocabulary <= 2^31`` before each run (it was interpreted: the arange "has no upper bound")."""

    def loss(logits, labels):
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), labels.view(-1))

    compiled = torch.compile(loss, backend="npu", dynamic=True, options={"debug_dir": str(tmp_path)})
    for batch, seq in ((3, 4), (5, 4)):
        logits = torch.randn(batch, seq, 16, requires_grad=True)
        labels = torch.randint(0, 16, (batch * seq // 2, 2))  # sizes of their own (dynamo's duck sizing: distinct)
        lc = logits.detach().clone().requires_grad_()
        with torch_npu_backend.profile(trace=False) as prof:
            got = compiled(lc, labels)
            got.backward()
        expected = loss(logits, labels)
        expected.backward()
        assert_close(got, expected, f"loss at {batch}x{seq}")
        assert_close(lc.grad, logits.grad, f"grad at {batch}x{seq}")
        assert prof.records and not prof.interpreted(), [(r.kernel, r.reason) for r in prof.interpreted()]
    assert fresh_dynamo["graphs_compiled"] == 2  # forward and backward, once for both sizes
    (plan,) = tmp_path.glob("graph_*_backward/host_plan.mlir")
    checked = re.findall(r"size predicate, checked before each run: (.*) \(FX node", plan.read_text())
    assert [re.sub(r"s\d+", "s", c) for c in checked] == ["s<=2147483648"], checked
    text = next(tmp_path.glob("graph_*_forward/000_input.mlir")).read_text()
    assert re.search(r'size_equalities = \{"s\d+\*s\d+" = "s\d+\*s\d+"\}', text), text[:600]


def test_view_with_an_inferred_dim_verifies_by_what_dynamo_proved(fresh_dynamo, tmp_path):
    """``x.view(-1, 4, T, T)`` of ``[s77, T, T]``: dynamo sizes the view ``[s77//4, s77//(s77//4), T, T]``, guards the
    second dim equal to 4 and proves 4 divides s77. The importer writes that dim as 4 and records
    ``4*floor(s77/4) = s77``, so the reshape keeps its element count (it failed to verify: "element count changes");
    s77's range starts at 4, so the floor's bytes are known above 0 and the softmax fuses (it was one kernel per
    op). One compile for three sizes, every kernel simulated, equal to eager."""

    def fn(x):
        return (x.view(-1, 4, x.shape[-1], x.shape[-1]).softmax(-1) * 2).sum(1)

    compiled = torch.compile(fn, backend="npu", dynamic=True, options={"debug_dir": str(tmp_path)})
    for groups, t in ((3, 8), (2, 12), (5, 7)):
        x = torch.randn(groups * 4, t, t)
        with torch_npu_backend.profile(trace=False) as prof:
            got = compiled(x)
        assert_close(got, fn(x), f"{groups} groups of {t}")
        assert [r.simulated for r in prof.records] == [True, True], [(r.kernel, r.reason) for r in prof.records]
    assert fresh_dynamo["backend_calls"] == 1
    text = next(tmp_path.glob("graph_*/002_canonicalize.mlir")).read_text()
    n = re.search(r'"4\*floor\((s\d+)/4\)" = "\1"', text)
    assert n and f"tensor<(floor({n[1]}/4))x4x" in text and re.search(rf"{n[1]} = \[4, \d+\]", text), text[:800]


def test_positions_beside_a_causal_mask_run_on_the_simulator(fresh_dynamo):
    """A dynamic sequence length's positions (``arange(T).float()``) and causal mask (``arange`` against itself,
    ``[T, T]``) share one kernel through the arange; its per-use copies leave the positions' chain touching nothing
    of the mask, so no propagation places it in the ``[T, T]`` domain — it is placed at the innermost dim (either
    dim would do: the first tile along the other stores it). One compile, simulated, equal to eager."""

    def fn(x):
        t = x.shape[1]
        cp = torch.arange(t)
        mask = ((cp[None, :] - cp[:, None]) <= 0) & torch.ones(t, t, dtype=torch.bool)
        return cp.float(), mask

    compiled = torch.compile(fn, backend="npu", dynamic=True)
    for t in (16, 12, 40):
        x = torch.randn(2, t)
        with torch_npu_backend.profile(trace=False) as prof:
            pos, mask = compiled(x)
        want_pos, want_mask = fn(x)
        assert torch.equal(pos, want_pos) and torch.equal(mask, want_mask), t
        assert [r.simulated for r in prof.records] == [True], [(r.kernel, r.reason) for r in prof.records]
    assert fresh_dynamo["backend_calls"] == 1


def test_row_any_over_a_dynamic_length_runs_on_the_simulator(fresh_dynamo):
    """The safe softmax of a masked attention row (``torch.where(~row.any(), 0, softmax)``) with a dynamic,
    unbounded sequence length: the row reductions are looped (multi-pass), and the ``any`` is an f16 max whose
    result, read by compares as a column, is padded to whole repeats per row of heads — its partial shares that
    layout (each slab of rows reduced into its padded place), and the column's broadcast back along the rows reads
    it slab by slab. Simulated, equal to eager, fully masked rows included."""

    def fn(s, mask):
        s = s + torch.where(mask, 0.0, float("-inf"))
        p = torch.softmax(s, -1)
        live = (~(s == float("-inf"))).any(-1, keepdim=True)
        return torch.where(~live, torch.zeros_like(p), p)

    compiled = torch.compile(fn, backend="npu", dynamic=True)
    for t in (16, 12):
        s = torch.randn(2, 4, t, t)
        mask = torch.ones(t, t, dtype=torch.bool).tril()
        mask[2] = False
        with torch_npu_backend.profile(trace=False) as prof:
            got = compiled(s, mask)
        assert_close(got, fn(s, mask), f"length {t}")
        assert [r.simulated for r in prof.records] == [True], [(r.kernel, r.reason) for r in prof.records]
        assert prof.records[0].hazards_checked
    assert fresh_dynamo["backend_calls"] == 1


def test_softmax_over_an_unbounded_length_spreads_over_the_cores_when_slabs_are_whole_blocks(fresh_dynamo):
    """A multi-pass softmax over ``[B, H, T, T]`` with T unbounded: its f32 slabs (``4*T**2`` bytes per head) are
    whole 32-B blocks only for some T, which only the launch knows. The work items (8 rows of a head each) spread
    over the cores when they are (T = 16, 12, 40), and run on one core when not (T = 13: neighbouring heads share a
    block); the kernel ran on one core for every T (20 us at T = 16, now ~1.6). Equal to eager, no race."""

    def fn(s, m):
        return torch.softmax(s + m, -1)

    compiled = torch.compile(fn, backend="npu", dynamic=True)
    cores = {}
    for t in (16, 12, 40, 13):
        s, m = torch.randn(2, 4, t, t), torch.randn(2, 1, t, t)
        with torch_npu_backend.profile(trace=False) as prof:
            got = compiled(s, m)
        assert_close(got, fn(s, m), f"length {t}")
        (rec,) = prof.records
        assert rec.simulated and rec.hazards_checked, rec.reason
        cores[t] = rec.block_dim
    assert cores[13] == 1 and all(cores[t] == min(48, 2 * 4 * -(-t // 8)) for t in (16, 12, 40)), cores
    assert fresh_dynamo["backend_calls"] == 1


def test_dynamic_transpose_and_elementwise_spread_over_the_cores(fresh_dynamo):
    """With every size symbolic, a head transposed out of ``[B, T, H, D]`` had only the batch as a work dim (f32
    rows of D may be 4 B apart): one core, 15 us at 2x16x4x16 (0.4 us now). The launch now takes H and T as work
    dims when ``4*D`` and ``4*T*D`` bytes are whole blocks (every core; one core at D = 7), and an elementwise
    kernel over a symbolic length steps its work items per launch (one work item of UB's size before). Equal to
    eager."""

    def fn(x):
        return (x.transpose(1, 2) * 2).contiguous()

    compiled = torch.compile(fn, backend="npu", dynamic=True)
    cores = {}
    for shape in ((2, 12, 4, 16), (2, 13, 4, 16), (3, 5, 3, 7)):  # distinct sizes: no duck-sized symbols
        x = torch.randn(*shape)
        with torch_npu_backend.profile(trace=False) as prof:
            got = compiled(x)
        assert_close(got, fn(x), f"shape {shape}")
        assert all(r.simulated and r.hazards_checked for r in prof.records), [(r.kernel, r.reason)
                                                                             for r in prof.records]
        cores[shape] = [r.block_dim for r in prof.records]  # the transpose (a movement kernel), the multiply
    assert cores[(2, 12, 4, 16)][0] == 48 and cores[(2, 13, 4, 16)][0] == 48 and cores[(3, 5, 3, 7)][0] == 1, cores
    assert all(c[1] >= 40 for c in cores.values()), cores
    assert fresh_dynamo["backend_calls"] == 1


_TABLE = torch.randn(256, 64)


def _embedding(ids):
    return F.embedding(ids, _TABLE) * 2


def _causal_mask(x):
    t = x.shape[1]
    cp = torch.arange(t)
    return (cp[None, :] - cp[:, None]) <= 0


def _heads_softmax(x):
    b, t = x.shape[:2]
    return x.view(b, t, 4, 16).transpose(1, 2).softmax(-1).transpose(1, 2).reshape(b, t, 64)


def _row_log_softmax(x):
    return x.reshape(-1, 256).log_softmax(-1)


@pytest.mark.parametrize("fn, make, cores", [
    (_embedding, lambda: torch.randint(0, 256, (2, 16)), [32]),  # 372-row tiles: 4 cores before
    (_causal_mask, lambda: torch.randn(2, 16), [8]),  # bool rows of 16 B: 2 rows a step (32-row tiles: 1 before)
    (_heads_softmax, lambda: torch.randn(2, 16, 64), [48, 43, 32]),  # 8, 1 and 2 before
    (_row_log_softmax, lambda: torch.randn(2, 16, 256), [32]),  # 1 before
], ids=["embedding", "causal mask", "heads softmax", "row log-softmax"])
def test_rows_of_a_symbolic_count_step_per_launch(fresh_dynamo, fn, make, cores):
    """A kernel's rows of a symbolic count (``B*T`` tokens, ``T`` rows of a mask or of each head) step by a tiling
    parameter: whole tiles of UB's size when there are many, else as few rows as keep every core's GM writes whole
    32-B blocks at this launch's sizes, spread over the cores (``step{d}``, a movement kernel's ``r{r}_step{d}``).
    Before, the tiles chosen at compile time left one work item per tile of UB's size. Equal to eager, every kernel
    simulated with the hazard checker."""
    compiled = torch.compile(fn, backend="npu", dynamic=True)
    x = make()
    with torch_npu_backend.profile(trace=False) as prof:
        got = compiled(x)
    expected = fn(x)
    assert torch.equal(got, expected) if got.dtype == torch.bool else torch.allclose(got, expected, atol=1e-5)
    assert all(r.simulated and r.hazards_checked for r in prof.records), [(r.kernel, r.reason) for r in prof.records]
    assert [r.block_dim for r in prof.records] == cores


def test_masked_softmax_over_a_dynamic_length_runs_on_the_simulator(fresh_dynamo):
    """``softmax(s + where(mask, 0, -inf))`` with a dynamic, unbounded length: multi-pass over column tiles of 96.
    The f16 compare making the bool mask (128 lanes a repeat) and the f32 select reading it (64 lanes) each need
    the mask's rows in whole repeats of their own lanes once longer than one: 96 is padded to 128 for the select
    (the compare's lanes alone left it at 96, and the select's second repeat found its bits at an unaligned
    address). Simulated, equal to eager."""

    def fn(s, mask):
        return torch.softmax(s + torch.where(mask, 0.0, float("-inf")), -1)

    compiled = torch.compile(fn, backend="npu", dynamic=True)
    for t in (16, 12):
        s = torch.randn(2, 4, t, t)
        mask = torch.ones(t, t, dtype=torch.bool).tril()
        with torch_npu_backend.profile(trace=False) as prof:
            got = compiled(s, mask)
        assert_close(got, fn(s, mask), f"length {t}")
        assert [r.simulated for r in prof.records] == [True], [(r.kernel, r.reason) for r in prof.records]


def test_cumsum_over_a_dynamic_last_dim(fresh_dynamo):
    """OPT's positions are the attention mask's cumsum over the sequence: with dynamic=True the scan's step count
    would be symbolic, so the sums come from a triangle of ones (an arange compared with itself, a vector kernel).
    An i64 sum is the masked rows summed on the vector unit (the cube has no integer product), exact; a float sum
    is a product with the triangle, a cube kernel. Every kernel on the simulator; one compile for three lengths."""

    def fn(mask, x):
        return (torch.cumsum(mask, dim=1) * mask - 1, torch.cumsum(x, -1))

    compiled = torch.compile(fn, backend="npu", dynamic=True)
    for t in (8, 13, 5):
        mask = torch.ones(2, t, dtype=torch.int64)
        mask[1, : t // 2] = 0
        mask[0, -1] = 3 << 40  # an i64 sum no f32 product would keep exact
        x = torch.randn(3, t)
        with torch_npu_backend.profile(trace=False) as prof:
            pos, sums = compiled(mask, x)
        want_pos, want_sums = fn(mask, x)
        assert torch.equal(pos, want_pos), t
        assert_close(sums, want_sums, f"length {t}")
        assert prof.records and not prof.interpreted(), [(r.kernel, r.fusion_kind, r.reason) for r in prof.records]
        assert sum(r.core_type == "AIC" for r in prof.records) == 1  # the float sum's product only
    assert fresh_dynamo["backend_calls"] == 1
