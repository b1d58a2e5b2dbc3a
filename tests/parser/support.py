"""Small helpers shared by the front-end tests: parse or check a kernel written inline."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from lowering.pipeline import CompileRequest, CompileResult, Stage, compile_kernel
from parser import ast_nodes as A
from parser.cst_to_ast import parse_file
from parser.diagnostics import Diagnostic, DiagnosticSink
from parser.spans import SourceFile

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "rust_examples"

DEFAULT_SIG = "z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>"


def source(text: str, name: str = "k.rs") -> SourceFile:
    return SourceFile(name, text)


def parse(text: str, name: str = "k.rs") -> tuple[A.ParsedFile, list[Diagnostic]]:
    """Parse `text`; returns the parsed file and every diagnostic the parser reported,
    including the problems it kept with functions (reported when a function is used)."""
    sink = DiagnosticSink()
    parsed = parse_file(source(text, name), sink)
    problems = [
        p
        for m in parsed.modules
        for f in (
            *m.functions,
            *(f for i in m.impls for f in i.functions),
            *(f for t in m.traits for f in t.functions),
        )
        for p in f.problems
    ]
    ordered = sorted([*sink, *problems], key=_start)
    return parsed, ordered


def _start(diagnostic: Diagnostic) -> int:
    span = diagnostic.primary_span
    return span.start if span is not None else -1


def kernel(
    body: str = "",
    *,
    sig: str = DEFAULT_SIG,
    generics: str = "<const B: i32>",
    attr: str = "#[cutile::entry()]",
    fn: str = "fn",
    name: str = "f",
    extra: str = "",
) -> str:
    """A one-entry kernel file; `body` lines are indented by the caller (or not at all)."""
    return (
        "#[cutile::module]\n"
        "mod kernel {\n"
        "    use cutile::core::*;\n"
        f"{extra}"
        f"    {attr}\n"
        f"    {fn} {name}{generics}({sig}) {{\n"
        f"{body}\n"
        "    }\n"
        "}\n"
    )


def only_function(text: str, name: str | None = None) -> A.Function:
    """The function called `name` (or the only one) of a file that must parse cleanly."""
    parsed, diagnostics = parse(text)
    assert not diagnostics, [d.message for d in diagnostics]
    functions = [f for m in parsed.modules for f in m.functions]
    if name is not None:
        functions = [f for f in functions if f.name == name]
    assert len(functions) == 1, [f.name for f in functions]
    return functions[0]


def check(
    text: str,
    entry: str = "f",
    generics: Mapping[str, str] | None = None,
    positional: tuple[str, ...] = (),
    *,
    name: str = "k.rs",
    stop_after: Stage = Stage.CHECK,
) -> CompileResult:
    """Run the front end on one file; `generics` defaults to B=128 unless positional given."""
    if generics is None:
        generics = {} if positional else {"B": "128"}
    request = CompileRequest((source(text, name),), entry, tuple(generics.items()), positional)
    return compile_kernel(request, stop_after=stop_after)


def errors(result: CompileResult) -> list[Diagnostic]:
    return [d for d in result.diagnostics if d.is_error]


def codes_of(result: CompileResult) -> list[str]:
    return [d.code.id for d in errors(result)]


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    """1-based line number of the `occurrence`-th line containing `needle`."""
    hits = [i for i, line in enumerate(text.splitlines(), start=1) if needle in line]
    assert len(hits) >= occurrence, f"{needle!r} not found {occurrence} time(s)"
    return hits[occurrence - 1]


def where(diagnostic: Diagnostic) -> tuple[int, int]:
    """(line, col) of a diagnostic's primary span."""
    span = diagnostic.primary_span
    assert span is not None, f"{diagnostic.message} has no span"
    return span.start_line_col


def full_text(diagnostic: Diagnostic) -> str:
    """Message, labels, notes and help together (for substring checks)."""
    parts = [diagnostic.message, *(lb.message for lb in diagnostic.labels)]
    return "\n".join([*parts, *diagnostic.notes, *diagnostic.help])
