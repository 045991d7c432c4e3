"""Ops the OpInfo sweep (docs/opinfo.md) saw fall back to the host at f32, now run on the simulator: each
compiled afresh, every kernel simulated (none interpreted, none on the host), and compared with eager."""

from __future__ import annotations

import pytest
import torch

from tests.helpers import assert_close, simulated


def _randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _check(fn, *args, exact=False):
    got, want = simulated(fn, *args), fn(*args)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for i, (g, w) in enumerate(zip(got, want)):
        if exact:  # bit for bit, NaN where eager's is
            torch.testing.assert_close(g, w, rtol=0, atol=0, equal_nan=True, msg=lambda m: f"output {i}: {m}")
        else:
            assert_close(g, w, f"output {i}")


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_and_topk_along_a_middle_dim_of_rank_3(dim, descending):
    """A non-last dim of a rank-3 input moves last by a transpose, and back after (was: host fallback)."""
    x = _randn(3, 5, 4)
    _check(lambda t: torch.sort(t, dim=dim, descending=descending, stable=True), x, exact=True)
    _check(lambda t: torch.topk(t, 2, dim=dim, largest=not descending), x, exact=True)


def test_as_strided_of_a_row_major_prefix_is_a_reshape():
    """AOTAutograd regenerates the weighted group_norm's ``[N, G, C/G, 1]`` → ``[N, C]`` view as an as_strided."""
    x = _randn(6, 4)
    _check(lambda t: torch.as_strided(t * 2, (3, 8), (8, 1)), x, exact=True)
    _check(lambda t: torch.as_strided(t * 2, (2, 5), (5, 1)), x, exact=True)  # the first 10 elements


@pytest.mark.filterwarnings("default:npu. ")  # the host fallback is expected
def test_as_strided_of_other_strides_falls_back_with_its_reason():
    import torch_npu_backend

    torch._dynamo.reset()
    x = _randn(16)
    with torch_npu_backend.profile(trace=False) as prof:
        got = torch.compile(lambda t: torch.as_strided(t + 1, (2, 2), (1, 2)), backend="npu")(x)
    assert torch.equal(got, torch.as_strided(x + 1, (2, 2), (1, 2)))
    assert any("only a row-major prefix of a contiguous input" in r.reason for r in prof.fallbacks())


def test_torch_decompositions_of_core_ops():
    """addmv, dist, bucketize, ldexp and the ``*_copy`` views through torch._decomp (docs/ops.md)."""
    m, v, b = _randn(4, 5), _randn(5, seed=1), _randn(4, seed=2)
    _check(lambda a, x, y: torch.addmv(a, x, y, beta=0.5, alpha=2.0), b, m, v)
    _check(lambda x, y: torch.dist(x, y, 3.0), m, _randn(4, 5, seed=3))
    _check(lambda x: torch.bucketize(x, torch.tensor([-1.0, 0.0, 0.5, 2.0])), m, exact=True)
    _check(lambda x, e: torch.ldexp(x, e), m, torch.randint(-4, 5, (4, 5), generator=torch.Generator().manual_seed(4)),
           exact=True)
    _check(lambda x: (torch.narrow_copy(x, 1, 1, 3), torch.permute_copy(x, (1, 0)), torch.view_copy(x, (20,)),
                      torch.unbind_copy(x, 0)[2] * 2), m, exact=True)


def _edges(seed):
    """[7, 9] of randn·4 whose first row holds the IEEE edge values (signed zeros, NaN, ±inf, a subnormal)."""
    x = _randn(7, 9, seed=seed) * 4
    x[0, :6] = torch.tensor([0.0, -0.0, float("nan"), float("inf"), -float("inf"), 1e-40])
    return x


@pytest.mark.parametrize("name, fn, exact", [
    ("signbit", lambda a, b: torch.signbit(a), True),
    ("copysign", lambda a, b: torch.copysign(a, b), True),
    ("copysign.Scalar", lambda a, b: torch.copysign(a, -0.0), True),
    ("fmax", torch.fmax, True),
    ("fmin", torch.fmin, True),
    ("hypot", torch.hypot, False),
    ("round.decimals=3", lambda a, b: torch.round(a * 10, decimals=3), True),
    ("round.decimals=-3", lambda a, b: torch.round(a * 1000, decimals=-3), True),
    ("tan", lambda a, b: torch.tan(a), False),
    ("exp2", lambda a, b: torch.exp2(a * 3), False),
    ("erfc", lambda a, b: torch.erfc(a), False),
    ("erfc near 0", lambda a, b: torch.erfc(a / 8), False),
])  # fmt: skip
def test_float_math(name, fn, exact):
    """lowerings/float_math.py at f32, edge values included (was: host fallback, no lowering)."""
    a, b = _edges(0), _edges(1).flip(1)
    _check(fn, a, b, exact=exact)


def test_float_math_of_half_rounds_once():
    a, b = (_edges(s).half() for s in (0, 1))
    _check(lambda x, y: (torch.hypot(x, y), torch.copysign(x, y), torch.fmax(x, y), torch.erfc(x / 4)), a, b,
           exact=True)


