"""The hand-read tables: what cutile-rs's own host code and tests do with each entry.

`cutile_rs_entries.json` (examples and kernels) holds the generics each entry's host code
launches it with; `cutile_rs_tests.json` (cutile/tests) adds the verdict cutile-rs's test
expects (`compile` or `reject`, with the substance its assertion checks), and where our
verdict deliberately differs, why (`difference`, with the evidence). Keys are
`path::function` or `path::module::function`; a `#N` suffix marks one of several cases of
one entry (generic sets with different verdicts).

`tuned_tiles.json` is ours, not cutile-rs's: for entries far from torch, the generics that
only choose tiles set to sizes a GPU likes (the problem and the source unchanged). Launched
next to the host code's generics, it tells a slow tile choice from a slow compiler.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from tests.compat.discover import EntrySite

HERE = Path(__file__).parent
TABLES = ("cutile_rs_entries.json", "cutile_rs_tests.json")
TUNED = "tuned_tiles.json"


@dataclass(frozen=True)
class Case:
    """One compile of one entry, with what cutile-rs expects of it."""

    site: EntrySite
    generics: tuple[tuple[str, str], ...]
    arch: str
    verdict: str  # "compile", "reject" or "unused" (no test of cutile-rs compiles it)
    substance: str = ""  # for a reject: what cutile-rs's test asserts of the error
    label: str = ""  # "#2" when the entry has several cases
    grid: tuple[int, ...] | None = field(default=None, compare=False)
    difference: str = field(default="", compare=False)  # why we deliberately differ
    control: bool = False  # the tuned-tiles control of an entry, not one of cutile-rs's cases

    @property
    def key(self) -> str:
        return self.site.key + self.label


@dataclass(frozen=True)
class Row:
    path: str
    module: str | None
    function: str
    label: str
    data: dict[str, object]


def load_rows(folder: Path = HERE) -> list[Row]:
    rows = []
    for name in TABLES:
        path = folder / name
        if path.is_file():
            rows.extend(_row(key, value) for key, value in _read(path).items())
    return rows


def load_tuned(folder: Path = HERE) -> dict[str, dict[str, str]]:
    """`path::function` -> the generics the control run replaces (name -> value)."""
    path = folder / TUNED
    if not path.is_file():
        return {}
    table = _read(path)
    return {
        key: {str(k): str(v) for k, v in value.get("generics", {}).items()}  # type: ignore[union-attr]
        for key, value in table.items()
    }


def tuned_case(case: Case, tuned: dict[str, dict[str, str]]) -> Case | None:
    """`case` at its tuned generics (the control of the report's far-from-torch section)."""
    override = tuned.get(case.key) or tuned.get(f"{case.site.path}::{case.site.function}")
    if override is None or case.control:
        return None
    generics = tuple((name, override.get(name, value)) for name, value in case.generics)
    return Case(
        case.site, generics, case.arch, case.verdict, label=case.label + "@tuned", control=True
    )


def _read(path: Path) -> dict[str, dict[str, object]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return data


def _row(key: str, value: dict[str, object]) -> Row:
    base, _, number = key.partition("#")
    parts = base.split("::")
    if len(parts) == 2:
        return Row(parts[0], None, parts[1], f"#{number}" if number else "", value)
    if len(parts) == 3:
        return Row(parts[0], parts[1], parts[2], f"#{number}" if number else "", value)
    raise ValueError(f"malformed table key {key!r}")


def cases_for(site: EntrySite, rows: list[Row]) -> list[Case]:
    """The cases the tables hold for `site`; one default case when they hold none."""
    matching = [
        r
        for r in rows
        if r.path == site.path and r.function == site.function and r.module in (None, site.module)
    ]
    if not matching:
        return [Case(site, (), "sm_90", "compile" if site.tier != "tests" else "unknown")]
    return [_case(site, row) for row in matching]


def _case(site: EntrySite, row: Row) -> Case:
    data = row.data
    generics = data.get("generics") or {}
    assert isinstance(generics, dict)
    default_verdict = "compile" if site.tier != "tests" else "unknown"
    grid = data.get("grid")
    return Case(
        site,
        tuple((str(k), str(v)) for k, v in generics.items()),
        str(data.get("arch") or "sm_90"),
        str(data.get("verdict") or default_verdict),
        str(data.get("substance") or ""),
        row.label,
        tuple(int(g) for g in grid) if isinstance(grid, list) else None,
        str(data.get("difference") or ""),
    )
