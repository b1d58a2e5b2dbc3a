"""rustc-style text rendering and the JSON form of diagnostics."""

from __future__ import annotations

from parser import codes
from parser.diagnostics import Diagnostic, Label, Severity, error, warning
from parser.render import (
    MAX_DIAGNOSTICS,
    MAX_LABELS,
    MAX_LINE_CHARS,
    MAX_NOTES,
    MAX_TEXT_CHARS,
    render,
    render_all,
    to_json,
)
from parser.spans import SourceFile, Span

TEXT = "fn f() {\n    let x = y + 1.0;\n    z.store(x);\n}\n"
SRC = SourceFile("src/k.rs", TEXT)


def span_of(needle: str, src: SourceFile = SRC, occurrence: int = 1) -> Span:
    data = src.data
    start = -1
    for _ in range(occurrence):
        start = data.index(needle.encode(), start + 1)
    return Span(src, start, start + len(needle.encode()))


def test_single_label_layout_matches_rustc() -> None:
    diagnostic = error(
        codes.MISMATCHED_TYPES, "mismatched types", span_of("y + 1.0"), "operands differ"
    )
    assert render(diagnostic) == (
        "error[E0308]: mismatched types\n"
        " --> src/k.rs:2:13\n"
        "  |\n"
        "2 |     let x = y + 1.0;\n"
        "  |             ^^^^^^^ operands differ\n"
        "  |"
    )


def test_gutter_grows_with_the_line_number() -> None:
    text = "\n" * 11 + "    bad();\n"
    src = SourceFile("long.rs", text)
    lines = render(error(codes.UNRESOLVED_NAME, "no", span_of("bad", src), "here")).splitlines()
    assert lines[1] == "  --> long.rs:12:5"
    assert lines[2] == "   |"
    assert lines[3] == "12 |     bad();"
    assert lines[4] == "   |     ^^^ here"


def test_caret_width_counts_characters_of_multibyte_spans() -> None:
    src = SourceFile("u.rs", 'let s = "é🙂"; é🙂;\n')
    span = span_of("é🙂", src, occurrence=2)
    underline = render(error(codes.UNSUPPORTED_SYNTAX, "m", span, "lbl")).splitlines()[4]
    # columns count characters: `let s = "é🙂"; ` is 14 characters (20 bytes) wide
    assert underline == "  | " + " " * 14 + "^^ lbl"


def test_empty_span_gets_one_caret() -> None:
    start = TEXT.index("z.store")
    diagnostic = error(codes.SYNTAX_ERROR, "expected `;`", Span(SRC, start, start), "here")
    assert render(diagnostic).splitlines()[4] == "  |     ^ here"


def test_label_without_message_has_no_trailing_space() -> None:
    diagnostic = error(codes.UNRESOLVED_NAME, "unknown", span_of("z"))
    assert render(diagnostic).splitlines()[4] == "  |     ^"


def test_secondary_labels_use_dashes_and_share_the_source_line() -> None:
    diagnostic = error(
        codes.MISMATCHED_TYPES,
        "mismatched types",
        span_of("y + 1.0"),
        "operands differ",
        secondary=((span_of("y"), "`Tile<f32, {[4]}>`"), (span_of("1.0"), "`f32`")),
    )
    lines = render(diagnostic).splitlines()
    assert lines.count("2 |     let x = y + 1.0;") == 1  # the line is printed once
    assert lines[3:7] == [
        "2 |     let x = y + 1.0;",
        "  |             ^^^^^^^ operands differ",
        "  |             - `Tile<f32, {[4]}>`",
        "  |                 --- `f32`",
    ]


def test_labels_on_different_lines_print_in_source_order() -> None:
    diagnostic = error(
        codes.MUTATE_SHARED,
        "cannot store",
        span_of("z.store"),
        "written here",
        secondary=((span_of("let x"), "declared here"),),
    )
    lines = render(diagnostic).splitlines()
    assert lines[1] == " --> src/k.rs:3:5"  # the arrow points at the primary span
    assert lines[3:7] == [
        "2 |     let x = y + 1.0;",
        "  |     ----- declared here",
        "3 |     z.store(x);",
        "  |     ^^^^^^^ written here",
    ]


