"""The on-disk artifact store.

`DiskCache` stores one file per key, `<root>/<key[:2]>/<key>.artifact`, written atomically
(temp file in the same folder, fsync, `os.replace`). Each file starts with a header holding
a magic, the payload length and the payload's SHA-256, re-checked on every read; an entry
that fails the check is removed and reported as a miss. Cache I/O never fails a compile:
errors are logged, reported to the observer set by `observe_errors` (the server counts
them in its metrics) and turn into misses or skipped writes.

The store is bounded: `max_bytes` (default 2 GiB; None = unbounded). Every hit touches its
file's mtime, so mtime is the last use; a write that takes the running total past the bound
rescans the root and deletes least-recently-used entries until the total is at most
`LOW_WATER` of the bound (`client_stubs.lru`, the policy the client's cache shares). A
single entry larger than the bound (or than `MAX_ENTRY_BYTES`) is not stored.

What sits under the root is not trusted: an entry is read only from a regular file (never
through a symlink, a FIFO or a device) no larger than `MAX_ENTRY_BYTES`; anything else is
removed as corrupt, and so are oversized files met by an eviction scan. A root removed
while the service runs is created again by the next write.

A hit is executable device code, so the root is private (0700) and a root that other users
can write is refused (the cache then stays disabled). `service.cache.redis` (shared by
replicas) and `service.cache.layered` (a disk layer in front of Redis) are the other
`ArtifactCache`s.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import struct
import tempfile
import threading
import time
from pathlib import Path

from client_stubs.files import NotAFile, read_regular_file
from client_stubs.lru import LOW_WATER, DiskEntry, evict_least_recent, scan_shards, touch
from service.cache.store import CacheEntry, ErrorObserver

log = logging.getLogger(__name__)

APP_DIR = "cutile-serve"

_MAGIC = b"CTSVART1"
_HEADER = struct.Struct(">8s32sQ")  # magic, sha256(payload), len(payload)
_KEY = re.compile(r"[0-9a-f]{64}")
DEFAULT_MAX_BYTES = 2 << 30
MAX_ENTRY_BYTES = 64 << 20  # one artifact (cubin and contract) is never larger
_STALE_TEMP_S = 3600.0  # temp files older than this are leftovers of a crashed write


def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/cutile-serve`, else `~/.cache/cutile-serve`."""
    base = os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / APP_DIR


