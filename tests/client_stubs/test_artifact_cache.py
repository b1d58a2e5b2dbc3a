"""ArtifactCache: atomic writes, checksummed reads, key hygiene."""

from __future__ import annotations

import hashlib
import os

import pytest

from client_stubs import ArtifactCache, default_cache_dir

KEY = hashlib.sha256(b"request").hexdigest()


def test_round_trip_and_miss(tmp_path):
    cache = ArtifactCache(tmp_path)
    assert cache.get(KEY) is None and KEY not in cache
    path = cache.put(KEY, b"artifact bytes")
    assert path == tmp_path / KEY[:2] / f"{KEY}.bin"
    assert cache.get(KEY) == b"artifact bytes" and KEY in cache
    cache.put(KEY, b"newer")
    assert cache.get(KEY) == b"newer"
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp files left


def test_corrupt_entry_reads_as_miss_and_is_removed(tmp_path):
    cache = ArtifactCache(tmp_path)
    path = cache.put(KEY, b"artifact bytes")
    blob = path.read_bytes()
    path.write_bytes(blob[:-1] + b"X")
    assert cache.get(KEY) is None and not path.exists()
    path.write_bytes(b"garbage")
    assert cache.get(KEY) is None


def test_failed_write_keeps_the_old_entry(tmp_path, monkeypatch):
    cache = ArtifactCache(tmp_path)
    cache.put(KEY, b"old")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        cache.put(KEY, b"new")
    monkeypatch.undo()
    assert cache.get(KEY) == b"old"
    assert len(list((tmp_path / KEY[:2]).iterdir())) == 1


@pytest.mark.parametrize("key", ["../../etc/passwd", "ABC", KEY.upper(), KEY + "0"])
def test_keys_must_be_sha256_hex(tmp_path, key):
    with pytest.raises(ValueError):
        ArtifactCache(tmp_path).put(key, b"x")


def test_default_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("CUTILE_CLIENT_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "cutile-serve" / "client"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert str(default_cache_dir()).endswith(".cache/cutile-serve/client")
    monkeypatch.setenv("CUTILE_CLIENT_CACHE", str(tmp_path / "explicit"))
    assert default_cache_dir() == tmp_path / "explicit"


def _key(n: int) -> str:
    return hashlib.sha256(f"request {n}".encode()).hexdigest()


def _age(cache: ArtifactCache, key: str, seconds_ago: int) -> None:
    path = cache.path_for(key)
    when = path.stat().st_mtime - seconds_ago
    os.utime(path, (when, when))


def test_the_cache_is_bounded_in_bytes_least_recently_used_out_first(tmp_path):
    entry = 1000 + 88  # payload + header
    cache = ArtifactCache(tmp_path, max_bytes=4 * entry)
    for n in range(4):
        cache.put(_key(n), bytes(1000))
        _age(cache, _key(n), 100 - n)  # 0 is the oldest
    assert cache.get(_key(0)) is not None  # a hit: 0 is now the most recent
    cache.put(_key(4), bytes(1000))  # past the bound: evict down to 90% (3 entries)
    assert [cache.get(_key(n)) is not None for n in range(5)] == [True, False, False, True, True]
    assert cache.total_bytes() == 3 * entry <= 0.9 * cache.max_bytes


def test_an_entry_larger_than_the_bound_is_not_kept(tmp_path):
    cache = ArtifactCache(tmp_path, max_bytes=500)
    assert cache.put(KEY, bytes(1000)) is None and cache.get(KEY) is None
    assert ArtifactCache(tmp_path, max_bytes=None).put(KEY, bytes(1000)) is not None


def test_the_bound_defaults_to_a_gibibyte_and_the_environment_overrides_it(tmp_path, monkeypatch):
    monkeypatch.delenv("CUTILE_CLIENT_CACHE_BYTES", raising=False)
    assert ArtifactCache(tmp_path).max_bytes == 1 << 30
    monkeypatch.setenv("CUTILE_CLIENT_CACHE_BYTES", "12345")
    assert ArtifactCache(tmp_path).max_bytes == 12345


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero", "folder"])
def test_anything_but_an_entry_file_is_a_miss_and_is_removed(tmp_path, kind):
    cache = ArtifactCache(tmp_path)
    path = cache.path_for(KEY)
    path.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(path)  # reading it would wait for a writer forever
    elif kind == "folder":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")  # reading it would never end
    assert cache.get(KEY) is None
    if kind != "folder":  # a folder cannot be unlinked: it stays a miss
        assert not path.exists()
        assert cache.put(KEY, b"payload") is not None and cache.get(KEY) == b"payload"
