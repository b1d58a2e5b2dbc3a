"""CompileBatch, FindMissing/GetArtifact and GetCapabilities over a real server."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import grpc
import pytest
from google.rpc import code_pb2, error_details_pb2
from grpc_status import rpc_status

from client_stubs.integrity import verify
from lowering.pipeline import ARCHS, CompileResult
from protos.generated.cutile.compile.v1 import compile_pb2, compile_pb2_grpc
from service.cache.disk import DiskCache
from service.cache.store import CacheEntry
from service.compile.engine import CompileEngine
from service.server import errors
from service.server.registration import OFF_LOOP_BYTES
from service.server.servicer import ServiceLimits

TIMEOUT_S = 30
SOURCES = [
    compile_pb2.SourceFile(name="a.rs", text="mod a {}"),
    compile_pb2.SourceFile(name="b.rs", text="mod b {}"),
]


@pytest.fixture
def compiler(fake_compiler, make_error):
    """Entry "bad" fails to compile; "slow" takes 0.4 s; anything else succeeds."""

    def compile_fn(request, **kwargs):
        if request.entry == "bad":
            fake_compiler.calls.append(request)
            return CompileResult(diagnostics=(make_error(),))
        if request.entry == "slow":
            time.sleep(0.4)
        return fake_compiler(request, **kwargs)

    return compile_fn


@pytest.fixture
def server(start_server, compiler, fake_assembler, tmp_path: Path):
    engine = CompileEngine(fake_assembler, cache=DiskCache(tmp_path / "c"), compile_fn=compiler)
    limits = ServiceLimits(
        artifact_chunk_bytes=5,
        min_artifact_chunk_bytes=3,
        max_inline_cubin_bytes=8,
        max_batch_items=10,
    )
    return start_server(engine, service_limits=limits)


@pytest.fixture
def stub(server):
    with grpc.insecure_channel(server.target) as channel:
        yield compile_pb2_grpc.CompileServiceStub(channel)


def _item(entry: str, **fields) -> compile_pb2.BatchItem:
    return compile_pb2.BatchItem(entry=entry, generics={"B": "128"}, **fields)


def _batch(stub, *items, sources=SOURCES) -> list[compile_pb2.CompileBatchResult]:
    request = compile_pb2.CompileBatchRequest(sources=sources, items=items)
    return list(stub.CompileBatch(request, timeout=TIMEOUT_S))


def _fetch(stub, key: compile_pb2.Digest, max_chunk: int = 0) -> list[compile_pb2.ArtifactChunk]:
    request = compile_pb2.GetArtifactRequest(key=key, max_chunk_bytes=max_chunk)
    return list(stub.GetArtifact(request, timeout=TIMEOUT_S))


def test_batch_streams_per_item_statuses_in_completion_order(stub, fake_compiler) -> None:
    results = _batch(
        stub,
        _item("slow", source_indices=[1]),
        _item("add", target="sm_80"),
        _item("bad"),
        _item(""),  # malformed
        _item("add", source_indices=[7]),  # no such file
    )
    assert sorted(r.index for r in results) == [0, 1, 2, 3, 4]
    assert results[-1].index == 0  # the slow item finished last
    by_index = {r.index: r for r in results}
    assert by_index[0].status.code == code_pb2.OK and by_index[0].response.ok
    assert by_index[1].status.code == code_pb2.OK
    assert by_index[1].response.artifact.contract.target.sm == "sm_80"
    failed = by_index[2]
    assert failed.status.code == code_pb2.INVALID_ARGUMENT and not failed.response.ok
    assert failed.response.diagnostics[0].message == "a bad thing"
    for index, field in ((3, "items[3].entry"), (4, "items[4].source_indices[0]")):
        status = by_index[index].status
        assert status.code == code_pb2.INVALID_ARGUMENT
        bad = error_details_pb2.BadRequest()
        assert any(d.Unpack(bad) for d in status.details if d.Is(bad.DESCRIPTOR))
        assert bad.field_violations[0].field == field
    compiled = {(r.sources[0].name, r.entry, r.arch) for r in fake_compiler.calls}
    assert ("b.rs", "slow", "sm_90") in compiled and ("a.rs", "add", "sm_80") in compiled
    # an item without indices has every source, so it shares Compile's cache key
    unary = stub.Compile(
        compile_pb2.CompileRequest(
            sources=SOURCES, entry="add", generics={"B": "128"}, target="sm_80"
        ),
        timeout=TIMEOUT_S,
    )
    assert unary.cache == compile_pb2.CACHE_OUTCOME_HIT


def test_large_cubins_are_left_out_of_batch_results_and_fetched_in_chunks(stub) -> None:
    (result,) = _batch(stub, _item("add"))
    artifact = result.response.artifact
    assert artifact.cubin == b"" and artifact.cubin_digest.size > 8  # over the inline limit
    assert (
        stub.FindMissing(
            compile_pb2.FindMissingRequest(keys=[artifact.request_key]), timeout=TIMEOUT_S
        ).missing
        == []
    )
    chunks = _fetch(stub, artifact.request_key)
    head, body = chunks[0], chunks[1:]
    assert head.artifact.cubin_digest == artifact.cubin_digest
    assert head.artifact.contract == artifact.contract
    assert all(len(c.data) <= 5 for c in body)
    assert len(body) == -(-artifact.cubin_digest.size // 5)
    assert [c.offset for c in body] == list(range(0, artifact.cubin_digest.size, 5))
    cubin = b"".join(c.data for c in body)
    assert hashlib.sha256(cubin).hexdigest() == artifact.cubin_digest.sha256
    assert len(_fetch(stub, artifact.request_key, max_chunk=4)) == 1 + -(-len(cubin) // 4)
    # no chunks below the server's floor (3 here, 4 KiB by default): one message per byte
    # would cost the server as much as the client
    assert len(_fetch(stub, artifact.request_key, max_chunk=1)) == 1 + -(-len(cubin) // 3)
    # the key's size is not the client's to set: it is not echoed (nor signed)
    lying = compile_pb2.Digest(sha256=artifact.request_key.sha256, size=-7)
    assert _fetch(stub, lying)[0].artifact.request_key == compile_pb2.Digest(
        sha256=artifact.request_key.sha256, size=0
    )


def test_find_missing_and_not_found(stub) -> None:
    response = stub.Compile(
        compile_pb2.CompileRequest(sources=SOURCES[:1], entry="add", generic_args=["1"]),
        timeout=TIMEOUT_S,
    )
    present = response.artifact.request_key
    absent = compile_pb2.Digest(sha256="0" * 64, size=10)
    found = stub.FindMissing(
        compile_pb2.FindMissingRequest(keys=[absent, present]), timeout=TIMEOUT_S
    )
    assert list(found.missing) == [absent]
    assert b"".join(c.data for c in _fetch(stub, present)) == response.artifact.cubin
    with pytest.raises(grpc.RpcError) as caught:
        _fetch(stub, absent)
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.RpcError) as caught:
        stub.FindMissing(
            compile_pb2.FindMissingRequest(keys=[compile_pb2.Digest(sha256="../x")]),
            timeout=TIMEOUT_S,
        )
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_find_missing_reads_each_distinct_key_once(
    start_server, compiler, fake_assembler, tmp_path: Path
) -> None:
    engine = CompileEngine(fake_assembler, cache=DiskCache(tmp_path / "c"), compile_fn=compiler)
    reads: list[str] = []
    read = engine.artifact
    engine.artifact = lambda key: reads.append(key) or read(key)  # type: ignore[method-assign]
    server = start_server(engine)
    with grpc.insecure_channel(server.target) as channel:
        stub = compile_pb2_grpc.CompileServiceStub(channel)
        request = compile_pb2.CompileRequest(sources=SOURCES[:1], entry="add", generic_args=["1"])
        present = stub.Compile(request, timeout=TIMEOUT_S).artifact.request_key
        absent = compile_pb2.Digest(sha256="0" * 64, size=10)
        keys = [present] * 1000 + [absent, present, absent]
        found = stub.FindMissing(compile_pb2.FindMissingRequest(keys=keys), timeout=TIMEOUT_S)
    assert list(found.missing) == [absent, absent]  # in request order, repeats kept
    assert sorted(reads) == sorted([present.sha256, absent.sha256])


def test_malformed_batch_envelope_is_invalid_argument(stub) -> None:
    for items in ([], [_item("add")] * 11):
        with pytest.raises(grpc.RpcError) as caught:
            _batch(stub, *items)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as caught:
        _batch(stub, _item("add"), sources=[compile_pb2.SourceFile(name="../x.rs", text="")])
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def _violations(status) -> list[tuple[str, str]]:
    bad = error_details_pb2.BadRequest()
    (detail,) = [d for d in status.details if d.Is(error_details_pb2.BadRequest.DESCRIPTOR)]
    detail.Unpack(bad)
    return [(v.field, v.description) for v in bad.field_violations]


def test_an_item_of_more_source_indices_than_files_is_refused_as_a_whole(stub) -> None:
    """200,000 indices (a 200 KB item) get one violation, at once, in a result a client
    reads: not 200,000 of them built on the event loop."""
    (result,) = _batch(stub, _item("add", source_indices=[7] * 200_000))
    assert result.status.code == code_pb2.INVALID_ARGUMENT
    assert _violations(result.status) == [
        ("items[0].source_indices", "200000 indices exceed the limit of 64 files")
    ]
    (result,) = _batch(stub, _item("add", source_indices=[1, 9, 1]))
    assert _violations(result.status) == [
        ("items[0].source_indices[1]", "no source file 9"),
        ("items[0].source_indices[2]", "repeated index"),
    ]


def test_a_status_lists_the_first_violations_and_counts_the_rest(stub) -> None:
    keys = [compile_pb2.Digest(sha256="not hex") for _ in range(1000)]
    with pytest.raises(grpc.RpcError) as caught:
        stub.FindMissing(compile_pb2.FindMissingRequest(keys=keys), timeout=TIMEOUT_S)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    listed = _violations(rpc_status.from_call(caught.value))
    assert len(listed) == errors.MAX_VIOLATIONS + 1
    assert listed[0] == ("keys[0].sha256", "must be 64 lowercase hex digits")
    assert listed[-1] == ("", f"{1000 - errors.MAX_VIOLATIONS} more violations not listed")


def test_capabilities(stub) -> None:
    caps = stub.GetCapabilities(compile_pb2.GetCapabilitiesRequest(), timeout=TIMEOUT_S)
    assert list(caps.targets) == list(ARCHS)
    assert caps.default_target == "sm_90"
    assert caps.tileiras_available and caps.tileiras_version == "13.5-fake"
    assert caps.bytecode_versions and caps.service_version and caps.compiler_version
    assert list(caps.host_arches) == ["x86_64", "aarch64"]
    limits = caps.limits
    assert limits.max_source_bytes == 1 << 20 and limits.max_files == 64
    assert limits.max_batch_items == 10 and limits.artifact_chunk_bytes == 5
    assert limits.max_inline_cubin_bytes == 8 and limits.workers >= 1
    assert limits.max_queued == 4 * limits.workers and limits.max_opt_level == 3


def test_capabilities_without_tileiras(start_server) -> None:
    server = start_server(None)
    with grpc.insecure_channel(server.target) as channel:
        stub = compile_pb2_grpc.CompileServiceStub(channel)
        caps = stub.GetCapabilities(compile_pb2.GetCapabilitiesRequest(), timeout=TIMEOUT_S)
        assert not caps.tileiras_available and caps.tileiras_version == ""
        (result,) = _batch(stub, _item("add"))
        assert result.status.code == code_pb2.UNAVAILABLE


def test_find_missing_says_present_only_what_get_artifact_serves(stub, tmp_path) -> None:
    """A cubin stored under its content key is no artifact: asked for by that key, the
    server says missing, as GetArtifact would fail on it."""
    response = stub.Compile(_request_for("add"), timeout=TIMEOUT_S)
    engine_cache = DiskCache(tmp_path / "c")
    content_only = "ab" * 32
    engine_cache.put(content_only, CacheEntry(response.artifact.cubin, b""))
    asked = compile_pb2.Digest(sha256=content_only)
    found = stub.FindMissing(compile_pb2.FindMissingRequest(keys=[asked]), timeout=TIMEOUT_S)
    assert list(found.missing) == [asked]
    with pytest.raises(grpc.RpcError) as caught:
        _fetch(stub, asked)
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND


def test_artifacts_carry_both_digests_and_the_signature(
    start_server, compiler, fake_assembler, tmp_path: Path
) -> None:
    engine = CompileEngine(fake_assembler, cache=DiskCache(tmp_path / "s"), compile_fn=compiler)
    server = start_server(engine, signing_key=b"fleet key")
    with grpc.insecure_channel(server.target) as channel:
        stub = compile_pb2_grpc.CompileServiceStub(channel)
        artifact = stub.Compile(_request_for("add"), timeout=TIMEOUT_S).artifact
        verify(artifact, "compiled", b"fleet key")  # raises on any mismatch
        head, *body = _fetch(stub, artifact.request_key)
    fetched = compile_pb2.Artifact()
    fetched.CopyFrom(head.artifact)
    fetched.cubin = b"".join(c.data for c in body)
    verify(fetched, "fetched", b"fleet key")
    assert fetched.signature == artifact.signature


def _request_for(entry: str) -> compile_pb2.CompileRequest:
    return compile_pb2.CompileRequest(sources=SOURCES[:1], entry=entry, generics={"B": "128"})


def test_items_of_large_sources_are_converted_off_the_event_loop(stub, monkeypatch) -> None:
    """A thousand cached items of a 1 MiB source once held the event loop (and every health
    check) for 0.9 s: each item was converted and keyed on it."""
    import asyncio

    from service.server import servicer

    on_loop: list[bool] = []
    convert = servicer.request_from_proto

    def recording(*args, **kwargs):
        try:
            asyncio.get_running_loop()
            on_loop.append(True)
        except RuntimeError:
            on_loop.append(False)
        return convert(*args, **kwargs)

    monkeypatch.setattr(servicer, "request_from_proto", recording)
    small = _batch(stub, _item("add"), _item("add"))
    large_text = "mod a {}\n" + "// padding\n" * (OFF_LOOP_BYTES // 11 + 1)
    large = _batch(
        stub,
        _item("add"),
        _item("add"),
        sources=[compile_pb2.SourceFile(name="a.rs", text=large_text)],
    )
    assert all(r.status.code == code_pb2.OK for r in small + large)
    assert on_loop == [True, True, False, False]
