"""Two builds of the compatibility bundle against each other, from repeated GPU runs.

    python -m tests.compat.compare_runs --base A1.json A2.json .. --other B1.json B2.json ..
    python -m tests.compat.compare_runs --strip-occupancy-variants BUNDLE OUT

`tests.compat.gpu_check` times one entry for a few microseconds at a time, so a single run
moves small kernels by 10-40%; run the two bundles in turn a few times on one machine and
compare medians. Per entry launched in every run, `--base`/`--other` prints the median time
of each, their ratio (base / other: above 1, the other build is faster), the spread of each
side (slowest / fastest run) and whether the other build ran another cubin; entries that
moved by `--threshold` (5%) or ran another cubin are listed, then those runs' tuned-tiles
controls. `--strip-occupancy-variants` writes BUNDLE without its occupancy variants (manifest
records with `min_tile_blocks`, files hard-linked): the same build with the variant off, what
the occupancy variant was measured against (BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Moved:
    key: str
    tile_blocks: int
    base_us: float
    other_us: float
    base_spread: float
    other_spread: float
    other_cubin: bool  # the other build launched another cubin

    @property
    def ratio(self) -> float:
        return self.base_us / self.other_us


def strip_occupancy_variants(bundle: Path, out: Path) -> int:
    """`bundle` without its occupancy variants at `out`; how many records were left out."""
    manifest = json.loads((bundle / MANIFEST).read_text(encoding="utf-8"))
    kept = [k for k in manifest["kernels"] if not k.get("min_tile_blocks")]
    out.mkdir(parents=True, exist_ok=True)
    for path in bundle.iterdir():
        if path.name != MANIFEST and path.is_file():
            target = out / path.name
            target.unlink(missing_ok=True)
            try:
                os.link(path, target)
            except OSError:  # another file system
                shutil.copyfile(path, target)
    (out / MANIFEST).write_text(json.dumps({**manifest, "kernels": kept}, indent=2) + "\n")
    return len(manifest["kernels"]) - len(kept)


def compare(
    base: Sequence[dict], other: Sequence[dict], threshold: float, tuned: bool = False
) -> list[Moved]:
    """The entries (or with `tuned`, their tuned-tiles controls) launched and timed in every
    run of both sides that moved by `threshold` or ran another cubin, fastest gain first."""
    rows = []
    for key in base[0].get("cases", {}):
        sides = [_measured(runs, key, tuned) for runs in (base, other)]
        if any(not times for times, _, _ in sides):
            continue
        (base_times, base_cubins, grid), (other_times, other_cubins, _) = sides
        row = Moved(
            key,
            grid[0] * grid[1] * grid[2],
            statistics.median(base_times) * 1e6,
            statistics.median(other_times) * 1e6,
            max(base_times) / min(base_times),
            max(other_times) / min(other_times),
            base_cubins != other_cubins,
        )
        if row.other_cubin or abs(row.ratio - 1) >= threshold:
            rows.append(row)
    return sorted(rows, key=lambda r: r.ratio, reverse=True)


def _measured(runs: Sequence[dict], key: str, tuned: bool) -> tuple[list[float], set[str], list]:
    """Our times of `key` in every run (empty unless timed in all), its cubins and grid."""
    cases = [run.get("cases", {}).get(key, {}) for run in runs]
    if tuned:
        cases = [case.get("tuned") or {} for case in cases]
    times = [case.get("ours_s") for case in cases]
    if not all(isinstance(t, float) and t > 0 for t in times):
        return [], set(), []
    return times, {case.get("cubin_sha256", "") for case in cases}, cases[0].get("grid") or [0]


def _print(rows: list[Moved]) -> None:
    for r in rows:
        cubin = "another cubin" if r.other_cubin else "same cubin"
        print(
            f"{r.ratio:5.2f}  {r.base_us:9.1f} -> {r.other_us:9.1f} us  spread "
            f"{r.base_spread:.2f}/{r.other_spread:.2f}  {r.tile_blocks:>9,} blocks  {cubin}  "
            f"{r.key}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", nargs="+", type=Path)
    parser.add_argument("--other", nargs="+", type=Path)
    parser.add_argument("--threshold", type=float, default=0.05)
    parser.add_argument("--strip-occupancy-variants", nargs=2, type=Path, metavar=("BUNDLE", "OUT"))
    args = parser.parse_args(argv)
    if args.strip_occupancy_variants:
        bundle, out = args.strip_occupancy_variants
        print(f"{strip_occupancy_variants(bundle, out)} occupancy variants left out in {out}")
        return 0
    if not args.base or not args.other:
        parser.error("give --base RUN.. and --other RUN.., or --strip-occupancy-variants")
    base, other = (
        [json.loads(p.read_text(encoding="utf-8")) for p in paths]
        for paths in (args.base, args.other)
    )
    _print(compare(base, other, args.threshold))
    print("tuned-tiles controls:")
    _print(compare(base, other, args.threshold, tuned=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
