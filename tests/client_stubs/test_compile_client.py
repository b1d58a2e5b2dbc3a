"""CompileClient against an in-test fake CompileService on 127.0.0.1:0."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable

import grpc
import pytest

from client_stubs import (
    ArtifactCache,
    Bundle,
    CompileClient,
    CompileError,
    DeviceTensor,
    IntegrityError,
    Kernel,
    ServiceError,
    request_key,
)
from client_stubs.client import (
    COMPILE_METHOD,
    FIND_MISSING_METHOD,
    GET_ARTIFACT_METHOD,
)
from client_stubs.integrity import seal
from protos.generated.cutile.compile.v1 import compile_pb2, contract_pb2
from tests.client_stubs import fake_service
from tests.client_stubs.fake_service import ok_response

SOURCE, CUBIN = fake_service.SOURCE, fake_service.CUBIN


def make_client(address: str, tmp_path, **kw) -> CompileClient:
    return CompileClient(
        address, cache=ArtifactCache(tmp_path / "cache"), initial_backoff=0.01, timeout=10, **kw
    )


def test_compile_returns_a_kernel_and_sends_the_request(service, tmp_path):
    fake, address = service
    with make_client(address, tmp_path) as client:
        kernel = client.compile(
            SOURCE,
            "add",
            {"B": 1024},
            arch="sm_90",
            file_name="add.rs",
            host_arch="x86_64",
            opt_level=3,
        )
    assert isinstance(kernel, Kernel) and kernel.spec.params[0].tile_shape == (1024,)
    (request,) = fake.requests
    assert request.entry == "add" and dict(request.generics) == {"B": "1024"}
    assert request.target == "sm_90" and request.sources[0].name == "add.rs"
    assert request.sources[0].text == SOURCE
    assert request.options.host_arch == "x86_64" and request.options.opt_level == 3


def test_host_arch_defaults_to_this_machine(service, tmp_path, monkeypatch):
    from client_stubs import client as client_module

    monkeypatch.setattr(client_module, "host_arch", lambda: "aarch64")
    fake, address = service
    make_client(address, tmp_path).compile(SOURCE, "add", {"B": 128}, arch="sm_90")
    assert fake.requests[0].options.host_arch == "aarch64"


def test_arch_defaults_to_the_local_gpu_or_the_server_default(service, tmp_path, monkeypatch):
    from client_stubs import driver

    fake, address = service
    monkeypatch.setattr(driver, "device_count", lambda: 0)
    make_client(address, tmp_path).compile(SOURCE, "add", {"B": 128})
    monkeypatch.setattr(driver, "device_count", lambda: 1)
    monkeypatch.setattr(driver, "current_device", lambda: 0)
    monkeypatch.setattr(driver, "device_sm", lambda ordinal: "sm_90")
    make_client(address, tmp_path).compile(SOURCE, "add", {"B": 128})
    assert [r.target for r in fake.requests] == ["", "sm_90"]


def test_repeated_compiles_hit_the_local_cache(service, tmp_path):
    fake, address = service
    client = make_client(address, tmp_path)
    first = client.compile_artifact(SOURCE, "add", {"B": 128}, arch="sm_90")
    second = client.compile_artifact(SOURCE, "add", {"B": 128}, arch="sm_90")
    assert first == second and len(fake.requests) == 1
    client.compile_artifact(SOURCE, "add", {"B": 256}, arch="sm_90")
    assert len(fake.requests) == 2
    # a fresh client with the same cache folder does not hit the network either
    make_client(address, tmp_path).compile(SOURCE, "add", {"B": 128}, arch="sm_90")
    assert len(fake.requests) == 2
    # skip_cache goes to the server but shares the key
    client.compile_artifact(SOURCE, "add", {"B": 128}, arch="sm_90", skip_cache=True)
    assert len(fake.requests) == 3 and fake.requests[-1].options.skip_cache


def test_request_key_ignores_skip_cache():
    a = CompileClient.build_request(SOURCE, "add", {"B": 1}, "sm_90")
    b = CompileClient.build_request(SOURCE, "add", {"B": 1}, "sm_90", skip_cache=True)
    c = CompileClient.build_request(SOURCE, "add", {"B": 2}, "sm_90")
    assert request_key(a) == request_key(b) != request_key(c)


def test_request_key_depends_on_the_sources_not_their_names():
    a = CompileClient.build_request(SOURCE, "add", {"B": 1}, "sm_90", file_name="add.rs")
    b = CompileClient.build_request(SOURCE, "add", {"B": 1}, "sm_90", file_name="/abs/k/add.rs")
    c = CompileClient.build_request(SOURCE + " ", "add", {"B": 1}, "sm_90", file_name="add.rs")
    assert request_key(a) == request_key(b) != request_key(c)
    assert b.sources[0].name == "/abs/k/add.rs"  # the request still names the file


def test_specialize_for_measures_the_tensors_into_the_request_and_its_key():
    x = DeviceTensor(0x7F00_0000_0000, (1000, 256), dtype="f16")
    plain = CompileClient.build_request(SOURCE, "add", {"B": 1}, "sm_90")
    special = CompileClient.build_request(SOURCE, "add", {"B": 1}, "sm_90", specialize_for={"x": x})
    (facts,) = special.specialization
    assert (facts.param, list(facts.dim_divisors), list(facts.stride_divisors)) == (
        "x",
        [8, 16],
        [16, 1],
    )
    assert request_key(plain) != request_key(special)


def test_specialize_for_sends_view_facts_only_where_they_relax_the_default():
    base = 0x7F00_0000_0000
    aligned = DeviceTensor(base, (1024,))
    request = CompileClient.build_request(
        SOURCE,
        "add",
        {"B": 1},
        "sm_90",
        specialize_for={"x": aligned, "y": DeviceTensor(base + 4, (1024,)), "z": aligned},
    )
    x, y, _ = request.specialization
    assert (x.base_align, x.any_last_stride) == (0, False)  # the default: unset
    assert (y.base_align, y.any_last_stride) == (4, False)
    plain = CompileClient.build_request(SOURCE, "add", {"B": 1}, "sm_90")
    assert request_key(plain) != request_key(request)


def facts_response(kit) -> Callable[[compile_pb2.CompileRequest], compile_pb2.CompileResponse]:
    """Like the service: the contract assumes a 16-byte aligned base and a unit last stride of
    every tensor unless the request's facts relax them."""
    plain = ok_response(kit)

    def respond(request: compile_pb2.CompileRequest) -> compile_pb2.CompileResponse:
        response = plain(request)
        contract = response.artifact.contract
        facts = {f.param: f for f in request.specialization}
        for param in contract.params:
            fact = facts.get(param.name, compile_pb2.TensorFacts())
            align = fact.base_align or 16
            contract.assumptions.add(
                param=param.index, kind=contract_pb2.ASSUMPTION_KIND_BASE_ALIGN, value=align
            )
            if not fact.any_last_stride:
                contract.assumptions.add(
                    param=param.index, kind=contract_pb2.ASSUMPTION_KIND_STRIDE_ONE, value=1
                )
        response.artifact.request_key.sha256 = request_key(request)
        seal(response.artifact)
        return response

    return respond


