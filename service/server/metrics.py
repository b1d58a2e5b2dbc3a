"""Prometheus metrics of `cutile-serve`, served over HTTP on `--metrics-port`.

Every server owns a `ServiceMetrics` with its own registry (several servers in one process,
as in the tests, do not collide). The servicer records cache results, compile latencies
and tileiras failures; `MetricsInterceptor` (a grpc.aio server interceptor) records every
`cutile.compile.v1.CompileService` RPC, auth rejections included. Health and reflection
RPCs are not counted.

Metrics (all prefixed `cutile_serve_`):

``cutile_serve_requests_total{rpc, outcome}`` (counter)
    Finished CompileService RPCs. `rpc` is the method name (Compile, CompileBatch,
    FindMissing, GetArtifact, GetCapabilities). `outcome`: ok, compile_error (a Compile
    answered `ok=false`: the kernel does not compile), invalid (INVALID_ARGUMENT),
    exhausted (RESOURCE_EXHAUSTED), internal (INTERNAL or an unhandled exception), and the
    rarer unavailable, deadline, unauthenticated, not_found, cancelled; any other status
    is its lowercase code name.
``cutile_serve_requests_in_flight{rpc}`` (gauge)
    CompileService RPCs now being handled.
``cutile_serve_cache_results_total{layer, result}`` (counter)
    How each compile (a Compile or one CompileBatch item) was resolved, per layer:
    layer="memory" (recent artifacts kept in process), layer="disk" (the local artifact
    cache) and, with `--cache redis://…`, layer="redis", each looked up after a miss in
    the one before, count result="hit" / "miss" per lookup (a request
    with `skip_cache` does no lookup; a compile that finds the artifact stored by a run
    that finished since its first lookup counts a second, late hit); layer="flight" (the
    single-flight table) counts result="joined" (shared a run already in flight) or
    "miss" (started a run).
    layer="content" counts, per compiler run that reached tileiras, whether the bytecode's
    cubin was cached under its content key (result="hit": tileiras skipped) or not
    (result="miss").
``cutile_serve_tileiras_runs_total`` (counter)
    tileiras runs started: each content-key miss (a server with `--no-cache` counts none).
``cutile_serve_cache_errors_total{layer}`` (counter)
    Cache I/O errors by layer (disk, redis); each turned into a miss or a skipped write,
    never a failed compile.
``cutile_serve_tileiras_failures_total`` (counter)
    Compiles that failed in tileiras (a codes.TILEIRAS_FAILED diagnostic).
``cutile_serve_compile_stage_seconds{stage}`` (histogram)
    Latency of compiles that ran the compiler (not cache hits, counted once per run
    however many callers joined it), by stage: frontend (the `frontend_ms` of the
    response timings), tileiras (`tileiras_ms`) and total (`total_ms`).
``cutile_serve_compile_queue_depth`` (gauge)
    Distinct compile runs admitted and waiting for a worker.
``cutile_serve_compiles_in_flight`` (gauge)
    Compile runs on a worker now.
``cutile_serve_compile_workers`` / ``cutile_serve_compile_max_queued`` (gauges)
    The configured pool size and queue bound.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

import grpc
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from lowering.pipeline import Timings
from parser.front_end import codes
from protos.generated.cutile.compile.v1 import compile_pb2
from service.server.metrics_http import BoundedMetricsServer

if TYPE_CHECKING:
    from parser.front_end import Diagnostic
    from service.compile.flight import Scheduler

log = logging.getLogger(__name__)

PREFIX = "cutile_serve"
SERVICE_NAME = compile_pb2.DESCRIPTOR.services_by_name["CompileService"].full_name
LATENCY_BUCKETS_S = (
    0.001,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
    120.0,
)

_OUTCOME = {
    grpc.StatusCode.OK: "ok",
    grpc.StatusCode.INVALID_ARGUMENT: "invalid",
    grpc.StatusCode.RESOURCE_EXHAUSTED: "exhausted",
    grpc.StatusCode.INTERNAL: "internal",
    grpc.StatusCode.UNKNOWN: "internal",
    grpc.StatusCode.UNAVAILABLE: "unavailable",
    grpc.StatusCode.DEADLINE_EXCEEDED: "deadline",
    grpc.StatusCode.UNAUTHENTICATED: "unauthenticated",
    grpc.StatusCode.NOT_FOUND: "not_found",
    grpc.StatusCode.CANCELLED: "cancelled",
}


class ServiceMetrics:
    """The metrics of one server, in their own registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter(
            f"{PREFIX}_requests", "Finished CompileService RPCs", ("rpc", "outcome"), registry=r
        )
        self.requests_in_flight = Gauge(
            f"{PREFIX}_requests_in_flight",
            "CompileService RPCs being handled",
            ("rpc",),
            registry=r,
        )
        self.cache_results = Counter(
            f"{PREFIX}_cache_results",
            "Compile resolutions by cache layer",
            ("layer", "result"),
            registry=r,
        )
        self.cache_errors = Counter(
            f"{PREFIX}_cache_errors", "Cache I/O errors by layer", ("layer",), registry=r
        )
        self.tileiras_runs = Counter(f"{PREFIX}_tileiras_runs", "tileiras runs started", registry=r)
        self.tileiras_failures = Counter(
            f"{PREFIX}_tileiras_failures", "Compiles that failed in tileiras", registry=r
        )
        self.compile_stage = Histogram(
            f"{PREFIX}_compile_stage_seconds",
            "Latency of compiler runs by stage",
            ("stage",),
            buckets=LATENCY_BUCKETS_S,
            registry=r,
        )
        self.queue_depth = Gauge(
            f"{PREFIX}_compile_queue_depth", "Compile runs waiting for a worker", registry=r
        )
        self.compiles_in_flight = Gauge(
            f"{PREFIX}_compiles_in_flight", "Compile runs on a worker", registry=r
        )
        self.workers = Gauge(f"{PREFIX}_compile_workers", "Compile worker threads", registry=r)
        self.max_queued = Gauge(
            f"{PREFIX}_compile_max_queued", "Compile runs that may wait for a worker", registry=r
        )
        self._http: BoundedMetricsServer | None = None
        self._children: dict[tuple[int, tuple[str, ...]], object] = {}

    # ------------------------------------------------------------------ recording

    def watch_scheduler(self, scheduler: Scheduler) -> None:
        """Queue depth and in-flight gauges read from `scheduler` at scrape time."""
        self.workers.set(scheduler.workers)
        self.max_queued.set(scheduler.max_queued)
        self.compiles_in_flight.set_function(lambda: _retry(lambda: scheduler.running))
        self.queue_depth.set_function(
            lambda: _retry(lambda: max(0, scheduler.admitted - scheduler.running))
        )

    def cache(self, layer: str, result: str) -> None:
        self._child(self.cache_results, layer, result).inc()

    def content_lookup(self, result: str) -> None:
        """One content-key lookup before tileiras; a miss runs tileiras."""
        self._child(self.cache_results, "content", result).inc()
        if result == "miss":
            self.tileiras_runs.inc()

    def in_flight(self, rpc: str) -> Gauge:
        return self._child(self.requests_in_flight, rpc)

    def _child(self, metric, *labels: str):
        """`metric.labels(*labels)`, looked up once (labels() locks and validates)."""
        key = (id(metric), labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)
        return child

    def cache_error(self, layer: str) -> None:
        self.cache_errors.labels(layer).inc()

    def compiled(self, timings: Timings, diagnostics: tuple[Diagnostic, ...]) -> None:
        """One run of the compiler (a miss) finished."""
        for stage, ms in (
            ("frontend", timings.frontend_ms),
            ("tileiras", timings.tileiras_ms),
            ("total", timings.total_ms),
        ):
            self.compile_stage.labels(stage).observe(ms / 1000.0)
        if any(d.code == codes.TILEIRAS_FAILED for d in diagnostics):
            self.tileiras_failures.inc()

    def request(self, rpc: str, outcome: str) -> None:
        self._child(self.requests, rpc, outcome).inc()

    # ------------------------------------------------------------------ exposition

    def serve(self, host: str, port: int) -> int:
        """Serve /metrics over HTTP on a daemon thread; the bound port (`port=0`: any)."""
        if self._http is not None:
            raise RuntimeError("metrics are already served")
        try:
            self._http = BoundedMetricsServer(host, port, self.registry)
        except OSError as exc:
            raise OSError(f"cannot serve metrics on {host}:{port}: {exc}") from exc
        self._http.serve_in_background()
        return self._http.server_port

    def close(self) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None


