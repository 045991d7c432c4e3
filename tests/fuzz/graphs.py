"""A seeded random-graph generator for fuzzing the backend against eager.

``random_graph(seed)`` returns a :class:`Graph`: Python source of a function ``f(x0, x1, …)`` (what a failure
prints, runnable as it is), its input shapes and dtype. Graphs mix elementwise ops (kept in a bounded range so
that f16 and bf16 stay finite), broadcasts against inputs with unit dims, reductions over one or several dims
(keepdim or not), views (transpose, unsqueeze, flatten, slices), casts between f32, f16 and bf16, and return one
or two values. ``sizes(graph, scale)`` gives the input shapes at another size of the same graph (for
``dynamic=True`` runs at two sizes: the non-unit dims scale together).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import torch

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
UNARY = ["torch.tanh({})", "torch.sigmoid({})", "torch.abs({})", "-{}", "torch.relu({})", "torch.exp(torch.tanh({}))",
         "torch.sin({})", "torch.sqrt(torch.abs({}) + 1)", "({} * 0.5)", "({} + 1.25)", "torch.clamp({}, -0.5, 0.5)"]
BINARY = ["({} + {})", "({} * {})", "({} - {})", "torch.maximum({}, {})", "torch.minimum({}, {})",
          "({} / (torch.abs({}) + 1))", "torch.where({} > {}, {a}, {b})"]  # fmt: skip
REDUCE = ["sum", "amax", "mean", "amin"]


@dataclass
class Value:
    name: str
    shape: tuple[int, ...]
    dtype: str


@dataclass
class Graph:
    seed: int
    dtype: str
    shapes: list[tuple[int, ...]]
    lines: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)

    @property
    def source(self) -> str:
        args = ", ".join(f"x{i}" for i in range(len(self.shapes)))
        body = "".join(f"    {ln}\n" for ln in self.lines)
        return f"def f({args}):\n{body}    return {', '.join(self.outputs)}\n"

    def function(self):
        scope = {"torch": torch}
        exec(compile(self.source, f"<fuzz graph {self.seed}>", "exec"), scope)
        return scope["f"]

    def inputs(self, shapes=None, seed: int = 0) -> list[torch.Tensor]:
        gen = torch.Generator().manual_seed(self.seed * 7919 + seed)
        return [torch.randn(s, generator=gen).to(DTYPES[self.dtype]) for s in (shapes or self.shapes)]

    def repro(self) -> str:
        shapes = ", ".join(str(tuple(s)) for s in self.shapes)
        return f"{self.source}# inputs: randn of shapes {shapes} in {self.dtype}"


class _Builder:
    def __init__(self, rng: random.Random, graph: Graph):
        self.rng, self.g, self.n = rng, graph, 0

    def emit(self, expr: str, shape, dtype) -> Value:
        name = f"t{self.n}"
        self.n += 1
        self.g.lines.append(f"{name} = {expr}")
        return Value(name, tuple(shape), dtype)

    def unary(self, v: Value) -> Value:
        return self.emit(self.rng.choice(UNARY).format(v.name), v.shape, v.dtype)

    def binary(self, a: Value, b: Value) -> Value:
        if a.dtype != b.dtype:
            b = self.emit(f"{b.name}.to({DTYPES[a.dtype]})", b.shape, a.dtype)
        shape = torch.broadcast_shapes(a.shape, b.shape)
        form = self.rng.choice(BINARY)
        if "where" in form:
            return self.emit(form.format(a.name, b.name, a=a.name, b=b.name), shape, a.dtype)
        return self.emit(form.format(a.name, b.name), shape, a.dtype)

    def reduce(self, v: Value) -> Value:
        rank = len(v.shape)
        if rank == 0:  # nothing left to reduce over
            return v
        k = self.rng.randint(1, max(1, rank - 1))
        dims = sorted(self.rng.sample(range(rank), k))
        keep = self.rng.random() < 0.5
        kind = self.rng.choice(REDUCE)
        shape = [1 if d in dims else s for d, s in enumerate(v.shape)] if keep else \
            [s for d, s in enumerate(v.shape) if d not in dims]
        return self.emit(f"{v.name}.{kind}(dim={dims}, keepdim={keep})", shape, v.dtype)

    def view(self, v: Value) -> Value:
        rank = len(v.shape)
        choice = self.rng.choice(["transpose", "unsqueeze", "flatten", "slice"] if rank >= 2 else ["unsqueeze"])
        if choice == "transpose":
            i, j = self.rng.sample(range(rank), 2)
            shape = list(v.shape)
            shape[i], shape[j] = shape[j], shape[i]
            return self.emit(f"{v.name}.transpose({i}, {j})", shape, v.dtype)
        if choice == "unsqueeze":
            d = self.rng.randint(0, rank)
            return self.emit(f"{v.name}.unsqueeze({d})", v.shape[:d] + (1,) + v.shape[d:], v.dtype)
        if choice == "flatten":
            d = self.rng.randint(0, rank - 2)
            shape = v.shape[:d] + (v.shape[d] * v.shape[d + 1],) + v.shape[d + 2:]
            return self.emit(f"{v.name}.flatten({d}, {d + 1})", shape, v.dtype)
        d = self.rng.randrange(rank)
        shape = list(v.shape)
        shape[d] = (v.shape[d] + 1) // 2
        return self.emit(f"{v.name}.narrow({d}, 0, {shape[d]})", shape, v.dtype)

    def cast(self, v: Value) -> Value:
        to = self.rng.choice([d for d in DTYPES if d != v.dtype])
        return self.emit(f"{v.name}.to({DTYPES[to]})", v.shape, to)


def random_graph(seed: int, n_ops: int | None = None) -> Graph:
    """A random graph; the same seed gives the same graph."""
    rng = random.Random(seed)
    dtype = rng.choice(["f32", "f32", "f16", "bf16"])
    rank = rng.randint(2, 3)
    base = tuple(rng.choice([3, 8, 16, 24]) for _ in range(rank))
    shapes = [base]
    for _ in range(rng.randint(0, 2)):  # broadcast partners: some dims are 1, or leading dims dropped
        s = tuple(1 if rng.random() < 0.4 else d for d in base)
        if rng.random() < 0.3:
            s = s[1:]
        shapes.append(s)
    g = Graph(seed, dtype, shapes)
    b = _Builder(rng, g)
    live = [Value(f"x{i}", s, dtype) for i, s in enumerate(shapes)]
    for _ in range(n_ops or rng.randint(3, 8)):
        r = rng.random()
        v = live[-1] if rng.random() < 0.6 else rng.choice(live)
        if r < 0.3:
            out = b.unary(v)
        elif r < 0.6:
            partners = [w for w in live if w is not v and _broadcastable(w.shape, v.shape)]
            out = b.binary(v, rng.choice(partners)) if partners else b.unary(v)
        elif r < 0.75:
            out = b.reduce(v)
        elif r < 0.9:
            out = b.view(v)
        else:
            out = b.cast(v)
        live.append(out)
    computed = [v.name for v in live if v.name.startswith("t")]
    leaves = [n for n in computed if not any(f"{n}." in ln or f"{n})" in ln or f"{n}," in ln or ln.endswith(n)
                                              for ln in g.lines if not ln.startswith(f"{n} ="))]  # fmt: skip
    g.outputs = leaves[-3:]
    return g


def _broadcastable(a, b) -> bool:
    try:
        torch.broadcast_shapes(a, b)
        return True
    except RuntimeError:
        return False


def sizes(graph: Graph, scale: int) -> list[tuple[int, ...]]:
    """The graph's input shapes with every non-unit dim multiplied by ``scale`` (same broadcasting pattern)."""
    return [tuple(d * scale if d != 1 else 1 for d in s) for s in graph.shapes]
