"""`tests.compat.compare_runs`: medians of repeated GPU runs of two bundles, the entries that
moved or ran another cubin, and a bundle without its occupancy variants."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.compat.compare_runs import compare, main, strip_occupancy_variants


def _run(times: dict[str, float], cubins: dict[str, str] | None = None) -> dict:
    cases = {}
    for key, seconds in times.items():
        cases[key] = {
            "ours_s": seconds,
            "grid": [2048, 2, 1],
            "cubin_sha256": (cubins or {}).get(key, "same"),
            "tuned": {"ours_s": seconds / 2, "grid": [4, 1, 1]},
        }
    return {"cases": cases}


def test_medians_decide_and_another_cubin_is_always_listed() -> None:
    base = [_run({"a": 4e-6, "b": 10e-6, "c": 5e-6}), _run({"a": 4e-6, "b": 30e-6, "c": 5e-6})]
    base.append(_run({"a": 9e-6, "b": 10e-6, "c": 5e-6}))  # a's outlier does not decide
    other = [_run({"a": 2e-6, "b": 10e-6, "c": 5e-6}, {"c": "occ"}) for _ in range(3)]
    rows = compare(base, other, 0.05)
    assert [(r.key, round(r.ratio, 2), r.other_cubin) for r in rows] == [
        ("a", 2.0, False),
        ("c", 1.0, True),  # the same speed, but the other build ran another cubin
    ]
    assert rows[0].tile_blocks == 4096 and rows[0].base_spread == pytest.approx(9 / 4)
    tuned = compare(base, other, 0.05, tuned=True)
    assert [(r.key, r.tile_blocks) for r in tuned] == [("a", 4)]  # c: the same tuned cubin


def test_an_entry_not_timed_in_every_run_is_left_out() -> None:
    base = [_run({"a": 4e-6}), {"cases": {"a": {"grid": [1, 1, 1]}}}]
    other = [_run({"a": 1e-6}), _run({"a": 1e-6})]
    assert compare(base, other, 0.05) == []


def test_stripping_leaves_out_the_occupancy_records_and_links_the_files(tmp_path: Path) -> None:
    bundle, out = tmp_path / "b", tmp_path / "out"
    bundle.mkdir()
    (bundle / "k.cubin").write_bytes(b"cubin")
    kernels = [{"function": "f"}, {"function": "f", "min_tile_blocks": 1024}]
    (bundle / "manifest.json").write_text(json.dumps({"schema": 1, "kernels": kernels}))
    assert strip_occupancy_variants(bundle, out) == 1
    assert json.loads((out / "manifest.json").read_text())["kernels"] == [{"function": "f"}]
    assert (out / "k.cubin").read_bytes() == b"cubin"
    assert (bundle / "manifest.json").read_text() != (out / "manifest.json").read_text()


def test_the_command_prints_both_tables(tmp_path: Path, capsys) -> None:
    paths = []
    for name, run in (("a.json", _run({"a": 4e-6})), ("b.json", _run({"a": 2e-6}))):
        (tmp_path / name).write_text(json.dumps(run))
        paths.append(str(tmp_path / name))
    assert main(["--base", paths[0], "--other", paths[1]]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:4] == ["2.00", "4.0", "->", "2.0"] and out[0].endswith(" a")
    assert out[1] == "tuned-tiles controls:" and out[2].split()[0] == "2.00"
