"""service.compile.engine: cache lookup, compile on a miss, store only successes."""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path

import pytest

from lowering.pipeline import CompileRequest, CompileResult
from lowering.tileiras import TileirasError, TileirasFault, TileirasOverBudget, TileirasTimeout
from parser.spans import SourceFile
from service.cache.disk import DiskCache
from service.cache.layered import LayeredCache
from service.cache.redis import RedisCache
from service.cache.store import CacheEntry
from service.compile.engine import CompileEngine, tileiras_diagnostic
from service.compile.faults import CompileFault
from tests.fake_cubin import fake_cubin

REQUEST = CompileRequest(sources=(SourceFile("add.rs", "mod k {}"),), entry="add")


@pytest.fixture
def cache(tmp_path: Path) -> DiskCache:
    return DiskCache(tmp_path / "cache")


def test_miss_then_hit(fake_compiler, fake_assembler, cache) -> None:
    engine = CompileEngine(fake_assembler, cache=cache, compile_fn=fake_compiler)
    first = engine.compile(REQUEST)
    second = engine.compile(REQUEST)
    assert first.ok and not first.cache_hit
    assert second.ok and second.cache_hit
    assert second.artifact == first.artifact
    assert second.key == first.key == engine.key(REQUEST)
    assert len(fake_compiler.calls) == 1
    assert first.timings.tileiras_ms == 2.0 and first.timings.total_ms > 0
    assert second.timings.tileiras_ms == 0.0


def test_skip_cache_recompiles_and_stores(fake_compiler, fake_assembler, cache) -> None:
    engine = CompileEngine(fake_assembler, cache=cache, compile_fn=fake_compiler)
    engine.compile(REQUEST)
    again = engine.compile(REQUEST, skip_cache=True)
    assert not again.cache_hit
    assert len(fake_compiler.calls) == 2


def test_no_cache(fake_compiler, fake_assembler) -> None:
    engine = CompileEngine(fake_assembler, cache=None, compile_fn=fake_compiler)
    assert not engine.compile(REQUEST).cache_hit
    assert not engine.compile(REQUEST).cache_hit
    assert len(fake_compiler.calls) == 2


def test_fingerprint_is_part_of_the_key(fake_compiler, fake_assembler, cache) -> None:
    other = type(fake_assembler)(fingerprint="another tileiras")
    a = CompileEngine(fake_assembler, cache=cache, compile_fn=fake_compiler)
    b = CompileEngine(other, cache=cache, compile_fn=fake_compiler)
    assert a.key(REQUEST) != b.key(REQUEST)
    a.compile(REQUEST)
    assert not b.compile(REQUEST).cache_hit


def test_failures_are_not_cached(fake_compiler, fake_assembler, cache, make_error) -> None:
    fake_compiler.result = CompileResult(diagnostics=(make_error(),))
    engine = CompileEngine(fake_assembler, cache=cache, compile_fn=fake_compiler)
    for _ in range(2):
        outcome = engine.compile(REQUEST)
        assert not outcome.ok and outcome.artifact is None
        assert outcome.diagnostics == fake_compiler.result.diagnostics
    assert len(fake_compiler.calls) == 2
    assert cache.get(outcome.key.sha256) is None


