"""`CompileClient`: compile cuTile Rust sources through the cutile-serve gRPC service.

Requests are keyed by the sha256 of their deterministic serialization; a hit in the local
`ArtifactCache` skips the network entirely. UNAVAILABLE is retried with exponential backoff and
jitter; a compile that fails reports the service's rendered diagnostics as `CompileError`.
grpc is imported on first use only.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Mapping, Sequence
from typing import Any

from client_stubs import driver
from client_stubs.cache import ArtifactCache
from client_stubs.errors import CompileError, IntegrityError, ServiceError
from client_stubs.launcher import Kernel, host_arch
from client_stubs.specialization import facts_for
from protos.generated.cutile.compile.v1 import compile_pb2

DEFAULT_TARGET = "127.0.0.1:50051"
COMPILE_METHOD = "/cutile.compile.v1.CompileService/Compile"
_MAX_MESSAGE_BYTES = 256 * 1024 * 1024
_SEVERITY = {1: "error", 2: "warning", 3: "note", 4: "help"}


def request_key(request: compile_pb2.CompileRequest) -> str:
    """The local cache key: sha256 of the request's deterministic serialization, ignoring
    `options.skip_cache` (which changes how, not what, is compiled)."""
    keyed = compile_pb2.CompileRequest()
    keyed.CopyFrom(request)
    keyed.options.skip_cache = False
    return hashlib.sha256(keyed.SerializeToString(deterministic=True)).hexdigest()


def render_diagnostic(d: compile_pb2.Diagnostic) -> str:
    """The service's rendered text, or a one-line fallback."""
    if d.rendered:
        return d.rendered
    code = f"[{d.code}]" if d.code else ""
    return f"{_SEVERITY.get(d.severity, 'error')}{code}: {d.message}"


