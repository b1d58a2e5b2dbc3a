"""Least-recently-used stores bounded by bytes: one in memory, one policy for files on disk.

`ByteLRU` is a thread-safe map whose entries each count a size (the caller's measure of what
they hold); putting past `max_bytes` drops the least recently used entries first, and an
entry larger than the bound is not kept. The server's memory layer (`service.cache.memory`),
source pool (`service.server.source_pool`) and hot hits (`service.cache.hot_hits`) are `ByteLRU`s.

On disk, a file's mtime is its last use (`touch` on every hit); `evict_least_recent` deletes
the oldest files until at most a target of bytes remains. The server's disk cache
(`service.cache.disk.DiskCache`) and the client's artifact cache (`client_stubs.cache`) both evict
this way, down to `LOW_WATER` of their bound, so a full cache does not evict on every write.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
LOW_WATER = 0.9  # disk eviction stops at this fraction of the bound


class ByteLRU(Generic[K, V]):
    """Values by key, at most `max_bytes` of them as `size_of` counts (or the size `put` is
    given), least recently used out first."""

    def __init__(self, max_bytes: int, size_of: Callable[[V], int] | None = None) -> None:
        self.max_bytes = max_bytes
        self._size_of = size_of
        self._entries: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value of `key`, now the most recently used, or None."""
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return None
            self._entries.move_to_end(key)
            return found[0]

    def put(self, key: K, value: V, size: int | None = None) -> bool:
        """Keep `value` under `key` (replacing any), counted as `size` (default: `size_of`),
        evicting the least recently used entries past the bound; False when it alone is
        larger than the bound."""
        if size is None:
            if self._size_of is None:
                raise TypeError("this ByteLRU has no size_of: put needs the size")
            size = self._size_of(value)
        if size > self.max_bytes:
            return False
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._entries[key] = (value, size)
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, (_, evicted) = self._entries.popitem(last=False)
                self._bytes -= evicted
        return True

    def discard(self, key: K) -> None:
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]

    @property
    def total_bytes(self) -> int:
        """What the entries count, together."""
        return self._bytes

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)


@dataclass(frozen=True, order=True)
class DiskEntry:
    """A cached file; ordered by last use (mtime), oldest first."""

    mtime_ns: int
    size: int
    path: Path


def touch(path: Path) -> None:
    """Mark `path` as just used (its mtime is the LRU clock)."""
    with contextlib.suppress(OSError):
        os.utime(path)


def scan_shards(root: Path, suffix: str) -> list[DiskEntry]:
    """The files ending in `suffix` one folder below `root` (`<root>/<shard>/<file>`)."""
    found: list[DiskEntry] = []
    try:
        folders = [d for d in os.scandir(root) if d.is_dir(follow_symlinks=False)]
    except OSError:
        return found
    for folder in folders:
        try:
            files = list(os.scandir(folder.path))
        except OSError:
            continue
        for item in files:
            if not item.name.endswith(suffix) or item.name.startswith("."):
                continue
            with contextlib.suppress(OSError):
                info = item.stat(follow_symlinks=False)
                found.append(DiskEntry(info.st_mtime_ns, info.st_size, Path(item.path)))
    return found


def evict_least_recent(
    entries: Iterable[DiskEntry],
    target_bytes: int,
    on_error: Callable[[Path, OSError], None] | None = None,
) -> tuple[int, int]:
    """Delete the least recently used of `entries` until at most `target_bytes` remain;
    (bytes remaining, files deleted). A file that cannot be deleted is reported to
    `on_error` and still counted."""
    ordered = sorted(entries)
    total = sum(entry.size for entry in ordered)
    evicted = 0
    for entry in ordered:
        if total <= target_bytes:
            break
        try:
            entry.path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            if on_error is not None:
                on_error(entry.path, exc)
            continue
        total -= entry.size
        evicted += 1
    return total, evicted
