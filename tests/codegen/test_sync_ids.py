"""hivm-inject-sync under event-id pressure: a pipe pair that would need more ids than the target has gets merged
syncs (or PIPE_ALL barriers in place of flags) instead of a compile error, and the kernel still runs race-free on
the simulator (hazard checker on) and computes the right values."""

from __future__ import annotations

import numpy as np

from graph_passes.ir.parser import parse_module
from graph_passes.passes import PassManager
from graph_passes.pipelines import default_pipeline

from .helpers import only_kernel, run_kernel

N_IN = 10


def sum_text(rows=64, cols=256, n=N_IN, dt="f32") -> str:
    t = f"tensor<{rows}x{cols}x{dt}>"
    args = ", ".join(f"%x{i}: {t}" for i in range(n))
    body = [f"    %a1 = hfusion.elemwise_binary %x0, %x1 {{fun = \"add\"}} : ({t}, {t}) -> {t}"]
    for i in range(2, n):
        body.append(f"    %a{i} = hfusion.elemwise_binary %a{i - 1}, %x{i} {{fun = \"add\"}} : ({t}, {t}) -> {t}")
    return ("module attributes {symbols = {}} {\n"
            f"  func.func @main({args}) -> ({t}) {{\n" + "\n".join(body) +
            f"\n    func.return %a{n - 1} : {t}\n  }}\n}}")  # fmt: skip


def interleave_loads(module) -> int:
    """Move every load of a loop body right before its first reader (the placement before the load stage), so each
    load needs its own MTE2 -> V flag. Returns how many loads moved."""
    moved = 0
    for loop in [op for op in module.walk() if op.name == "scf.for"]:
        ops = loop.body.ops
        for ld in [op for op in ops if op.name == "hivm.load"]:
            buf = ld.operands[1]
            readers = [op for op in ops if op is not ld and buf in op.operands and ops.index(op) > ops.index(ld)]
            if readers:
                ops.remove(ld)
                ops.insert(ops.index(readers[0]), ld)
                moved += 1
    return moved


def lower_interleaved(text: str):
    head, tail = default_pipeline().split("hivm-infer-core-type,")
    module = parse_module(text)
    PassManager.from_pipeline(head.rstrip(","), verify=True).run(module)
    assert interleave_loads(module) >= N_IN - 1
    ctx = PassManager.from_pipeline("hivm-infer-core-type," + tail, verify=True).run(module)
    return module, ctx


def test_many_mte2_to_v_flags_fall_back_instead_of_failing():
    """Ten loads, each right before its reader in a double-buffered loop: ten MTE2 -> V flags of two rotating ids
    would need 20 ids (8 exist). The pass merges what overlaps and fences the rest; the kernel runs race-free."""
    module, ctx = lower_interleaved(sum_text())
    assert ctx.counter("hivm-inject-sync", "syncs-merged-for-ids") > 0
    kernel = next(f for f in module.functions if f.attributes.get("kernel"))
    for op in kernel.walk():
        if op.name in ("hivm.set_flag", "hivm.wait_flag"):
            assert all(0 <= i < 8 for i in op.attributes["event_ids"])
    ck = only_kernel(module)
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((64, 256)).astype(np.float32) for _ in range(N_IN)]
    (out,), res = run_kernel(ck, xs, {}, check_hazards=True)
    assert res.stats.hazards_checked
    np.testing.assert_allclose(out.reshape(64, 256), np.sum(xs, axis=0), rtol=1e-5, atol=1e-5)
