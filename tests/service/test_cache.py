"""service.cache: the request key and the checksummed, sharded disk store."""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import stat
import time
from pathlib import Path

import pytest

from lowering.pipeline import CompileRequest
from parser.spans import SourceFile
from parser.specialization import TensorFacts
from service.cache.disk import DiskCache, default_cache_dir
from service.cache.keys import KEY_DOMAIN, request_key
from service.cache.store import CacheEntry

BASE = CompileRequest(
    sources=(SourceFile("add.rs", "mod kernel {}"), SourceFile("lib.rs", "mod lib {}")),
    entry="add",
    generics=(("B", "128"), ("E", "f32")),
    arch="sm_90",
)
KEY = "ab" + "0" * 62


def _key(request: CompileRequest = BASE, fingerprint: str = "fp", version: str = "0.1.0") -> str:
    return request_key(request, tileiras_fingerprint=fingerprint, compiler_version=version).sha256


def test_key_is_stable_and_hex() -> None:
    key = request_key(BASE, tileiras_fingerprint="fp", compiler_version="0.1.0")
    assert key == request_key(BASE, tileiras_fingerprint="fp", compiler_version="0.1.0")
    assert len(key.sha256) == 64 and int(key.sha256, 16) >= 0
    assert key.short == key.sha256[:8]
    assert key.size > len(KEY_DOMAIN)


@pytest.mark.parametrize(
    "change",
    [
        {"sources": (SourceFile("add.rs", "mod kernel { }"), SourceFile("lib.rs", "mod lib {}"))},
        {"sources": (SourceFile("lib.rs", "mod lib {}"), SourceFile("add.rs", "mod kernel {}"))},
        {"sources": (SourceFile("add.rs", "mod kernel {}"),)},
        {"entry": "kernel::add"},
        {"generics": (("B", "256"), ("E", "f32"))},
        {"generics": (("B", "128"),)},
        {"generics": (), "generic_args": ("128", "f32")},
        {"arch": "sm_100"},
        {"opt_level": 2},
        {"host_arch": "aarch64"},
        {"lineinfo": True},
        {"exact_accumulators": True},
        {"exact_f32_products": True},
        {"early_launch": False},
        {"occupancy": 4},
        {"specialization": (TensorFacts("x", (16,), (1,)),)},
        {"specialization": (TensorFacts("x", (), (16,)),)},
        {"specialization": (TensorFacts("x", base_align=4),)},
        {"specialization": (TensorFacts("x", unit_last_stride=False),)},
    ],
)
def test_every_input_changes_the_key(change: dict) -> None:
    assert _key(dataclasses.replace(BASE, **change)) != _key()


def test_toolchain_changes_the_key() -> None:
    assert _key(fingerprint="other") != _key()
    assert _key(version="0.2.0") != _key()


def test_named_generics_order_does_not_matter() -> None:
    swapped = dataclasses.replace(BASE, generics=(("E", "f32"), ("B", "128")))
    assert _key(swapped) == _key()


def test_fields_are_length_prefixed() -> None:
    a = dataclasses.replace(BASE, sources=(SourceFile("x.rs", "ab"), SourceFile("y.rs", "c")))
    b = dataclasses.replace(BASE, sources=(SourceFile("x.rs", "a"), SourceFile("y.rs", "bc")))
    assert _key(a) != _key(b)


@pytest.mark.parametrize("name", ["add2.rs", "/home/me/k/add.rs", "../k/add.rs", "add-2.rs"])
def test_file_names_do_not_change_the_key(name: str) -> None:
    renamed = (SourceFile(name, "mod kernel {}"), SourceFile("other/lib.rs", "mod lib {}"))
    assert _key(dataclasses.replace(BASE, sources=renamed)) == _key()


# --------------------------------------------------------------------------- store


@pytest.fixture
def cache(tmp_path: Path) -> DiskCache:
    return DiskCache(tmp_path / "cache")