def test_kernel_for_args_asks_for_a_relaxed_variant_only_when_the_general_one_does_not_fit(
    service, kit, tmp_path
):
    fake, address = service
    fake.respond = facts_response(kit)
    client = make_client(address, tmp_path)
    base, n = 0x7F10_0000_0000, 4096
    z = DeviceTensor(0x7F00_0000_0000, (n,)).partition((128,))
    y = DeviceTensor(0x7F20_0000_0000, (n,))

    def kernel_for(x: DeviceTensor) -> Kernel:
        return client.kernel_for_args(SOURCE, "add", (z, x, y), {"B": 128}, arch="sm_90")

    general = kernel_for(DeviceTensor(base, (n,)))
    assert [list(r.specialization) for r in fake.requests] == [[]]
    misaligned = kernel_for(DeviceTensor(base + 4, (n - 1,)))  # x[1:]
    assert len(fake.requests) == 2  # the general kernel came from the local cache
    facts = {f.param: f for f in fake.requests[-1].specialization}
    assert sorted(facts) == ["x", "y", "z"]
    assert (facts["x"].base_align, facts["x"].any_last_stride) == (4, False)
    assert (facts["y"].base_align, facts["z"].base_align) == (0, 0)
    assert misaligned.contract != general.contract
    misaligned.plan(z, DeviceTensor(base + 4, (n - 1,)), y)  # it fits
    strided = kernel_for(DeviceTensor(base, (n,), strides=(2,)))  # x[::2]
    x_facts = fake.requests[-1].specialization[0]
    assert (x_facts.param, x_facts.base_align, x_facts.any_last_stride) == ("x", 0, True)
    strided.plan(z, DeviceTensor(base, (n,), strides=(2,)), y)
    kernel_for(DeviceTensor(base + 4, (n - 1,)))
    assert len(fake.requests) == 3  # both variants are cached locally now


