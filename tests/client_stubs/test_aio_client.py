"""AsyncCompileClient against the fake CompileService on a real in-process gRPC server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest

from client_stubs import (
    ArtifactCache,
    AsyncCompileClient,
    ClientError,
    CompileClient,
    CompileError,
    DeviceTensor,
    IntegrityError,
    Kernel,
    ServiceError,
)
from client_stubs.served import Served
from protos.generated.cutile.compile.v1 import compile_pb2
from tests.client_stubs.fake_service import SOURCE
from tests.client_stubs.test_compile_client import facts_response, stored_artifact

T = TypeVar("T")


def run(make: Callable[[AsyncCompileClient], Awaitable[T]], address: str, tmp_path) -> T:
    """`make(client)` on a fresh event loop, with a client that closes after it."""

    async def main() -> T:
        client = AsyncCompileClient(
            address, cache=ArtifactCache(tmp_path / "cache"), initial_backoff=0.01, timeout=10
        )
        async with client:
            return await make(client)

    return asyncio.run(main())


def test_compile_returns_a_kernel_and_a_repeat_hits_the_local_cache(service, tmp_path):
    fake, address = service

    async def twice(client: AsyncCompileClient) -> tuple[Kernel, Kernel]:
        first = await client.compile(SOURCE, "add", {"B": 1024}, arch="sm_90", file_name="a.rs")
        second = await client.compile(SOURCE, "add", {"B": 1024}, arch="sm_90")
        return first, second

    first, second = run(twice, address, tmp_path)
    assert first.spec.params[0].tile_shape == (1024,) and second.sha256 == first.sha256
    (request,) = fake.requests  # the second came from the local cache
    assert request.entry == "add" and request.sources[0].name == "a.rs"
    # the blocking client shares the cache and the key
    CompileClient(address, cache=ArtifactCache(tmp_path / "cache")).compile(
        SOURCE, "add", {"B": 1024}, arch="sm_90"
    )
    assert len(fake.requests) == 1


def test_a_compile_does_not_block_the_event_loop(service, tmp_path):
    fake, address = service
    fake.compile_seconds = 0.6

    async def compile_while_ticking(client: AsyncCompileClient) -> tuple[int, float]:
        ticks = 0
        stop = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not stop.is_set():
                await asyncio.sleep(0.01)
                ticks += 1

        ticking = asyncio.create_task(ticker())
        start = time.monotonic()
        await client.compile(SOURCE, "add", {"B": 128}, arch="sm_90")
        elapsed = time.monotonic() - start
        stop.set()
        await ticking
        return ticks, elapsed

    ticks, elapsed = run(compile_while_ticking, address, tmp_path)
    assert elapsed >= 0.6
    assert ticks >= 20  # ~60 at 10 ms: the loop ran throughout the compile

    async def blocking(client: AsyncCompileClient) -> tuple[int, float]:  # the contrast
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticking = asyncio.create_task(ticker())
        await asyncio.sleep(0)
        sync = CompileClient(address, cache=False)
        sync.compile(SOURCE, "add", {"B": 256}, arch="sm_90")
        ticking.cancel()
        return ticks, 0.0

    assert run(blocking, address, tmp_path)[0] <= 1


def test_unavailable_and_resource_exhausted_are_retried(service, tmp_path):
    fake, address = service
    fake.unavailable = 2
    run(lambda c: c.compile(SOURCE, "add", {"B": 128}, arch="sm_90"), address, tmp_path)
    assert len(fake.requests) == 3
    fake.exhausted, fake.retry_after = 1, 0.3
    start = time.monotonic()
    run(lambda c: c.compile(SOURCE, "add", {"B": 256}, arch="sm_90"), address, tmp_path)
    assert len(fake.requests) == 5 and time.monotonic() - start >= 0.3


def test_retries_give_up_with_a_service_error(service, tmp_path):
    fake, address = service
    fake.unavailable = 10
    with pytest.raises(ServiceError, match="UNAVAILABLE") as info:
        run(lambda c: c.compile(SOURCE, "add", {"B": 128}, arch="sm_90"), address, tmp_path)
    assert "attempt 5/5" in str(info.value) and len(fake.requests) == 5


def test_a_failed_compile_raises_the_rendered_diagnostics(service, tmp_path):
    fake, address = service

    def failing(request):
        response = compile_pb2.CompileResponse(ok=False)
        response.diagnostics.add(severity=1, code="E0594", rendered="error[E0594]: cannot assign")
        return response

    fake.respond = failing
    with pytest.raises(CompileError, match=r"error\[E0594\]: cannot assign"):
        run(lambda c: c.compile(SOURCE, "add", {"B": 128}, arch="sm_90"), address, tmp_path)
    assert not list((tmp_path / "cache").glob("*/*.bin"))


def test_an_artifact_whose_digest_does_not_match_is_refused(service, kit, tmp_path):
    fake, address = service
    plain = fake.respond

    def tampered(request):
        response = plain(request)
        response.artifact.cubin = b"\x7fELF another cubin"
        return response

    fake.respond = tampered
    with pytest.raises(IntegrityError):
        run(lambda c: c.compile(SOURCE, "add", {"B": 128}, arch="sm_90"), address, tmp_path)


def test_artifacts_by_key_stream_once_then_come_from_the_cache(service, kit, tmp_path):
    fake, address = service
    key, artifact = stored_artifact(kit)
    fake.stored[key] = artifact
    unknown = "cd" * 32

    async def fetch(client: AsyncCompileClient) -> tuple[Kernel, list[str], Kernel]:
        kernel = await client.kernel_for_key(key)
        neither = await client.prefetch([key, unknown])
        return kernel, neither, await client.kernel_for_key(key)

    kernel, neither, again = run(fetch, address, tmp_path)
    assert kernel.cubin == artifact.cubin and again.sha256 == kernel.sha256
    assert fake.fetched == [key] and neither == [unknown]


def test_a_corrupted_stream_is_rejected(service, kit, tmp_path):
    fake, address = service
    key, artifact = stored_artifact(kit)
    artifact.cubin_digest.sha256 = "0" * 64
    fake.stored[key] = artifact
    with pytest.raises(IntegrityError, match="differs from the digest"):
        run(lambda c: c.fetch_artifact(key), address, tmp_path)


def _args(n: int = 4096, x_offset: int = 0) -> tuple[object, ...]:
    z = DeviceTensor(0x7F00_0000_0000, (n,)).partition((128,))
    x = DeviceTensor(0x7F10_0000_0000 + x_offset, (n - (1 if x_offset else 0),))
    return z, x, DeviceTensor(0x7F20_0000_0000, (n,))


def test_kernel_for_args_asks_for_a_relaxed_variant_only_when_needed(service, kit, tmp_path):
    fake, address = service
    fake.respond = facts_response(kit)

    async def both(client: AsyncCompileClient) -> tuple[Kernel, Kernel]:
        general = await client.kernel_for_args(SOURCE, "add", _args(), {"B": 128}, "sm_90")
        misaligned = await client.kernel_for_args(
            SOURCE, "add", _args(x_offset=4), {"B": 128}, "sm_90"
        )
        return general, misaligned

    general, misaligned = run(both, address, tmp_path)
    assert len(fake.requests) == 2 and misaligned.contract != general.contract
    facts = {f.param: f for f in fake.requests[-1].specialization}
    assert facts["x"].base_align == 4
    misaligned.plan(*_args(x_offset=4))


def test_kernel_specializes_per_layout_in_the_background(service, kit, tmp_path):
    fake, address = service
    fake.respond = facts_response(kit)

    async def served(client: AsyncCompileClient) -> tuple[Served, Kernel, Kernel]:
        kernel = await client.kernel(SOURCE, "add", {"B": 128}, arch="sm_90")
        first = kernel.choose(*_args())  # the general kernel while it compiles
        await client.settled()
        return kernel, first, kernel.choose(*_args())

    kernel, first, later = run(served, address, tmp_path)
    assert first is kernel.general and later is kernel.specializations[0]
    facts = {f.param: list(f.dim_divisors) for f in fake.requests[-1].specialization}
    assert facts == {"x": [16], "y": [16], "z": [16]} and len(fake.requests) == 2


def test_arguments_only_the_specialization_takes_are_not_waited_for_on_the_loop(
    service, kit, tmp_path
):
    fake, address = service
    fake.respond = facts_response(kit)
    fake.compile_seconds = 0.2

    async def misaligned(client: AsyncCompileClient) -> Kernel:
        kernel = await client.kernel(SOURCE, "add", {"B": 128}, arch="sm_90")
        with pytest.raises(ClientError, match="event loop's thread"):
            kernel.choose(*_args(x_offset=4))
        return await asyncio.to_thread(kernel.choose, *_args(x_offset=4))  # a worker waits

    special = run(misaligned, address, tmp_path)
    assert special.spec.params  # the specialization, once it arrived
    assert fake.requests[-1].specialization[0].base_align == 4
