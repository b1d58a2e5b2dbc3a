"""What `CompileClient` and `AsyncCompileClient` share: everything but the transport.

Request building (`build_request`, which also refuses a file path given as source text),
the local key (`request_key`), the local cache in front of the service (`LocalCache`: a hit
passes the same checks as a download, and every artifact is kept under both the request's and
the server's key), turning a `CompileResponse` into a checked artifact or a `CompileError`
(`accept_response`), reassembling a `GetArtifact` stream (`ChunkAssembler`), and choosing a
kernel for launch arguments (`bundled_fit`, `fits`, `tensor_arguments`). The two clients
differ only in how they wait for the service: blocking calls, or coroutines on `grpc.aio`.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from google.protobuf.message import DecodeError

from client_stubs import driver
from client_stubs.artifacts import Bundle, normalize_generic
from client_stubs.cache import ArtifactCache
from client_stubs.errors import (
    AmbiguousKernelError,
    AssumptionError,
    CompileError,
    IntegrityError,
    KernelNotFoundError,
)
from client_stubs.integrity import MAX_CUBIN_BYTES, sources_sha256, verify
from client_stubs.launcher import Kernel
from client_stubs.plan import plan_launch
from client_stubs.retry import RetryPolicy
from client_stubs.specialization import facts_for
from protos.generated.cutile.compile.v1 import compile_pb2

DEFAULT_ADDRESS = "127.0.0.1:50051"
_SERVICE = "/cutile.compile.v1.CompileService/"
COMPILE_METHOD = _SERVICE + "Compile"
FIND_MISSING_METHOD = _SERVICE + "FindMissing"
GET_ARTIFACT_METHOD = _SERVICE + "GetArtifact"
FIND_MISSING_BATCH = 1024  # keys per FindMissing call (the server's default limit is 4096)
MAX_MESSAGE_BYTES = 256 * 1024 * 1024
CHANNEL_OPTIONS = (
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
)
_KEY = re.compile(r"[0-9a-f]{64}")  # fullmatch: `$` would let a final newline through
_SEVERITY = {1: "error", 2: "warning", 3: "note", 4: "help"}
_MAX_PATH_CHARS = 4096


def request_key(request: compile_pb2.CompileRequest) -> str:
    """The local cache key: sha256 of the request's deterministic serialization, ignoring
    `options.skip_cache` (which changes how, not what, is compiled) and the file names (the
    same sources under another name compile to the same artifact)."""
    keyed = compile_pb2.CompileRequest()
    keyed.CopyFrom(request)
    keyed.options.skip_cache = False
    for source in keyed.sources:
        source.name = ""
    return hashlib.sha256(keyed.SerializeToString(deterministic=True)).hexdigest()


def render_diagnostic(d: compile_pb2.Diagnostic) -> str:
    """The service's rendered text, or a one-line fallback."""
    if d.rendered:
        return d.rendered
    code = f"[{d.code}]" if d.code else ""
    return f"{_SEVERITY.get(d.severity, 'error')}{code}: {d.message}"


def check_source_text(source_text: object, what: str = "source_text") -> str:
    """`source_text` if it is Rust source; a path (a `Path`, or a one-line string naming an
    existing file) is refused with a hint, since compiling it would only report a syntax
    error at the path's first character."""
    if isinstance(source_text, os.PathLike):
        raise TypeError(
            f"{what} is the kernel's source text, not a path: pass "
            f"Path({os.fspath(source_text)!r}).read_text()"
        )
    if not isinstance(source_text, str):
        raise TypeError(f"{what} must be a str of Rust source, got {type(source_text).__name__}")
    looks_like_path = "\n" not in source_text and 0 < len(source_text) <= _MAX_PATH_CHARS
    if looks_like_path and os.path.isfile(source_text):
        raise ValueError(
            f"{what} {source_text!r} is the path of a file, not Rust source: pass its text, "
            f"Path({source_text!r}).read_text(), with file_name={os.path.basename(source_text)!r} "
            "for diagnostics"
        )
    return source_text