def test_kernel_for_args_prefers_a_fitting_bundled_variant(service, kit, tmp_path):
    fake, address = service
    fake.respond = facts_response(kit)
    contract = kit.add(block=128)
    for param in range(3):
        kind = contract_pb2.ASSUMPTION_KIND_BASE_ALIGN
        contract.assumptions.add(param=param, kind=kind, value=16)
    bundle_dir = tmp_path / "bundle"
    bundle_dir.mkdir()
    (bundle_dir / "add.cubin").write_bytes(CUBIN)
    (bundle_dir / "add.contract.pb").write_bytes(contract.SerializeToString())
    kernel_record = {
        "module": "kernel",
        "function": "add",
        "generics": {"B": "128"},
        "sm": "sm_90",
        "cubin": "add.cubin",
        "contract": "add.contract.pb",
        "cubin_sha256": hashlib.sha256(CUBIN).hexdigest(),
        "contract_sha256": hashlib.sha256(
            contract.SerializeToString(deterministic=True)
        ).hexdigest(),
    }
    (bundle_dir / "manifest.json").write_text(json.dumps({"schema": 1, "kernels": [kernel_record]}))
    bundle = Bundle.open(bundle_dir)
    client = make_client(address, tmp_path)
    z = DeviceTensor(0x7F00_0000_0000, (256,)).partition((128,))
    y = DeviceTensor(0x7F20_0000_0000, (256,))

    def kernel_for(x: DeviceTensor) -> Kernel:
        return client.kernel_for_args(
            SOURCE, "add", (z, x, y), {"B": 128}, arch="sm_90", bundle=bundle
        )

    assert kernel_for(DeviceTensor(0x7F10_0000_0000, (256,))).contract == contract
    assert fake.requests == []
    kernel_for(DeviceTensor(0x7F10_0000_0004, (255,)))  # x[1:]: the bundle's does not fit
    assert [(f.param, f.base_align) for f in fake.requests[-1].specialization] == [
        ("x", 4),
        ("y", 0),
        ("z", 0),
    ]


def test_failed_compile_raises_with_rendered_diagnostics(service, tmp_path):
    fake, address = service

    def failing(request):
        response = compile_pb2.CompileResponse(ok=False)
        response.diagnostics.add(
            severity=compile_pb2.SEVERITY_ERROR,
            code="E0594",
            message="cannot assign",
            rendered="error[E0594]: cannot assign\n --> add.rs:3:5",
        )
        response.diagnostics.add(
            severity=compile_pb2.SEVERITY_WARNING, code="W1", message="unused variable"
        )
        return response

    fake.respond = failing
    client = make_client(address, tmp_path)
    with pytest.raises(CompileError) as info:
        client.compile(SOURCE, "add", {"B": 128}, arch="sm_90")
    text = str(info.value)
    assert "error[E0594]: cannot assign" in text and "--> add.rs:3:5" in text
    assert "warning[W1]: unused variable" in text
    assert info.value.entry == "add" and len(info.value.diagnostics) == 2
    assert len(client.last_diagnostics) == 2
    assert not list((tmp_path / "cache").glob("*/*.bin"))  # failures are not cached


