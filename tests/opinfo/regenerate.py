"""Run the OpInfo sweep and rewrite the expected-failure table (``tests/opinfo/expected.json``).

    .venv/bin/python -m tests.opinfo.regenerate                      # f32 forward, every op in op_db
    .venv/bin/python -m tests.opinfo.regenerate --dtype f16 --dtype bf16 --backward
    .venv/bin/python -m tests.opinfo.regenerate --ops add,softmax    # just these ops (their entries are replaced)

The table maps ``<op>/<dtype>/<fwd|bwd>`` to the status and reason of every op that is not a plain ``pass`` (see
``sweep.py``); ``swept`` lists the configurations a full run covered, which the tests check against. A summary
table (tabulate) and the most common failure reasons are printed; ``--results FILE`` also writes one JSON line per
op (appended as the sweep goes, so a long run can be watched); ``--summarize FILE`` prints the tables of such a
file, with every aten op that fell back to the host.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import time

from tabulate import tabulate

from . import sweep

EXPECTED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "expected.json")


def load_expected(path: str = EXPECTED) -> dict:
    if not os.path.exists(path):
        return {"swept": [], "entries": {}}
    with open(path) as f:
        return json.load(f)


def config(dtype: str, backward: bool) -> str:
    return f"{dtype}/{'bwd' if backward else 'fwd'}"


def summary(results: list[sweep.OpResult]) -> str:
    """Per configuration: counts by status, the pass rate over ops that run in eager, the share of all-simulated."""
    rows = []
    for cfg in sorted({config(r.dtype, r.backward) for r in results}):
        rs = [r for r in results if config(r.dtype, r.backward) == cfg]
        count = collections.Counter(r.status for r in rs)
        ran = sum(count[s] for s in sweep.RAN_IN_EAGER)
        passed = sum(count[s] for s in sweep.PASSES)
        rows.append([cfg, len(rs), count[sweep.NO_DTYPE], count[sweep.EAGER_FAILS], ran, count[sweep.PASS],
                     count[sweep.PASS_FALLBACK], count[sweep.PASS_INTERPRETED], count[sweep.NOT_COMPILED],
                     count[sweep.MISMATCH], count[sweep.INTERNAL], count[sweep.TIMEOUT],
                     f"{passed / ran:.1%}" if ran else "-", f"{count[sweep.PASS] / passed:.1%}" if passed else "-"])
    return tabulate(rows, headers=["config", "ops", "no dtype", "eager fails", "run in eager", "pass (simulated)",
                                   "pass (fallback)", "pass (interp.)", "not compiled", "mismatch", "internal error",
                                   "timeout", "pass rate", "all simulated"])  # fmt: skip


def common_reasons(results: list[sweep.OpResult], n: int = 10) -> str:
    """The ``n`` most common reasons an op did not pass cleanly (fallback ops, interpreter reasons, errors)."""
    count = collections.Counter()
    for r in results:
        if r.status in (sweep.MISMATCH, sweep.INTERNAL, sweep.TIMEOUT, sweep.NOT_COMPILED):
            count[f"{r.status}: {_generic(r.reason)}"] += 1
        for f in {_NODE.sub("operand", f.split(": ", 1)[-1]) for f in r.fallbacks}:
            count[f"host fallback: {f}"] += 1
        for i in r.interpreted:
            count[f"interpreted: {i}"] += 1
    return tabulate([[c, reason[:150]] for reason, c in count.most_common(n)], headers=["ops", "reason"])


def fallback_ops(results: list[sweep.OpResult]) -> str:
    """Every aten op some OpInfo ran on the host, with its reason and how many OpInfos did."""
    count = collections.Counter(_NODE.sub("operand", f) for r in results for f in set(r.fallbacks))
    rows = [[op, reason, c] for (op, _, reason), c in
            sorted(((f.partition(": ")), c) for f, c in count.items())]  # fmt: skip
    return tabulate(rows, headers=["aten op run on the host", "reason", "OpInfos"])


_NODE = re.compile(r"operand '[^']*'")  # an FX node's name: varies from graph to graph


def _generic(reason: str) -> str:
    return reason.split(": ", 1)[1] if reason.startswith("sample ") else reason


def _print(results: list[sweep.OpResult], fallbacks: bool = False) -> None:
    print(summary(results))
    print()
    print(common_reasons(results))
    if fallbacks:
        print()
        print(fallback_ops(results))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dtype", action="append", choices=sorted(sweep.DTYPES), help="f32 (default), f16, bf16")
    p.add_argument("--backward", action="store_true", help="forward and backward (gradients) instead of forward")
    p.add_argument("--ops", help="comma-separated op names (with .variant); default: all of op_db")
    p.add_argument("--part", help="I/N: only the ops whose op_db index is I mod N (a deterministic share)")
    p.add_argument("--range", help="A:B: only op_db[A:B] (to split a sweep between processes)")
    p.add_argument("--max-samples", type=int, default=None, help="at most this many samples per op")
    p.add_argument("--timeout", type=int, default=300, help="seconds per sample before it counts as a timeout")
    p.add_argument("--results", help="append one JSON line per op to this file")
    p.add_argument("--expected", default=EXPECTED, help="the table to rewrite (default: tests/opinfo/expected.json)")
    p.add_argument("--no-write", action="store_true", help="print the summary only")
    p.add_argument("--summarize", metavar="FILE", nargs="+",
                   help="print the tables of --results files (and, without --no-write, write the table from them); "
                        "run nothing")  # fmt: skip
    a = p.parse_args(argv)
    if a.summarize:
        latest = {}  # a rerun op's last line wins
        for path in a.summarize:
            with open(path) as f:
                for line in f:
                    if line.strip():
                        r = sweep.OpResult(**json.loads(line))
                        latest[r.key] = r
        results = list(latest.values())
        _print(results, fallbacks=True)
        if not a.no_write:
            names = {sweep.op_name(o) for o in sweep.op_db()}
            done = {config(r.dtype, r.backward) for r in results}
            full = {c for c in done if names <= {r.op for r in results if config(r.dtype, r.backward) == c}}
            _write(a.expected, results, full)
        return 0
    dtypes = a.dtype or ["f32"]
    ops = sweep.op_db()
    if a.ops:
        wanted = set(a.ops.split(","))
        unknown = wanted - {sweep.op_name(o) for o in ops}
        if unknown:
            p.error(f"not in op_db: {', '.join(sorted(unknown))}")
        ops = [o for o in ops if sweep.op_name(o) in wanted]
    if a.range:
        lo, hi = (int(v) if v else None for v in a.range.split(":"))
        ops = ops[lo:hi]
    if a.part:
        i, n = map(int, a.part.split("/"))
        ops = [o for k, o in enumerate(ops) if k % n == i]
    results = []
    for dtype in dtypes:
        for k, op in enumerate(ops):
            r = sweep.run_op(op, dtype, a.backward, max_samples=a.max_samples, timeout_s=a.timeout)
            results.append(r)
            print(f"[{k + 1}/{len(ops)}] {r.key}: {r.status} ({r.samples} samples, {r.seconds:.1f} s) {r.reason[:120]}",
                  file=sys.stderr, flush=True)  # fmt: skip
            if a.results:
                with open(a.results, "a") as f:
                    f.write(json.dumps(r.__dict__) + "\n")
    _print(results)
    if not a.no_write:
        whole = not (a.ops or a.part or a.range)
        _write(a.expected, results, {config(d, a.backward) for d in dtypes} if whole else set())
    return 0


SUBSET_SECONDS = 3.0  # the default run's subset: ops whose f32 forward took under this …
SUBSET_STRIDE = 16  # … every this many of them, in op_db order
SUBSET_MIN_RESULTS = 200  # f32 forward results a run (or merged results files) needs to pick the subset anew


def subset(results: list[sweep.OpResult]) -> list[str]:
    """The default run's ops: of the ops a whole f32 forward sweep ran in eager in under :data:`SUBSET_SECONDS`, every
    :data:`SUBSET_STRIDE`-th in op_db order (deterministic for one sweep; about 25 ops)."""
    order = {sweep.op_name(o): i for i, o in enumerate(sweep.op_db())}
    fast = sorted((r for r in results if r.dtype == "f32" and not r.backward and r.status in sweep.RAN_IN_EAGER
                   and r.seconds < SUBSET_SECONDS), key=lambda r: order.get(r.op, len(order)))  # fmt: skip
    return [r.op for r in fast[::SUBSET_STRIDE]]


def _write(path: str, results: list[sweep.OpResult], swept: set[str]) -> None:
    """Replace the entries of ``results``' keys (a plain pass has none), add the fully swept configurations; a whole
    f32 forward sweep (or at least :data:`SUBSET_MIN_RESULTS` f32 forward results) also picks the default run's
    :func:`subset`."""
    table = load_expected(path)
    if "f32/fwd" in swept or sum(r.dtype == "f32" and not r.backward for r in results) >= SUBSET_MIN_RESULTS:
        table["subset"] = subset(results)
    covered = {r.key for r in results}
    entries = {k: v for k, v in table["entries"].items() if k not in covered}
    entries.update({r.key: {"status": r.status, "reason": r.reason} for r in results if r.status != sweep.PASS})
    with open(path, "w") as f:
        json.dump({"swept": sorted(set(table["swept"]) | swept), "subset": table.get("subset", []),
                   "entries": dict(sorted(entries.items())), "generated": time.strftime("%Y-%m-%d")}, f,
                  indent=1)  # fmt: skip
        f.write("\n")


if __name__ == "__main__":
    sys.exit(main())