def test_raised_tileiras_error_is_a_diagnostic(fake_compiler, fake_assembler, cache) -> None:
    fake_compiler.raises = TileirasError("tileiras blew up", 1, "bad IR at op 3", ("tileiras",))
    engine = CompileEngine(fake_assembler, cache=cache, compile_fn=fake_compiler)
    outcome = engine.compile(REQUEST)
    assert not outcome.ok
    (diagnostic,) = outcome.diagnostics
    assert diagnostic.code.id == "CT0901"
    assert "tileiras blew up" in diagnostic.message
    assert "bad IR at op 3" in "\n".join(diagnostic.notes)
    assert cache.get(outcome.key.sha256) is None


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        (TileirasFault("tileiras was killed by SIGSEGV", -11, "", ("tileiras",)), "tileiras"),
        (TileirasFault("tileiras could not be started", 127, "", ("tileiras",)), "tileiras"),
        # past its time: the input's doing, the request's own error (never retried)
        (TileirasTimeout("tileiras did not finish", None, "", ("tileiras",)), "costly"),
        (TileirasOverBudget("tileiras was killed by SIGXCPU", -24, "", ("t",)), "costly"),
    ],
)
def test_a_tileiras_fault_is_the_servers_not_a_diagnostic(
    fake_compiler, fake_assembler, cache, fault, kind
) -> None:
    fake_compiler.raises = fault
    engine = CompileEngine(fake_assembler, cache=cache, compile_fn=fake_compiler)
    with pytest.raises(CompileFault) as raised:
        engine.compile(REQUEST)
    assert raised.value.kind == kind and str(fault.message) in raised.value.message
    assert cache.get(engine.key(REQUEST).sha256) is None


def test_memory_exhaustion_in_the_compiler_is_too_costly_not_a_compiler_bug(
    fake_assembler, monkeypatch
) -> None:
    from lowering import pipeline

    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(pipeline, "_compile", exhausted)
    engine = CompileEngine(fake_assembler, compile_fn=pipeline.compile_kernel)
    with pytest.raises(CompileFault) as raised:
        engine.compile(REQUEST)
    assert raised.value.kind == "costly"


def test_a_bad_cubin_is_never_cached(fake_compiler, fake_assembler, cache) -> None:
    good = fake_compiler(REQUEST)
    for cubin in (b"\x7fELF garbage", fake_cubin("sm_80", "add_B128"), fake_cubin("sm_90", "x")):
        fake_compiler.result = dataclasses.replace(good, cubin=cubin)
        engine = CompileEngine(fake_assembler, cache=cache, compile_fn=fake_compiler)
        with pytest.raises(CompileFault, match="not caching a bad artifact"):
            engine.compile(REQUEST)
        assert cache.get(engine.key(REQUEST).sha256) is None


def test_other_exceptions_propagate(fake_compiler, fake_assembler) -> None:
    fake_compiler.raises = KeyError("bug")
    engine = CompileEngine(fake_assembler, compile_fn=fake_compiler)
    with pytest.raises(KeyError):
        engine.compile(REQUEST)


def test_success_without_artifact_is_a_bug(fake_compiler, fake_assembler) -> None:
    fake_compiler.result = CompileResult(diagnostics=())
    engine = CompileEngine(fake_assembler, compile_fn=fake_compiler)
    with pytest.raises(RuntimeError):
        engine.compile(REQUEST)


def test_unreadable_cached_contract_is_a_miss(fake_compiler, fake_assembler, cache) -> None:
    engine = CompileEngine(fake_assembler, cache=cache, compile_fn=fake_compiler)
    key = engine.key(REQUEST).sha256
    cache.put(key, CacheEntry(b"cubin", b"\xff\xff not a proto"))
    outcome = engine.compile(REQUEST)
    assert outcome.ok and not outcome.cache_hit
    assert engine.compile(REQUEST).cache_hit  # the bad entry was replaced


def test_tileiras_diagnostic_without_detail() -> None:
    diagnostic = tileiras_diagnostic(RuntimeError(""))
    assert diagnostic.message == "tileiras failed: RuntimeError"
    assert diagnostic.notes == ()


# --------------------------------------------------------------------------- the lease


def _shared(redis_server, tmp_path: Path, name: str):
    return LayeredCache(DiskCache(tmp_path / name), RedisCache(redis_server.url))