def test_unavailable_is_retried(service, tmp_path):
    fake, address = service
    fake.unavailable = 2
    make_client(address, tmp_path).compile(SOURCE, "add", {"B": 128}, arch="sm_90")
    assert len(fake.requests) == 3


def test_retries_give_up(service, tmp_path):
    fake, address = service
    fake.unavailable = 10
    with pytest.raises(ServiceError) as info:
        make_client(address, tmp_path, max_attempts=3).compile(SOURCE, "add", arch="sm_90")
    assert info.value.code == "UNAVAILABLE" and len(fake.requests) == 3


def test_other_errors_are_not_retried(service, tmp_path):
    fake, address = service
    fake.abort_with = grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(ServiceError) as info:
        make_client(address, tmp_path).compile(SOURCE, "add", arch="sm_90")
    assert info.value.code == "INVALID_ARGUMENT" and len(fake.requests) == 1


def test_no_server(tmp_path):
    with pytest.raises(ServiceError, match="UNAVAILABLE"):
        make_client("127.0.0.1:1", tmp_path, max_attempts=2).compile(SOURCE, "add", arch="sm_90")


def test_digest_mismatch_rejected(service, tmp_path, kit):
    fake, address = service
    good = ok_response(kit)

    def tampered(request):
        response = good(request)
        response.artifact.cubin = b"something else"
        return response

    fake.respond = tampered
    with pytest.raises(IntegrityError):
        make_client(address, tmp_path).compile(SOURCE, "add", arch="sm_90")


def test_cache_disabled(service, tmp_path):
    fake, address = service
    client = CompileClient(address, cache=False, initial_backoff=0.01)
    client.compile(SOURCE, "add", arch="sm_90")
    client.compile(SOURCE, "add", arch="sm_90")
    assert len(fake.requests) == 2 and client.cache is None


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("Compile", COMPILE_METHOD),
        ("FindMissing", FIND_MISSING_METHOD),
        ("GetArtifact", GET_ARTIFACT_METHOD),
    ],
)
def test_method_paths_match_the_proto(name, path):
    method = compile_pb2.DESCRIPTOR.services_by_name["CompileService"].methods_by_name[name]
    assert f"/{method.containing_service.full_name}/{method.name}" == path


def test_resource_exhausted_is_retried_after_the_servers_retry_delay(service, tmp_path):
    fake, address = service
    fake.exhausted, fake.retry_after = 1, 0.3
    start = time.monotonic()
    make_client(address, tmp_path).compile(SOURCE, "add", {"B": 128}, arch="sm_90")
    assert len(fake.requests) == 2 and time.monotonic() - start >= 0.3


# ---- artifacts by key -------------------------------------------------------------------


