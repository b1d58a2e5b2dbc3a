"""Single-flight, bounded admission and deadlines, over a real server with a gated fake
compile function (it blocks until the test releases it, and counts its calls)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from lowering.pipeline import CompileResult, Stage
from parser.codes import OUTPUT_RANK
from parser.diagnostics import error
from parser.spans import Span
from protos.generated.cutile.compile.v1 import compile_pb2, compile_pb2_grpc
from service.cache.disk import DiskCache
from service.compile.engine import CompileEngine

WAIT_S = 10


class GatedCompiler:
    """Wraps the fake compiler: each call waits for `gate`; `started`/`finished` count."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.gate = threading.Event()
        self.started = 0
        self.finished = 0
        self._lock = threading.Lock()

    def __call__(self, request, **kwargs) -> CompileResult:
        with self._lock:
            self.started += 1
        try:
            assert self.gate.wait(WAIT_S), "the test never released the gate"
            return self.inner(request, **kwargs)
        finally:
            with self._lock:
                self.finished += 1


def _until(predicate, timeout: float = WAIT_S) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "timed out waiting"
        time.sleep(0.01)


def _request(b: str = "128") -> compile_pb2.CompileRequest:
    return compile_pb2.CompileRequest(
        sources=[compile_pb2.SourceFile(name="add.rs", text="mod k {}")],
        entry="add",
        generics={"B": b},
        target="sm_90",
    )


@pytest.fixture
def gated(fake_compiler) -> GatedCompiler:
    return GatedCompiler(fake_compiler)


@pytest.fixture
def cache(tmp_path: Path) -> DiskCache:
    return DiskCache(tmp_path / "cache")


@pytest.fixture
def channel_for():
    opened: list[grpc.Channel] = []

    def open_channel(server) -> compile_pb2_grpc.CompileServiceStub:
        channel = grpc.insecure_channel(server.target)
        opened.append(channel)
        return compile_pb2_grpc.CompileServiceStub(channel)

    yield open_channel
    for channel in opened:
        channel.close()


def _server(start_server, gated, fake_assembler, cache, **options):
    engine = CompileEngine(fake_assembler, cache=cache, compile_fn=gated)
    return start_server(engine, **options)


def test_identical_concurrent_requests_compile_once(
    start_server, gated, fake_assembler, cache, channel_for
) -> None:
    stub = channel_for(_server(start_server, gated, fake_assembler, cache))
    futures = [stub.Compile.future(_request(), timeout=WAIT_S) for _ in range(8)]
    _until(lambda: gated.started == 1)
    time.sleep(0.3)  # let every call reach the server and join
    gated.gate.set()
    responses = [f.result() for f in futures]
    assert all(r.ok for r in responses)
    assert gated.started == 1
    assert len({r.artifact.cubin for r in responses}) == 1
    outcomes = sorted(r.cache for r in responses)
    assert outcomes.count(compile_pb2.CACHE_OUTCOME_MISS) == 1
    assert outcomes.count(compile_pb2.CACHE_OUTCOME_JOINED) == 7
    assert stub.Compile(_request(), timeout=WAIT_S).cache == compile_pb2.CACHE_OUTCOME_HIT


def test_cancelled_waiter_leaves_the_compile_running_for_others(
    start_server, gated, fake_assembler, cache, channel_for
) -> None:
    stub = channel_for(_server(start_server, gated, fake_assembler, cache))
    leaver = stub.Compile.future(_request(), timeout=WAIT_S)
    _until(lambda: gated.started == 1)
    stayer = stub.Compile.future(_request(), timeout=WAIT_S)
    time.sleep(0.2)
    assert leaver.cancel()
    time.sleep(0.2)
    gated.gate.set()
    response = stayer.result()
    assert response.ok and response.cache == compile_pb2.CACHE_OUTCOME_JOINED
    assert gated.started == 1
    assert cache.get(response.artifact.request_key.sha256) is not None  # still cached


