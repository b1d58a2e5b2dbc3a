"""client_stubs.lru: the byte-bounded LRU in memory and the eviction policy on disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from client_stubs.lru import ByteLRU, DiskEntry, evict_least_recent, scan_shards


def test_byte_lru_evicts_the_least_recently_used_past_the_bound() -> None:
    lru: ByteLRU[str, bytes] = ByteLRU(10, len)
    assert lru.put("a", b"1234") and lru.put("b", b"1234")
    assert lru.get("a") == b"1234"  # a is now the most recent
    assert lru.put("c", b"1234")  # 12 bytes: b goes
    assert ("a" in lru, "b" in lru, "c" in lru) == (True, False, True)
    assert lru.total_bytes == 8 and len(lru) == 2
    assert not lru.put("d", bytes(11))  # larger than the bound: not kept, nothing evicted
    assert len(lru) == 2
    lru.put("a", b"1")  # a replacement counts its new size
    assert lru.total_bytes == 5
    lru.discard("a")
    assert lru.total_bytes == 4 and lru.get("a") is None


def test_a_byte_lru_without_size_of_needs_the_size() -> None:
    lru: ByteLRU[str, str] = ByteLRU(10)
    assert lru.put("a", "x", size=7) and lru.total_bytes == 7
    with pytest.raises(TypeError):
        lru.put("b", "y")


def _file(root: Path, name: str, size: int, mtime: int) -> Path:
    path = root / name[:2] / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(bytes(size))
    os.utime(path, (mtime, mtime))
    return path


def test_disk_eviction_deletes_the_oldest_down_to_the_target(tmp_path: Path) -> None:
    old = _file(tmp_path, "aa1.bin", 100, 1_000)
    mid = _file(tmp_path, "bb1.bin", 100, 2_000)
    new = _file(tmp_path, "aa2.bin", 100, 3_000)
    _file(tmp_path, ".aa3.bin", 100, 500)  # a temp file: not an entry
    _file(tmp_path, "aa4.tmp", 100, 500)  # another suffix: not an entry
    entries = scan_shards(tmp_path, ".bin")
    assert sorted(e.path for e in entries) == sorted([old, mid, new])
    assert evict_least_recent(entries, 200) == (200, 1)
    assert (old.exists(), mid.exists(), new.exists()) == (False, True, True)


def test_disk_eviction_reports_a_file_it_cannot_delete(tmp_path: Path) -> None:
    failed = []
    missing_dir = DiskEntry(1, 100, tmp_path)  # a folder: unlink fails
    total, evicted = evict_least_recent([missing_dir], 0, lambda path, exc: failed.append(path))
    assert (total, evicted, failed) == (100, 0, [tmp_path])
