"""service.cache.hot_hits: repeated hits answered from wire bytes, never beyond the memory layer."""

from __future__ import annotations

from protos.generated.cutile.compile.v1 import compile_pb2
from service.cache.hot_hits import HotHits

KEY = "ab" * 32


def _hit(cubin: bytes = b"\x7fELF cubin", cache: int = compile_pb2.CACHE_OUTCOME_HIT):
    response = compile_pb2.CompileResponse(ok=True, cache=cache)
    response.artifact.cubin = cubin
    response.artifact.request_key.sha256 = KEY
    response.timings.total_ms = 9.0
    return response


def _always(key: str) -> bool:
    return True


def test_a_remembered_hit_answers_the_same_bytes_with_fresh_call_fields() -> None:
    hot = HotHits()
    hot.remember(b"request", _hit())
    answer = hot.answer(b"request", 0.25, _always)
    assert answer is not None
    response = compile_pb2.CompileResponse.FromString(answer)
    assert response.ok and response.artifact == _hit().artifact
    assert response.cache == compile_pb2.CACHE_OUTCOME_HIT
    assert response.timings.total_ms == 0.25  # this call's, not the remembered one's
    assert hot.answer(b"other request", 0.25, _always) is None


def test_only_successful_cache_hits_are_remembered() -> None:
    hot = HotHits()
    hot.remember(b"miss", _hit(cache=compile_pb2.CACHE_OUTCOME_MISS))
    hot.remember(b"joined", _hit(cache=compile_pb2.CACHE_OUTCOME_JOINED))
    failed = _hit()
    failed.ok = False
    hot.remember(b"failed", failed)
    assert all(hot.answer(r, 0.0, _always) is None for r in (b"miss", b"joined", b"failed"))


def test_an_entry_goes_with_the_memory_layers() -> None:
    hot = HotHits()
    hot.remember(b"request", _hit())
    asked: list[str] = []

    def evicted(key: str) -> bool:
        asked.append(key)
        return False

    assert hot.answer(b"request", 0.0, evicted) is None
    assert asked == [KEY]
    assert hot.answer(b"request", 0.0, _always) is None  # forgotten, not just skipped


def test_the_byte_bound_evicts_the_least_recently_used() -> None:
    size = len(b"r0") + len(_hit(b"x" * 100).SerializeToString())
    hot = HotHits(max_bytes=2 * size)
    hot.remember(b"r0", _hit(b"x" * 100))
    hot.remember(b"r1", _hit(b"x" * 100))
    assert hot.answer(b"r0", 0.0, _always) is not None  # r0 is now the most recent
    hot.remember(b"r2", _hit(b"x" * 100))
    assert hot.answer(b"r1", 0.0, _always) is None
    assert hot.answer(b"r0", 0.0, _always) is not None
    assert hot.answer(b"r2", 0.0, _always) is not None
    hot.remember(b"huge", _hit(b"x" * 10_000))  # larger than the bound: not kept
    assert hot.answer(b"huge", 0.0, _always) is None
