"""COMPATIBILITY.md: one table per tier, each entry compiled or its first diagnostic."""

from __future__ import annotations

import datetime
import json
from collections.abc import Sequence
from pathlib import Path

from tests.compat.discover import TIERS
from tests.compat.far_from_torch import section as far_from_torch
from tests.compat.result import Result

TIER_TITLES = {
    "examples": "cutile-examples/examples",
    "kernels": "cutile-kernels/src",
    "tests": "cutile/tests (the verdicts cutile-rs's own tests expect)",
}


def write_report(
    path: Path,
    results: Sequence[Result],
    *,
    revision: str,
    gpu_results: Path | None = None,
) -> None:
    gpu = _gpu_results(gpu_results)
    controls = [r for r in results if r.case.control]
    results = [r for r in results if not r.case.control]
    lines = [
        "# Compatibility with cuTile Rust",
        "",
        f"Every `#[cutile::entry]` of NVlabs/cutile-rs at `{revision}`, compiled unchanged to a",
        "cubin for the target its host code uses, with the generics that host code launches it",
        "with (`tests/compat/cutile_rs_*.json`, read by hand). Regenerate with",
        "`python -m tests.compat.runner --cutile-rs PATH` (see `tests/compat/runner.py`).",
        f"Written {datetime.date.today().isoformat()}.",
        "",
        "| tier | entries | as cutile-rs expects |",
        "|---|---:|---:|",
    ]
    for tier, _ in TIERS:
        of_tier = [r for r in results if r.case.site.tier == tier]
        if of_tier:
            agreed = sum(r.agrees for r in of_tier)
            lines.append(f"| {TIER_TITLES[tier]} | {len(of_tier)} | {agreed} |")
    if gpu_results is not None:
        lines += [
            "",
            f"GPU columns (launched, max error, verdict, time vs torch, the far-from-torch "
            f"section): `tests.compat.gpu_check` on {_gpu_device(gpu_results)}, "
            f"`{gpu_results.name}`.",
        ]
    differing = [r for r in results if not r.agrees]
    if differing:
        lines += ["", "## Where we differ", "", *_differences(differing)]
    slow = far_from_torch([*results, *controls], gpu)
    if slow:
        lines += ["", *slow]
    for tier, _ in TIERS:
        of_tier = [r for r in results if r.case.site.tier == tier]
        if of_tier:
            lines += ["", f"## {TIER_TITLES[tier]}", "", *_table(tier, of_tier, gpu)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _table(tier: str, results: Sequence[Result], gpu: dict[str, dict[str, object]]) -> list[str]:
    with_gpu = tier != "tests" and bool(gpu)
    head = "| file | entry | generics | arch | expected | result |"
    rule = "|---|---|---|---|---|---|"
    if with_gpu:
        head += " launched | max error | verdict | time vs torch |"
        rule += "---|---:|---|---:|"
    rows = [head, rule]
    for result in results:
        case = result.case
        generics = ", ".join(f"{k}={v}" for k, v in case.generics) or "-"
        outcome = "compiled" if result.compiled else result.first_error()
        mark = "" if result.agrees else " **(differs)**"
        expected = case.verdict
        if case.verdict == "reject" and case.substance:
            expected += f": {_cell(case.substance, 80)}"
        row = (
            f"| {case.site.path.rsplit('/', 1)[-1]} | `{case.site.module}::{case.site.function}`"
            f"{case.label} | {_cell(generics, 60)} | {case.arch} | {expected} |"
            f" {outcome}{mark} |"
        )
        if with_gpu:
            short = f"{case.site.path}::{case.site.function}"
            row += _gpu_cells(gpu.get(case.key) or gpu.get(short))
        rows.append(row)
    return rows


def _differences(results: Sequence[Result]) -> list[str]:
    """One item per entry whose verdict differs from cutile-rs's: why (the table's
    `difference`), or that it is not yet explained."""
    items = []
    for result in results:
        case = result.case
        why = case.difference or "not yet explained."
        items.append(f"- `{case.site.path}` `{case.site.function}`{case.label}: {why}")
    return items


def _gpu_cells(found: dict[str, object] | None) -> str:
    if found is None:
        return " - | - | not run | - |"
    ratio = found.get("speed_vs_torch")
    speed = f"{ratio:.2f}x" if isinstance(ratio, (int, float)) else "-"
    error = found.get("max_error")
    err = f"{error:.2e}" if isinstance(error, (int, float)) else "-"
    launched = "yes" if found.get("launched") else "no"
    return f" {launched} | {err} | {found.get('verdict', '-')} | {speed} |"


def _cell(text: str, limit: int) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _gpu_device(path: Path) -> str:
    data = json.loads(path.read_text(encoding="utf-8"))
    device = data.get("device") if isinstance(data, dict) else None
    return str(device) if device else "an unnamed device"


def _gpu_results(path: Path | None) -> dict[str, dict[str, object]]:
    if path is None:
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return data.get("cases", {}) if isinstance(data, dict) else {}