def test_a_replica_waits_for_the_lease_holders_result(
    redis_server, fake_compiler, fake_assembler, tmp_path: Path
) -> None:
    holder = CompileEngine(
        fake_assembler, cache=_shared(redis_server, tmp_path, "a"), compile_fn=fake_compiler
    )
    waiter = CompileEngine(
        fake_assembler, cache=_shared(redis_server, tmp_path, "b"), compile_fn=fake_compiler
    )
    key = holder.key(REQUEST)
    assert holder.cache.acquire_lease(key.sha256, "holder")
    results = []
    thread = threading.Thread(
        target=lambda: results.append(waiter.compile_leased(REQUEST, key, poll_s=0.01))
    )
    thread.start()
    thread.join(0.3)
    assert thread.is_alive() and not fake_compiler.calls  # waiting, not compiling
    stored = holder.compile_uncached(REQUEST, key)
    holder.cache.release_lease(key.sha256, "holder")
    thread.join(10)
    (outcome,) = results
    assert outcome.cache_hit and outcome.cache_layer == "redis"
    assert outcome.artifact == stored.artifact
    assert len(fake_compiler.calls) == 1


def test_a_released_lease_without_a_result_lets_the_waiter_compile(
    redis_server, fake_compiler, fake_assembler, tmp_path: Path
) -> None:
    cache = _shared(redis_server, tmp_path, "a")
    engine = CompileEngine(fake_assembler, cache=cache, compile_fn=fake_compiler)
    key = engine.key(REQUEST)
    assert cache.acquire_lease(key.sha256, "a failing replica")
    results = []
    thread = threading.Thread(
        target=lambda: results.append(engine.compile_leased(REQUEST, key, poll_s=0.01))
    )
    thread.start()
    thread.join(0.2)
    cache.release_lease(key.sha256, "a failing replica")  # its compile failed: no result
    thread.join(10)
    (outcome,) = results
    assert outcome.ok and not outcome.cache_hit
    assert len(fake_compiler.calls) == 1
    assert not cache.lease_held(key.sha256)  # released after compiling


def test_a_compile_longer_than_the_lease_keeps_it(
    redis_server, fake_compiler, fake_assembler, tmp_path: Path
) -> None:
    shared = LayeredCache(DiskCache(tmp_path / "a"), RedisCache(redis_server.url, lease_ms=150))
    other = RedisCache(redis_server.url, lease_ms=150)
    key_box: list[str] = []

    def slow_compile(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        time.sleep(0.5)  # over three leases long
        assert other.lease_held(key_box[0]), "the lease expired while the compile ran"
        return fake_compiler(*args, **kwargs)

    engine = CompileEngine(fake_assembler, cache=shared, compile_fn=slow_compile)
    key = engine.key(REQUEST)
    key_box.append(key.sha256)
    assert engine.compile_leased(REQUEST, key).ok
    assert not other.lease_held(key.sha256)  # released at the end


def test_the_lease_is_skipped_without_a_shared_store(fake_compiler, fake_assembler, cache) -> None:
    engine = CompileEngine(fake_assembler, cache=cache, compile_fn=fake_compiler)
    outcome = engine.compile_leased(REQUEST, engine.key(REQUEST))
    assert outcome.ok and len(fake_compiler.calls) == 1
    assert engine.lookup(engine.key(REQUEST)).cache_layer == "disk"


def test_a_dead_replicas_lease_frees_its_key_within_seconds(
    redis_server, fake_compiler, fake_assembler, tmp_path: Path
) -> None:
    """A replica killed mid-compile renews its lease no more: the others compile the key as
    soon as the default lease runs out, not a minute later."""
    cache = _shared(redis_server, tmp_path, "a")
    assert cache.lease_ms <= 5_000
    engine = CompileEngine(fake_assembler, cache=cache, compile_fn=fake_compiler)
    key = engine.key(REQUEST)
    assert cache.acquire_lease(key.sha256, "a replica that was then killed")
    started = time.monotonic()
    outcome = engine.compile_leased(REQUEST, key, poll_s=0.01)
    assert outcome.ok and len(fake_compiler.calls) == 1
    assert time.monotonic() - started < cache.lease_ms / 1000 + 2
