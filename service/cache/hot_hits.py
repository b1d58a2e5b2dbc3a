"""Answers to repeated identical Compile requests, kept as wire bytes.

A cache hit still decodes the request, validates it, hashes every source into the request
key and builds a response: about 100 µs of Python per call, a tenth of a hit's round trip.
A client asking for the same kernel again sends the same bytes, so `HotHits` maps the exact
request bytes of an earlier cache hit to that hit's response, serialized without its
per-call fields (cache outcome, timings); `answer` appends fresh ones. Protobuf reads a
repeated scalar field as its last value, so the concatenation is one valid message.

Only successful cache hits are kept, so an entry is always an artifact the cache already
served for exactly these bytes. It answers only while the memory layer still holds that
artifact (`still_cached`), so it never outlives the layer it speeds up; bounded by bytes,
least recently used first out.
"""

from __future__ import annotations

from collections.abc import Callable

from client_stubs.lru import ByteLRU
from protos.generated.cutile.compile.v1 import compile_pb2

DEFAULT_HOT_BYTES = 32 << 20


class HotHits:
    def __init__(self, max_bytes: int = DEFAULT_HOT_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: ByteLRU[bytes, tuple[str, bytes]] = ByteLRU(max_bytes)  # -> (key, base)

    def answer(
        self, request: bytes, total_ms: float, still_cached: Callable[[str], bool]
    ) -> bytes | None:
        """The response to `request` if it was a cache hit before and `still_cached(its
        request key)`, else None."""
        found = self._entries.get(request)
        if found is None:
            return None
        key, base = found
        if not still_cached(key):
            self._entries.discard(request)
            return None
        timings = compile_pb2.CompileTimings(total_ms=total_ms)
        fresh = compile_pb2.CompileResponse(cache=compile_pb2.CACHE_OUTCOME_HIT, timings=timings)
        return base + fresh.SerializeToString()

    def remember(self, request: bytes, response: compile_pb2.CompileResponse) -> None:
        """Keep `response`, a successful cache hit for exactly `request`."""
        if not response.ok or response.cache != compile_pb2.CACHE_OUTCOME_HIT:
            return
        base = compile_pb2.CompileResponse()
        base.CopyFrom(response)
        base.ClearField("cache")
        base.ClearField("timings")
        encoded = base.SerializeToString()
        key = response.artifact.request_key.sha256
        self._entries.put(request, (key, encoded), size=len(request) + len(encoded))
