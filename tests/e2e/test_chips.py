"""Every chip preset compiles and runs a fused kernel: the passes read the target, the simulator its preset."""

import pytest
import torch

import torch_npu_backend
from torch_npu_backend.options import CHIPS, OptionsError


@pytest.mark.parametrize("chip", CHIPS)
def test_softmax_on_every_chip(chip, fresh_dynamo):
    f = lambda x, y: torch.softmax(x * y + 1, -1)  # noqa: E731
    x, y = torch.randn(64, 512), torch.randn(64, 512)
    with torch_npu_backend.profile() as prof:
        out = torch.compile(f, backend="npu", options={"chip": chip})(x, y)
    torch.testing.assert_close(out, f(x, y), rtol=1.3e-6, atol=1e-5)
    (record,) = prof.records
    assert record.executed == "simulator" and record.cycles > 0


def test_block_dim_follows_the_chip(fresh_dynamo):
    """A kernel with plenty of work spreads over all vector cores of the chip it was compiled for."""
    f = lambda x: torch.exp(x) * 2  # noqa: E731
    x = torch.randn(4096, 1024)
    dims = {}
    for chip, cores in (("ascend910b1", 48), ("ascend910b4", 40), ("ascend910a", 32)):
        torch._dynamo.reset()
        with torch_npu_backend.profile() as prof:
            torch.compile(f, backend="npu", options={"chip": chip})(x)
        dims[chip] = prof.records[0].block_dim
        assert dims[chip] == cores, dims


def test_unknown_chip_is_an_error():
    with pytest.raises(OptionsError, match="ascend910b1"):
        torch_npu_backend.NpuOptions.from_dict({"chip": "ascend999"})
