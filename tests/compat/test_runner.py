"""The compatibility runner on a tiny fixture checkout (tests/compat/fixture); the real run
needs a cutile-rs checkout (`CUTILE_RS`) and is skipped without one."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.compat.discover import EntrySite, find_entries
from tests.compat.runner import main
from tests.compat.table import Case, cases_for, load_rows

FIXTURE = Path(__file__).parent / "fixture"
CHECKOUT = FIXTURE / "checkout"


def test_discovery_finds_entries_by_tier_and_skips_commented_ones() -> None:
    assert [(s.tier, s.path, s.module, s.function) for s in find_entries(CHECKOUT)] == [
        ("examples", "cutile-examples/examples/add.rs", "adder", "add"),
        ("tests", "cutile/tests/verdicts.rs", "probes", "writes_through_shared"),
        ("tests", "cutile/tests/verdicts.rs", "probes", "copies"),
    ]


def test_tables_give_each_entry_its_generics_and_verdict() -> None:
    rows = load_rows(FIXTURE / "tables")
    add, shared, _ = find_entries(CHECKOUT)
    assert cases_for(add, rows) == [Case(add, (("S", "[128]"),), "sm_90", "compile")]
    (case,) = cases_for(shared, rows)
    assert (case.verdict, case.substance) == ("reject", "cannot borrow as mutable")
    assert case.difference == ""
    stray = EntrySite("tests", "cutile/tests/other.rs", "m", "k", 1)
    assert cases_for(stray, rows) == [Case(stray, (), "sm_90", "unknown")]


def test_the_report_lists_every_entry_with_its_outcome(tmp_path: Path, tileiras) -> None:
    out = tmp_path / "COMPATIBILITY.md"
    bundle = tmp_path / "bundle"
    gpu = tmp_path / "gpu.json"
    measured = {"launched": True, "verdict": "pass", "speed_vs_torch": 0.5, "grid": [80, 1, 1]}
    tuned = {"launched": True, "verdict": "pass", "speed_vs_torch": 1.02, "grid": [10, 1, 1]}
    key = "cutile-examples/examples/add.rs::add"
    gpu.write_text(json.dumps({"device": "test", "cases": {key: {**measured, "tuned": tuned}}}))
    argv = [
        "--cutile-rs",
        str(CHECKOUT),
        "--tables",
        str(FIXTURE / "tables"),
        "-o",
        str(out),
        "-j",
        "1",
        "--no-cache",
        "--bundle",
        str(bundle),
        "--gpu-results",
        str(gpu),
    ]
    assert main(argv) == 0
    text = out.read_text()
    assert "| cutile-examples/examples | 1 | 1 |" in text
    assert "| cutile/tests (the verdicts cutile-rs's own tests expect) | 2 | 1 |" in text
    assert "| add.rs | `adder::add` | S=[128] | sm_90 | compile | compiled |" in text
    assert "`tests.compat.gpu_check` on test, `gpu.json`." in text  # whose timings they are
    # the tuned control is compiled and reported in the far-from-torch section only
    assert "S=[1024]" not in text.split("## Far from torch")[0]
    slow = next(line for line in text.splitlines() if line.startswith("| `add.rs` `add`"))
    assert "| 0.50x | [128] f32 (512 B) | 80 |" in slow
    assert "| S=[1024] | 1.02x |" in slow
    assert "runs at 1.02x torch: the host code's tile choice, not the compiler" in slow
    shared = next(line for line in text.splitlines() if "writes_through_shared" in line)
    assert "`error[E0596]`" in shared and "(cutile/tests/verdicts.rs:7:" in shared
    assert "**(differs)**" not in shared
    copies = next(line for line in text.splitlines() if "`probes::copies`" in line)
    assert copies.endswith("compiled **(differs)** |")
    # each difference is listed with the table's explanation, before the tables
    differ = text.index("## Where we differ")
    assert differ < text.index("## cutile-examples/examples")
    assert "- `cutile/tests/verdicts.rs` `copies`: the fixture says so." in text[differ:]
    manifest = json.loads((bundle / "manifest.json").read_text())
    adds = sorted({k["generics"]["S"] for k in manifest["kernels"] if k["function"] == "add"})
    assert adds == ["[1024]", "[128]"]


@pytest.mark.skipif("CUTILE_RS" not in os.environ, reason="needs a cutile-rs checkout")
def test_every_cutile_rs_entry_has_a_table_row() -> None:
    root = Path(os.environ["CUTILE_RS"])
    rows = load_rows()
    missing = [s.key for s in find_entries(root) if cases_for(s, rows)[0].verdict == "unknown"]
    assert missing == []