def test_compile_whose_callers_all_left_is_not_cached(
    start_server, gated, fake_assembler, cache, channel_for
) -> None:
    stub = channel_for(_server(start_server, gated, fake_assembler, cache))
    only = stub.Compile.future(_request(), timeout=WAIT_S)
    _until(lambda: gated.started == 1)
    assert only.cancel()
    time.sleep(0.2)
    gated.gate.set()
    _until(lambda: gated.finished == 1)
    assert cache.total_bytes() == 0
    again = stub.Compile(_request(), timeout=WAIT_S)
    assert again.ok and again.cache == compile_pb2.CACHE_OUTCOME_MISS
    assert gated.started == 2


def test_deadline_exceeded_and_nothing_cached(
    start_server, gated, fake_assembler, cache, channel_for
) -> None:
    stub = channel_for(_server(start_server, gated, fake_assembler, cache))
    with pytest.raises(grpc.RpcError) as caught:
        stub.Compile(_request(), timeout=0.3)
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    gated.gate.set()
    _until(lambda: gated.finished == 1)
    assert cache.total_bytes() == 0


def test_full_queue_is_resource_exhausted_with_retry_info(
    start_server, gated, fake_assembler, cache, channel_for
) -> None:
    server = _server(
        start_server, gated, fake_assembler, cache, workers=1, max_queued=1, retry_delay_s=2.5
    )
    stub = channel_for(server)
    running = stub.Compile.future(_request("1"), timeout=WAIT_S)
    _until(lambda: gated.started == 1)
    queued = stub.Compile.future(_request("2"), timeout=WAIT_S)
    time.sleep(0.3)
    joined = stub.Compile.future(_request("2"), timeout=WAIT_S)  # joining is always admitted
    time.sleep(0.2)
    with pytest.raises(grpc.RpcError) as caught:
        stub.Compile(_request("3"), timeout=WAIT_S)
    error = caught.value
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    status = rpc_status.from_call(error)
    retry = error_details_pb2.RetryInfo()
    assert any(d.Unpack(retry) for d in status.details if d.Is(retry.DESCRIPTOR))
    assert retry.retry_delay.seconds == 2 and retry.retry_delay.nanos == 500_000_000
    gated.gate.set()
    assert running.result().ok and queued.result().ok and joined.result().ok
    assert stub.Compile(_request("3"), timeout=WAIT_S).ok  # room again
    assert gated.started == 3


def test_a_request_under_other_file_names_compiles_on_its_own_and_keeps_its_names(
    start_server, fake_assembler, cache, channel_for
) -> None:
    """File names are not in the key, so two clients' sources may share one; their
    diagnostics name each client's own files, so a failing compile is not shared between
    them (one client's file names never reach another)."""

    def failing(request, **kwargs) -> CompileResult:
        source = request.sources[0]
        problem = error(OUTPUT_RANK, "a bad thing", Span(source, 0, 3), "here")
        return CompileResult(diagnostics=(problem,), stage_reached=Stage.CHECK)

    gated = GatedCompiler(failing)
    stub = channel_for(_server(start_server, gated, fake_assembler, cache))

    def named(name: str) -> compile_pb2.CompileRequest:
        request = _request()
        request.sources[0].name = name
        return request

    first = stub.Compile.future(named("private_a.rs"), timeout=WAIT_S)
    _until(lambda: gated.started == 1)
    second = stub.Compile.future(named("b.rs"), timeout=WAIT_S)
    _until(lambda: gated.started == 2)  # not joined: a flight of its own
    gated.gate.set()
    a, b = first.result(), second.result()
    assert not a.ok and not b.ok
    assert b.cache == compile_pb2.CACHE_OUTCOME_MISS
    assert {s.source_name for d in b.diagnostics for s in d.spans} == {"b.rs"}
    assert "private_a" not in b.diagnostics[0].rendered