def _retry(read: Callable[[], int]) -> int:
    """Read scheduler state from the HTTP thread; its dict may change meanwhile."""
    for _ in range(5):
        try:
            return read()
        except RuntimeError:  # dictionary changed size during iteration
            continue
    return 0


def outcome_of(code: grpc.StatusCode | None) -> str:
    if code is None:
        return "ok"
    return _OUTCOME.get(code, code.name.lower())


class MetricsInterceptor(grpc.aio.ServerInterceptor):
    """Counts every CompileService RPC by method and outcome (see the module docstring)."""

    def __init__(self, metrics: ServiceMetrics) -> None:
        self.metrics = metrics
        # wrapped handlers by (method, original handler): the registered handlers do not
        # change, so wrapping once per method keeps closures off the per-call path
        self._wrapped: dict[tuple[str, int], tuple[grpc.RpcMethodHandler, ...]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        method = handler_call_details.method
        cache_key = (method, id(handler))
        wrapped = self._wrapped.get(cache_key)
        if wrapped is not None and wrapped[0] is handler:
            return wrapped[1]
        result = self._wrap(method, handler)
        if len(self._wrapped) < 256:  # auth rejections make fresh handlers: do not grow
            self._wrapped[cache_key] = (handler, result)
        return result

    def _wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        service, _, rpc = method.lstrip("/").partition("/")
        if service != SERVICE_NAME:
            return handler
        if handler.unary_unary is not None:
            return _replace(handler, unary_unary=self._unary(rpc, handler.unary_unary))
        if handler.unary_stream is not None:
            return _replace(handler, unary_stream=self._streaming(rpc, handler.unary_stream))
        return handler  # CompileService has no client-streaming methods

    def _unary(self, rpc: str, behavior: Callable) -> Callable:
        metrics = self.metrics

        async def wrapped(request, context: grpc.aio.ServicerContext):
            gauge = metrics.in_flight(rpc)
            gauge.inc()
            outcome = "internal"
            try:
                response = await behavior(request, context)
                outcome = outcome_of(context.code())
                if isinstance(response, compile_pb2.CompileResponse) and not response.ok:
                    outcome = "compile_error"
                return response
            except asyncio.CancelledError:  # the client cancelled or went away
                outcome = "cancelled"
                raise
            except BaseException:
                outcome = outcome_of(context.code()) if context.code() else "internal"
                raise
            finally:
                gauge.dec()
                metrics.request(rpc, outcome)

        return wrapped

    def _streaming(self, rpc: str, behavior: Callable) -> Callable:
        metrics = self.metrics

        async def wrapped(request, context: grpc.aio.ServicerContext) -> AsyncIterator:
            gauge = metrics.in_flight(rpc)
            gauge.inc()
            outcome = "internal"
            try:
                async for item in behavior(request, context):
                    yield item
                outcome = outcome_of(context.code())
            except GeneratorExit:  # the client went away mid-stream
                outcome = "cancelled"
                raise
            except asyncio.CancelledError:  # the client cancelled or went away
                outcome = "cancelled"
                raise
            except BaseException:
                outcome = outcome_of(context.code()) if context.code() else "internal"
                raise
            finally:
                gauge.dec()
                metrics.request(rpc, outcome)

        return wrapped


def _replace(handler: grpc.RpcMethodHandler, **behavior: Callable) -> grpc.RpcMethodHandler:
    """`handler` with one behavior swapped (RpcMethodHandler is a namedtuple)."""
    return handler._replace(**behavior)