class DiskCache:
    """One checksummed file per key under a private root; see the module docstring."""

    layers = ("disk",)

    def __init__(
        self, root: Path | str | None = None, *, max_bytes: int | None = DEFAULT_MAX_BYTES
    ) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()
        self.max_bytes = max_bytes
        self._usable: bool | None = None
        self._lock = threading.Lock()
        self._total: int | None = None  # bytes on disk; None until the first scan
        self._observer: ErrorObserver | None = None

    def observe_errors(self, observer: ErrorObserver) -> None:
        self._observer = observer

    def _error(self) -> None:
        if self._observer is not None:
            self._observer("disk")

    def find(self, key: str) -> tuple[CacheEntry, str] | None:
        entry = self.get(key)
        return None if entry is None else (entry, "disk")

    def get(self, key: str) -> CacheEntry | None:
        path = self._path(key)
        if path is None:
            return None
        try:
            data = read_entry_file(path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.warning("cache read failed for %s: %s", key[:8], exc)
            self._error()
            return None
        entry = None if data is None else decode_entry(data, key)
        if entry is None:
            log.warning("cache entry %s is corrupt; removing it", key[:8])
            self.delete(key)
            return None
        touch(path)
        return entry

    def contains(self, key: str) -> bool:
        """Whether an entry for `key` is on disk (not verified: `get` does that)."""
        path = self._path(key)
        return path is not None and path.is_file()

    def put(self, key: str, entry: CacheEntry) -> bool:
        """Store `entry`; False (and a log line) when it could not be written."""
        path = self._path(key)
        if path is None:
            return False
        data = encode_entry(key, entry)
        if len(data) > min(self.max_bytes or MAX_ENTRY_BYTES, MAX_ENTRY_BYTES):
            log.warning("cache entry %s (%d bytes) exceeds the cache bound", key[:8], len(data))
            return False
        try:
            try:
                path.parent.mkdir(mode=0o700, exist_ok=True)
            except FileNotFoundError:  # the root was removed: make it again, once
                self._usable = None
                if not self._root_usable():
                    return False
                path.parent.mkdir(mode=0o700, exist_ok=True)
            _write_atomically(path, data)
        except OSError as exc:
            log.warning("cache write failed for %s: %s", key[:8], exc)
            self._error()
            return False
        self._account(len(data))
        return True

    def total_bytes(self) -> int:
        """Bytes of entries on disk (a fresh scan)."""
        return sum(entry.size for entry in self._scan())

    def _account(self, written: int) -> None:
        """Add `written` to the running total; evict when it passes the bound."""
        if self.max_bytes is None:
            return
        with self._lock:
            if self._total is None:
                self._total = self.total_bytes()
            else:
                self._total += written
            if self._total > self.max_bytes:
                self._total = self._evict(int(self.max_bytes * LOW_WATER))

    def _evict(self, target: int) -> int:
        """Delete least-recently-used entries until at most `target` bytes remain."""

        def failed(path: Path, exc: OSError) -> None:
            log.warning("cache eviction failed for %s: %s", path.name[:8], exc)

        total, evicted = evict_least_recent(self._scan(), target, failed)
        log.info("cache evicted %d entries; %d bytes remain", evicted, total)
        return total

    def _scan(self) -> list[DiskEntry]:
        """Every entry (last use, size, path); removes stale temp files and files too large
        to be entries on the way."""
        if not self._root_usable():
            return []
        _remove_stale_temps(self.root)
        entries = []
        for entry in scan_shards(self.root, ".artifact"):
            if entry.size <= MAX_ENTRY_BYTES:
                entries.append(entry)
                continue
            log.warning("cache file %s is too large to be an entry; removing it", entry.path)
            with contextlib.suppress(OSError):
                entry.path.unlink()
        return entries

    def delete(self, key: str) -> None:
        path = self._path(key)
        if path is None:
            return
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("cache delete failed for %s: %s", key[:8], exc)

    def _path(self, key: str) -> Path | None:
        """The file of `key`; None for a malformed key or an unusable root."""
        check_key(key)
        if not self._root_usable():
            return None
        return self.root / key[:2] / f"{key}.artifact"

    def _root_usable(self) -> bool:
        if self._usable is None:
            self._usable = self._prepare_root()
        return self._usable

    def _prepare_root(self) -> bool:
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            info = self.root.stat()
        except OSError as exc:
            log.warning("cache disabled: cannot create %s: %s", self.root, exc)
            return False
        if info.st_mode & 0o022 or info.st_uid != os.getuid():
            log.warning(
                "cache disabled: %s is writable by other users or not owned by this user",
                self.root,
            )
            return False
        return True


def read_entry_file(path: Path) -> bytes | None:
    """The bytes of the entry file `path`; None when it is no entry (a symlink, a FIFO, a
    device or a folder, or larger than `MAX_ENTRY_BYTES`). FileNotFoundError when absent."""
    try:
        return read_regular_file(path, MAX_ENTRY_BYTES, follow_links=False)
    except NotAFile:
        return None


def _length_prefixed(data: bytes) -> bytes:
    """`data` after its length as a big-endian u64 (every field of keys and entries)."""
    return struct.pack(">Q", len(data)) + data


def check_key(key: str) -> None:
    """ValueError unless `key` is 64 lowercase hex digits."""
    if not _KEY.fullmatch(key):
        raise ValueError(f"not a sha256 hex key: {key!r}")


def encode_entry(key: str, entry: CacheEntry) -> bytes:
    """The stored form of `entry`: a header with its checksum, then key, cubin, contract."""
    payload = b"".join(
        _length_prefixed(part) for part in (key.encode("ascii"), entry.cubin, entry.contract)
    )
    return _HEADER.pack(_MAGIC, hashlib.sha256(payload).digest(), len(payload)) + payload


def decode_entry(data: bytes, key: str) -> CacheEntry | None:
    """The entry in `data` if its header, checksum and key all check out."""
    if len(data) < _HEADER.size:
        return None
    magic, checksum, length = _HEADER.unpack_from(data)
    payload = data[_HEADER.size :]
    if magic != _MAGIC or length != len(payload):
        return None
    if hashlib.sha256(payload).digest() != checksum:
        return None
    parts = _split_fields(payload)
    if parts is None or len(parts) != 3 or parts[0] != key.encode("ascii"):
        return None
    return CacheEntry(cubin=parts[1], contract=parts[2])


def _split_fields(payload: bytes) -> list[bytes] | None:
    parts, offset = [], 0
    while offset < len(payload):
        if offset + 8 > len(payload):
            return None
        (length,) = struct.unpack_from(">Q", payload, offset)
        offset += 8
        if offset + length > len(payload):
            return None
        parts.append(payload[offset : offset + length])
        offset += length
    return parts


def _remove_stale_temps(root: Path) -> None:
    """Delete temp files left by writes that crashed (older than `_STALE_TEMP_S`)."""
    cutoff = time.time() - _STALE_TEMP_S
    for temp in root.glob("*/.tmp-*"):
        with contextlib.suppress(OSError):
            if temp.stat().st_mtime < cutoff:
                temp.unlink()


def _write_atomically(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".artifact")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
