"""parser.bracket_scan: the pre-scan that bounds bracket depth before tree-sitter runs."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from parser import codes
from parser.bracket_scan import MAX_BRACKET_DEPTH, scan_brackets
from parser.spans import SourceFile
from tests.parser.support import ROOT

LIMIT = MAX_BRACKET_DEPTH


def scan(text: str) -> tuple[str, str, int] | None:
    """(code, message, byte offset of the primary span) or None."""
    found = scan_brackets(SourceFile("s.rs", text))
    if found is None:
        return None
    span = found.primary_span
    assert span is not None
    return found.code.id, found.message, span.start


def test_nesting_up_to_the_limit_passes_and_one_more_is_reported_at_its_opener() -> None:
    assert scan("(" * LIMIT + ")" * LIMIT) is None
    prefix = "fn f() {\n let x = "
    found = scan(prefix + "(" * (LIMIT + 1))
    assert found == (
        codes.LIMIT_EXCEEDED.id,
        f"this code nests deeper than {LIMIT} levels of brackets",
        len(prefix) + LIMIT - 1,  # the body's `{` is level 1
    )


def test_the_crashing_shape_counts_four_levels_a_repeat() -> None:
    found = scan("{[(<" * 200)
    assert found is not None
    assert found[2] == 4 * (LIMIT // 4)  # the `{` of repeat 129 is level 513


def test_a_pending_angle_counts_once_per_bracket_level() -> None:
    comparisons = "fn f() {\n" + "    if a < b { c = d < e; }\n" * 5000 + "}\n"
    assert scan(comparisons) is None
    assert scan("(a < b, " * (LIMIT // 2) + "c" + ")" * (LIMIT // 2)) is None
    assert scan("(a < b, " * (LIMIT // 2 + 1)) is not None
    generics = "let x: " + "Vec<" * 5000 + "T" + ">" * 5000 + ";"
    assert scan(generics) is None  # directly nested generic lists count once


def test_arrows_do_not_close_an_angle() -> None:
    assert scan("(<->" * (LIMIT // 2 + 1)) is not None
    assert scan("(<>" * LIMIT) is not None
    assert scan("(<=>" * (LIMIT // 2 + 1)) is not None


def test_mismatched_closers_close_nothing() -> None:
    assert scan("(]" * (LIMIT + 1)) is not None
    assert scan("{)" * (LIMIT + 1)) is not None
    assert scan(")" * 1000 + "(" * LIMIT) is None


@pytest.mark.parametrize(
    "literal",
    [
        '"{}"',
        'b"{}"',
        '"\\"{}"',
        'r"{}"',
        'r#"{}"#',
        'br##"{"#}"##',
        "// {}\n",
        "/* {} */",
        "/* /* */ {} */",
        "/// {}\n",
    ],
)
def test_brackets_inside_literals_and_comments_do_not_count(literal: str) -> None:
    body = literal.replace("{}", "(" * (2 * LIMIT))
    assert scan(f"fn f() {{ let x = {body}; }}") is None


def test_char_literals_and_lifetimes() -> None:
    many = "(" * (2 * LIMIT)
    assert scan(f"fn f<'a>(x: &'a T) {{ let c = '\\''; let d = '\"'; }} // {many}") is None
    assert scan("'(' " * (2 * LIMIT)) is None
    assert scan("'a (" * (LIMIT + 1)) is not None  # a lifetime hides nothing
    assert scan(f"let s = x'{many}'") is not None  # not a char literal: brackets count


def test_an_identifier_before_r_is_not_a_raw_string() -> None:
    many = "(" * (LIMIT + 1)
    assert scan(f'xr#"a"{many}"#') is not None


@pytest.mark.parametrize(
    ("text", "message", "offset"),
    [
        ('fn f() { let s = "abc', "unterminated double quote string", 17),
        ('fn f() { let s = "\\"', "unterminated double quote string", 17),
        ('let s = r#"abc"', "unterminated raw string", 8),
        ("let s = 1; /* a /* b */ c", "unterminated block comment", 11),
    ],
)
def test_literals_that_never_end_are_syntax_errors(text: str, message: str, offset: int) -> None:
    assert scan(text) == (codes.SYNTAX_ERROR.id, message, offset)


def test_the_reported_offset_is_in_bytes() -> None:
    text = "// é\n" + "(" * (LIMIT + 1)
    found = scan(text)
    assert found is not None
    assert found[2] == len("// é\n".encode()) + LIMIT


def test_a_megabyte_of_quotes_and_backslashes_scans_in_linear_time() -> None:
    started = time.perf_counter()
    assert scan('"\\' * 500_000) is not None  # the first string never ends
    assert scan("/*" + "*/ /*" * 200_000 + "*/") is None
    assert scan("'\\" * 500_000) is None
    assert time.perf_counter() - started < 5


def test_tree_sitter_never_sees_the_input_that_overflowed_its_stack() -> None:
    """The 350 KB of `{[(<` that segfaulted tree-sitter, in a child process: a crash would
    show as a negative return code, not kill the test run."""
    program = (
        "from parser.cst_to_ast import parse_file\n"
        "from parser.diagnostics import DiagnosticSink\n"
        "from parser.spans import SourceFile\n"
        "for text in ('{[(<' * 90_000, 'fn f() { let x = \"' + '{[(<' * 90_000):\n"
        "    sink = DiagnosticSink()\n"
        "    parse_file(SourceFile('deep.rs', text), sink)\n"
        "    print(*(d.code.id for d in sink))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [codes.LIMIT_EXCEEDED.id, codes.SYNTAX_ERROR.id]
