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

import threading
from collections import OrderedDict
from collections.abc import Callable

from protos.generated.cutile.compile.v1 import compile_pb2

DEFAULT_HOT_BYTES = 32 << 20


class HotHits:
    def __init__(self, max_bytes: int = DEFAULT_HOT_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[bytes, tuple[str, bytes]] = OrderedDict()  # -> (key, base)
        self._bytes = 0
        self._lock = threading.Lock()

    def answer(
        self, request: bytes, total_ms: float, still_cached: Callable[[str], bool]
    ) -> bytes | None:
        """The response to `request` if it was a cache hit before and `still_cached(its
        request key)`, else None."""
        with self._lock:
            found = self._entries.get(request)
            if found is None:
                return None
            self._entries.move_to_end(request)
        key, base = found
        if not still_cached(key):
            self._forget(request)
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
        size = len(request) + len(encoded)
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._entries.pop(request, None)
            if old is not None:
                self._bytes -= len(request) + len(old[1])
            self._entries[request] = (response.artifact.request_key.sha256, encoded)
            self._bytes += size
            while self._bytes > self.max_bytes:
                evicted, (_, value) = self._entries.popitem(last=False)
                self._bytes -= len(evicted) + len(value)

    def _forget(self, request: bytes) -> None:
        with self._lock:
            old = self._entries.pop(request, None)
            if old is not None:
                self._bytes -= len(request) + len(old[1])