def stored_artifact(kit, size: int = 10_000) -> tuple[str, compile_pb2.Artifact]:
    cubin = bytes(range(256)) * (size // 256) + b"tail"
    artifact = compile_pb2.Artifact(cubin=cubin)
    artifact.contract.CopyFrom(kit.add(block=256))
    key = hashlib.sha256(cubin + b"key").hexdigest()
    artifact.request_key.sha256 = key
    return key, seal(artifact)


def test_kernel_for_key_streams_the_chunks_once_then_hits_the_cache(service, tmp_path, kit):
    fake, address = service
    key, artifact = stored_artifact(kit)
    fake.stored[key] = artifact
    client = make_client(address, tmp_path)
    kernel = client.kernel_for_key(key)
    assert kernel.cubin == artifact.cubin and kernel.spec.params[0].tile_shape == (256,)
    assert fake.fetched == [key]
    again = make_client(address, tmp_path).kernel_for_key(key)
    assert again.sha256 == kernel.sha256 and fake.fetched == [key]  # local cache


def _corrupted(kit, artifact):  # type: ignore[no-untyped-def]
    artifact.cubin_digest.sha256 = "0" * 64
    return artifact


def _another_keys(kit, artifact):  # type: ignore[no-untyped-def]
    return stored_artifact(kit, 300)[1]  # genuinely sealed, but stored under another key


@pytest.mark.parametrize(
    ("spoil", "problem"),
    [(_corrupted, "differs from the digest"), (_another_keys, "the artifact of another key")],
)
def test_a_fetched_artifact_that_fails_a_check_is_refused(service, tmp_path, kit, spoil, problem):
    fake, address = service
    key, artifact = stored_artifact(kit)
    fake.stored[key] = spoil(kit, artifact)
    with pytest.raises(IntegrityError, match=problem):
        make_client(address, tmp_path).fetch_artifact(key)
    assert not list((tmp_path / "cache").glob("*/*.bin"))


def test_an_unknown_key_is_not_found(service, tmp_path):
    _, address = service
    with pytest.raises(ServiceError) as info:
        make_client(address, tmp_path).fetch_artifact("ab" * 32)
    assert info.value.code == "NOT_FOUND"
    with pytest.raises(ValueError, match="64 lowercase hex"):
        make_client(address, tmp_path).fetch_artifact("ABC")


def test_prefetch_fetches_only_what_the_client_lacks(service, tmp_path, kit):
    fake, address = service
    held_locally, _ = stored_artifact(kit, 300)
    on_server, artifact = stored_artifact(kit, 5000)
    nowhere = "cd" * 32
    fake.stored[on_server] = artifact
    client = make_client(address, tmp_path)
    fake.stored[held_locally] = stored_artifact(kit, 300)[1]
    client.fetch_artifact(held_locally)
    fake.fetched.clear()
    assert client.prefetch([held_locally, on_server, nowhere, on_server]) == [nowhere]
    assert fake.find_missing == [[on_server, nowhere]] and fake.fetched == [on_server]
    assert client.prefetch([on_server, held_locally]) == []  # all local now: no RPC
    assert len(fake.find_missing) == 1


def test_find_missing_is_retried_when_unavailable(service, tmp_path):
    fake, address = service
    fake.unavailable = 1
    assert make_client(address, tmp_path).missing_on_server(["ef" * 32]) == ["ef" * 32]
    assert len(fake.find_missing) == 2


def test_compiled_artifacts_are_cached_under_the_servers_key_too(service, tmp_path):
    fake, address = service
    client = make_client(address, tmp_path)
    client.compile(SOURCE, "add", {"B": 128}, arch="sm_90")
    kernel = client.kernel_for_key("ab" * 32)  # the fake's request_key: no GetArtifact needed
    assert kernel.cubin == CUBIN and fake.fetched == []


# ---- integrity: nothing unverified is launched ------------------------------------------


def test_an_artifact_without_digests_is_refused(service, tmp_path, kit):
    fake, address = service
    honest = fake.respond

    def no_digests(request):  # type: ignore[no-untyped-def]
        response = honest(request)
        response.artifact.ClearField("cubin_digest")
        return response

    fake.respond = no_digests
    with pytest.raises(IntegrityError, match="no cubin digest"):
        make_client(address, tmp_path).compile(SOURCE, "add", {"B": 128}, arch="sm_90")


def test_a_contract_stripped_of_its_checks_is_refused(service, tmp_path, kit):
    fake, address = service
    honest = fake.respond

    def stripped(request):  # type: ignore[no-untyped-def]
        response = honest(request)
        contract = response.artifact.contract
        contract.assumptions.add(param=1, kind=contract_pb2.ASSUMPTION_KIND_BASE_ALIGN, value=16)
        seal(response.artifact)
        del contract.assumptions[:]  # sealed, then the contract lost its checks on the way
        return response

    fake.respond = stripped
    with pytest.raises(IntegrityError, match="contract sha256"):
        make_client(address, tmp_path).compile(SOURCE, "add", {"B": 128}, arch="sm_90")
    assert not list((tmp_path / "cache").glob("*/*.bin"))


def test_a_host_with_the_signing_key_takes_only_signed_artifacts(service, tmp_path, kit):
    fake, address = service
    honest = fake.respond
    fake.respond = lambda r: _signed(honest(r), b"the daemon's key")
    kernel = make_client(address, tmp_path, signing_key=b"the daemon's key").compile(
        SOURCE, "add", {"B": 128}, arch="sm_90"
    )
    assert kernel.cubin == CUBIN
    for key in (b"another key", None):
        fake.respond = lambda r, key=key: _signed(honest(r), key)
        with pytest.raises(IntegrityError, match="signature"):
            make_client(address, tmp_path / "other", signing_key=b"the daemon's key").compile(
                SOURCE, "add", {"B": 256}, arch="sm_90"
            )


def _signed(response, key):  # type: ignore[no-untyped-def]
    seal(response.artifact, key)
    return response


def test_a_tampered_local_cache_entry_is_dropped_and_fetched_again(service, tmp_path, kit):
    fake, address = service
    client = make_client(address, tmp_path)
    client.compile(SOURCE, "add", {"B": 128}, arch="sm_90")
    key = request_key(fake.requests[0])
    artifact = compile_pb2.Artifact.FromString(client.cache.get(key))
    artifact.contract.params[0].tile_shape[:] = [64]  # a contract the service never sent
    client.cache.put(key, artifact.SerializeToString())  # checksummed, but not what was sealed
    client.compile(SOURCE, "add", {"B": 128}, arch="sm_90")
    assert len(fake.requests) == 2  # asked the service again instead of trusting it


def test_an_endless_artifact_stream_stops_at_the_announced_size(service, tmp_path, kit):
    fake, address = service
    key, artifact = stored_artifact(kit, 1000)

    def endless(request, context):  # type: ignore[no-untyped-def]
        head = compile_pb2.Artifact()
        head.CopyFrom(artifact)
        head.cubin = b""
        yield compile_pb2.ArtifactChunk(artifact=head)
        offset = 0
        while True:
            yield compile_pb2.ArtifactChunk(offset=offset, data=b"x" * 4096)
            offset += 4096

    fake.stream_artifact = endless
    with pytest.raises(
        IntegrityError, match=f"more than the {len(artifact.cubin)} bytes announced"
    ):
        make_client(address, tmp_path).fetch_artifact(key)


def test_kernel_asks_once_per_measured_layout_and_caches_it_locally(service, kit, tmp_path):
    fake, address = service
    fake.respond = facts_response(kit)
    n = 4096

    def args(x_offset: int = 0) -> tuple[object, ...]:
        z = DeviceTensor(0x7F00_0000_0000, (n,)).partition((128,))
        return (
            z,
            DeviceTensor(0x7F10_0000_0000 + x_offset, (n,)),
            DeviceTensor(0x7F20_0000_0000, (n,)),
        )

    client = make_client(address, tmp_path)
    kernel = client.kernel(SOURCE, "add", {"B": 128}, arch="sm_90")
    assert [list(r.specialization) for r in fake.requests] == [[]]  # the general kernel
    assert kernel.choose(*args()) is kernel.choose(*args())
    facts = {f.param: list(f.dim_divisors) for f in fake.requests[-1].specialization}
    assert facts == {"x": [16], "y": [16], "z": [16]} and len(fake.requests) == 2
    misaligned = kernel.choose(*args(x_offset=4))
    assert fake.requests[-1].specialization[0].base_align == 4 and len(fake.requests) == 3
    assert misaligned is not kernel.general and len(kernel.specializations) == 2

    again = make_client(address, tmp_path).kernel(SOURCE, "add", {"B": 128}, arch="sm_90")
    again.choose(*args())
    again.choose(*args(x_offset=4))
    assert len(fake.requests) == 3  # another process: everything from the local cache


def test_kernel_non_blocking_serves_the_general_kernel_meanwhile(service, kit, tmp_path):
    fake, address = service
    fake.respond = facts_response(kit)
    n = 4096
    z = DeviceTensor(0x7F00_0000_0000, (n,)).partition((128,))
    x, y = DeviceTensor(0x7F10_0000_0000, (n,)), DeviceTensor(0x7F20_0000_0000, (n,))
    with make_client(address, tmp_path) as client:
        kernel = client.kernel(SOURCE, "add", {"B": 128}, arch="sm_90", non_blocking=True)
        first = kernel.choose(z, x, y)
        kernel.wait(10)
        assert first is kernel.general  # the specialization compiles meanwhile
        assert kernel.choose(z, x, y) is kernel.specializations[0]
    assert len(fake.requests) == 2
    with pytest.raises(TypeError, match="measures"):
        client.kernel(SOURCE, "add", specialize_for={"x": x})


def test_a_path_given_as_source_text_gets_a_hint_before_any_request(service, tmp_path):
    fake, address = service
    path = tmp_path / "add.rs"
    path.write_text(SOURCE)
    client = make_client(address, tmp_path)
    with pytest.raises(ValueError, match="is the path of a file, not Rust source") as info:
        client.compile(str(path), "add", {"B": 128}, arch="sm_90")
    assert f"Path({str(path)!r}).read_text()" in str(info.value)
    assert "file_name='add.rs'" in str(info.value)
    with pytest.raises(TypeError, match="not a path"):
        client.compile(path, "add", {"B": 128}, arch="sm_90")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"extra source 'lib\.rs'"):
        client.compile(SOURCE, "add", arch="sm_90", extra_sources={"lib.rs": str(path)})
    assert fake.requests == []
    client.compile("add.rs", "add", {"B": 128}, arch="sm_90")  # no such file: source text
    assert len(fake.requests) == 1


