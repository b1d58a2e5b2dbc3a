"""service.server.source_pool: the same SourceFile for the same name and text, bounded."""

from __future__ import annotations

from service.server.source_pool import ENTRY_OVERHEAD_BYTES, SourcePool


def test_same_name_and_text_give_the_same_object() -> None:
    pool = SourcePool()
    first = pool.get("a.rs", "fn f() {}\n")
    assert pool.get("a.rs", "fn f() {}\n") is first
    assert pool.get("b.rs", "fn f() {}\n") is not first
    assert pool.get("a.rs", "fn g() {}\n") is not first
    assert first.name == "a.rs" and first.text == "fn f() {}\n"


def test_the_pool_is_bounded_by_what_its_files_hold() -> None:
    # a 10-character ASCII file named "a.rs" counts 38: name twice, text, bytes, lines
    each = 38 + ENTRY_OVERHEAD_BYTES
    pool = SourcePool(max_bytes=2 * each + 15)
    a = pool.get("a.rs", "x" * 10)
    pool.get("b.rs", "y" * 10)
    assert pool.bytes == 2 * each
    pool.get("c.rs", "z" * 10)  # a (least recently used) goes
    assert len(pool) == 2 and pool.bytes == 2 * each
    assert pool.get("a.rs", "x" * 10) is not a
    big = pool.get("big.rs", "w" * 600)
    assert pool.get("big.rs", "w" * 600) is not big  # never pooled


def test_empty_sources_under_new_names_are_not_free() -> None:
    pool = SourcePool(max_bytes=100 * ENTRY_OVERHEAD_BYTES)
    for n in range(10_000):  # a hostile client's distinct empty files
        pool.get(f"f{n}.rs", "")
    assert len(pool) < 100 and pool.bytes <= pool.max_bytes


def test_a_large_source_costs_no_line_table_until_a_diagnostic_needs_it() -> None:
    source = SourcePool().get("a.rs", "// comment\n" * 100_000)
    assert "_line_starts" not in vars(source)
    assert source.line_col(len(source.data) - 1) == (100_000, 11)
    assert len(source._line_starts) == 100_001
