"""service.parse_limit: sources must parse within the limit."""

from __future__ import annotations

import pytest

from parser.spans import SourceFile
from service.parse_limit import ParseTooSlow, check_parse_time

SMALL = SourceFile("a.rs", "fn f() { let x = 1; }\n")
LARGE = SourceFile("b.rs", "fn f() { let x = (1 + 2) * 3; }\n" * 40_000)


def test_small_sources_pass() -> None:
    check_parse_time([SMALL, SMALL], 2000)


def test_a_slow_source_is_named() -> None:
    with pytest.raises(ParseTooSlow) as caught:
        check_parse_time([SMALL, LARGE], 1)
    assert caught.value.index == 1
    assert caught.value.limit_ms == 1
    assert "1 ms" in str(caught.value)


def test_deeply_nested_source_parses_within_the_default() -> None:
    nested = SourceFile("n.rs", "fn f() { let x = " + "(" * 10_000 + "1" + ")" * 10_000 + "; }")
    check_parse_time([nested], 2000)