def test_round_trip_in_a_private_shard(cache: DiskCache) -> None:
    entry = CacheEntry(b"\x7fELF cubin", b"contract bytes")
    assert cache.get(KEY) is None
    assert cache.put(KEY, entry)
    assert cache.get(KEY) == entry
    path = cache.root / "ab" / f"{KEY}.artifact"
    assert path.is_file()
    assert stat.S_IMODE(cache.root.stat().st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp files left


def test_overwrite_replaces(cache: DiskCache) -> None:
    cache.put(KEY, CacheEntry(b"one", b"c"))
    cache.put(KEY, CacheEntry(b"two", b"c"))
    assert cache.get(KEY) == CacheEntry(b"two", b"c")


def test_empty_fields_round_trip(cache: DiskCache) -> None:
    cache.put(KEY, CacheEntry(b"", b""))
    assert cache.get(KEY) == CacheEntry(b"", b"")


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[:-1],  # truncated
        lambda data: data[:10],  # shorter than the header
        lambda data: data[:-1] + bytes([data[-1] ^ 1]),  # payload bit flip
        lambda data: b"XXXXXXXX" + data[8:],  # magic
        lambda data: data + b"tail",  # trailing garbage
        lambda data: b"",
    ],
)
def test_corrupt_entry_is_a_miss_and_is_removed(cache: DiskCache, damage, caplog) -> None:
    cache.put(KEY, CacheEntry(b"cubin", b"contract"))
    path = cache.root / "ab" / f"{KEY}.artifact"
    path.write_bytes(damage(path.read_bytes()))
    with caplog.at_level(logging.WARNING, logger="service.cache"):
        assert cache.get(KEY) is None
    assert not path.exists()
    assert "corrupt" in caplog.text


def test_entry_under_the_wrong_key_is_rejected(cache: DiskCache) -> None:
    other = "ab" + "1" * 62
    cache.put(KEY, CacheEntry(b"cubin", b"contract"))
    shard = cache.root / "ab"
    os.replace(shard / f"{KEY}.artifact", shard / f"{other}.artifact")
    assert cache.get(other) is None


def test_malformed_key_is_refused(cache: DiskCache) -> None:
    with pytest.raises(ValueError):
        cache.get("../../etc/passwd")
    with pytest.raises(ValueError):
        cache.put("AB" + "0" * 62, CacheEntry(b"", b""))


def test_io_errors_never_raise(tmp_path: Path, caplog) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    cache = DiskCache(blocker / "cache")  # cannot be created
    with caplog.at_level(logging.WARNING, logger="service.cache"):
        assert cache.put(KEY, CacheEntry(b"c", b"k")) is False
        assert cache.get(KEY) is None
        cache.delete(KEY)
    assert "cache disabled" in caplog.text


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores folder permissions")
def test_unwritable_shard_skips_the_write(cache: DiskCache) -> None:
    cache.root.mkdir(mode=0o700)
    (cache.root / "ab").mkdir(mode=0o500)
    assert cache.put(KEY, CacheEntry(b"c", b"k")) is False


