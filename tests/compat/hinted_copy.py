"""A copy of a cutile-rs checkout whose unhinted entries carry an occupancy hint: the
occupancy experiment of BENCHMARKS.md, repeatable.

    python -m tests.compat.hinted_copy --cutile-rs PATH OUT [--occupancy 4]
    python -m tests.compat.runner --cutile-rs OUT --bundle gpu_artifacts/compat-occ4 \\
        --only cutile- -o /tmp/occ4.md            # then tests.compat.gpu_check on both bundles
    python -m tests.compat.compare_runs --base BASE.json .. --other HINTED.json ..

Only cutile-examples/examples and cutile-kernels/src are copied (the entries the GPU check
launches). Every `#[cutile::entry(...)]` attribute that names no `optimization_hints` gets
`optimization_hints = (sm_90 = (occupancy = K))`; the rest of each file is left as it was.
`tests.compat.compare_runs` compares the two bundles' GPU runs.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

COPIED = ("cutile-examples/examples", "cutile-kernels/src")
# an attribute that begins its line (so not one in a `//` comment), up to its first ")]"
_ENTRY = re.compile(r"^(?P<indent>[ \t]*)#\[cutile::entry\((?P<args>[^\]]*?)\)\]", re.S | re.M)


def add_hint(text: str, occupancy: int) -> tuple[str, int]:
    """`text` with the hint added to every entry attribute without hints; how many."""
    hint = f"optimization_hints = (sm_90 = (occupancy = {occupancy}))"
    count = 0

    def hinted(match: re.Match[str]) -> str:
        nonlocal count
        args = match.group("args")
        if "optimization_hints" in args:
            return match.group(0)
        count += 1
        kept = args.strip().rstrip(",")
        return f"{match.group('indent')}#[cutile::entry({kept + ', ' if kept else ''}{hint})]"

    return _ENTRY.sub(hinted, text), count


def hinted_copy(checkout: Path, out: Path, occupancy: int) -> int:
    """Copy the launched tiers of `checkout` into `out` with hints; the entries hinted."""
    total = 0
    for tier in COPIED:
        if not (checkout / tier).is_dir():
            continue
        shutil.copytree(checkout / tier, out / tier, dirs_exist_ok=True)
        for path in sorted((out / tier).rglob("*.rs")):
            text, count = add_hint(path.read_text(encoding="utf-8"), occupancy)
            path.write_text(text, encoding="utf-8")
            total += count
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cutile-rs", type=Path, required=True)
    parser.add_argument("out", type=Path)
    parser.add_argument("--occupancy", type=int, default=4, choices=range(1, 33))
    args = parser.parse_args(argv)
    count = hinted_copy(args.cutile_rs, args.out, args.occupancy)
    print(f"{count} entries hinted with occupancy = {args.occupancy} in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
