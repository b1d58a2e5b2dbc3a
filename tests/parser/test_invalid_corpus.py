"""The invalid-kernel corpus: every `rust_examples/invalid/*.rs` fails exactly as annotated.

Each file starts with a header naming the entry and its generics,

    // entry: f  generics: B=128 E=f16

and marks each expected error on the offending line (the line of its primary span):

    x.store(t); // ERROR[E0596]: optional substring of the message

An error without a span (an unknown entry name) is written `// GLOBAL-ERROR[CODE]: ...`
anywhere. A `// known-bug: reason` header line marks a file the compiler gets wrong today
(strict xfail). The produced errors must equal the annotated ones: extra errors fail too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from lowering.pipeline import CompileRequest, CompileResult, Stage, compile_kernel
from parser.render import render, to_json
from parser.spans import SourceFile
from tests.parser.support import EXAMPLES, full_text

CORPUS = EXAMPLES / "invalid"
FILES = sorted(CORPUS.glob("*.rs"))

_HEADER = re.compile(r"^//\s*entry:\s*(?P<entry>\S+)\s+generics:(?P<generics>.*)$")
_GENERIC = re.compile(r"(\w+)=(\[[^\]]*\]|[^\s,]+)")
_ERROR = re.compile(r"//\s*(?P<kind>GLOBAL-ERROR|ERROR)\[(?P<code>\w+)\](?::\s*(?P<text>.*?))?\s*$")
_KNOWN_BUG = re.compile(r"^//\s*known-bug:\s*(?P<reason>.+)$")

# Names of compiler internals that must never reach a user.
INTERNAL_NAMES = (
    "SemType",
    "ScalarTy",
    "TileTy",
    "TensorTy",
    "RefTy",
    "ShapeTy",
    "TupleTy",
    "LocalVar",
    "PathExpr",
    "MethodCall",
    "IntLit",
    "Elem.",
    "Traceback",
    "NoneType",
    "object at 0x",
    "tree_sitter",
    "__cutile",
)


@dataclass(frozen=True)
class Expected:
    line: int | None  # None: a diagnostic without a span
    code: str
    text: str | None


@dataclass(frozen=True)
class CorpusFile:
    path: Path
    entry: str
    generics: tuple[tuple[str, str], ...]
    expected: tuple[Expected, ...]
    known_bug: str | None


def load(path: Path) -> CorpusFile:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    header = _HEADER.match(lines[0])
    assert header, f"{path.name}: first line must be `// entry: NAME  generics: ...`"
    generics = tuple(_GENERIC.findall(header["generics"]))
    expected = []
    known_bug = None
    for number, line in enumerate(lines, start=1):
        if bug := _KNOWN_BUG.match(line):
            known_bug = bug["reason"]
        if found := _ERROR.search(line):
            where = None if found["kind"] == "GLOBAL-ERROR" else number
            expected.append(Expected(where, found["code"], found["text"] or None))
    return CorpusFile(path, header["entry"], generics, tuple(expected), known_bug)


def compile_file(corpus: CorpusFile) -> CompileResult:
    source = SourceFile(f"invalid/{corpus.path.name}", corpus.path.read_text(encoding="utf-8"))
    request = CompileRequest((source,), corpus.entry, corpus.generics)
    return compile_kernel(request, stop_after=Stage.IR)  # CT0209 comes from lowering


def params() -> list[object]:
    out = []
    for path in FILES:
        corpus = load(path)
        marks = []
        if corpus.known_bug:
            marks.append(pytest.mark.xfail(strict=True, reason=corpus.known_bug))
        out.append(pytest.param(corpus, id=path.stem, marks=marks))
    return out


def test_the_corpus_is_large_and_covers_every_rule() -> None:
    assert len(FILES) >= 20
    annotated = [e.code for path in FILES for e in load(path).expected]
    for code in ("E0596", "CT0201", "CT0202", "E0308", "E0425", "E0599", "CT0101", "CT0102"):
        assert annotated.count(code) >= 2, code
    for code in ("CT0001", "CT0002"):
        assert annotated.count(code) >= 2, code
    assert annotated.count("E0133") >= 5  # every unsafe API outside `unsafe`
    assert "CT0209" in annotated  # a check that would stay in a deny_in_kernel_checks kernel


@pytest.mark.parametrize("corpus", params())
def test_invalid_kernel_fails_exactly_as_annotated(corpus: CorpusFile) -> None:
    assert corpus.expected, f"{corpus.path.name} has no ERROR annotation"
    result = compile_file(corpus)
    produced = [d for d in result.diagnostics if d.is_error]
    assert not result.ok
    assert result.ir is None

    def key(d: object) -> tuple[int | None, str]:
        span = d.primary_span  # type: ignore[attr-defined]
        return (span.start_line_col[0] if span is not None else None, d.code.id)  # type: ignore[attr-defined]

    got = sorted((key(d) for d in produced), key=str)
    want = sorted(((e.line, e.code) for e in corpus.expected), key=str)
    rendered = "\n\n".join(render(d) for d in produced)
    assert got == want, f"(line, code) produced {got}, annotated {want}:\n{rendered}"

    for expected in corpus.expected:
        if expected.text is None:
            continue
        matching = [d for d in produced if key(d) == (expected.line, expected.code)]
        assert any(expected.text in d.message for d in matching), (
            f"line {expected.line}: no {expected.code} message contains {expected.text!r}: "
            f"{[d.message for d in matching]}"
        )


@pytest.mark.parametrize("corpus", [pytest.param(load(p), id=p.stem) for p in FILES])
def test_diagnostics_are_well_formed_and_free_of_internal_names(corpus: CorpusFile) -> None:
    result = compile_file(corpus)
    for diagnostic in result.diagnostics:
        assert diagnostic.code.id != "CT0999", diagnostic.message
        shown = full_text(diagnostic) + "\n" + render(diagnostic)
        leaked = [name for name in INTERNAL_NAMES if name in shown]
        assert not leaked, f"{leaked} in:\n{shown}"
        span = diagnostic.primary_span
        if span is not None:
            assert span.file_name == f"invalid/{corpus.path.name}"
            assert 0 <= span.start <= span.end <= len(span.file.data)
            assert f" --> invalid/{corpus.path.name}:" in render(diagnostic)
        data = to_json(diagnostic)
        assert data["code"] == diagnostic.code.id
        assert all(s["line_start"] >= 1 and s["col_start"] >= 1 for s in data["spans"])
