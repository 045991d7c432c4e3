"""Float64 scalar arithmetic of a graph, done on the host before the graph runs.

With ``dynamic=True`` dynamo passes a model's Python floats (``math.pi`` in a tanh-form GELU, a rotary scaling)
as 0-d f64 tensors, and the graph computes with them in f64 before converting the result for its f32 tensors::

    convert_element_type_default: f64[] = convert_element_type(arg15_1, f64)       # pi
    scalar_tensor_default: f64[] = scalar_tensor(2.0, dtype=f64)
    true_divide_tensor: f64[] = true_divide(scalar_tensor_default, convert_element_type_default)
    sqrt_default: f64[] = sqrt(true_divide_tensor)
    convert_element_type_default_1: f32[] = convert_element_type(sqrt_default, f32)  # sqrt(2 / pi), rounded once
    mul_tensor: f32[s0, s1, 256] = mul(add_266, convert_element_type_default_1)

The device has no f64. Those scalar nodes — 0-d, computed only from 0-d f64 graph inputs, constants and each other,
in f64 (or converting such a value to another float dtype) — move to a *host prologue*: a small FX graph over the
graph's inputs that torch runs on the host at each call, in f64 as eager does. Every value of the prologue that
the rest of the graph reads becomes a new graph input, appended after the original ones (``CompiledGraph``
computes them before the device graph runs). A 0-d f64 input read directly by a device op stays an input: the
importer makes it an f32 scalar and the runtime rounds it to f32 once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch


def _scalar(node: torch.fx.Node, dtypes) -> bool:
    val = node.meta.get("val")
    return isinstance(val, torch.Tensor) and val.dim() == 0 and val.dtype in dtypes


@dataclass
class HostPrologue:
    """The host part of a graph. ``module`` computes from the graph's inputs first the ``n_inputs`` values appended
    to the device graph's inputs, then the graph outputs the host returns itself (``outputs``: output position ->
    index of the result): in training the forward graph saves its f64 scalars for the backward graph."""

    module: torch.fx.GraphModule
    n_inputs: int
    outputs: dict[int, int] = field(default_factory=dict)

    def run(self, args) -> tuple[list, dict[int, torch.Tensor]]:
        """(the device graph's appended inputs, the graph outputs by position)."""
        results = self.module(*args)
        inputs = {id(a) for a in args}
        returned = {pos: results[i].clone() if id(results[i]) in inputs else results[i]  # never an input itself
                    for pos, i in self.outputs.items()}
        return list(results[: self.n_inputs]), returned

    def print_readable(self) -> str:
        text = self.module.print_readable(print_output=False)
        if self.outputs:
            text += "\n# graph outputs returned from the host (position: result): " + ", ".join(
                f"{pos}: {i}" for pos, i in sorted(self.outputs.items())) + "\n"
        return text


def split_host_scalars(gm: torch.fx.GraphModule) -> tuple[torch.fx.GraphModule, HostPrologue | None]:
    """(the graph without its f64 scalar arithmetic, the host prologue computing what it reads and the host values
    it returns) — or (gm, None) when the graph has none."""
    graph = gm.graph
    f64_inputs = {n for n in graph.nodes if n.op == "placeholder" and _scalar(n, (torch.float64,))}
    host: list[torch.fx.Node] = []
    on_host = set(f64_inputs)
    floats = (torch.float64, torch.float32, torch.float16, torch.bfloat16)
    for n in graph.nodes:
        if n.op != "call_function" or not all(a in on_host for a in n.all_input_nodes):
            continue
        if _scalar(n, (torch.float64,)) or (n.all_input_nodes and _scalar(n, floats)):
            host.append(n)
            on_host.add(n)
    output = graph.output_node()
    outs = output.args[0] if isinstance(output.args[0], (tuple, list)) else (output.args[0],)
    returned = {pos: a for pos, a in enumerate(outs) if isinstance(a, torch.fx.Node) and a in on_host}
    exits = [n for n in host if any(u not in on_host and u is not output for u in n.users)]
    if not exits and not returned:
        return gm, None
    if returned:  # the host returns these itself, in their own dtype (the device graph's output there is None)
        kept = tuple(None if pos in returned else a for pos, a in enumerate(outs))
        output.args = (type(output.args[0])(kept) if isinstance(output.args[0], (tuple, list)) else kept[0],)

    prologue = torch.fx.Graph()
    env = {}
    for n in graph.nodes:
        if n.op == "placeholder":
            env[n] = prologue.placeholder(n.name)
            env[n].meta = dict(n.meta)
    for n in host:
        env[n] = prologue.node_copy(n, lambda a: env[a])
    prologue.output(tuple(env[n] for n in exits) + tuple(env[a] for a in returned.values()))

    last = [n for n in graph.nodes if n.op == "placeholder"][-1]
    for n in exits:
        with graph.inserting_after(last):
            last = graph.placeholder(f"host_{n.name}")
        last.meta = dict(n.meta)
        n.replace_all_uses_with(last, delete_user_cb=lambda u: u not in on_host)
    for n in reversed(host):
        if not n.users:
            graph.erase_node(n)
    graph.lint()
    gm.recompile()
    outputs = {pos: len(exits) + i for i, pos in enumerate(returned)}
    return gm, HostPrologue(torch.fx.GraphModule(gm, prologue), len(exits), outputs)
