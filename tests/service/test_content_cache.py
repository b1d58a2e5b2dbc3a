"""service.cache.content: the cubin of a bytecode, cached under its content key."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from lowering.pipeline import CompileRequest
from parser.spans import SourceFile
from service.cache.content import ContentCachedAssembler, content_key
from service.cache.disk import DiskCache
from service.cache.store import CacheEntry
from service.compile.engine import CompileEngine
from tests.fake_cubin import fake_cubin

BASE = dict(arch="sm_90", opt_level=3, host_arch="x86_64", lineinfo=False, tileiras_fingerprint="f")


@dataclass
class CountingAssembler:
    """Wraps an assembler and records each bytecode it assembles."""

    inner: object
    assembled: list[bytes] = field(default_factory=list)

    @property
    def version(self) -> str:
        return self.inner.version

    @property
    def fingerprint(self) -> str:
        return self.inner.fingerprint

    def assemble(self, bytecode: bytes, **options: object) -> bytes:
        self.assembled.append(bytecode)
        return self.inner.assemble(bytecode, **options)


@dataclass(frozen=True)
class EchoAssembler:
    version: str = "fake"
    fingerprint: str = "fake-fp"

    def assemble(self, bytecode: bytes, **options: object) -> bytes:
        return b"\x7fELF" + bytecode + repr(sorted(options.items())).encode()


@pytest.mark.parametrize(
    "change",
    [
        {"arch": "sm_80"},
        {"opt_level": 2},
        {"host_arch": "aarch64"},
        {"lineinfo": True},
        {"tileiras_fingerprint": "g"},
    ],
)
def test_every_input_changes_the_key(change: dict) -> None:
    assert content_key(b"bc", **{**BASE, **change}) != content_key(b"bc", **BASE)


def test_the_bytecode_changes_the_key() -> None:
    assert content_key(b"bc", **BASE) != content_key(b"bd", **BASE)
    assert len(content_key(b"bc", **BASE)) == 64


def test_a_cached_bytecode_is_not_assembled_again(tmp_path: Path) -> None:
    inner = CountingAssembler(EchoAssembler())
    cache = DiskCache(tmp_path)
    first = ContentCachedAssembler(inner, cache).assemble(b"bytecode", arch="sm_90")
    again = ContentCachedAssembler(inner, cache)
    assert again.assemble(b"bytecode", arch="sm_90") == first
    assert (again.hits, again.runs) == (1, 0)
    assert again.assemble(b"bytecode", arch="sm_80") != first
    assert len(inner.assembled) == 2


def test_sources_that_lower_alike_share_one_tileiras_run(
    tileiras, add_rs: Path, tmp_path: Path
) -> None:
    counting = CountingAssembler(tileiras)
    engine = CompileEngine(counting, cache=DiskCache(tmp_path))
    text = add_rs.read_text()
    first = engine.compile(
        CompileRequest((SourceFile("a.rs", text),), "add", (("B", "128"),), arch="sm_90")
    )
    commented = engine.compile(
        CompileRequest(
            (SourceFile("a.rs", text + "\n// a comment\n"),),
            "add",
            (("B", "128"),),
            arch="sm_90",
        )
    )
    assert first.ok and commented.ok
    assert first.key != commented.key  # different requests ...
    assert not commented.cache_hit
    assert commented.artifact.cubin == first.artifact.cubin  # ... one cubin
    assert len(counting.assembled) == 1
    renamed = engine.compile(
        CompileRequest((SourceFile("b.rs", text),), "add", (("B", "128"),), arch="sm_90")
    )
    assert renamed.key == first.key and renamed.cache_hit  # a file name is no content


@dataclass(frozen=True)
class CubinAssembler:
    """Assembles every bytecode to a checkable cubin for its target holding `symbol`."""

    symbol: str = "add_B128"
    version: str = "fake"
    fingerprint: str = "fake-fp"

    def assemble(self, bytecode: bytes, *, arch: str, **options: object) -> bytes:
        return fake_cubin(arch, self.symbol, bytecode)


def test_a_bad_cached_cubin_is_dropped_and_assembled_anew(tmp_path: Path) -> None:
    cache = DiskCache(tmp_path)
    key = content_key(b"bytecode", **{**BASE, "tileiras_fingerprint": "fake-fp"})
    cache.put(key, CacheEntry(b"\x7fELF poisoned by a bad run", b""))  # what a bad run left
    inner = CountingAssembler(CubinAssembler())
    assembler = ContentCachedAssembler(inner, cache)
    cubin = assembler.assemble(b"bytecode", arch="sm_90", symbol="add_B128")
    assert cubin == fake_cubin("sm_90", "add_B128", b"bytecode")
    assert (assembler.hits, assembler.runs) == (0, 1)
    assert cache.get(key).cubin == cubin  # replaced by the good one
    assert assembler.assemble(b"bytecode", arch="sm_90", symbol="add_B128") == cubin
    assert (assembler.hits, assembler.runs) == (1, 1)


def test_an_assembler_output_that_fails_the_check_is_not_stored(tmp_path: Path) -> None:
    cache = DiskCache(tmp_path)
    wrong_kernel = ContentCachedAssembler(CubinAssembler(symbol="other_kernel"), cache)
    wrong_kernel.assemble(b"bytecode", arch="sm_90", symbol="add_B128")
    key = content_key(b"bytecode", **{**BASE, "tileiras_fingerprint": "fake-fp"})
    assert cache.get(key) is None