def build_request(
    source_text: str,
    entry: str,
    generics: Mapping[str, object] | None = None,
    arch: str = "",
    file_name: str = "kernel.rs",
    *,
    generic_args: Sequence[object] = (),
    extra_sources: Mapping[str, str] | None = None,
    opt_level: int | None = None,
    host_arch: str = "",
    lineinfo: bool = False,
    exact_accumulators: bool = False,
    exact_f32_products: bool = False,
    early_launch: bool = True,
    occupancy_variant: int = 0,
    skip_cache: bool = False,
    specialize_for: Mapping[str, object] | None = None,
    specialization: Sequence[compile_pb2.TensorFacts] = (),
) -> compile_pb2.CompileRequest:
    """A `CompileRequest`; the first source holds the entry. `specialize_for` maps tensor
    parameter names to the tensors the kernel will run on: their measured divisibility
    becomes facts the kernel may assume (and every launch is checked against);
    `specialization` gives such facts already measured (`specialization.facts_for`)."""
    request = compile_pb2.CompileRequest(entry=entry, target=arch)
    request.sources.add(name=file_name, text=check_source_text(source_text))
    for name, text in (extra_sources or {}).items():
        request.sources.add(name=name, text=check_source_text(text, f"extra source {name!r}"))
    for name, value in (generics or {}).items():
        request.generics[name] = str(value)
    request.generic_args.extend(str(v) for v in generic_args)
    if opt_level is not None:  # absent: the server's default (-O3)
        request.options.opt_level = opt_level
    request.options.host_arch = host_arch
    request.options.lineinfo = lineinfo
    request.options.exact_accumulators = exact_accumulators
    request.options.exact_f32_products = exact_f32_products
    request.options.plain_launch = not early_launch
    request.options.occupancy_variant = occupancy_variant
    request.options.skip_cache = skip_cache
    request.specialization.extend(facts_for(specialize_for or {}))
    request.specialization.extend(specialization)
    return request


def accept_response(
    request: compile_pb2.CompileRequest,
    response: compile_pb2.CompileResponse,
    where: str,
    signing_key: bytes | None,
) -> compile_pb2.Artifact:
    """The checked artifact of a successful response; `CompileError` with the service's
    rendered diagnostics otherwise."""
    if not response.ok:
        rendered = [render_diagnostic(d) for d in response.diagnostics]
        raise CompileError(request.entry, rendered, response.diagnostics)
    artifact = response.artifact
    what = f"`{request.entry}` from {where}"
    verify(artifact, what, signing_key)
    check_answers(request, artifact, what)
    return artifact


def check_answers(
    request: compile_pb2.CompileRequest, artifact: compile_pb2.Artifact, what: str
) -> None:
    """`IntegrityError` unless `artifact` is the kernel `request` asked for: its sources,
    entry, target, host arch and generics. A reply for another kernel passes every digest
    (and a signature) and every launch check of its own contract."""
    contract = artifact.contract
    kernel, target = contract.kernel, contract.target
    module, _, function = request.entry.rpartition("::")
    problems = []
    if kernel.source_sha256 != sources_digest(request.sources):
        problems.append("compiled from other sources")
    if kernel.function != function:
        problems.append(f"function {kernel.function!r}, not {function!r}")
    if module and kernel.module != module and not kernel.module.endswith("::" + module):
        problems.append(f"module {kernel.module!r}, not {module!r}")
    if request.target and target.sm != request.target:
        problems.append(f"target {target.sm!r}, not {request.target!r}")
    if request.options.host_arch and target.host_arch != request.options.host_arch:
        problems.append(f"host arch {target.host_arch!r}, not {request.options.host_arch!r}")
    bound = [(g.name, normalize_generic(g.value)) for g in contract.specialization.generics]
    named = dict(bound)
    asked = {name: normalize_generic(value) for name, value in request.generics.items()}
    if any(named.get(name) != value for name, value in asked.items()):
        problems.append(f"generics {named}, not {asked}")
    positional = [normalize_generic(v) for v in request.generic_args]
    if positional and [value for _, value in bound][: len(positional)] != positional:
        problems.append(f"generics {[v for _, v in bound]}, not {positional}")
    if problems:
        raise IntegrityError(f"{what}: not the kernel asked for: " + "; ".join(problems))


def server_slot(server_key: str) -> str:
    """The local cache key of the artifact the server keys `server_key`: a namespace apart
    from the client's own request keys (sha256 of "server:" + key, as the Rust host's)."""
    return hashlib.sha256(f"server:{server_key}".encode()).hexdigest()


