"""`CompileClient`: compile cuTile Rust sources through the cutile-serve gRPC service.

Requests are keyed by the sha256 of their deterministic serialization; a hit in the local
`ArtifactCache` skips the network entirely. Nothing is trusted unchecked (`integrity`):
every artifact, from the service or the local cache, must carry matching cubin and contract
digests, and with `signing_key` the daemon's signature, and be the kernel the request asked
for (its sources, entry, target, host arch and generics); a download stops at the announced
size. Every artifact is also cached under the server's own key (`Artifact.request_key`), in
a namespace of its own (`server_slot`, the Rust host's too), so a host that knows keys (from
an earlier run, another host, a deployment list) fetches only what it lacks:
`prefetch(keys)` asks `FindMissing` which of its missing keys the server holds and streams
those with `GetArtifact` (chunked, digest-checked); `kernel_for_key(key)` gives a launchable
`Kernel` the same way. UNAVAILABLE and RESOURCE_EXHAUSTED are retried with exponential
backoff and jitter, honouring the server's RetryInfo (`retry.py`); a compile that
fails reports the service's rendered diagnostics as `CompileError`. grpc is imported on first
use only.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from client_stubs.artifacts import Bundle
from client_stubs.client_core import (
    COMPILE_METHOD,
    DEFAULT_ADDRESS,
    FIND_MISSING_BATCH,
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
    render_diagnostic,
    request_key,
    tensor_arguments,
)
from client_stubs.client_core import local_arch as _local_arch
from client_stubs.errors import IntegrityError
from client_stubs.launcher import Kernel, host_arch
from client_stubs.plan import plan_launch
from client_stubs.retry import call_with_retries
from client_stubs.served import Served
from protos.generated.cutile.compile.v1 import compile_pb2

__all__ = [
    "COMPILE_METHOD",
    "DEFAULT_ADDRESS",
    "FIND_MISSING_BATCH",
    "FIND_MISSING_METHOD",
    "GET_ARTIFACT_METHOD",
    "CompileClient",
    "render_diagnostic",
    "request_key",
]


class CompileClient(ClientSettings):
    """A client for `cutile.compile.v1.CompileService` with a local artifact cache (the
    settings: `client_core.ClientSettings`)."""

    def _init_transport(self) -> None:
        self._executor: ThreadPoolExecutor | None = None
        self._executor_lock = threading.Lock()

    # ---- requests -------------------------------------------------------------------------

    build_request = staticmethod(build_request)

    def compile(
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
        """Compile `entry` of `source_text` and return a launchable `Kernel`.

        `arch` None means the local GPU's sm (or the server default without a GPU);
        `options` are `build_request`'s keywords (generic_args, extra_sources, opt_level,
        host_arch (default: this machine's), lineinfo, exact_accumulators, exact_f32_products,
        early_launch, skip_cache, specialize_for).
        """
        artifact = self.compile_artifact(source_text, entry, generics, arch, file_name, **options)
        return kernel_of(artifact, allow_unchecked)

    def kernel(
        self,
        source_text: str,
        entry: str,
        generics: Mapping[str, object] | None = None,
        arch: str | None = None,
        file_name: str = "kernel.rs",
        *,
        non_blocking: bool = False,
        allow_unchecked: bool = False,
        **options: Any,
    ) -> Served:
        """`entry` compiled for the arguments it is launched with (`served.Served`): the
        general kernel now, then, at the first launch of each new argument layout, the
        service's specialization for the arguments' measured facts (asked once, kept in the
        local cache). The first launch of a layout waits for it; with `non_blocking` it
        compiles in the background while the general kernel serves that layout. `options`
        are `compile`'s (but `specialize_for`: the launches measure their arguments)."""
        if {"specialize_for", "specialization", "occupancy_variant"} & options.keys():
            raise TypeError("kernel() measures its launch arguments; compile() takes facts")
        compile_args = (source_text, entry, generics, arch, file_name)
        general = self.compile(*compile_args, allow_unchecked=allow_unchecked, **options)

        def compile_for(facts: list[compile_pb2.TensorFacts], occupancy: int) -> Kernel:
            return self.compile(
                *compile_args,
                allow_unchecked=allow_unchecked,
                specialization=facts,
                occupancy_variant=occupancy,
                **options,
            )

        executor = self._background() if non_blocking else None
        return Served(general, compile_for, executor=executor)

    def _background(self) -> ThreadPoolExecutor:
        """The threads that compile specializations for non-blocking `Served` kernels."""
        with self._executor_lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(2, thread_name_prefix="cutile-specialize")
            return self._executor

    def compile_artifact(
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
        resolved = _local_arch() if arch is None else arch
        request = build_request(source_text, entry, generics, resolved, file_name, **options)
        return self.compile_request(request)

    def compile_request(self, request: compile_pb2.CompileRequest) -> compile_pb2.Artifact:
        """Send one request (or answer it from the local cache)."""
        key = request_key(request)
        if not request.options.skip_cache:
            cached = self.local.lookup(key, request)
            if cached is not None:
                self.last_diagnostics = ()
                return cached
        response = self._call(request)
        self.last_diagnostics = tuple(response.diagnostics)
        artifact = accept_response(request, response, self.address, self.signing_key)
        self.local.store(key, artifact)
        return artifact

    def kernel_for_args(
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
        """A kernel whose assumptions `args` (the launch arguments, in parameter order) meet:
        `bundle`'s most specialized fitting variant when it has one, else the general kernel
        when the arguments meet its assumptions (a 16-byte aligned base, a unit last stride),
        else the service's specialization for the arguments' measured facts (a misaligned
        `x[1:]` or a strided `x[:, ::2]` gets a kernel that assumes only what they have).
        Both compiles go through the local cache. Arguments that fit no variant in any other
        way (a wrong dtype, say) raise that `LaunchError`."""
        if bundle is not None:
            fitting = bundled_fit(bundle, entry, generics, arch, args, allow_unchecked)
            if fitting is not None:
                return fitting
        compile_args = (source_text, entry, generics, arch, file_name)
        general = self.compile(*compile_args, allow_unchecked=allow_unchecked, **options)
        if fits(general, args):
            return general
        options["specialize_for"] = tensor_arguments(general, args)
        special = self.compile(*compile_args, allow_unchecked=allow_unchecked, **options)
        plan_launch(special.spec, args)  # raises what still does not fit
        return special

    # ---- artifacts by key -----------------------------------------------------------------

    def kernel_for_key(self, key: str, *, allow_unchecked: bool = False) -> Kernel:
        """The launchable `Kernel` of the artifact the server knows as `key` (an
        `Artifact.request_key`): from the local cache, else streamed with `GetArtifact`."""
        return kernel_of(self.fetch_artifact(key), allow_unchecked)

    def fetch_artifact(self, key: str) -> compile_pb2.Artifact:
        """The artifact stored under `key`: local cache first, else `GetArtifact` (chunks
        reassembled in order, size and sha256 checked, then cached). `ServiceError` with code
        NOT_FOUND when the server does not hold it."""
        key = checked_key(key)
        cached = self.local.lookup_server_key(key)
        if cached is not None:
            return cached
        artifact = call_with_retries(
            lambda: self._get_artifact(key), self.retry, f"GetArtifact on {self.address}"
        )
        self.local.store_fetched(key, artifact)
        return artifact

    def missing_on_server(self, keys: Iterable[str]) -> list[str]:
        """Which of `keys` the server does not hold (`FindMissing`, in batches)."""
        wanted = [checked_key(k) for k in keys]
        call = self._call_for(
            FIND_MISSING_METHOD,
            compile_pb2.FindMissingRequest.SerializeToString,
            compile_pb2.FindMissingResponse.FromString,
        )
        missing: list[str] = []
        for request in find_missing_requests(wanted):
            response = call_with_retries(
                lambda r=request: call(r, timeout=self.timeout),
                self.retry,
                f"FindMissing on {self.address}",
            )
            missing.extend(d.sha256 for d in response.missing)
        return missing

    def prefetch(self, keys: Iterable[str]) -> list[str]:
        """Bring every artifact of `keys` into the local cache, fetching only what it lacks:
        one `FindMissing` for the locally missing keys, then `GetArtifact` for those the
        server holds. Returns the keys neither has (they need a compile)."""
        local_missing = self.local.missing(keys)
        if not local_missing:
            return []
        unknown = set(self.missing_on_server(local_missing))
        for key in local_missing:
            if key not in unknown:
                self.fetch_artifact(key)
        return [k for k in local_missing if k in unknown]

    def _get_artifact(self, key: str) -> compile_pb2.Artifact:
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
            for chunk in stream:
                assembler.add(chunk)
        except IntegrityError:
            stream.cancel()
            raise
        return assembler.finish(self.signing_key)

    # ---- transport ------------------------------------------------------------------------

    def _call(self, request: compile_pb2.CompileRequest) -> compile_pb2.CompileResponse:
        call = self._call_for(
            COMPILE_METHOD,
            compile_pb2.CompileRequest.SerializeToString,
            compile_pb2.CompileResponse.FromString,
        )
        return call_with_retries(
            lambda: call(request, timeout=self.timeout), self.retry, f"server {self.address}"
        )

    def _call_for(
        self, method: str, serialize: Any, deserialize: Any, *, streaming: bool = False
    ) -> Any:
        """The multicallable for `method`. Built directly rather than through the generated
        `compile_pb2_grpc`, whose grpcio version guard would refuse older grpc runtimes."""
        call = self._calls.get(method)
        if call is None:
            if self._channel is None:
                import grpc

                if self._credentials is not None:
                    self._channel = grpc.secure_channel(
                        self.address, self._credentials, options=self._options
                    )
                else:
                    self._channel = grpc.insecure_channel(self.address, options=self._options)
            make = self._channel.unary_stream if streaming else self._channel.unary_unary
            call = make(method, request_serializer=serialize, response_deserializer=deserialize)
            self._calls[method] = call
        return call

    def close(self) -> None:
        """Close the channel; specializations still compiling in the background are dropped
        (their layouts stay on the general kernel)."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
        if self._channel is not None:
            self._channel.close()
            self._channel = None
            self._calls = {}

    def __enter__(self) -> CompileClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