def test_scans_cumprod_cummax_cummin_logcumsumexp():
    """lowerings/scans.py: Hillis and Steele's scan with each op's combine; cummax/cummin bit for bit (NaN and
    ties take the later index, as eager), a product or log-sum-exp within f32 tolerance (another association)."""
    x = _randn(4, 6, 5) * 2
    x[0, 2, 1], x[1, :, 2], x[2, 3, :] = float("nan"), 1.0, float("-inf")
    ints = torch.randint(-3, 4, (4, 6), generator=torch.Generator().manual_seed(5))
    for d in (0, 1, 2):
        _check(lambda t: (*torch.cummax(t, d), *torch.cummin(t, d)), x, exact=True)
        _check(lambda t: (torch.cumprod(t, d), torch.logcumsumexp(t, d)), x)
    _check(lambda t: (torch.cumprod(t, 1), *torch.cummax(t, 1), *torch.cummin(t, 0)), ints, exact=True)
    _check(lambda t: torch.cummax(t, 0), x[0, 0, 0], exact=True)  # a 0-d value: itself at index 0


def test_gamma_family():
    """lowerings/gamma.py over [-9, 9] and the edges, at the OpInfo tolerances (lgamma 4e-6/2e-4, digamma
    3.1e-6/1e-5, polygamma 1e-2/1e-4); trigamma (order 1) is eager's own algorithm."""
    x = torch.rand(300, generator=torch.Generator().manual_seed(0)) * 18 - 9
    x[:10] = torch.tensor([0.0, -0.0, float("nan"), float("inf"), -float("inf"), -3.0, 1.0, 2.0, 1e-3, 10.0])
    for fn, (rtol, atol) in [(torch.lgamma, (4e-6, 2e-4)), (torch.digamma, (3.1e-6, 1e-5)),
                             (lambda t: torch.polygamma(0, t), (3.1e-6, 1e-5)),
                             (lambda t: torch.mvlgamma(t.abs() + 2, 3), (1.3e-6, 1e-5)),
                             # at the pole -3 both give π²/sin²(π·-3) of an f32 sin that is not 0 (≈1.7e16): 2e-6 apart
                             (lambda t: torch.polygamma(1, t), (1e-5, 1e-5)),
                             *[((lambda t, n=n: torch.polygamma(n, t[10:])), (1e-2, 1e-4)) for n in (2, 3, 4)]]:
        torch.testing.assert_close(simulated(fn, x), fn(x), rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.filterwarnings("default:npu. ")  # the host fallback is expected
def test_polygamma_of_a_high_order_falls_back_with_its_reason():
    import torch_npu_backend

    torch._dynamo.reset()
    x = _randn(8).abs() + 1
    with torch_npu_backend.profile(trace=False) as prof:
        got = torch.compile(lambda t: torch.polygamma(9, t), backend="npu")(x)
    torch.testing.assert_close(got, torch.polygamma(9, x))
    assert any("orders 0 to 8 are lowered" in r.reason for r in prof.fallbacks())


def test_index_put_of_a_data_index_without_accumulate_keeps_the_last_write():
    """index_put / index_copy / max_unpool by an index known only at run time: the one-hot of each position's last
    write (eager's serial order where an index repeats), selected over the input."""
    import torch.nn.functional as F

    x, v = _randn(5, 7), _randn(6, 7, seed=1) * 10
    _check(lambda a, b, i: torch.index_put(a, (i,), b), x, v, torch.tensor([3, -1, 3, 0, 2, 3]), exact=True)
    _check(lambda a, b, i: a.index_copy(1, i, b), x, _randn(5, 3, seed=2), torch.tensor([6, 0, 2]), exact=True)
    out, ind = F.max_pool2d(_randn(1, 2, 4, 6, seed=3), 2, return_indices=True)
    _check(lambda o, i: F.max_unpool2d(o, i, 2), out, ind, exact=True)


def test_modified_bessel_first_kind():
    """lowerings/bessel.py over [-30, 30] (the series below 15, Hankel's expansion above) and the edges: at f32
    tolerance, NaN at ±inf and inf above 88.7 (unscaled) where eager's are."""
    x = torch.rand(100, generator=torch.Generator().manual_seed(0)) * 60 - 30
    x[:8] = torch.tensor([0.0, -0.0, float("nan"), float("inf"), -float("inf"), 15.0, -15.0, 90.0])
    x[8:40] = torch.linspace(-16, 16, 32)
    for fn in (torch.i0, torch.special.i0e, torch.special.i1e, torch.special.modified_bessel_i0,
               torch.special.modified_bessel_i1):
        torch.testing.assert_close(simulated(fn, x), fn(x), equal_nan=True)


@pytest.mark.filterwarnings("default:npu. ")  # the host fallback is expected
def test_bucketize_of_a_0d_input_compiles_with_the_op_on_the_host():
    """torch's bucketize decomposition reads a 0-d input with .item(), which AOTAutograd cannot trace (dynamo then
    ran the graph eagerly, unreported): the op stays whole there and falls back, named."""
    import torch_npu_backend
    from torch_npu_backend.stats import COUNTERS

    torch._dynamo.reset()
    before = COUNTERS["graphs_compiled"]
    x, b = torch.tensor(0.3), torch.tensor([-1.0, 0.0, 0.5, 1.0, 2.0])
    with torch_npu_backend.profile(trace=False) as prof:
        got = torch.compile(lambda t, s: torch.bucketize(t, s) + 1, backend="npu")(x, b)
    assert torch.equal(got, torch.bucketize(x, b) + 1) and COUNTERS["graphs_compiled"] > before
    assert any(r.kernel == "aten.bucketize.Tensor" for r in prof.fallbacks())