def test_labels_in_another_file_follow_under_a_file_header() -> None:
    other = SourceFile("src/lib.rs", "fn g() {\n    bad();\n}\n")
    diagnostic = error(
        codes.UNRESOLVED_NAME,
        "cannot find function `bad`",
        span_of("z.store(x)"),
        "in this call",
        secondary=((span_of("bad()", other), "not found"),),
    )
    assert render(diagnostic).splitlines()[1:] == [
        " --> src/k.rs:3:5",
        "  |",
        "3 |     z.store(x);",
        "  |     ^^^^^^^^^^ in this call",
        " ::: src/lib.rs:2:5",
        "2 |     bad();",
        "  |     ----- not found",
        "  |",
    ]


def test_multi_line_span_is_underlined_to_the_end_of_its_first_line() -> None:
    start = TEXT.index("let x")
    end = TEXT.index("store")
    lines = render(error(codes.UNSUPPORTED_SYNTAX, "m", Span(SRC, start, end), "")).splitlines()
    assert lines[1] == " --> src/k.rs:2:5"
    assert lines[3] == "2 |     let x = y + 1.0;"
    assert lines[4] == "  |     " + "^" * len("let x = y + 1.0;")


def test_notes_then_help_after_the_excerpt() -> None:
    diagnostic = error(
        codes.MUTATE_SHARED,
        "cannot store through `x`",
        span_of("z"),
        "read-only",
        notes=("first note", "second note"),
        help=("declare it `&mut`",),
    )
    lines = render(diagnostic).splitlines()
    assert lines[-4:] == [
        "  |",
        "  = note: first note",
        "  = note: second note",
        "  = help: declare it `&mut`",
    ]


def test_diagnostic_without_span_has_no_arrow() -> None:
    diagnostic = error(
        codes.UNKNOWN_ENTRY, "no entry function named `g`", None, notes=("entries: `f`",)
    )
    text = render(diagnostic)
    assert text.splitlines()[0] == "error[CT0101]: no entry function named `g`"
    assert "-->" not in text
    assert text.splitlines()[-1].strip() == "= note: entries: `f`"


def test_warning_severity_header() -> None:
    text = render(warning(codes.LIMIT_EXCEEDED, "big", span_of("z"), "here"))
    assert text.startswith("warning[CT0005]: big\n")


def test_inlined_span_adds_a_call_site_note() -> None:
    call = span_of("z.store(x)")
    diagnostic = error(codes.MISMATCHED_TYPES, "m", span_of("y").inlined_at(call), "here")
    assert "  = note: inlined from the call at src/k.rs:3:5" in render(diagnostic).splitlines()


def test_render_all_separates_with_blank_lines_and_summarises_n_errors() -> None:
    first = error(codes.UNRESOLVED_NAME, "first", span_of("y"), "a")
    second = error(codes.UNKNOWN_METHOD, "second", span_of("store"), "b")
    text = render_all([first, second])
    assert (
        text == f"{render(first)}\n\n{render(second)}\n\nerror: aborting due to 2 previous errors"
    )


def test_render_all_summary_for_one_error_is_last() -> None:
    text = render_all([error(codes.UNRESOLVED_NAME, "only", span_of("y"), "a")])
    assert text.splitlines()[-1].startswith("error: aborting due to")
    assert text.count("aborting") == 1


def test_render_all_summary_for_one_error_uses_rustc_wording() -> None:
    text = render_all([error(codes.UNRESOLVED_NAME, "only", span_of("y"), "a")])
    assert text.splitlines()[-1] in (
        "error: aborting due to 1 previous error",
        "error: aborting due to previous error",
    )


def test_render_all_counts_only_errors() -> None:
    warn = warning(codes.LIMIT_EXCEEDED, "w", span_of("y"), "")
    assert "aborting" not in render_all([warn])
    text = render_all([warn, error(codes.UNRESOLVED_NAME, "e", span_of("y"), "")])
    assert "2 previous errors" not in text
    assert text.splitlines()[-1].startswith("error: aborting due to")
    assert render_all([]) == ""


def test_json_form_fields() -> None:
    src = SourceFile("j.rs", "// é\nlet v = 🙂 + w;\n")
    diagnostic = error(
        codes.MISMATCHED_TYPES,
        "mismatched types",
        span_of("w", src),
        "found `f32`",
        secondary=((span_of("🙂", src), "emoji"),),
        notes=("n",),
        help=("h",),
    )
    data = to_json(diagnostic)
    assert data["severity"] == "error"
    assert data["code"] == "E0308"
    assert data["code_name"] == "mismatched-types"
    assert data["message"] == "mismatched types"
    assert data["notes"] == ["n"] and data["help"] == ["h"]
    assert data["rendered"] == render(diagnostic)
    primary, secondary = data["spans"]
    w = src.data.index(b"w")
    assert primary == {
        "source_name": "j.rs",
        "byte_start": w,
        "byte_end": w + 1,
        "line_start": 2,
        "col_start": 13,
        "line_end": 2,
        "col_end": 14,
        "label": "found `f32`",
        "primary": True,
    }
    assert secondary["primary"] is False
    assert (secondary["line_start"], secondary["col_start"], secondary["col_end"]) == (2, 9, 10)
    assert secondary["byte_end"] - secondary["byte_start"] == 4


