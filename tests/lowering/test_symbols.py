"""Kernel symbol names are PTX identifiers, distinct per specialization."""

from __future__ import annotations

import re

from lowering.symbols import entry_symbol

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def test_symbols_are_identifiers_and_differ_per_specialization() -> None:
    names = {
        entry_symbol(("kernel",), "add", "B=128"),
        entry_symbol(("kernel",), "add", "B=256"),
        entry_symbol(("other",), "add", "B=128"),
        entry_symbol(("kernel",), "add", "E=f16,B=128"),
    }
    assert len(names) == 4
    assert all(IDENT.match(n) for n in names)


def test_symbols_are_stable_and_sanitized() -> None:
    assert entry_symbol(("k",), "add", "B=1") == entry_symbol(("k",), "add", "B=1")
    assert entry_symbol(("k",), "add", "B=1").startswith("add_")
    assert IDENT.match(entry_symbol(("k",), "9ünïcode", ""))