def sources_digest(sources: Iterable[compile_pb2.SourceFile]) -> str:
    """The `source_sha256` a contract compiled from `sources` holds."""
    return sources_sha256(source.text.encode("utf-8") for source in sources)


def kernel_of(artifact: compile_pb2.Artifact, allow_unchecked: bool = False) -> Kernel:
    return Kernel(
        artifact.cubin,
        artifact.contract,
        cubin_sha256=artifact.cubin_digest.sha256 or None,
        allow_unchecked=allow_unchecked,
    )


class LocalCache:
    """The client's cache in front of the service; nothing it returns is unchecked."""

    def __init__(self, cache: ArtifactCache | None, signing_key: bytes | None) -> None:
        self.cache = cache
        self.signing_key = signing_key

    def lookup(self, key: str, request: compile_pb2.CompileRequest) -> compile_pb2.Artifact | None:
        """The cached artifact of the request keyed `key` if it passes the same checks as one
        from the service and is the kernel `request` asks for; an entry that does not is
        dropped (and compiled again)."""
        return self._checked(key, f"cached artifact {key[:12]}", request=request)

    def lookup_server_key(self, key: str) -> compile_pb2.Artifact | None:
        """The cached artifact the server keys `key`: in the server keys' slots
        (`server_slot`), else an entry stored under `key` itself that carries it (kept
        whatever it is: it may be another request's); either must pass every check."""
        what = f"cached artifact {key[:12]}"
        found = self._checked(server_slot(key), what, server_key=key)
        if found is None:
            found = self._checked(key, what, server_key=key, drop=False)
        return found

    def _checked(
        self,
        slot: str,
        what: str,
        *,
        request: compile_pb2.CompileRequest | None = None,
        server_key: str | None = None,
        drop: bool = True,
    ) -> compile_pb2.Artifact | None:
        if self.cache is None:
            return None
        blob = self.cache.get(slot)
        if blob is None:
            return None
        try:
            artifact = compile_pb2.Artifact.FromString(blob)
            verify(artifact, what, self.signing_key)
            if request is not None:
                check_answers(request, artifact, what)
            if server_key is not None and artifact.request_key.sha256 != server_key:
                raise IntegrityError(f"{what}: not the artifact of key {server_key[:12]}")
        except (IntegrityError, DecodeError):
            if drop:
                self.cache.delete(slot)
            return None
        return artifact

    def store(self, key: str, artifact: compile_pb2.Artifact) -> None:
        """Keep a compiled artifact under the request's key and in the slot of the server's
        own (`server_slot`, a namespace apart: a reply never replaces another request's
        entry)."""
        if self.cache is None:
            return
        blob = artifact.SerializeToString(deterministic=True)
        self.cache.put(key, blob)
        server_key = artifact.request_key.sha256
        if _KEY.fullmatch(server_key) and server_key != key:
            self.cache.put(server_slot(server_key), blob)

    def store_fetched(self, key: str, artifact: compile_pb2.Artifact) -> None:
        """Keep an artifact fetched by its server key (checked to carry it) in that key's
        slot."""
        if self.cache is not None:
            self.cache.put(server_slot(key), artifact.SerializeToString(deterministic=True))

    def missing(self, keys: Iterable[str]) -> list[str]:
        """The distinct well-formed `keys` not cached here (ValueError for a bad key)."""
        if self.cache is None:
            raise ValueError("prefetch needs a local cache (CompileClient(cache=...))")
        wanted = dict.fromkeys(checked_key(k) for k in keys)
        return [k for k in wanted if self.lookup_server_key(k) is None]


class ClientSettings:
    """What both clients are configured with and keep: the server's address, the local cache,
    the deadline and retry policy, the channel's credentials and options, and the last
    compile's diagnostics. The clients add their transport."""

    def __init__(
        self,
        address: str = DEFAULT_ADDRESS,
        *,
        cache: ArtifactCache | bool | None = True,
        timeout: float = 300.0,
        max_attempts: int = 5,
        initial_backoff: float = 0.1,
        max_backoff: float = 3.0,
        credentials: Any = None,
        channel_options: Sequence[tuple[str, Any]] = (),
        signing_key: bytes | None = None,
    ) -> None:
        self.address = address
        self.signing_key = signing_key
        self.cache = ArtifactCache() if cache is True else (cache or None)
        self.local = LocalCache(self.cache, signing_key)
        self.timeout = timeout
        self.retry = RetryPolicy(max(1, max_attempts), initial_backoff, max_backoff)
        self.last_diagnostics: tuple[compile_pb2.Diagnostic, ...] = ()
        self._credentials = credentials
        self._options = [*CHANNEL_OPTIONS, *channel_options]
        self._channel: Any = None
        self._calls: dict[str, Any] = {}
        self._init_transport()

    def _init_transport(self) -> None:
        """The client's own state beside the settings (its executor, its tasks)."""