def test_write_failure_is_logged_not_raised(cache: DiskCache, monkeypatch, caplog) -> None:
    def fail(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with caplog.at_level(logging.WARNING, logger="service.cache"):
        assert cache.put(KEY, CacheEntry(b"c", b"k")) is False
    assert "No space left" in caplog.text
    assert list((cache.root / "ab").iterdir()) == []  # the temp file is cleaned up


def test_root_writable_by_others_is_refused(tmp_path: Path, caplog) -> None:
    root = tmp_path / "shared"
    root.mkdir()
    root.chmod(0o777)
    cache = DiskCache(root)
    with caplog.at_level(logging.WARNING, logger="service.cache"):
        assert cache.put(KEY, CacheEntry(b"c", b"k")) is False
        assert cache.get(KEY) is None
    assert "writable by other users" in caplog.text
    assert list(root.iterdir()) == []


def test_default_cache_dir(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "cutile-serve"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    assert default_cache_dir() == Path.home() / ".cache" / "cutile-serve"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_dir() == Path.home() / ".cache" / "cutile-serve"
    assert DiskCache().root == default_cache_dir()


# --------------------------------------------------------------------------- LRU bound


def _lru_entry(n: int) -> CacheEntry:
    return CacheEntry(cubin=bytes([n]) * 1000, contract=b"c")


def _age(cache: DiskCache, key: str, seconds_ago: float) -> None:
    path = cache.root / key[:2] / f"{key}.artifact"
    stamp = time.time() - seconds_ago
    os.utime(path, (stamp, stamp))


def test_lru_eviction_keeps_the_cache_under_its_bound(tmp_path: Path) -> None:
    keys = [f"{n:02x}" * 32 for n in range(12)]
    cache = DiskCache(tmp_path / "lru", max_bytes=5000)
    for age, key in enumerate(keys[:4]):
        assert cache.put(key, _lru_entry(age))
        _age(cache, key, 1000 - age)  # keys[0] is the oldest
    assert cache.get(keys[0]) is not None  # a hit makes it the most recently used
    for key in keys[4:]:
        assert cache.put(key, _lru_entry(1))
        assert cache.total_bytes() <= 5000
    assert not cache.contains(keys[1])  # least recently used: evicted first
    assert cache.get(keys[-1]) is not None  # the newest survives


def test_touched_entry_outlives_older_ones(tmp_path: Path) -> None:
    keys = [f"{n:02x}" * 32 for n in range(5)]
    cache = DiskCache(tmp_path / "lru", max_bytes=4600)  # four 1137-byte entries fit
    for age, key in enumerate(keys[:4]):
        cache.put(key, _lru_entry(age))
        _age(cache, key, 100 - age)
    cache.get(keys[0])
    cache.put(keys[4], _lru_entry(9))  # five do not: evict down to 90 %
    assert cache.contains(keys[0]) and cache.contains(keys[4])
    assert not cache.contains(keys[1]) and not cache.contains(keys[2])
    assert cache.total_bytes() <= 4600


def test_entry_larger_than_the_bound_is_not_stored(tmp_path: Path) -> None:
    cache = DiskCache(tmp_path / "lru", max_bytes=100)
    assert not cache.put("ab" * 32, _lru_entry(1))
    assert cache.total_bytes() == 0


# --------------------------------------------------------------------------- hostile files


def _entry_path(cache: DiskCache, key: str = KEY) -> Path:
    cache.root.mkdir(mode=0o700, exist_ok=True)
    (cache.root / key[:2]).mkdir(mode=0o700, exist_ok=True)
    return cache.root / key[:2] / f"{key}.artifact"


def test_a_fifo_in_an_entrys_place_is_removed_not_waited_on(cache: DiskCache) -> None:
    path = _entry_path(cache)
    os.mkfifo(path)  # opened for reading, it would block until a writer came
    assert cache.get(KEY) is None
    assert not path.exists()


def test_a_symlink_in_an_entrys_place_is_not_followed(cache: DiskCache, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    cache.put(KEY, CacheEntry(b"cubin", b"contract"))
    os.replace(_entry_path(cache), target)  # a valid entry, reached through a link
    _entry_path(cache).symlink_to(target)
    assert cache.get(KEY) is None
    assert not _entry_path(cache).is_symlink() and target.exists()


def test_a_huge_file_is_neither_read_nor_counted_by_eviction(tmp_path: Path) -> None:
    cache = DiskCache(tmp_path / "lru", max_bytes=5000)
    good = [f"{n:02x}" * 32 for n in range(1, 4)]
    for key in good:
        assert cache.put(key, _lru_entry(1))
    huge = _entry_path(cache)
    with huge.open("wb") as f:
        f.truncate(1 << 40)  # sparse: a TiB that takes no disk
    assert cache.get(KEY) is None  # neither a MemoryError nor a wait
    assert not huge.exists()
    with huge.open("wb") as f:  # and met by a scan (a new process's first write) instead
        f.truncate(1 << 40)
    cache = DiskCache(tmp_path / "lru", max_bytes=5000)
    assert cache.put("ff" * 32, _lru_entry(2))
    assert not huge.exists()
    assert all(cache.contains(key) for key in good)  # no good entry evicted for it


def test_a_removed_root_is_made_again_by_the_next_write(cache: DiskCache) -> None:
    assert cache.put(KEY, CacheEntry(b"c", b"k"))
    shutil.rmtree(cache.root)
    assert cache.put(KEY, CacheEntry(b"c2", b"k"))
    assert cache.get(KEY) == CacheEntry(b"c2", b"k")
    assert stat.S_IMODE(cache.root.stat().st_mode) == 0o700