# ---- a hostile server: a reply is the kernel asked for, or nothing ----------------------


@pytest.mark.parametrize(
    ("lie", "problem"),
    [
        (lambda c: setattr(c.kernel, "function", "saxpy"), "function 'saxpy', not 'add'"),
        (lambda c: setattr(c.target, "sm", "sm_80"), "target 'sm_80', not 'sm_90'"),
        (lambda c: setattr(c.kernel, "source_sha256", "0" * 64), "compiled from other sources"),
        (lambda c: setattr(c.specialization.generics[0], "value", "64"), "generics"),
    ],
)
def test_a_reply_for_another_kernel_is_refused_and_not_cached(service, tmp_path, lie, problem):
    fake, address = service
    honest = fake.respond

    def other_kernel(request):  # type: ignore[no-untyped-def]
        response = honest(request)
        lie(response.artifact.contract)
        seal(response.artifact)  # every digest of it is right: only its identity is wrong
        return response

    fake.respond = other_kernel
    with pytest.raises(IntegrityError, match="not the kernel asked for") as raised:
        make_client(address, tmp_path).compile(SOURCE, "add", {"B": 128}, arch="sm_90")
    assert problem in str(raised.value)
    assert not list((tmp_path / "cache").glob("*/*.bin"))


def test_a_replys_server_key_never_replaces_another_requests_entry(service, tmp_path):
    fake, address = service
    client = make_client(address, tmp_path)
    client.compile(SOURCE, "add", {"B": 128}, arch="sm_90")
    first = request_key(fake.requests[0])
    honest = fake.respond

    def squatting(request):  # type: ignore[no-untyped-def]
        response = honest(request)
        response.artifact.request_key.sha256 = first  # the key of the earlier request
        seal(response.artifact)
        return response

    fake.respond = squatting
    client.compile(SOURCE, "add", {"B": 256}, arch="sm_90")
    again = make_client(address, tmp_path).compile(SOURCE, "add", {"B": 128}, arch="sm_90")
    assert again.spec.params[0].tile_shape == (128,)  # still the B=128 kernel, from the cache
    assert len(fake.requests) == 2


def test_a_key_with_a_final_newline_is_not_a_key(service, tmp_path):
    _, address = service
    with pytest.raises(ValueError, match="64 lowercase hex"):
        make_client(address, tmp_path).fetch_artifact("ab" * 32 + "\n")


def test_the_server_slot_is_the_rust_hosts():
    """One cache folder serves both hosts (`server_slot` in the Rust host's service.rs)."""
    from client_stubs.client_core import server_slot

    assert server_slot("ab" * 32) == (
        "a2d5a8aef229a518d76fc1ad677936bb9acab3c985e5e4f2606e9543d46b7cde"
    )
