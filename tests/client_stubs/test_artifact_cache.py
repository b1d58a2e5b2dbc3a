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
