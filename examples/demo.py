"""Compile a small model with backend="npu", check it against eager, and show what was compiled and how it ran.

    python examples/demo.py
"""

import torch

import torch_npu_backend


class Block(torch.nn.Module):
    """A projection (a matmul on the cube cores, its weight read transposed in place), then norm → scale/shift →
    GELU → softmax: vector work that fuses into one kernel."""

    def __init__(self, width: int = 256):
        super().__init__()
        self.proj = torch.nn.Linear(width, width, bias=False)
        self.norm = torch.nn.LayerNorm(width)
        self.scale = torch.nn.Parameter(torch.randn(width) * 0.1 + 1.0)
        self.shift = torch.nn.Parameter(torch.randn(width) * 0.1)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.norm(self.proj(x)) * self.scale + self.shift)
        return torch.softmax(h, dim=-1) + x


def main() -> None:
    torch.manual_seed(0)
    model = Block()
    x = torch.randn(1024, 256)
    expected = model(x)

    compiled = torch.compile(model, backend="npu")
    with torch_npu_backend.profile() as prof:
        got = compiled(x)

    err = (got - expected).abs().max().item()
    print(f"compiled output matches eager: {torch.allclose(got, expected, rtol=1e-5, atol=1e-5)} "
          f"(max abs error {err:.2e})\n")
    print("kernels launched on the simulated ascend910b1:")
    print(prof.table())
    print(f"\ntotal simulated time: {prof.total_us():.2f} us")


if __name__ == "__main__":
    main()
