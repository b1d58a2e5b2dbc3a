"""The `cutile.compile.v1.CompileService` implementation (grpc.aio).

Compile: validate (INVALID_ARGUMENT with BadRequest details) → one call to
`CompileEngine.serve`, which owns the sequence (memory layer, store, a single-flight compile
through the `Scheduler`: one run per request key however many callers wait; a bounded
worker pool and queue; a full queue is RESOURCE_EXHAUSTED with RetryInfo) → response. A
kernel that does not compile is an OK RPC with `ok=false` and diagnostics; a server without
tileiras answers UNAVAILABLE; a compiler bug (an exception, or compile_kernel's CT0999
diagnostic) is logged and answered INTERNAL without details. The client's deadline bounds
the wait (DEADLINE_EXCEEDED) and a compile whose callers are all gone or past their deadline
is not cached; when every caller is gone (a server stopping past its grace period cancels
them all) its tileiras is killed (`service.compile.tileiras_runs`). On a miss the sources must parse
within `max_parse_ms` (the front end reports CT0007 past it), else INVALID_ARGUMENT. With a
shared cache (Redis) the compile runs under its lease, so one replica compiles a key while
the others wait for the result.

CompileBatch runs every item through the same path, at most `workers` at a time per
batch, and streams one result per item in completion order with its own google.rpc.Status.
FindMissing / GetArtifact serve cached artifacts by request key, the cubin in chunks.
GetCapabilities advertises targets, versions and limits.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
from google.rpc import code_pb2, status_pb2

from client_stubs.integrity import signature
from lowering.build_id import RELEASE
from lowering.pipeline import (
    ARCHS,
    COMPILER_VERSION,
    DEFAULT_ARCH,
    DEFAULT_BYTECODE_VERSION,
    EARLY_LAUNCH_BYTECODE_VERSION,
    HOST_ARCHES,
)
from lowering.pipeline import CompileRequest as DomainRequest
from lowering.tileiras import ADDRESS_SPACE_CAP, FILE_SIZE_CAP, Tileiras
from parser.front_end import (
    MAX_NESTING_DEPTH,
    Diagnostic,
    codes,
)
from protos.generated.cutile.compile.v1 import compile_pb2, compile_pb2_grpc
from service.cache.artifact import Artifact
from service.cache.hot_hits import HotHits
from service.compile.engine import CompileEngine, Outcome
from service.compile.faults import CompileFault
from service.compile.flight import Overloaded, Scheduler
from service.convert import (
    DEFAULT_LIMITS,
    MAX_OPT_LEVEL,
    FieldViolation,
    InvalidRequest,
    Limits,
    check_sources,
    diagnostics_to_proto,
    request_from_proto,
    text_bytes,
)
from service.server import errors
from service.server.memory_return import MemoryReturn
from service.server.metrics import ServiceMetrics
from service.server.registration import OFF_LOOP_BYTES
from service.server.source_pool import SourcePool

log = logging.getLogger(__name__)

SERVICE_NAME = compile_pb2.DESCRIPTOR.services_by_name["CompileService"].full_name
SERVICE_VERSION = RELEASE  # the package's version: one string for the tools and the service
Response = compile_pb2.CompileResponse
_HEX_KEY = re.compile(r"[0-9a-f]{64}")
# the wall-time limit compile_kernel gives each tileiras run (Tileiras.assemble's default)
TILEIRAS_TIMEOUT_S: float = inspect.signature(Tileiras.assemble).parameters["timeout_s"].default


@dataclass(frozen=True)
class ServiceLimits:
    """Limits of the batch and artifact RPCs (advertised by GetCapabilities)."""

    max_batch_items: int = 1024
    max_find_missing_keys: int = 4096
    max_inline_cubin_bytes: int = 4 << 20  # CompileBatch: larger cubins go by GetArtifact
    artifact_chunk_bytes: int = 1 << 20
    # the smallest chunk served when a client asks for smaller ones: a 1-byte chunk size
    # would make one cheap request cost a message per cubin byte
    min_artifact_chunk_bytes: int = 4096
    max_receive_message_bytes: int = 8 << 20
    max_parse_ms: int = 2000  # all sources of one compile (a 1 MiB source parses in ~0.4 s)


DEFAULT_SERVICE_LIMITS = ServiceLimits()


class CompileServicer(compile_pb2_grpc.CompileServiceServicer):
    """`engine=None` means tileiras is unavailable: every compile is UNAVAILABLE."""

    # methods that also take the request's wire bytes (`service.server.registration`)
    WIRE_METHODS = frozenset({"Compile"})

    def __init__(
        self,
        engine: CompileEngine | None,
        *,
        limits: Limits = DEFAULT_LIMITS,
        workers: int | None = None,
        max_queued: int | None = None,
        service_limits: ServiceLimits = DEFAULT_SERVICE_LIMITS,
        retry_delay_s: float = 1.0,
        metrics: ServiceMetrics | None = None,
        signing_key: bytes | None = None,
    ) -> None:
        self.engine = engine
        self.signing_key = signing_key  # artifacts are signed with it (see client_stubs.integrity)
        self.limits = limits
        self.service_limits = service_limits
        self.scheduler = Scheduler(workers, max_queued=max_queued, retry_delay_s=retry_delay_s)
        self.workers = self.scheduler.workers
        self.metrics = metrics if metrics is not None else ServiceMetrics()
        self.metrics.watch_scheduler(self.scheduler)
        if engine is not None and engine.cache is not None:
            engine.cache.observe_errors(self.metrics.cache_error)
            engine.observer = self.metrics
        self._tileiras_version: str | None = None
        self.sources = SourcePool()
        self.memory_return = MemoryReturn()
        # repeated hits as wire bytes: only with a memory layer, which they extend
        memory = engine is not None and engine.memory is not None and engine.cache is not None
        self.hot = HotHits() if memory else None

    # ----------------------------------------------------------------------- Compile

    async def Compile(
        self,
        request: compile_pb2.CompileRequest,
        context: grpc.aio.ServicerContext,
        wire: bytes | None = None,
    ) -> compile_pb2.CompileResponse | bytes:
        """`wire`: the request as received (see `WIRE_METHODS`); a repeat of an earlier
        cache hit's exact bytes is answered from `hot` as bytes."""
        start = time.perf_counter()
        size = len(wire) if wire is not None else request.ByteSize()
        # hot hits are for small repeated requests: hashing a large one would stall the loop
        hot = self.hot if wire is not None and size <= OFF_LOOP_BYTES else None
        if hot is not None:
            elapsed_ms = (time.perf_counter() - start) * 1e3
            answer = hot.answer(wire, elapsed_ms, self._in_memory)  # type: ignore[arg-type]
            if answer is not None:
                self.metrics.cache("memory", "hit")  # hot hits exist only with a memory layer
                return answer
        try:
            result = await self._compile(request, context.time_remaining(), size)
        finally:
            if size > OFF_LOOP_BYTES:
                self.memory_return.after_large_request()
        if log.isEnabledFor(logging.INFO):
            _log_compile(request, result, start)
        if not isinstance(result, Response):
            await context.abort_with_status(result)
        if hot is not None:
            hot.remember(wire, result)  # type: ignore[arg-type]
        return result

    def _in_memory(self, key: str) -> bool:
        memory = self.engine.memory  # type: ignore[union-attr]
        return memory is not None and memory.get(key) is not None

    async def _compile(
        self, request: compile_pb2.CompileRequest, time_remaining: float | None, size: int = 0
    ) -> Response | grpc.Status:
        """The response, or the status that ends the RPC. A large request (`size` bytes on
        the wire) is refused before any work proportional to it when the compile queue is
        full, and converted and keyed on a thread, so a flood of them cannot stall the
        event loop (health checks, cache hits)."""
        large = size > OFF_LOOP_BYTES
        if large and self.scheduler.full:
            return errors.resource_exhausted(self.scheduler.retry_delay_s)
        try:
            convert = functools.partial(request_from_proto, request, self.limits, self.sources.get)
            domain = await asyncio.to_thread(convert) if large else convert()
        except InvalidRequest as exc:
            return errors.invalid_argument(exc.violations)
        return await self._compile_domain(
            domain,
            request.entry,
            skip_cache=request.options.skip_cache,
            remaining=time_remaining,
            large=large,
        )

    async def _compile_domain(
        self,
        domain: DomainRequest,
        entry: str,
        *,
        skip_cache: bool,
        remaining: float | None,
        large: bool = False,
    ) -> Response | grpc.Status:
        engine = self.engine
        if engine is None:
            return errors.unavailable("tileiras is not available on this server")
        if remaining is not None and remaining <= 0:
            return errors.deadline_exceeded()
        try:
            outcome, joined = await engine.serve(
                domain,
                scheduler=self.scheduler,
                skip_cache=skip_cache,
                remaining=remaining,
                large=large,
                parse_limit_ms=self.service_limits.max_parse_ms,
            )
        except (asyncio.TimeoutError, TimeoutError):
            return errors.deadline_exceeded()
        except Overloaded as exc:
            return errors.resource_exhausted(exc.retry_after_s)
        except CompileFault as exc:
            return _fault(exc, entry)
        except Exception:
            log.exception("internal error compiling entry %r", entry)
            return errors.internal()
        if any(d.code == codes.INTERNAL_ERROR for d in outcome.diagnostics):
            # compile_kernel reports its own bugs as a diagnostic (and logs the traceback):
            # that is a server fault, not the client's kernel
            log.error("internal compiler error compiling entry %r", entry)
            return errors.internal()
        too_slow = _late_source(outcome.diagnostics, domain)
        if too_slow is not None:
            return errors.parse_too_slow(too_slow, self.service_limits.max_parse_ms)
        return response_from_outcome(outcome, joined=joined, signing_key=self.signing_key)

    # ----------------------------------------------------------------------- CompileBatch

    async def CompileBatch(
        self, request: compile_pb2.CompileBatchRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[compile_pb2.CompileBatchResult]:
        envelope = self._check_batch(request)
        if envelope:
            await context.abort_with_status(errors.invalid_argument(envelope))
            return
        results: asyncio.Queue[compile_pb2.CompileBatchResult] = asyncio.Queue()
        per_batch = asyncio.Semaphore(self.workers)  # one batch does not fill the queue alone
        start = time.perf_counter()
        # items of large sources are converted and keyed on a thread, as a large Compile is:
        # a thousand cache hits of a 1 MiB source once held the event loop for 0.9 s
        large = sum(text_bytes(s) for s in request.sources) > OFF_LOOP_BYTES

        async def one(index: int, item: compile_pb2.BatchItem) -> None:
            async with per_batch:
                result = await self._batch_item(
                    request, index, item, context.time_remaining(), large
                )
            await results.put(result)

        tasks = [asyncio.ensure_future(one(i, item)) for i, item in enumerate(request.items)]
        failed = 0
        try:
            for _ in range(len(tasks)):
                result = await results.get()
                failed += result.status.code != code_pb2.OK
                yield result
        finally:
            for task in tasks:
                task.cancel()
            ms = round((time.perf_counter() - start) * 1000.0, 1)
            log.info(
                "batch items=%d failed=%d ms=%.1f",
                len(tasks),
                failed,
                ms,
                extra={"rpc": "CompileBatch", "items": len(tasks), "failed": failed, "ms": ms},
            )

    def _check_batch(self, request: compile_pb2.CompileBatchRequest) -> list[FieldViolation]:
        found = []
        if not request.items:
            found.append(FieldViolation("items", "at least one item is required"))
        limit = self.service_limits.max_batch_items
        if len(request.items) > limit:
            found.append(
                FieldViolation("items", f"{len(request.items)} items exceed the limit of {limit}")
            )
        return found + check_sources(request.sources, self.limits)

    async def _batch_item(
        self,
        request: compile_pb2.CompileBatchRequest,
        index: int,
        item: compile_pb2.BatchItem,
        remaining: float | None,
        large: bool = False,
    ) -> compile_pb2.CompileBatchResult:
        result = compile_pb2.CompileBatchResult(index=index)

        def convert() -> tuple[compile_pb2.CompileRequest, DomainRequest]:
            message = _item_request(request, item, self.limits)
            return message, request_from_proto(message, self.limits, self.sources.get)

        try:
            message, domain = await asyncio.to_thread(convert) if large else convert()
        except InvalidRequest as exc:
            prefixed = [
                FieldViolation(f"items[{index}].{v.field}", v.description) for v in exc.violations
            ]
            result.status.CopyFrom(errors.invalid_argument_proto(prefixed))
            return result
        outcome = await self._compile_domain(
            domain,
            item.entry,
            skip_cache=message.options.skip_cache,
            remaining=remaining,
            large=large,
        )
        if not isinstance(outcome, Response):
            result.status.CopyFrom(errors.from_grpc(outcome))
            return result
        if outcome.ok:
            result.status.CopyFrom(status_pb2.Status(code=code_pb2.OK))
            if len(outcome.artifact.cubin) > self.service_limits.max_inline_cubin_bytes:
                outcome.artifact.cubin = b""
        else:
            result.status.CopyFrom(errors.compile_failed_proto())
        result.response.CopyFrom(outcome)
        return result

    # ----------------------------------------------------------------------- artifacts

    async def FindMissing(
        self, request: compile_pb2.FindMissingRequest, context: grpc.aio.ServicerContext
    ) -> compile_pb2.FindMissingResponse:
        violations = _check_keys(request.keys, self.service_limits.max_find_missing_keys)
        if violations:
            await context.abort_with_status(errors.invalid_argument(violations))
        engine = self.engine

        def missing() -> list[compile_pb2.Digest]:
            # present only what GetArtifact would serve: a readable, verified artifact; each
            # distinct key read once (a request of one key repeated reads it once)
            present = {
                key: engine is not None and engine.artifact(key) is not None
                for key in {k.sha256 for k in request.keys}
            }
            return [k for k in request.keys if not present[k.sha256]]

        return compile_pb2.FindMissingResponse(missing=await asyncio.to_thread(missing))

    async def GetArtifact(
        self, request: compile_pb2.GetArtifactRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[compile_pb2.ArtifactChunk]:
        violations = _check_keys([request.key], 1, field="key")
        if violations:
            await context.abort_with_status(errors.invalid_argument(violations))
            return
        engine = self.engine
        key = request.key.sha256
        found = None if engine is None else await asyncio.to_thread(engine.artifact, key)
        if found is None:
            await context.abort_with_status(errors.not_found(f"no artifact for key {key[:8]}"))
            return
        limits = self.service_limits
        chunk = limits.artifact_chunk_bytes
        if 0 < request.max_chunk_bytes < chunk:
            chunk = max(request.max_chunk_bytes, min(limits.min_artifact_chunk_bytes, chunk))
        first = sealed(found, key, 0, self.signing_key)  # the size is not stored: 0, not echoed
        first.cubin = b""  # the cubin follows in chunks
        yield compile_pb2.ArtifactChunk(artifact=first)
        view = memoryview(found.cubin)
        for offset in range(0, len(view), chunk):
            data = bytes(view[offset : offset + chunk])
            yield compile_pb2.ArtifactChunk(offset=offset, data=data)

    # ----------------------------------------------------------------------- capabilities

    async def GetCapabilities(
        self, request: compile_pb2.GetCapabilitiesRequest, context: grpc.aio.ServicerContext
    ) -> compile_pb2.Capabilities:
        limits, service = self.limits, self.service_limits
        tileiras_version = await self._tileiras()
        return compile_pb2.Capabilities(
            service_version=SERVICE_VERSION,
            compiler_version=COMPILER_VERSION,
            targets=ARCHS,
            default_target=DEFAULT_ARCH,
            bytecode_versions=[
                "{}.{}".format(*v)
                for v in (DEFAULT_BYTECODE_VERSION, EARLY_LAUNCH_BYTECODE_VERSION)
            ],
            tileiras_version=tileiras_version,
            tileiras_available=self.engine is not None,
            host_arches=HOST_ARCHES,
            limits=compile_pb2.Limits(
                max_source_bytes=limits.max_source_bytes,
                max_files=limits.max_files,
                max_file_name_chars=limits.max_name_chars,
                max_entry_chars=limits.max_entry_chars,
                max_generics=limits.max_generics,
                max_generic_value_chars=limits.max_generic_value_chars,
                max_opt_level=MAX_OPT_LEVEL,
                max_batch_items=service.max_batch_items,
                max_find_missing_keys=service.max_find_missing_keys,
                max_inline_cubin_bytes=service.max_inline_cubin_bytes,
                artifact_chunk_bytes=service.artifact_chunk_bytes,
                max_receive_message_bytes=service.max_receive_message_bytes,
                workers=self.scheduler.workers,
                max_queued=self.scheduler.max_queued,
                max_nesting_depth=MAX_NESTING_DEPTH,
                max_parse_ms=service.max_parse_ms,
                tileiras_timeout_ms=int(TILEIRAS_TIMEOUT_S * 1000),
                tileiras_memory_bytes=(
                    ADDRESS_SPACE_CAP if self.engine is None else self.engine.assembler.memory_cap
                ),
                tileiras_output_bytes=FILE_SIZE_CAP,
            ),
        )

    async def _tileiras(self) -> str:
        if self.engine is None:
            return ""
        if self._tileiras_version is None:
            assembler = self.engine.assembler
            try:
                self._tileiras_version = await asyncio.to_thread(lambda: str(assembler.version))
            except Exception as exc:
                log.warning("cannot read the tileiras version: %s", exc)
                return ""
        return self._tileiras_version


def _late_source(diagnostics: tuple[Diagnostic, ...], request: DomainRequest) -> int | None:
    """The index of the first source that did not parse within the limit (CT0007), if any:
    an invalid request, not a kernel error (retrying the same source would not help)."""
    for diagnostic in diagnostics:
        if diagnostic.code == codes.PARSE_TIME_LIMIT and diagnostic.primary_span is not None:
            late = diagnostic.primary_span.file.name  # names are distinct within a request
            return next((i for i, s in enumerate(request.sources) if s.name == late), 0)
    return None


def _fault(fault: CompileFault, entry: str) -> grpc.Status:
    """The answer to a compile that ended without a verdict on the kernel."""
    log.warning("compile of entry %r ended without a verdict: %s", entry, fault.message)
    if fault.kind == "tileiras":
        return errors.unavailable(fault.message.splitlines()[0], errors.TILEIRAS_FAULT)
    if fault.kind == "cancelled":
        return errors.deadline_exceeded()
    if fault.kind == "unavailable":
        return errors.unavailable(fault.message)
    crashed = "the compile worker crashed; see the server log"
    return errors.internal(crashed, errors.WORKER_CRASHED)


def _item_request(
    request: compile_pb2.CompileBatchRequest, item: compile_pb2.BatchItem, limits: Limits
) -> compile_pb2.CompileRequest:
    """The CompileRequest of one batch item, or InvalidRequest for bad source indices (more
    than a request may have files: refused as a whole, without a look at each)."""
    indices = list(item.source_indices) or list(range(len(request.sources)))
    if len(indices) > limits.max_files:
        message = f"{len(indices)} indices exceed the limit of {limits.max_files} files"
        raise InvalidRequest([FieldViolation("source_indices", message)])
    problems = []
    seen: set[int] = set()
    for position, source in enumerate(indices):
        if source >= len(request.sources):
            problems.append(
                FieldViolation(f"source_indices[{position}]", f"no source file {source}")
            )
        elif source in seen:
            problems.append(FieldViolation(f"source_indices[{position}]", "repeated index"))
        seen.add(source)
    if problems:
        raise InvalidRequest(problems)
    options = item.options if item.HasField("options") else request.options
    return compile_pb2.CompileRequest(
        sources=[request.sources[i] for i in indices],
        entry=item.entry,
        generics=item.generics,
        generic_args=item.generic_args,
        target=item.target,
        options=options,
        specialization=item.specialization,
    )


def _check_keys(keys, limit: int, field: str = "keys") -> list[FieldViolation]:
    keys = list(keys)
    if len(keys) > limit:  # and no look at each of them
        return [FieldViolation(field, f"{len(keys)} keys exceed the limit of {limit}")]
    found = []
    for index, key in enumerate(keys):
        name = field if field == "key" else f"{field}[{index}]"
        if not _HEX_KEY.fullmatch(key.sha256):
            found.append(FieldViolation(f"{name}.sha256", "must be 64 lowercase hex digits"))
    return found


def response_from_outcome(
    outcome: Outcome, *, joined: bool = False, signing_key: bytes | None = None
) -> Response:
    cache = compile_pb2.CACHE_OUTCOME_JOINED if joined else _CACHE_OUTCOME[outcome.cache_hit]
    response = compile_pb2.CompileResponse(
        ok=outcome.ok,
        diagnostics=diagnostics_to_proto(outcome.diagnostics),
        cache=cache,
        timings=compile_pb2.CompileTimings(
            frontend_ms=outcome.timings.frontend_ms,
            tileiras_ms=outcome.timings.tileiras_ms,
            total_ms=outcome.timings.total_ms,
        ),
    )
    if outcome.artifact is not None:
        response.artifact.CopyFrom(
            sealed(outcome.artifact, outcome.key.sha256, outcome.key.size, signing_key)
        )
    return response


def sealed(
    artifact: Artifact, key: str, key_size: int = 0, signing_key: bytes | None = None
) -> compile_pb2.Artifact:
    """The wire artifact with its digests (and signature, given the daemon's key)."""
    wire = compile_pb2.Artifact(
        cubin=artifact.cubin,
        cubin_digest=artifact.cubin_digest,
        contract=artifact.contract,
        request_key=compile_pb2.Digest(sha256=key, size=key_size),
        contract_digest=artifact.contract_digest,
    )
    if signing_key is not None:
        wire.signature = signature(signing_key, wire)
    return wire


_CACHE_OUTCOME = {True: compile_pb2.CACHE_OUTCOME_HIT, False: compile_pb2.CACHE_OUTCOME_MISS}
_FAILED_RPC = {
    grpc.StatusCode.INVALID_ARGUMENT: "invalid",
    grpc.StatusCode.UNAVAILABLE: "unavailable",
    grpc.StatusCode.RESOURCE_EXHAUSTED: "overloaded",
    grpc.StatusCode.DEADLINE_EXCEEDED: "deadline",
}


def _log_compile(
    request: compile_pb2.CompileRequest, result: Response | grpc.Status, start: float
) -> None:
    """The one log line of a Compile RPC (fields also as `extra` for JSON logs)."""
    fields = {
        "rpc": "Compile",
        "entry": request.entry[:80],
        "target": (request.target or DEFAULT_ARCH)[:16],
        "outcome": _outcome_name(result),
        "ms": round((time.perf_counter() - start) * 1000.0, 1),
        "key": _short_key(result),
    }
    log.info(
        "compile entry=%r target=%r outcome=%s ms=%.1f key=%s",
        fields["entry"],
        fields["target"],
        fields["outcome"],
        fields["ms"],
        fields["key"],
        extra=fields,
    )


def _short_key(result: Response | grpc.Status) -> str:
    if isinstance(result, Response) and result.ok:
        return result.artifact.request_key.sha256[:8]
    return "-"


def _outcome_name(result: Response | grpc.Status) -> str:
    if not isinstance(result, Response):
        return _FAILED_RPC.get(result.code, "internal")
    if not result.ok:
        return "failed"
    return {compile_pb2.CACHE_OUTCOME_HIT: "hit", compile_pb2.CACHE_OUTCOME_JOINED: "joined"}.get(
        result.cache, "miss"
    )
