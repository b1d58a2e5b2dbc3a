"""A local, content-addressed artifact cache on disk.

Entries are keyed by a lowercase sha256 hex key (the client uses the sha256 of the serialized
`CompileRequest`) and stored as `<root>/<key[:2]>/<key>.bin`. Every write goes to a temporary
file in the same folder and is published with `os.replace`, so readers never see a partial
entry. Each entry starts with a header holding the payload's sha256; a corrupt entry reads as
a miss and is removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
from pathlib import Path

_KEY = re.compile(r"^[0-9a-f]{64}$")
_MAGIC = b"cutile-client-cache v1\n"


def default_cache_dir() -> Path:
    """`$CUTILE_CLIENT_CACHE`, else `$XDG_CACHE_HOME/cutile-serve/client`, else
    `~/.cache/cutile-serve/client`."""
    explicit = os.environ.get("CUTILE_CLIENT_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cutile-serve" / "client"


class ArtifactCache:
    """Bytes by sha256 key, atomically written, checksummed on read."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()

    def path_for(self, key: str) -> Path:
        if not _KEY.match(key):
            raise ValueError(f"cache key must be 64 lowercase hex digits, got {key!r}")
        return self.root / key[:2] / f"{key}.bin"

    def get(self, key: str) -> bytes | None:
        """The payload stored under `key`, or None (missing or corrupt)."""
        path = self.path_for(key)
        try:
            blob = path.read_bytes()
        except OSError:
            return None
        header_end = len(_MAGIC) + 65
        if not blob.startswith(_MAGIC) or len(blob) < header_end:
            self._discard(path)
            return None
        digest = blob[len(_MAGIC) : header_end - 1].decode("ascii", "replace")
        payload = blob[header_end:]
        if hashlib.sha256(payload).hexdigest() != digest:
            self._discard(path)
            return None
        return payload

    def delete(self, key: str) -> None:
        """Drop the entry of `key` (one that failed a check above this layer)."""
        self._discard(self.path_for(key))

    def put(self, key: str, payload: bytes) -> Path:
        """Store `payload` under `key` atomically (tmp file + os.replace); returns its path."""
        path = self.path_for(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256(payload).hexdigest().encode("ascii")
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(_MAGIC + digest + b"\n" + payload)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return path

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    @staticmethod
    def _discard(path: Path) -> None:
        with contextlib.suppress(OSError):
            path.unlink()
