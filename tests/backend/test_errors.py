"""Failures name what is wrong: an aten op without lowering, an unsupported dtype, an unknown option. The op and
dtype tests compile with ``fallback="error"`` (the default, "auto", runs such ops on the host: test_fallback.py)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from torch_npu_backend import NpuOptions, OptionsError
from torch_npu_backend.errors import UnsupportedOpError


ERROR = {"fallback": "error"}


def _compile_error(fn, *args, **kw):
    torch._dynamo.reset()
    with pytest.raises(Exception) as info:
        torch.compile(fn, backend="npu", **kw)(*args)
    torch._dynamo.reset()
    chain, e = [], info.value
    while e is not None:
        chain.append(e)
        e = e.__cause__ or e.__context__
    return chain


def test_unsupported_op_names_op_and_node():
    chain = _compile_error(lambda x: torch.special.erfcx(x) + 1, torch.randn(4), options=ERROR)
    errs = [e for e in chain if isinstance(e, UnsupportedOpError)]
    assert errs, f"no UnsupportedOpError in {chain}"
    assert errs[0].op == "aten.special_erfcx.default" and errs[0].node == "special_erfcx"
    assert "no npu lowering for aten op aten.special_erfcx.default (FX node 'special_erfcx')" in str(chain[0])


def test_cumsum_over_a_symbolic_length_names_the_reason():
    """A scan's step count is the length's log: a dynamic length along a summed dim other than the last (the last is
    a product with a triangle of ones) is refused, named."""
    chain = _compile_error(lambda x: torch.cumsum(x, 0) + 1, torch.randn(6, 3), dynamic=True, options=ERROR)
    errs = [e for e in chain if isinstance(e, UnsupportedOpError)]
    assert errs and errs[0].op == "aten.cumsum.default", chain
    assert "symbolic length" in str(errs[0]) and "step count must be static" in str(errs[0]), str(errs[0])


@pytest.mark.parametrize("fn, args, dynamic, reason", [
    (lambda x: x[:, [0, -1]] * 2, (torch.randn(3, 8),), True, "an index into dim 1 of symbolic length"),
    (lambda x, i, j: x[i, :, j], (torch.randn(3, 4, 8), torch.tensor([0, 1]), torch.tensor([2, 3])), False,
     "index tensors at dims [0, 2] are not adjacent"),
    (lambda x: x[:, [0, 9]] * 2, (torch.randn(3, 8),), False, "index 9 is out of bounds for dim 1 of size 8"),
])
def test_advanced_indexing_limits_are_named(fn, args, dynamic, reason):
    """x[..., idx, ...] lowers one index tensor into a dim of static length; the rest is refused with the reason."""
    chain = _compile_error(fn, *args, dynamic=dynamic, options=ERROR)
    errs = [e for e in chain if isinstance(e, UnsupportedOpError)]
    assert errs and errs[0].op == "aten.index.Tensor" and reason in str(errs[0]), chain


def test_unsupported_dtype_names_dtype():
    chain = _compile_error(lambda x: x * 2, torch.randn(4, dtype=torch.float64), options=ERROR)
    errs = [e for e in chain if isinstance(e, UnsupportedOpError)]
    assert errs and errs[0].op == "aten.mul.Tensor" and "torch.float64 operand 'arg0_1'" in str(errs[0]), chain


def test_complex_dtype_names_every_op():
    chain = _compile_error(lambda x: torch.view_as_complex(x) * 2, torch.randn(4, 2), options=ERROR)
    errs = [e for e in chain if isinstance(e, UnsupportedOpError)]
    assert errs and [f.op for f in errs[0].unsupported] == ["aten.view_as_complex.default", "aten.mul.Tensor"], chain
    assert "torch.complex64 result" in str(errs[0]) and "torch.complex64 operand 'view_as_complex'" in str(errs[0])


def test_unknown_option_lists_valid_ones():
    chain = _compile_error(lambda x: x * 2, torch.randn(4), options={"bogus": 1})
    errs = [e for e in chain if isinstance(e, OptionsError)]
    assert errs, chain
    msg = str(errs[0])
    assert "bogus" in msg and all(name in msg for name in ("execute", "pipeline", "debug_dir", "verify", "chip"))


def test_unknown_execute_mode_is_rejected():
    assert NpuOptions().execute == "simulate"
    with pytest.raises(OptionsError, match="execute='hardware' is not supported; valid: simulate, interpret"):
        NpuOptions.from_dict({"execute": "hardware"})


@pytest.mark.parametrize("options, match", [
    ({"multi_buffer": 0}, "multi_buffer must be an int >= 1"),
    ({"multi_buffer": True}, "multi_buffer must be an int >= 1"),
    ({"sync_mode": "none"}, "sync_mode='none' is not supported; valid: normal, barrier-all"),
    ({"max_tile_elems": -1}, "max_tile_elems must be an int >= 0"),
    ({"fusion": 1}, "fusion must be a bool"),
    ({"check_hazards": "no"}, "check_hazards must be a bool"),
    ({"chip": "ascend310"}, "chip='ascend310' is not known"),
])  # fmt: skip
def test_simulation_options_are_validated(options, match):
    with pytest.raises(OptionsError, match=match):
        NpuOptions.from_dict(options)


def test_options_are_frozen_and_validated():
    opts = NpuOptions.from_dict({"verify": False, "pipeline": "cse"})
    assert opts.verify is False and opts.pipeline == "cse" and opts.chip == "ascend910b1"
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.verify = True
    with pytest.raises(OptionsError, match="verify must be a bool"):
        NpuOptions.from_dict({"verify": "yes"})
    with pytest.raises(OptionsError, match="chip='ascend310'"):
        NpuOptions.from_dict({"chip": "ascend310"})


def test_bad_pipeline_fails_at_compile():
    chain = _compile_error(lambda x: x * 2, torch.randn(4), options={"execute": "interpret",
                                                                             "pipeline": "no-such-pass"})
    assert any("no-such-pass" in str(e) for e in chain), chain


@pytest.mark.parametrize("options, match", [
    ("fusion=False", "npu options must be a dict of option names to values, got str"),
    ([("fusion", False)], "npu options must be a dict of option names to values, got list"),
    ({1: 2}, "unknown npu option\\(s\\) 1; valid options: execute"),
    ({"debug_dir": 5}, "option debug_dir must be a path \\(a string\\), got 5"),
    ({"debug_dir": b"dumps"}, "option debug_dir must be a path \\(a string\\), got b'dumps'"),
    ({"debug_dir": ""}, "option debug_dir='' is not a writable directory: empty path"),
])  # fmt: skip
def test_bad_options_are_one_line_options_errors(options, match):
    with pytest.raises(OptionsError, match=match):
        NpuOptions.from_dict(options)


def test_unwritable_debug_dir_is_an_options_error(tmp_path, monkeypatch):
    """A debug_dir under a file cannot hold dumps: refused up front, whether given or from the environment."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    not_writable = f"debug_dir='{blocker}/dumps' is not a writable directory: {blocker} is not a directory"
    with pytest.raises(OptionsError, match=not_writable):
        NpuOptions.from_dict({"debug_dir": str(blocker / "dumps")})
    monkeypatch.setenv("NPU_COMPILE_DEBUG", "1")
    monkeypatch.setenv("NPU_DEBUG_DIR", str(blocker))
    with pytest.raises(OptionsError, match=f"NPU_DEBUG_DIR={blocker} is not a writable directory"):
        NpuOptions.from_dict({})
    assert NpuOptions.from_dict({"debug_dir": tmp_path / "new" / "dir"}).debug_dir == str(tmp_path / "new" / "dir")


def test_options_not_a_dict_through_torch_compile():
    chain = _compile_error(lambda x: x * 2, torch.randn(4), options="fusion=False")
    errs = [e for e in chain if isinstance(e, OptionsError)]
    assert errs and str(errs[0]) == "npu options must be a dict of option names to values, got str", chain
