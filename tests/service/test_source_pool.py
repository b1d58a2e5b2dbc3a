"""service.source_pool: the same SourceFile for the same name and text, bounded."""

from __future__ import annotations

from service.source_pool import SourcePool


def test_same_name_and_text_give_the_same_object() -> None:
    pool = SourcePool()
    first = pool.get("a.rs", "fn f() {}\n")
    assert pool.get("a.rs", "fn f() {}\n") is first
    assert pool.get("b.rs", "fn f() {}\n") is not first
    assert pool.get("a.rs", "fn g() {}\n") is not first
    assert first.name == "a.rs" and first.text == "fn f() {}\n"


def test_the_pool_is_bounded_by_bytes() -> None:
    pool = SourcePool(max_bytes=25)
    a = pool.get("a.rs", "x" * 10)
    pool.get("b.rs", "y" * 10)
    pool.get("c.rs", "z" * 10)  # a (least recently used) goes
    assert len(pool) == 2
    assert pool.get("a.rs", "x" * 10) is not a
    big = pool.get("big.rs", "w" * 26)
    assert pool.get("big.rs", "w" * 26) is not big  # never pooled
