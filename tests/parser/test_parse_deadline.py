"""The parse deadline: tree-sitter past a caller's wall-time limit reports CT0007."""

from __future__ import annotations

from lowering.pipeline import CompileRequest, Stage, compile_kernel
from parser import codes
from parser.cst_to_ast import ParseDeadline, parse_file
from parser.diagnostics import DiagnosticSink
from parser.spans import SourceFile

SMALL = SourceFile("a.rs", "fn f() { let x = 1; }\n")
LARGE = SourceFile("b.rs", "fn f() { let x = (1 + 2) * 3; }\n" * 40_000)


def test_small_sources_parse_within_the_limit() -> None:
    sink = DiagnosticSink()
    deadline = ParseDeadline.after_ms(2000)
    for source in (SMALL, SMALL):
        parse_file(source, sink, deadline=deadline)
    assert not list(sink)


def test_a_slow_source_is_named() -> None:
    result = compile_kernel(CompileRequest((SMALL, LARGE), "f"), parse_limit_ms=1)
    late = [d for d in result.diagnostics if d.code == codes.PARSE_TIME_LIMIT]
    assert late and late[0].primary_span is not None
    assert late[0].primary_span.file is LARGE
    assert late[0].message == "parsing took longer than the limit of 1 ms"
    assert result.stage_reached is Stage.PARSE


def test_without_a_limit_nothing_is_late() -> None:
    result = compile_kernel(CompileRequest((LARGE,), "f"), stop_after=Stage.PARSE)
    assert all(d.code != codes.PARSE_TIME_LIMIT for d in result.diagnostics)
