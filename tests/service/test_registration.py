"""service.server.registration: requests that do not decode are INVALID_ARGUMENT, and the
server keeps serving."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from protos.generated.cutile.compile.v1 import compile_pb2, compile_pb2_grpc
from service.compile.engine import CompileEngine

BAD_UTF8 = b"\x0a\x05\x12\x03\xff\xfe\xfd"  # sources[0].text holds bytes that are not UTF-8
CORRUPT = b"\xff\xff\xff\xff"


def _violations(error: grpc.RpcError) -> list[tuple[str, str]]:
    status = rpc_status.from_call(error)
    assert status is not None
    found = []
    for detail in status.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            found += [(v.field, v.description) for v in bad.field_violations]
    return found


@pytest.mark.parametrize(
    ("method", "data", "reason"),
    [
        ("Compile", BAD_UTF8, "bad UTF-8"),
        ("Compile", CORRUPT, "corrupt"),
        ("CompileBatch", CORRUPT, "corrupt"),
        ("GetArtifact", CORRUPT, "corrupt"),
        ("FindMissing", CORRUPT, "corrupt"),
    ],
)
def test_undecodable_requests_are_invalid_argument(
    start_server, fake_compiler, fake_assembler, method: str, data: bytes, reason: str
) -> None:
    server = start_server(CompileEngine(fake_assembler, compile_fn=fake_compiler))
    path = f"/cutile.compile.v1.CompileService/{method}"
    streaming = method in ("CompileBatch", "GetArtifact")
    with grpc.insecure_channel(server.target) as channel:
        call = (channel.unary_stream if streaming else channel.unary_unary)(path)
        with pytest.raises(grpc.RpcError) as caught:
            result = call(data, timeout=10)
            if streaming:
                list(result)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        ((field, description),) = _violations(caught.value)
        assert field == "request"
        assert reason in description
        stub = compile_pb2_grpc.CompileServiceStub(channel)
        good = compile_pb2.CompileRequest(
            sources=[compile_pb2.SourceFile(name="a.rs", text="mod k {}")], entry="add"
        )
        assert stub.Compile(good, timeout=10).ok  # still serving
    assert len(fake_compiler.calls) == 1
