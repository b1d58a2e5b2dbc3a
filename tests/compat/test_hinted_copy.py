"""tests/compat/hinted_copy.py: the occupancy experiment's copy and its comparison."""

from __future__ import annotations

from pathlib import Path

from tests.compat.hinted_copy import add_hint, hinted_copy

FIXTURE = Path(__file__).parent / "fixture" / "checkout"
HINT = "optimization_hints = (sm_90 = (occupancy = 4))"


def test_only_entries_without_hints_get_one() -> None:
    text = (
        "#[cutile::entry()]\nfn a() {}\n"
        "#[cutile::entry(print_ir = true)]\nfn b() {}\n"
        "#[cutile::entry(print_ir=false,\n    unchecked_accesses=false,\n)]\nfn c() {}\n"
        "#[cutile::entry(optimization_hints = (sm_120 = (occupancy = 1,),))]\nfn d() {}\n"
    )
    hinted, count = add_hint(text, 4)
    assert count == 3
    assert f"#[cutile::entry({HINT})]\nfn a" in hinted
    assert f"#[cutile::entry(print_ir = true, {HINT})]\nfn b" in hinted
    assert f"unchecked_accesses=false, {HINT})]\nfn c" in hinted
    assert "#[cutile::entry(optimization_hints = (sm_120 = (occupancy = 1,),))]\nfn d" in hinted


def test_the_copy_holds_the_launched_tiers_hinted(tmp_path: Path) -> None:
    assert hinted_copy(FIXTURE, tmp_path, 2) == 1  # add.rs's entry; its comment is no entry
    text = (tmp_path / "cutile-examples/examples/add.rs").read_text()
    assert "occupancy = 2" in text and "// #[cutile::entry()] a commented-out" in text
    assert not (tmp_path / "cutile").exists()  # cutile/tests is compiled, never launched
    source = (FIXTURE / "cutile-examples/examples/add.rs").read_text()
    assert "occupancy" not in source  # the checkout is left as it was
