"""The `cutile.compile.v1.CompileService` implementation (grpc.aio).

Per request: validate (INVALID_ARGUMENT with BadRequest details) → compile through the
`CompileEngine` on a worker thread, at most `workers` at a time → response. A kernel that
does not compile is an OK RPC with `ok=false` and diagnostics; a server without tileiras
answers UNAVAILABLE; a compiler bug (an exception, or compile_kernel's CT0999 diagnostic)
is logged and answered INTERNAL without details. One log line per request: entry, target,
outcome, milliseconds.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time

import grpc

from lowering.pipeline import DEFAULT_TARGET
from parser.codes import INTERNAL_ERROR
from protos.generated.cutile.compile.v1 import compile_pb2, compile_pb2_grpc
from service import errors
from service.convert import (
    DEFAULT_LIMITS,
    InvalidRequest,
    Limits,
    diagnostic_to_proto,
    digest,
    request_from_proto,
)
from service.engine import CompileEngine, Outcome

log = logging.getLogger(__name__)

SERVICE_NAME = compile_pb2.DESCRIPTOR.services_by_name["CompileService"].full_name
Response = compile_pb2.CompileResponse


class CompileServicer(compile_pb2_grpc.CompileServiceServicer):
    """`engine=None` means tileiras is unavailable: every compile is UNAVAILABLE."""

    def __init__(
        self,
        engine: CompileEngine | None,
        *,
        limits: Limits = DEFAULT_LIMITS,
        workers: int | None = None,
    ) -> None:
        self.engine = engine
        self.limits = limits
        self.workers = workers or os.cpu_count() or 1
        self._slots = asyncio.Semaphore(self.workers)

    async def Compile(
        self, request: compile_pb2.CompileRequest, context: grpc.aio.ServicerContext
    ) -> compile_pb2.CompileResponse:
        start = time.perf_counter()
        result = await self._compile(request)
        log.info(
            "compile entry=%r target=%r outcome=%s ms=%.1f key=%s",
            request.entry[:80],
            (request.target or DEFAULT_TARGET)[:16],
            _outcome_name(result),
            (time.perf_counter() - start) * 1000.0,
            _short_key(result),
        )
        if not isinstance(result, Response):
            await context.abort_with_status(result)
        return result

    async def _compile(self, request: compile_pb2.CompileRequest) -> Response | grpc.Status:
        """The response, or the status that ends the RPC."""
        try:
            domain = request_from_proto(request, self.limits)
        except InvalidRequest as exc:
            return errors.invalid_argument(exc.violations)
        if self.engine is None:
            return errors.unavailable("tileiras is not available on this server")
        try:
            async with self._slots:
                outcome = await asyncio.to_thread(
                    self.engine.compile, domain, skip_cache=request.options.skip_cache
                )
        except Exception:
            log.exception("internal error compiling entry %r", request.entry)
            return errors.internal()
        if any(d.code == INTERNAL_ERROR for d in outcome.diagnostics):
            # compile_kernel reports its own bugs as a diagnostic (and logs the traceback):
            # that is a server fault, not the client's kernel
            log.error("internal compiler error compiling entry %r", request.entry)
            return errors.internal()
        return response_from_outcome(outcome)


def response_from_outcome(outcome: Outcome) -> compile_pb2.CompileResponse:
    response = compile_pb2.CompileResponse(
        ok=outcome.ok,
        diagnostics=[diagnostic_to_proto(d) for d in outcome.diagnostics],
        cache=_CACHE_OUTCOME[outcome.cache_hit],
        timings=compile_pb2.CompileTimings(
            frontend_ms=outcome.timings.frontend_ms,
            tileiras_ms=outcome.timings.tileiras_ms,
            total_ms=outcome.timings.total_ms,
        ),
    )
    if outcome.artifact is not None:
        response.artifact.CopyFrom(
            compile_pb2.Artifact(
                cubin=outcome.artifact.cubin,
                cubin_digest=digest(outcome.artifact.cubin),
                contract=outcome.artifact.contract,
                request_key=compile_pb2.Digest(sha256=outcome.key.sha256, size=outcome.key.size),
            )
        )
    return response


_CACHE_OUTCOME = {True: compile_pb2.CACHE_OUTCOME_HIT, False: compile_pb2.CACHE_OUTCOME_MISS}
_FAILED_RPC = {
    grpc.StatusCode.INVALID_ARGUMENT: "invalid",
    grpc.StatusCode.UNAVAILABLE: "unavailable",
}


def _short_key(result: Response | grpc.Status) -> str:
    if isinstance(result, Response) and result.ok:
        return result.artifact.request_key.sha256[:8]
    return "-"


def _outcome_name(result: Response | grpc.Status) -> str:
    if not isinstance(result, Response):
        return _FAILED_RPC.get(result.code, "internal")
    if not result.ok:
        return "failed"
    return "hit" if result.cache == compile_pb2.CACHE_OUTCOME_HIT else "miss"