def find_missing_requests(keys: Sequence[str]) -> Iterator[compile_pb2.FindMissingRequest]:
    """`FindMissing` requests for `keys`, `FIND_MISSING_BATCH` at a time."""
    for start in range(0, len(keys), FIND_MISSING_BATCH):
        batch = keys[start : start + FIND_MISSING_BATCH]
        yield compile_pb2.FindMissingRequest(keys=[compile_pb2.Digest(sha256=k) for k in batch])


class ChunkAssembler:
    """Rebuilds one artifact from a `GetArtifact` stream: the head first, then the cubin in
    order, never past the announced size; `IntegrityError` at the first chunk that does not
    fit (the caller cancels the stream)."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.what = f"artifact {key[:12]}"
        self.artifact: compile_pb2.Artifact | None = None
        self.announced = 0
        self.cubin = bytearray()

    def add(self, chunk: compile_pb2.ArtifactChunk) -> None:
        if self.artifact is None:
            self.artifact = compile_pb2.Artifact()
            self.artifact.CopyFrom(chunk.artifact)
            self.announced = self.artifact.cubin_digest.size
            if not 0 < self.announced <= MAX_CUBIN_BYTES:
                raise IntegrityError(f"{self.what}: announced cubin size {self.announced}")
        if not chunk.data:
            return
        if chunk.offset != len(self.cubin):
            raise IntegrityError(
                f"{self.what}: chunk at offset {chunk.offset}, expected {len(self.cubin)} "
                "(chunks out of order or missing)"
            )
        if len(self.cubin) + len(chunk.data) > self.announced:  # stop reading, now
            raise IntegrityError(f"{self.what}: more than the {self.announced} bytes announced")
        self.cubin.extend(chunk.data)

    def finish(self, signing_key: bytes | None) -> compile_pb2.Artifact:
        if self.artifact is None:
            raise IntegrityError(f"{self.what}: the server sent no chunks")
        self.artifact.cubin = bytes(self.cubin)
        verify(self.artifact, self.what, signing_key)
        if self.artifact.request_key.sha256 != self.key:  # another key's artifact, replayed
            raise IntegrityError(f"{self.what}: the server sent the artifact of another key")
        return self.artifact


def fits(kernel: Kernel, args: Sequence[object]) -> bool:
    """Whether `args` meet `kernel`'s assumptions; other launch errors propagate."""
    try:
        plan_launch(kernel.spec, args)
    except AssumptionError:
        return False
    return True


def bundled_fit(
    bundle: Bundle,
    entry: str,
    generics: Mapping[str, object] | None,
    arch: str | None,
    args: Sequence[object],
    allow_unchecked: bool,
) -> Kernel | None:
    """`bundle`'s best variant of `entry` for `args`, or None when none fits them."""
    module, _, function = entry.rpartition("::")
    try:
        found = bundle.find(function, generics, arch or None, module or None, for_args=args)
    except (KernelNotFoundError, AmbiguousKernelError):
        return None
    kernel = bundle.load(found, allow_unchecked=allow_unchecked)
    return kernel if fits(kernel, args) else None


def tensor_arguments(general: Kernel, args: Sequence[object]) -> dict[str, object]:
    """The tensor arguments of `args` by parameter name (what a specialization measures)."""
    return {
        p.name: arg
        for p, arg in zip(general.spec.params, args, strict=True)
        if p.kind.startswith("TENSOR")
    }


def checked_key(key: str) -> str:
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise ValueError(f"an artifact key is 64 lowercase hex digits, got {key!r}")
    return key


def local_arch() -> str:
    """The current GPU's sm, or "" (the server's default) when there is no GPU."""
    if driver.device_count() == 0:
        return ""
    return driver.device_sm(driver.current_device())
