"""`AsyncCompileClient`: `CompileClient` for asyncio programs, on `grpc.aio`.

A compile takes seconds (a flash-attention kernel 8-12 s on two cores); awaiting it here keeps
the event loop serving everything else meanwhile. Everything but the transport is shared with
the blocking client (`client_core`): the request and its local key, the local cache and its
checks (a cached artifact passes the same digest and signature checks as a downloaded one),
the integrity checks of a response and of a `GetArtifact` stream, and the choice of a kernel
for launch arguments. Retries are the same policy (`retry.call_with_retries_async`: backoff
with jitter, honouring the server's RetryInfo) but sleep with `asyncio.sleep`.

    async with AsyncCompileClient("127.0.0.1:50051") as client:
        add = await client.compile(source, "add", {"B": "1024"})
        gemm = await client.kernel(source, "gemm", {"E": "f16", ...})   # a `Served` kernel

`kernel()` returns a `served.Served` kernel whose specializations compile as tasks on this
client's event loop: the first launch of a new argument layout runs the general kernel while
the specialization compiles, and launches after it arrived run it. Arguments only the
specialization takes (a misaligned view) cannot wait for it on the event loop's own thread:
such a launch raises `ClientError` saying so; launch it from a worker thread
(`await asyncio.to_thread(kernel, *args)`) or get the kernel first with
`await client.kernel_for_args(...)`. The local cache is read and written inline: entries are
one file of a cubin's size, read and hashed in about a millisecond.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from concurrent.futures import Executor, Future
from typing import Any

from client_stubs.artifacts import Bundle
from client_stubs.client_core import (
    COMPILE_METHOD,
    FIND_MISSING_METHOD,
    GET_ARTIFACT_METHOD,
    ChunkAssembler,
    ClientSettings,
    accept_response,
    build_request,
    bundled_fit,
    checked_key,
    find_missing_requests,
    fits,
    kernel_of,
    local_arch,
    request_key,
    tensor_arguments,
)
from client_stubs.errors import ClientError, IntegrityError
from client_stubs.launcher import Kernel, host_arch
from client_stubs.plan import plan_launch
from client_stubs.retry import call_with_retries_async
from client_stubs.served import Served
from protos.generated.cutile.compile.v1 import compile_pb2


class AsyncCompileClient(ClientSettings):
    """`CompileClient`'s methods as coroutines, over one `grpc.aio` channel."""

    def _init_transport(self) -> None:
        self._tasks: set[Future[Kernel]] = set()

    build_request = staticmethod(build_request)

    # ---- compiles -------------------------------------------------------------------------

    async def compile(
        self,
        source_text: str,
        entry: str,
        generics: Mapping[str, object] | None = None,
        arch: str | None = None,
        file_name: str = "kernel.rs",
        *,
        allow_unchecked: bool = False,
        **options: Any,
    ) -> Kernel:
        """Compile `entry` of `source_text` and return a launchable `Kernel` (see
        `CompileClient.compile`)."""
        artifact = await self.compile_artifact(
            source_text, entry, generics, arch, file_name, **options
        )
        return kernel_of(artifact, allow_unchecked)

    async def compile_artifact(
        self,
        source_text: str,
        entry: str,
        generics: Mapping[str, object] | None = None,
        arch: str | None = None,
        file_name: str = "kernel.rs",
        **options: Any,
    ) -> compile_pb2.Artifact:
        """Like `compile` but returns the raw `Artifact` (cubin, digest, contract, key)."""
        options.setdefault("host_arch", host_arch())
        resolved = await asyncio.to_thread(local_arch) if arch is None else arch
        request = build_request(source_text, entry, generics, resolved, file_name, **options)
        return await self.compile_request(request)

    async def compile_request(self, request: compile_pb2.CompileRequest) -> compile_pb2.Artifact:
        """Send one request (or answer it from the local cache)."""
        key = request_key(request)
        if not request.options.skip_cache:
            cached = self.local.lookup(key, request)
            if cached is not None:
                self.last_diagnostics = ()
                return cached
        call = self._call_for(
            COMPILE_METHOD,
            compile_pb2.CompileRequest.SerializeToString,
            compile_pb2.CompileResponse.FromString,
        )
        response = await call_with_retries_async(
            lambda: call(request, timeout=self.timeout), self.retry, f"server {self.address}"
        )
        self.last_diagnostics = tuple(response.diagnostics)
        artifact = accept_response(request, response, self.address, self.signing_key)
        self.local.store(key, artifact)
        return artifact

    async def kernel(
        self,
        source_text: str,
        entry: str,
        generics: Mapping[str, object] | None = None,
        arch: str | None = None,
        file_name: str = "kernel.rs",
        *,
        allow_unchecked: bool = False,
        **options: Any,
    ) -> Served:
        """`entry` compiled for the arguments it is launched with (`served.Served`), its
        specializations compiled as tasks on the running loop (see the module docstring)."""
        if {"specialize_for", "specialization", "occupancy_variant"} & options.keys():
            raise TypeError("kernel() measures its launch arguments; compile() takes facts")
        compile_args = (source_text, entry, generics, arch, file_name)
        general = await self.compile(*compile_args, allow_unchecked=allow_unchecked, **options)

        async def compile_for(facts: list[compile_pb2.TensorFacts], occupancy: int) -> Kernel:
            return await self.compile(
                *compile_args,
                allow_unchecked=allow_unchecked,
                specialization=facts,
                occupancy_variant=occupancy,
                **options,
            )

        executor = _LoopExecutor(asyncio.get_running_loop(), self._tasks)
        return Served(general, compile_for, executor=executor)  # type: ignore[arg-type]

    async def kernel_for_args(
        self,
        source_text: str,
        entry: str,
        args: Sequence[object],
        generics: Mapping[str, object] | None = None,
        arch: str | None = None,
        file_name: str = "kernel.rs",
        *,
        bundle: Bundle | None = None,
        allow_unchecked: bool = False,
        **options: Any,
    ) -> Kernel:
        """A kernel whose assumptions `args` meet (see `CompileClient.kernel_for_args`)."""
        if bundle is not None:
            fitting = bundled_fit(bundle, entry, generics, arch, args, allow_unchecked)
            if fitting is not None:
                return fitting
        compile_args = (source_text, entry, generics, arch, file_name)
        general = await self.compile(*compile_args, allow_unchecked=allow_unchecked, **options)
        if fits(general, args):
            return general
        options["specialize_for"] = tensor_arguments(general, args)
        special = await self.compile(*compile_args, allow_unchecked=allow_unchecked, **options)
        plan_launch(special.spec, args)  # raises what still does not fit
        return special

    # ---- artifacts by key -----------------------------------------------------------------

    async def kernel_for_key(self, key: str, *, allow_unchecked: bool = False) -> Kernel:
        """The launchable `Kernel` of the artifact the server knows as `key`."""
        return kernel_of(await self.fetch_artifact(key), allow_unchecked)

    async def fetch_artifact(self, key: str) -> compile_pb2.Artifact:
        """The artifact stored under `key`: local cache first, else `GetArtifact`."""
        key = checked_key(key)
        cached = self.local.lookup_server_key(key)
        if cached is not None:
            return cached
        artifact = await call_with_retries_async(
            lambda: self._get_artifact(key), self.retry, f"GetArtifact on {self.address}"
        )
        self.local.store_fetched(key, artifact)
        return artifact

    async def missing_on_server(self, keys: Iterable[str]) -> list[str]:
        """Which of `keys` the server does not hold (`FindMissing`, in batches)."""
        wanted = [checked_key(k) for k in keys]
        call = self._call_for(
            FIND_MISSING_METHOD,
            compile_pb2.FindMissingRequest.SerializeToString,
            compile_pb2.FindMissingResponse.FromString,
        )
        missing: list[str] = []
        for request in find_missing_requests(wanted):
            response = await call_with_retries_async(
                lambda r=request: call(r, timeout=self.timeout),
                self.retry,
                f"FindMissing on {self.address}",
            )
            missing.extend(d.sha256 for d in response.missing)
        return missing

    async def prefetch(self, keys: Iterable[str]) -> list[str]:
        """Bring every artifact of `keys` into the local cache, fetching what it lacks;
        returns the keys neither has (see `CompileClient.prefetch`)."""
        local_missing = self.local.missing(keys)
        if not local_missing:
            return []
        unknown = set(await self.missing_on_server(local_missing))
        held = [k for k in local_missing if k not in unknown]
        await asyncio.gather(*(self.fetch_artifact(k) for k in held))
        return [k for k in local_missing if k in unknown]

    async def _get_artifact(self, key: str) -> compile_pb2.Artifact:
        call = self._call_for(
            GET_ARTIFACT_METHOD,
            compile_pb2.GetArtifactRequest.SerializeToString,
            compile_pb2.ArtifactChunk.FromString,
            streaming=True,
        )
        request = compile_pb2.GetArtifactRequest(key=compile_pb2.Digest(sha256=key))
        assembler = ChunkAssembler(key)
        stream = call(request, timeout=self.timeout)
        try:
            async for chunk in stream:
                assembler.add(chunk)
        except IntegrityError:
            stream.cancel()
            raise
        return assembler.finish(self.signing_key)

    async def settled(self) -> None:
        """Wait for the specializations `kernel()`s are compiling in the background (their
        layouts choose again at their next launch; a failed one stays on the general kernel)."""
        while self._tasks:
            pending = [asyncio.wrap_future(t) for t in list(self._tasks)]
            await asyncio.gather(*pending, return_exceptions=True)

    # ---- transport ------------------------------------------------------------------------

    def _call_for(
        self, method: str, serialize: Any, deserialize: Any, *, streaming: bool = False
    ) -> Any:
        """The `grpc.aio` multicallable for `method` (built by hand, like `CompileClient`'s)."""
        call = self._calls.get(method)
        if call is None:
            if self._channel is None:
                from grpc import aio

                if self._credentials is not None:
                    self._channel = aio.secure_channel(
                        self.address, self._credentials, options=self._options
                    )
                else:
                    self._channel = aio.insecure_channel(self.address, options=self._options)
            make = self._channel.unary_stream if streaming else self._channel.unary_unary
            call = make(method, request_serializer=serialize, response_deserializer=deserialize)
            self._calls[method] = call
        return call

    async def close(self) -> None:
        """Close the channel; specializations still compiling are cancelled (their layouts
        stay on the general kernel)."""
        for task in list(self._tasks):
            task.cancel()
        if self._channel is not None:
            await self._channel.close()
            self._channel = None
            self._calls = {}

    async def __aenter__(self) -> AsyncCompileClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class _LoopExecutor(Executor):
    """Runs a `Served` kernel's specialization compiles (coroutine functions) as tasks on
    `loop`; their futures refuse to be waited for on the loop's own thread (a deadlock)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, tasks: set[Future[Kernel]]) -> None:
        self.loop = loop
        self.tasks = tasks

    def submit(  # type: ignore[override]
        self, fn: Callable[..., Coroutine[Any, Any, Kernel]], /, *args: Any, **kwargs: Any
    ) -> Future[Kernel]:
        future = _LoopFuture(self.loop)
        inner = asyncio.run_coroutine_threadsafe(fn(*args, **kwargs), self.loop)
        self.tasks.add(future)

        def settle(done: Future[Kernel]) -> None:
            self.tasks.discard(future)
            if future.done():  # cancelled meanwhile
                return
            if done.cancelled():
                future.cancel()
            elif done.exception() is not None:
                future.set_exception(done.exception())
            else:
                future.set_result(done.result())

        inner.add_done_callback(settle)
        future.add_done_callback(lambda f: inner.cancel() if f.cancelled() else None)
        return future


class _LoopFuture(Future):  # type: ignore[type-arg]
    """A compile running on `loop`, which its own thread must not block on."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self.loop = loop

    def result(self, timeout: float | None = None) -> Kernel:
        if not self.done() and _on_loop_thread(self.loop):
            raise ClientError(
                "these arguments fit only the specialization still compiling, which cannot "
                "be waited for on the event loop's thread: launch from a worker thread "
                "(`await asyncio.to_thread(kernel, *args)`) or get the kernel with "
                "`await client.kernel_for_args(...)` first"
            )
        return super().result(timeout)


def _on_loop_thread(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return getattr(loop, "_thread_id", None) == threading.get_ident()
