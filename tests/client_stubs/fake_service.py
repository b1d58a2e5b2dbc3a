"""A fake CompileService on a real in-process gRPC server (127.0.0.1:0), for the client
tests: `FakeService` answers Compile with a responder and serves FindMissing / GetArtifact from
what it `stored`; the `service` fixture yields it with its target."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent import futures

import grpc
import pytest
from google.protobuf import duration_pb2
from google.rpc import error_details_pb2, status_pb2

from client_stubs.client import COMPILE_METHOD
from client_stubs.client_core import sources_digest
from client_stubs.integrity import seal
from protos.generated.cutile.compile.v1 import compile_pb2

SOURCE = "#[cutile::module] mod kernel { /* ... */ }"
CUBIN = b"\x7fELF compiled cubin"
Responder = Callable[[compile_pb2.CompileRequest], compile_pb2.CompileResponse]


class FakeService:
    """Answers with `respond(request)`; can fail the first `unavailable` calls."""

    def __init__(self, respond: Responder) -> None:
        self.respond = respond
        self.requests: list[compile_pb2.CompileRequest] = []
        self.unavailable = 0
        self.exhausted = 0  # RESOURCE_EXHAUSTED with a RetryInfo of `retry_after` seconds
        self.retry_after = 0.0
        self.abort_with: grpc.StatusCode | None = None
        self.stored: dict[str, compile_pb2.Artifact] = {}  # what FindMissing/GetArtifact know
        self.chunk_bytes = 1000
        self.find_missing: list[list[str]] = []
        self.fetched: list[str] = []
        self.stream_artifact = self._stored_artifact  # what GetArtifact streams
        self.compile_seconds = 0.0  # how long a Compile takes

    def _fail_first_calls(self, context) -> None:
        if self.unavailable > 0:
            self.unavailable -= 1
            context.abort(grpc.StatusCode.UNAVAILABLE, "warming up")
        if self.exhausted > 0:
            self.exhausted -= 1
            delay = duration_pb2.Duration()
            delay.FromNanoseconds(int(self.retry_after * 1e9))
            status = status_pb2.Status(code=8, message="the compile queue is full")
            status.details.add().Pack(error_details_pb2.RetryInfo(retry_delay=delay))
            context.set_trailing_metadata(
                (("grpc-status-details-bin", status.SerializeToString()),)
            )
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "the compile queue is full")

    def Compile(self, request, context):
        self.requests.append(request)
        self._fail_first_calls(context)
        if self.abort_with is not None:
            context.abort(self.abort_with, "bad request")
        time.sleep(self.compile_seconds)
        return self.respond(request)

    def FindMissing(self, request, context):
        self.find_missing.append([k.sha256 for k in request.keys])
        self._fail_first_calls(context)
        return compile_pb2.FindMissingResponse(
            missing=[k for k in request.keys if k.sha256 not in self.stored]
        )

    def GetArtifact(self, request, context):
        return self.stream_artifact(request, context)

    def _stored_artifact(self, request, context):
        key = request.key.sha256
        self.fetched.append(key)
        found = self.stored.get(key)
        if found is None:
            context.abort(grpc.StatusCode.NOT_FOUND, f"no artifact for key {key[:8]}")
        head = compile_pb2.Artifact()
        head.CopyFrom(found)
        head.cubin = b""
        yield compile_pb2.ArtifactChunk(artifact=head)
        for offset in range(0, len(found.cubin), self.chunk_bytes):
            data = found.cubin[offset : offset + self.chunk_bytes]
            yield compile_pb2.ArtifactChunk(offset=offset, data=data)


def answering(request: compile_pb2.CompileRequest, contract: object) -> None:
    """Make `contract` name what `request` asked for, as the real service's does: its
    sources' digest, entry, target, host arch and generics."""
    kernel, target = contract.kernel, contract.target  # type: ignore[attr-defined]
    kernel.source_sha256 = sources_digest(request.sources)
    module, _, kernel.function = request.entry.rpartition("::")
    kernel.module = module or kernel.module
    target.sm = request.target or target.sm
    target.host_arch = request.options.host_arch or target.host_arch
    generics = contract.specialization.generics  # type: ignore[attr-defined]
    del generics[:]
    for name, value in sorted(request.generics.items()):
        generics.add(name=name, value=value)


def ok_response(kit) -> Callable[[compile_pb2.CompileRequest], compile_pb2.CompileResponse]:
    def respond(request: compile_pb2.CompileRequest) -> compile_pb2.CompileResponse:
        block = int(request.generics.get("B", "128"))
        response = compile_pb2.CompileResponse(ok=True, cache=compile_pb2.CACHE_OUTCOME_MISS)
        response.artifact.cubin = CUBIN
        response.artifact.contract.CopyFrom(kit.add(block=block))
        answering(request, response.artifact.contract)
        response.artifact.request_key.sha256 = "ab" * 32
        seal(response.artifact)
        return response

    return respond


@pytest.fixture
def service(kit) -> Iterator[tuple[FakeService, str]]:
    fake = FakeService(ok_response(kit))
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    # Registered by hand, like the client builds its call: the generated *_grpc module refuses
    # grpcio runtimes older than the grpcio-tools that generated it.
    service_name = COMPILE_METHOD.strip("/").split("/")[0]
    handlers = {
        "Compile": grpc.unary_unary_rpc_method_handler(
            fake.Compile,
            request_deserializer=compile_pb2.CompileRequest.FromString,
            response_serializer=compile_pb2.CompileResponse.SerializeToString,
        ),
        "FindMissing": grpc.unary_unary_rpc_method_handler(
            fake.FindMissing,
            request_deserializer=compile_pb2.FindMissingRequest.FromString,
            response_serializer=compile_pb2.FindMissingResponse.SerializeToString,
        ),
        "GetArtifact": grpc.unary_stream_rpc_method_handler(
            fake.GetArtifact,
            request_deserializer=compile_pb2.GetArtifactRequest.FromString,
            response_serializer=compile_pb2.ArtifactChunk.SerializeToString,
        ),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service_name, handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield fake, f"127.0.0.1:{port}"
    server.stop(grace=None)