class CompileClient:
    """A client for `cutile.compile.v1.CompileService` with a local artifact cache."""

    def __init__(
        self,
        target: str = DEFAULT_TARGET,
        *,
        cache: ArtifactCache | bool | None = True,
        timeout: float = 300.0,
        max_attempts: int = 5,
        initial_backoff: float = 0.1,
        max_backoff: float = 3.0,
        credentials: Any = None,
        channel_options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        self.target = target
        self.cache = ArtifactCache() if cache is True else (cache or None)
        self.timeout = timeout
        self.max_attempts = max(1, max_attempts)
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.last_diagnostics: tuple[compile_pb2.Diagnostic, ...] = ()
        self._credentials = credentials
        self._options = [
            ("grpc.max_receive_message_length", _MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", _MAX_MESSAGE_BYTES),
            *channel_options,
        ]
        self._channel: Any = None
        self._stub: Any = None

    # ---- requests -------------------------------------------------------------------------

    @staticmethod
    def build_request(
        source_text: str,
        entry: str,
        generics: Mapping[str, object] | None = None,
        target: str = "",
        file_name: str = "kernel.rs",
        *,
        generic_args: Sequence[object] = (),
        extra_sources: Mapping[str, str] | None = None,
        opt_level: int | None = None,
        host_arch: str = "",
        lineinfo: bool = False,
        skip_cache: bool = False,
        specialize_for: Mapping[str, object] | None = None,
    ) -> compile_pb2.CompileRequest:
        """A `CompileRequest`; the first source holds the entry. `specialize_for` maps tensor
        parameter names to the tensors the kernel will run on: their measured divisibility
        becomes facts the kernel may assume (and every launch is checked against)."""
        request = compile_pb2.CompileRequest(entry=entry, target=target)
        request.sources.add(name=file_name, text=source_text)
        for name, text in (extra_sources or {}).items():
            request.sources.add(name=name, text=text)
        for name, value in (generics or {}).items():
            request.generics[name] = str(value)
        request.generic_args.extend(str(v) for v in generic_args)
        if opt_level is not None:  # absent: the server's default (-O3)
            request.options.opt_level = opt_level
        request.options.host_arch = host_arch
        request.options.lineinfo = lineinfo
        request.options.skip_cache = skip_cache
        request.specialization.extend(facts_for(specialize_for or {}))
        return request

    def compile(
        self,
        source_text: str,
        entry: str,
        generics: Mapping[str, object] | None = None,
        target: str | None = None,
        file_name: str = "kernel.rs",
        *,
        allow_unchecked: bool = False,
        **options: Any,
    ) -> Kernel:
        """Compile `entry` of `source_text` and return a launchable `Kernel`.

        `target` None means the local GPU's sm (or the server default without a GPU);
        `options` are `build_request`'s keywords (generic_args, extra_sources, opt_level,
        host_arch (default: this machine's), lineinfo, skip_cache, specialize_for).
        """
        artifact = self.compile_artifact(source_text, entry, generics, target, file_name, **options)
        return Kernel(
            artifact.cubin,
            artifact.contract,
            cubin_sha256=artifact.cubin_digest.sha256 or None,
            allow_unchecked=allow_unchecked,
        )

    def compile_artifact(
        self,
        source_text: str,
        entry: str,
        generics: Mapping[str, object] | None = None,
        target: str | None = None,
        file_name: str = "kernel.rs",
        **options: Any,
    ) -> compile_pb2.Artifact:
        """Like `compile` but returns the raw `Artifact` (cubin, digest, contract, key)."""
        options.setdefault("host_arch", host_arch())
        resolved = _local_target() if target is None else target
        request = self.build_request(source_text, entry, generics, resolved, file_name, **options)
        return self.compile_request(request)

    def compile_request(self, request: compile_pb2.CompileRequest) -> compile_pb2.Artifact:
        """Send one request (or answer it from the local cache)."""
        key = request_key(request)
        if self.cache is not None and not request.options.skip_cache:
            cached = self.cache.get(key)
            if cached is not None:
                artifact = compile_pb2.Artifact.FromString(cached)
                if _digest_ok(artifact):
                    self.last_diagnostics = ()
                    return artifact
        response = self._call(request)
        self.last_diagnostics = tuple(response.diagnostics)
        if not response.ok:
            rendered = [render_diagnostic(d) for d in response.diagnostics]
            raise CompileError(request.entry, rendered, response.diagnostics)
        artifact = response.artifact
        if not _digest_ok(artifact):
            raise IntegrityError(
                f"`{request.entry}`: cubin sha256 {hashlib.sha256(artifact.cubin).hexdigest()} "
                f"differs from the service's digest {artifact.cubin_digest.sha256}"
            )
        if self.cache is not None:
            self.cache.put(key, artifact.SerializeToString(deterministic=True))
        return artifact

    # ---- transport ------------------------------------------------------------------------

    def _call(self, request: compile_pb2.CompileRequest) -> compile_pb2.CompileResponse:
        import grpc

        stub = self._ensure_stub()
        delay = self.initial_backoff
        for attempt in range(1, self.max_attempts + 1):
            try:
                return stub(request, timeout=self.timeout)
            except grpc.RpcError as exc:
                code = exc.code() if hasattr(exc, "code") else None
                if code == grpc.StatusCode.UNAVAILABLE and attempt < self.max_attempts:
                    time.sleep(min(delay, self.max_backoff) * (0.5 + random.random() / 2))
                    delay *= 2
                    continue
                name = code.name if code is not None else "UNKNOWN"
                details = exc.details() if hasattr(exc, "details") else str(exc)
                raise ServiceError(
                    name, f"{details} (target {self.target}, attempt {attempt}/{self.max_attempts})"
                ) from None
        raise AssertionError("unreachable")

    def _ensure_stub(self) -> Any:
        """The Compile multicallable. Built directly rather than through the generated
        `compile_pb2_grpc`, whose grpcio version guard would refuse older grpc runtimes."""
        if self._stub is None:
            import grpc

            if self._credentials is not None:
                self._channel = grpc.secure_channel(
                    self.target, self._credentials, options=self._options
                )
            else:
                self._channel = grpc.insecure_channel(self.target, options=self._options)
            self._stub = self._channel.unary_unary(
                COMPILE_METHOD,
                request_serializer=compile_pb2.CompileRequest.SerializeToString,
                response_deserializer=compile_pb2.CompileResponse.FromString,
            )
        return self._stub

    def close(self) -> None:
        if self._channel is not None:
            self._channel.close()
            self._channel = None
            self._stub = None

    def __enter__(self) -> CompileClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _digest_ok(artifact: compile_pb2.Artifact) -> bool:
    expected = artifact.cubin_digest.sha256
    return not expected or hashlib.sha256(artifact.cubin).hexdigest() == expected.lower()


def _local_target() -> str:
    """The current GPU's sm, or "" (the server's default) when there is no GPU."""
    if driver.device_count() == 0:
        return ""
    return driver.device_sm(driver.current_device())
