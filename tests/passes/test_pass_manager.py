"""Pass manager: pipeline strings with options, errors, verification after each pass, counters, timings, dumps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import pytest

from graph_passes.ir import VerifyError
from graph_passes.ir.parser import parse_module
from graph_passes.passes import (
    PASS_REGISTRY, ModulePass, PassContext, PassManager, PassVerifyError, PipelineError, parse_pipeline_text,
    register_pass,
)  # fmt: skip
from graph_passes.passes.pipeline_syntax import build_pipeline, pipeline_text

TEXT = """
module {
  func.func @f(%x: tensor<8xf32>) -> (tensor<8xf32>) {
    %one = arith.constant {value = 1.0} : () -> f32
    %0 = hfusion.elemwise_binary %x, %one {fun = "mul"} : (tensor<8xf32>, f32) -> tensor<8xf32>
    %1 = hfusion.elemwise_unary %0 {fun = "exp"} : (tensor<8xf32>) -> tensor<8xf32>
    %2 = hfusion.elemwise_unary %0 {fun = "exp"} : (tensor<8xf32>) -> tensor<8xf32>
    %3 = hfusion.elemwise_binary %1, %2 {fun = "add"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    func.return %3 : tensor<8xf32>
  }
}
"""


@register_pass
@dataclass(frozen=True)
class OptionsProbe(ModulePass):
    """Test pass with one option of each kind; records what it ran with."""

    name: ClassVar[str] = "test-options-probe"
    level: int = 1
    enabled: bool = False
    scale: float = 1.0
    mode: Literal["single", "multi"] = "single"
    label: str = ""
    limit: int | None = None

    def run(self, module, ctx):
        ctx.count("runs")
        ctx.count("level", self.level)


@register_pass
@dataclass(frozen=True)
class BreakIR(ModulePass):
    """Test pass that leaves an op with a bad attribute."""

    name: ClassVar[str] = "test-break-ir"

    def run(self, module, ctx):
        for op in module.walk():
            if op.name == "hfusion.elemwise_unary":
                op.attributes["fun"] = "frobnicate"
                return


def test_pipeline_text_parsing():
    assert parse_pipeline_text("canonicalize,cse") == [("canonicalize", {}), ("cse", {})]
    assert parse_pipeline_text(" x{opt=1} ") == [("x", {"opt": "1"})]
    assert parse_pipeline_text("x{a=1 b=true},y") == [("x", {"a": "1", "b": "true"}), ("y", {})]
    assert parse_pipeline_text("x{a=1, b}") == [("x", {"a": "1", "b": "true"})]
    assert parse_pipeline_text("builtin.module(a,b)") == [("a", {}), ("b", {})]
    assert parse_pipeline_text("") == []


@pytest.mark.parametrize(
    "text, message",
    [("a,,b", "expected a pass name"), ("a{x=1", "unclosed '{'"), ("a b", "expected ',' after pass 'a'"),
     ("a{x=1 x=2}", "option 'x' of 'a' given twice")],
)  # fmt: skip
def test_pipeline_syntax_errors(text, message):
    with pytest.raises(PipelineError, match=message):
        parse_pipeline_text(text)


def test_options_are_converted_to_field_types():
    (p,) = build_pipeline("test-options-probe{level=3 enabled=true scale=0.5 mode=multi label=hi limit=7}")
    assert p == OptionsProbe(level=3, enabled=True, scale=0.5, mode="multi", label="hi", limit=7)
    (q,) = build_pipeline("test-options-probe{enabled limit=none}")
    assert q.enabled is True and q.limit is None
    assert pipeline_text([p]) == "test-options-probe{level=3 enabled=true scale=0.5 mode=multi label=hi limit=7}"
    assert build_pipeline(pipeline_text([p])) == [p]


@pytest.mark.parametrize(
    "pipeline, message",
    [
        ("canonicalise", r"unknown pass 'canonicalise'; did you mean 'canonicalize'\?"),
        ("test-options-probe{levle=2}", r"pass 'test-options-probe' has no option 'levle' \(options: level, "),
        ("test-options-probe{level=two}", r"option 'level' expects an integer, got 'two'"),
        ("test-options-probe{enabled=maybe}", r"option 'enabled' expects true or false, got 'maybe'"),
        ("test-options-probe{mode=dual}", r"option 'mode' must be one of single, multi, got 'dual'"),
        ("test-options-probe{scale=x}", r"option 'scale' expects a number, got 'x'"),
    ],
)
def test_unknown_pass_or_option_errors(pipeline, message):
    with pytest.raises(PipelineError, match=message):
        PassManager.from_pipeline(pipeline)


def test_registry_holds_core_passes_with_docstrings():
    for name in ("canonicalize", "cse"):
        cls = PASS_REGISTRY[name]
        assert cls.name == name and cls.__doc__.strip() and "\n" not in cls.__doc__.strip()


def test_register_pass_rejects_non_frozen_and_bad_names():
    with pytest.raises(ValueError, match="frozen dataclass"):

        @register_pass
        class NotFrozen(ModulePass):  # not a dataclass itself (inherits the base's dataclass params)
            """Doc."""

            name: ClassVar[str] = "test-not-frozen"

    with pytest.raises(ValueError, match="kebab-case"):

        @register_pass
        @dataclass(frozen=True)
        class BadName(ModulePass):
            """Doc."""

            name: ClassVar[str] = "Bad_Name"


def test_counters_and_timings():
    module = parse_module(TEXT)
    ctx = PassManager.from_pipeline("canonicalize,cse,test-options-probe{level=4}").run(module)
    assert ctx.counters["canonicalize"]["ops-folded"] == 1  # x*1
    assert ctx.counters["canonicalize"]["ops-erased"] == 1  # the constant 1.0
    assert ctx.counters["cse"]["ops-merged"] == 1  # the second exp
    assert ctx.counters["test-options-probe"] == {"runs": 1, "level": 4}
    assert set(ctx.timings) == {"canonicalize", "cse", "test-options-probe"}
    assert all(t >= 0 for t in ctx.timings.values())
    report = ctx.report()
    assert "canonicalize" in report and "ops-merged=1" in report and "time (ms)" in report


def test_count_outside_a_pass_is_an_error():
    with pytest.raises(Exception, match="outside a pass"):
        PassContext().count("x")


def test_verification_failure_names_the_pass():
    module = parse_module(TEXT, filename="in.mlir")
    with pytest.raises(PassVerifyError) as info:
        PassManager.from_pipeline("cse,test-break-ir,canonicalize").run(module)
    msg = str(info.value)
    assert msg.startswith("pass 'test-break-ir' produced invalid IR: in.mlir:6:5: 'hfusion.elemwise_unary' op")
    assert "frobnicate" in msg and "\n" not in msg


def test_verification_can_be_switched_off():
    module = parse_module(TEXT)
    ctx = PassManager.from_pipeline("test-break-ir", verify=False).run(module)
    assert ctx.passes_run == ["test-break-ir"]


def test_invalid_input_is_reported_before_any_pass():
    module = parse_module(TEXT.replace('{fun = "add"}', '{fun = "plus"}'), filename="in.mlir")
    with pytest.raises(VerifyError, match=r"^in.mlir:8:5: 'hfusion.elemwise_binary' op attribute 'fun'"):
        PassManager.from_pipeline("cse").run(module)


def test_stop_after():
    module = parse_module(TEXT)
    ctx = PassManager.from_pipeline("canonicalize,cse,test-options-probe", stop_after="cse").run(module)
    assert ctx.passes_run == ["canonicalize", "cse"]
    with pytest.raises(PipelineError, match="stop_after='fuse' names no pass of the pipeline"):
        PassManager.from_pipeline("canonicalize", stop_after="fuse")


def test_numbered_dumps_with_header(tmp_path):
    module = parse_module(TEXT)
    PassManager.from_pipeline("canonicalize,cse", debug_dir=tmp_path).run(module)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["000_input.mlir", "001_canonicalize.mlir", "002_cse.mlir"]
    text = (tmp_path / "002_cse.mlir").read_text()
    assert text.startswith("// -----// IR Dump After CSE (cse) //----- //\n")
    assert (tmp_path / "001_canonicalize.mlir").read_text().startswith(
        "// -----// IR Dump After Canonicalize (canonicalize) //----- //\n"
    )
    reparsed = parse_module(text)  # dumps are valid input again
    assert sum(op.name == "hfusion.elemwise_unary" for op in reparsed.walk()) == 1


def test_dumps_enabled_by_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("NPU_COMPILE_DEBUG", "1")
    monkeypatch.setenv("NPU_DEBUG_DIR", str(tmp_path))
    PassManager.from_pipeline("cse").run(parse_module(TEXT))
    (run_dir,) = tmp_path.iterdir()
    assert sorted(p.name for p in run_dir.iterdir()) == ["000_input.mlir", "001_cse.mlir"]
    monkeypatch.delenv("NPU_COMPILE_DEBUG")
    monkeypatch.setenv("TORCH_COMPILE_DEBUG", "1")
    assert PassManager.from_pipeline("cse").debug_dir is not None
    monkeypatch.setenv("TORCH_COMPILE_DEBUG", "0")
    assert PassManager.from_pipeline("cse").debug_dir is None


def test_print_ir_after_all_stream():
    import io

    stream = io.StringIO()
    PassManager.from_pipeline("canonicalize,cse", print_ir_after_all=stream).run(parse_module(TEXT))
    out = stream.getvalue()
    assert out.index("IR Dump After Canonicalize (canonicalize)") < out.index("IR Dump After CSE (cse)")
