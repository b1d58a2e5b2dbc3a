"""SourceFile line/column arithmetic and Span helpers."""

from __future__ import annotations

import dataclasses

import pytest

from parser.spans import SourceFile, Span


def test_line_col_of_ascii_offsets_is_one_based() -> None:
    src = SourceFile("a.rs", "ab\ncd\n")
    assert [src.line_col(i) for i in range(7)] == [
        (1, 1),
        (1, 2),
        (1, 3),  # the newline itself: one past the last character
        (2, 1),
        (2, 2),
        (2, 3),
        (3, 1),  # end of file after the final newline
    ]


def test_columns_count_characters_not_bytes() -> None:
    text = "é🙂x = 1;\nlet ü = 2;"
    src = SourceFile("u.rs", text)
    x = text.encode().index(b"x")
    assert x == 6  # 2 bytes for é, 4 for the emoji
    assert src.line_col(x) == (1, 3)
    u = text.encode().index("ü".encode())
    two = text.encode().index(b"2")
    assert src.line_col(u) == (2, 5)
    assert src.line_col(two) == (2, 9)  # the 2-byte ü counts as one column


def test_crlf_line_endings() -> None:
    text = "a\r\nbc\r\n\r\nd"
    src = SourceFile("w.rs", text)
    data = text.encode()
    assert src.line_col(data.index(b"b")) == (2, 1)
    assert src.line_col(data.index(b"c")) == (2, 2)
    assert src.line_col(data.index(b"d")) == (4, 1)
    assert src.line_count == 4
    assert [src.line_text(n) for n in range(1, 5)] == ["a", "bc", "", "d"]


def test_line_text_without_newline_and_last_line() -> None:
    src = SourceFile("t.rs", "first\n\n  third é\nlast")
    assert src.line_text(1) == "first"
    assert src.line_text(2) == ""
    assert src.line_text(3) == "  third é"
    assert src.line_text(4) == "last"
    assert src.line_count == 4


def test_trailing_newline_gives_an_empty_last_line() -> None:
    src = SourceFile("t.rs", "x\n")
    assert src.line_count == 2
    assert src.line_text(2) == ""


def test_offsets_outside_the_file_are_clamped() -> None:
    src = SourceFile("c.rs", "ab\ncd")
    assert src.line_col(-5) == (1, 1)
    assert src.line_col(10_000) == (2, 3)


def test_empty_file() -> None:
    src = SourceFile("e.rs", "")
    assert src.line_count == 1
    assert src.line_col(0) == (1, 1)
    assert src.line_text(1) == ""


def test_span_location_text_and_end() -> None:
    text = "fn é() {\n    let value = 1;\n}\n"
    src = SourceFile("dir/k.rs", text)
    start = text.encode().index(b"value")
    span = Span(src, start, start + len("value"))
    assert span.text == "value"
    assert span.file_name == "dir/k.rs"
    assert span.location() == "dir/k.rs:2:9"
    assert span.start_line_col == (2, 9)
    assert span.end_line_col == (2, 14)


def test_span_location_after_multibyte_chars() -> None:
    text = 'let s = "ünï"; let y = 2;'
    src = SourceFile("m.rs", text)
    start = text.encode().index(b"y")
    assert Span(src, start, start + 1).location() == "m.rs:1:20"


def test_span_text_of_multibyte_range() -> None:
    text = "a🙂b"
    src = SourceFile("m.rs", text)
    span = Span(src, 1, 5)
    assert span.text == "🙂"
    assert span.end_line_col == (1, 3)


@pytest.mark.parametrize(("a", "b"), [((2, 4), (7, 9)), ((7, 9), (2, 4)), ((2, 9), (4, 5))])
def test_to_covers_both_spans_in_either_order(a: tuple[int, int], b: tuple[int, int]) -> None:
    src = SourceFile("s.rs", "0123456789")
    first, second = Span(src, *a), Span(src, *b)
    covered = first.to(second)
    assert (covered.start, covered.end) == (min(a[0], b[0]), max(a[1], b[1]))
    assert covered.file is src


def test_span_across_lines() -> None:
    text = "one\ntwo\nthree"
    src = SourceFile("s.rs", text)
    span = Span(src, text.index("two"), text.index("three") + 2)
    assert span.start_line_col == (2, 1)
    assert span.end_line_col == (3, 3)
    assert span.text == "two\nth"


def test_inlined_at_keeps_range_and_records_call_site() -> None:
    src = SourceFile("s.rs", "fn a() {}\nfn b() { a() }")
    body = Span(src, 0, 9)
    call = Span(src, 19, 22)
    inlined = body.inlined_at(call)
    assert (inlined.start, inlined.end) == (0, 9)
    assert inlined.call_site is call
    assert body.call_site is None


def test_spans_and_source_files_are_immutable() -> None:
    src = SourceFile("s.rs", "x")
    span = Span(src, 0, 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        span.start = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        src.text = "y"  # type: ignore[misc]
