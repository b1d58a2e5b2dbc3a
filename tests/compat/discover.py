"""Find every `#[cutile::entry]` function of a cutile-rs checkout, by tier.

Discovery reads the text, not our front end: an entry in a file our parser rejects must
still be listed (as a failure), so it cannot depend on the parser it measures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# (tier, glob under the checkout root); the tiers of COMPATIBILITY.md, in its order
TIERS: tuple[tuple[str, str], ...] = (
    ("examples", "cutile-examples/examples/*.rs"),
    ("kernels", "cutile-kernels/src/**/*.rs"),
    ("tests", "cutile/tests/**/*.rs"),
)

_MODULE = re.compile(
    r"#\[cutile::module[^\]]*\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)"
)
_ENTRY = re.compile(r"#\[cutile::entry\b")
_FN = re.compile(r"\bfn\s+([A-Za-z_]\w*)")
_LINE_COMMENT = re.compile(r"//[^\n]*")


@dataclass(frozen=True)
class EntrySite:
    """One entry function as it stands in the checkout."""

    tier: str
    path: str  # relative to the checkout root, with `/`
    module: str
    function: str
    line: int

    @property
    def key(self) -> str:
        """The key of the hand-read tables: `path::module::function`."""
        return f"{self.path}::{self.module}::{self.function}"


def find_entries(root: Path) -> list[EntrySite]:
    """Every entry under `root`'s tiers, in tier, path and line order."""
    sites: list[EntrySite] = []
    for tier, pattern in TIERS:
        for path in sorted(root.glob(pattern)):
            relative = path.relative_to(root).as_posix()
            sites.extend(_entries_in(tier, relative, path.read_text(encoding="utf-8")))
    return sites


def _entries_in(tier: str, path: str, text: str) -> list[EntrySite]:
    # blank out line comments (keeping offsets) so commented-out kernels do not count
    code = _LINE_COMMENT.sub(lambda m: " " * len(m.group()), text)
    modules = [(m.start(), m.group(1)) for m in _MODULE.finditer(code)]
    sites = []
    for found in _ENTRY.finditer(code):
        name = _FN.search(code, found.end())
        owner = [module for start, module in modules if start < found.start()]
        if name is None or not owner:
            continue  # an entry written inside a macro_rules! body: no module of its own
        line = code.count("\n", 0, found.start()) + 1
        sites.append(EntrySite(tier, path, owner[-1], name.group(1), line))
    return sites