def test_json_of_spanless_diagnostic_has_no_spans() -> None:
    data = to_json(Diagnostic(Severity.ERROR, codes.NO_KERNEL_MODULE, "none", ()))
    assert data["spans"] == []
    assert data["rendered"] == "error[CT0003]: none"


def test_primary_span_falls_back_to_the_first_label() -> None:
    diagnostic = Diagnostic(
        Severity.ERROR,
        codes.MISMATCHED_TYPES,
        "m",
        (Label(span_of("z"), "first"), Label(span_of("y"), "second")),
    )
    assert render(diagnostic).splitlines()[1] == " --> src/k.rs:3:5"


# ----------------------------------------------------------------------------- caps


def test_a_long_line_is_shown_as_a_window_around_the_label() -> None:
    text = "let x = " + "a + " * 50_000 + "bad + " + "b + " * 50_000 + "1;\n"
    src = SourceFile("wide.rs", text)
    rendered = render(error(codes.UNRESOLVED_NAME, "unknown", span_of("bad", src), "here"))
    source_line, underline = rendered.splitlines()[3:5]
    shown = source_line.removeprefix("1 | ")
    assert shown.startswith("...") and shown.endswith("...")
    assert len(shown) == MAX_LINE_CHARS + 6
    caret = underline.index("^")
    assert source_line[caret : caret + 3] == "bad"
    assert underline.endswith("^^^ here")
    assert len(rendered) < 1000


def test_a_long_span_is_underlined_only_inside_the_window() -> None:
    text = "x" * 10_000 + "\n"
    src = SourceFile("w.rs", text)
    rendered = render(error(codes.SYNTAX_ERROR, "m", Span(src, 0, 10_000), "all of it"))
    underline = rendered.splitlines()[4]
    assert underline == "  | " + "^" * (MAX_LINE_CHARS + 3) + " all of it"


def test_labels_notes_and_text_are_capped_and_the_rest_counted() -> None:
    spans = [span_of(n) for n in ("let", "x", "y", "1.0", "z", "store")] * 3
    diagnostic = Diagnostic(
        Severity.ERROR,
        codes.MISMATCHED_TYPES,
        "m" * 50_000,
        (Label(span_of("y + 1.0"), "p" * 5000, True), *(Label(s, "s") for s in spans)),
        tuple(f"note {i}" for i in range(20)),
        tuple(f"help {i}" for i in range(9)),
    )
    rendered = render(diagnostic)
    assert rendered.splitlines()[0] == f"error[E0308]: {'m' * (MAX_TEXT_CHARS - 3)}..."
    assert rendered.count("= note: note") == MAX_NOTES
    assert rendered.count("= help: help") == MAX_NOTES
    assert "^" * 7 + " " + "p" * (MAX_TEXT_CHARS - 3) + "..." in rendered
    assert rendered.endswith(
        f"= note: {1 + len(spans) - MAX_LABELS} more labels not shown\n"
        f"  = note: {20 - MAX_NOTES} more notes not shown\n"
        f"  = note: 1 more help not shown"
    )
    as_json = to_json(diagnostic)
    assert len(as_json["spans"]) == MAX_LABELS  # type: ignore[arg-type]
    assert as_json["spans"][0]["primary"]  # type: ignore[index]
    assert len(as_json["notes"]) == MAX_NOTES  # type: ignore[arg-type]


def test_render_all_shows_a_bounded_number_of_diagnostics() -> None:
    many = [error(codes.UNRESOLVED_NAME, f"no {i}", span_of("y"), "") for i in range(150)]
    rendered = render_all(many)
    assert rendered.count("error[E0425]") == MAX_DIAGNOSTICS
    assert f"note: {150 - MAX_DIAGNOSTICS} more diagnostics not shown" in rendered
    assert rendered.endswith("error: aborting due to 150 previous errors")
