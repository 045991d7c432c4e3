"""``npu-opt FILE -p PIPELINE``: run a pass pipeline on text IR and print the result (like ``mlir-opt``).

    npu-opt model.mlir -p "canonicalize,cse"          # the console script; also python -m graph_passes.opt
    npu-opt - --pass-pipeline "canonicalize" < model.mlir
    npu-opt --list-passes

Input that is not UTF-8 or is empty, invalid IR, an unknown pass or option, or a pass failure prints one line
(``file:line:col: …`` when there is a location) and exits with status 1. Imports graph_passes only (no torch).
"""

from __future__ import annotations

import argparse
import re
import sys

SPLIT_MARKER = re.compile(r"^// -----\s*$", re.M)


def _arg_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="npu-opt", description="Run a pass pipeline on NPU IR text.")
    ap.add_argument("input", nargs="?", default="-", help="input .mlir file ('-' for stdin)")
    ap.add_argument("-p", "--pass-pipeline", dest="pipeline", default="", help='e.g. "canonicalize,cse{…}"')
    ap.add_argument("-o", "--output", default="-", help="output file ('-' for stdout)")
    ap.add_argument("--list-passes", action="store_true", help="list the registered passes and exit")
    ap.add_argument("--verify-each", dest="verify", action="store_true", default=True,
                    help="verify the IR after every pass (default)")  # fmt: skip
    ap.add_argument("--no-verify-each", dest="verify", action="store_false", help="do not verify between passes")
    ap.add_argument("--mlir-print-ir-after-all", action="store_true", help="print the IR after every pass to stderr")
    ap.add_argument("--debug-dir", default=None, help="write numbered IR dumps into this directory")
    ap.add_argument("--stop-after", default=None, help="stop after the named pass")
    ap.add_argument("--split-input-file", action="store_true", help="process each '// -----' chunk separately")
    ap.add_argument("--pass-statistics", action="store_true", help="print the per-pass timing/counter table")
    return ap


def _list_passes() -> str:
    from graph_passes.passes import PASS_REGISTRY

    lines = []
    for name in sorted(PASS_REGISTRY):
        cls = PASS_REGISTRY[name]
        doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        opts = " ".join(f"{k}" for k in cls.option_fields())
        lines.append(f"  {name:32s} {doc}" + (f"  [options: {opts}]" if opts else ""))
    return "Passes:\n" + "\n".join(lines) + "\n"


def _chunks(text: str, split: bool) -> list[str]:
    """The input (or its '// -----' chunks, padded with blank lines so that line numbers stay right)."""
    if not split:
        return [text]
    chunks, line = [], 0
    for part in SPLIT_MARKER.split(text):
        chunks.append("\n" * line + part)
        line += part.count("\n")
    return chunks


def _run_one(text: str, filename: str, args) -> str:
    from graph_passes.ir.parser import parse_module
    from graph_passes.ir.printer import print_module
    from graph_passes.ir.verifier import verify
    from graph_passes.passes import PassManager

    module = parse_module(text, filename=filename)
    if args.verify:
        verify(module)
    pm = PassManager.from_pipeline(
        args.pipeline,
        verify=args.verify,
        debug_dir=args.debug_dir,
        stop_after=args.stop_after,
        print_ir_after_all=sys.stderr if args.mlir_print_ir_after_all else None,
    )
    ctx = pm.run(module)
    if args.pass_statistics:
        sys.stderr.write(ctx.report() + "\n")
    return print_module(module)


def _compiler_errors() -> tuple[type[Exception], ...]:
    """The errors that report bad input or a pass refusing it (one line each), as opposed to a bug."""
    from graph_passes.conversion.hfusion_to_hivm import LoweringError
    from graph_passes.ir.core import VerifyError
    from graph_passes.ir.parser import ParseError
    from graph_passes.ir.size_predicates import SizePredicateError
    from graph_passes.passes import PassError, PipelineError
    from graph_passes.rewrite import RewriteError
    from graph_passes.schedule.tiling import ScheduleError
    from graph_passes.target import UnknownTargetError

    return (ParseError, VerifyError, PipelineError, PassError, RewriteError, LoweringError, ScheduleError,
            SizePredicateError, UnknownTargetError, OSError)  # fmt: skip


def _report(e: Exception) -> None:
    message = str(e).splitlines()[0] if str(e) else type(e).__name__
    sys.stderr.write(message + "\n" if re.match(r"^\S+:\d+:\d+: ", message) else f"npu-opt: error: {message}\n")


def _read_input(path: str) -> tuple[str, str]:
    """The input's text and its name in messages; bytes that are not UTF-8 are a located ``ParseError``."""
    from graph_passes.ir.parser import decode_source

    if path == "-":
        return decode_source(sys.stdin.buffer.read(), "<stdin>"), "<stdin>"
    with open(path, "rb") as f:
        return decode_source(f.read(), path), path


def main(argv: list[str] | None = None) -> int:
    args = _arg_parser().parse_args(argv)
    if args.list_passes:
        sys.stdout.write(_list_passes())
        return 0
    from graph_passes.ir.parser import ParseError

    expected_errors = _compiler_errors()
    try:
        text, filename = _read_input(args.input)
    except ParseError as e:
        _report(e)
        return 1
    except OSError as e:
        sys.stderr.write(f"npu-opt: error: cannot read {args.input}: {e.strerror}\n")
        return 1
    outputs, failed = [], False
    for chunk in _chunks(text, args.split_input_file):
        try:
            outputs.append(_run_one(chunk, filename, args))
        except expected_errors as e:
            _report(e)
            failed = True
    result = "// -----\n".join(outputs)
    if args.output == "-":
        sys.stdout.write(result)
        return 1 if failed else 0
    try:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(result)
    except OSError as e:
        sys.stderr.write(f"npu-opt: error: cannot write {args.output}: {e.strerror}\n")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
