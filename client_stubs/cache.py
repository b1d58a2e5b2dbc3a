"""A local, content-addressed artifact cache on disk.

Entries are keyed by a lowercase sha256 hex key (the client uses the sha256 of the serialized
`CompileRequest`) and stored as `<root>/<key[:2]>/<key>.bin`. Every write goes to a temporary
file in the same folder and is published with `os.replace`, so readers never see a partial
entry. Each entry starts with a header holding the payload's sha256; a corrupt entry reads as
a miss and is removed, and so is anything but a regular file of at most MAX_ENTRY_BYTES in an
entry's place (a FIFO, a link, /dev/zero: `client_stubs.files`).

The cache is bounded: `max_bytes` (default 1 GiB, `$CUTILE_CLIENT_CACHE_BYTES` overrides it;
None = unbounded). A hit touches its file (mtime is the last use); a write that takes the
running total past the bound deletes the least recently used entries down to `LOW_WATER` of
it (`client_stubs.lru`, the server's disk cache's policy too). An entry larger than the bound
is not kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import threading
from pathlib import Path

from client_stubs.files import NotAFile, read_regular_file
from client_stubs.integrity import MAX_CUBIN_BYTES
from client_stubs.lru import LOW_WATER, evict_least_recent, scan_shards, touch

_KEY = re.compile(r"[0-9a-f]{64}")  # fullmatch: `$` would let a final newline through
_MAGIC = b"cutile-client-cache v1\n"
_HEADER_BYTES = len(_MAGIC) + 65  # magic, sha256 hex, newline
MAX_ENTRY_BYTES = _HEADER_BYTES + 2 * MAX_CUBIN_BYTES  # a cubin and its contract, at most
DEFAULT_MAX_BYTES = 1 << 30


def default_max_bytes() -> int:
    """`$CUTILE_CLIENT_CACHE_BYTES`, else `DEFAULT_MAX_BYTES`."""
    explicit = os.environ.get("CUTILE_CLIENT_CACHE_BYTES", "")
    return int(explicit) if explicit.isdigit() else DEFAULT_MAX_BYTES


def default_cache_dir() -> Path:
    """`$CUTILE_CLIENT_CACHE`, else `$XDG_CACHE_HOME/cutile-serve/client`, else
    `~/.cache/cutile-serve/client`."""
    explicit = os.environ.get("CUTILE_CLIENT_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cutile-serve" / "client"


class ArtifactCache:
    """Bytes by sha256 key, atomically written, checksummed on read, LRU-bounded in bytes."""

    def __init__(
        self, root: str | os.PathLike[str] | None = None, *, max_bytes: int | None = -1
    ) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()
        self.max_bytes = default_max_bytes() if max_bytes == -1 else max_bytes
        self._total: int | None = None  # bytes on disk; None until the first scan
        self._lock = threading.Lock()

    def path_for(self, key: str) -> Path:
        if not _KEY.fullmatch(key):
            raise ValueError(f"cache key must be 64 lowercase hex digits, got {key!r}")
        return self.root / key[:2] / f"{key}.bin"

    def get(self, key: str) -> bytes | None:
        """The payload stored under `key`, or None (missing or corrupt)."""
        path = self.path_for(key)
        try:  # never through a link, never waiting on a FIFO, never past an entry's size
            blob = read_regular_file(path, MAX_ENTRY_BYTES, follow_links=False)
        except NotAFile:
            self._discard(path)
            return None
        except OSError:
            return None
        header_end = _HEADER_BYTES
        if not blob.startswith(_MAGIC) or len(blob) < header_end:
            self._discard(path)
            return None
        digest = blob[len(_MAGIC) : header_end - 1].decode("ascii", "replace")
        payload = blob[header_end:]
        if hashlib.sha256(payload).hexdigest() != digest:
            self._discard(path)
            return None
        touch(path)
        return payload

    def delete(self, key: str) -> None:
        """Drop the entry of `key` (one that failed a check above this layer)."""
        self._discard(self.path_for(key))

    def put(self, key: str, payload: bytes) -> Path | None:
        """Store `payload` under `key` atomically (tmp file + os.replace); returns its path,
        or None when the entry alone is larger than the bound."""
        path = self.path_for(key)
        size = _HEADER_BYTES + len(payload)
        if self.max_bytes is not None and size > self.max_bytes:
            return None
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
        self._account(size)
        return path

    def total_bytes(self) -> int:
        """Bytes of entries on disk (a fresh scan)."""
        return sum(entry.size for entry in scan_shards(self.root, ".bin"))

    def _account(self, written: int) -> None:
        """Add `written` to the running total; past the bound, evict down to LOW_WATER."""
        if self.max_bytes is None:
            return
        with self._lock:
            self._total = self.total_bytes() if self._total is None else self._total + written
            if self._total > self.max_bytes:
                target = int(self.max_bytes * LOW_WATER)
                self._total, _ = evict_least_recent(scan_shards(self.root, ".bin"), target)

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    @staticmethod
    def _discard(path: Path) -> None:
        with contextlib.suppress(OSError):
            path.unlink()
