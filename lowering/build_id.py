"""The compiler's build id: a digest of the source of everything that shapes an artifact
(parser/, lowering/, client_stubs' element table and occupancy-variant numbers (the contract
carries its `min_tile_blocks`), the launch contract's generated schema and the service's
mapping of the compiler's contract onto it, which is what caches store),
so an artifact cached by one build of the compiler is never served by another. The release
number alone stayed "0.1.0" through every change, and a cache that outlived a change of the
code served what the old code had produced.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

RELEASE = "0.1.0"  # the package's version (pyproject.toml; a test keeps them equal)
_ROOT = Path(__file__).resolve().parents[1]
_SOURCES = (
    "parser",
    "lowering",
    "client_stubs/element_table.py",
    "client_stubs/occupancy.py",
    "protos/generated/cutile/compile/v1/contract_pb2.py",
    "service/convert.py",
)


@functools.cache
def build_id() -> str:
    """The first 12 hex digits of sha256 over every source file's path and bytes."""
    digest = hashlib.sha256()
    for path in _source_files():
        digest.update(path.relative_to(_ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def compiler_version() -> str:
    """`0.1.0+<build id>`: the version artifacts, contracts and cache keys carry."""
    return f"{RELEASE}+{build_id()}"


def version_text(tool: str) -> str:
    """What `--version` prints: the release, then the compiler build."""
    return f"{tool} {RELEASE} (compiler {compiler_version()})"


def _source_files() -> list[Path]:
    found: list[Path] = []
    for name in _SOURCES:
        path = _ROOT / name
        found += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return found
