"""Compile one domain request through the cache: the step the server and the CLI share.

`CompileEngine.compile` looks the request key up in the cache, runs the compiler on a
miss, and stores only successful results. On a miss tileiras itself is skipped when the
bytecode's cubin is cached under its content key (`service.cache.content`). A kernel that
fails to compile, in the front end or in tileiras, is an `Outcome` with error
diagnostics, not an exception; anything else the compiler raises propagates (the server
turns it into INTERNAL). It blocks: the server calls it from worker threads.

With a shared store that offers a compile lease (Redis), `compile_leased` makes one
replica compile a key while the others wait for its result (see `service.cache.redis`).

`CompileEngine.serve` is the server's whole sequence for one request, in one place: the
memory layer on the event loop (a hit needs no task and no thread), the store on a thread,
then one single-flight run per key through the server's `Scheduler` (the store once more,
then the lease, then the compile, with a tileiras the server can kill when every caller is
gone). It reports each lookup and compile to `observer` (the server's metrics).

Given a `WorkerPool` (the server's), the compiler runs in its isolated worker processes,
which a caller's `may_store` turning false kills. What is not the kernel's doing (tileiras
killed or writing garbage, a worker crash, a compile past its CPU or memory budget) raises
`CompileFault` rather than becoming a diagnostic. Before an artifact enters any cache layer
it is checked: a cubin for the contract's target that holds the contract's entry symbol.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from google.protobuf.message import DecodeError

from lowering.cubin_info import check_cubin
from lowering.pipeline import (
    COMPILER_VERSION,
    CompileRequest,
    CompileResult,
    Timings,
    compile_kernel,
)
from lowering.tileiras import Tileiras, TileirasError, TileirasFault, TileirasOverBudget
from parser.front_end import Diagnostic, Severity, codes
from protos.generated.cutile.compile.v1 import contract_pb2
from service.cache.artifact import Artifact
from service.cache.content import ContentCachedAssembler
from service.cache.keys import RequestKey, request_key
from service.cache.lease import LeaseKeeper
from service.cache.memory import MemoryCache
from service.cache.store import ArtifactCache, CacheEntry
from service.compile.faults import CompileFault
from service.compile.flight import Flight, Overloaded, Scheduler
from service.compile.tileiras_runs import KillableTileiras
from service.compile.worker_pool import WorkerPool
from service.convert import contract_to_proto

log = logging.getLogger(__name__)

CompileFn = Callable[..., CompileResult]  # compile_kernel(request, *, assembler=...)

_MAX_NOTE_CHARS = 4000
LEASE_POLL_S = 0.05  # how often a replica waiting on another's lease looks for the result


class CompileObserver(Protocol):
    """What the engine reports as it goes (the server's `ServiceMetrics`)."""

    def cache(self, layer: str, result: str) -> None: ...

    def content_lookup(self, result: str) -> None: ...

    def compiled(self, timings: Timings, diagnostics: tuple[Diagnostic, ...]) -> None: ...


@dataclass(frozen=True)
class Outcome:
    key: RequestKey
    diagnostics: tuple[Diagnostic, ...]  # errors on failure, warnings otherwise (not on hits)
    artifact: Artifact | None = None
    cache_hit: bool = False
    timings: Timings = field(default_factory=Timings)
    cache_layer: str | None = None  # the layer that held a hit ("disk", "redis")

    @property
    def ok(self) -> bool:
        return self.artifact is not None


class CompileEngine:
    """The compiler plus the cache, for one located tileiras (`assembler`).

    `compile_fn` defaults to `lowering.pipeline.compile_kernel`; tests inject their own.
    `cache=None` disables caching. `memory` (the server's) keeps recent artifacts in
    process in front of `cache` (layer "memory"; see `service.cache.memory`).
    """

    def __init__(
        self,
        assembler: Tileiras,
        *,
        cache: ArtifactCache | None = None,
        compile_fn: CompileFn | None = None,
        compiler_version: str = COMPILER_VERSION,
        memory: MemoryCache | None = None,
        pool: WorkerPool | None = None,
    ) -> None:
        self.assembler = assembler
        self.pool = pool
        self.cache = cache
        self.memory = memory if cache is not None else None
        self.observer: CompileObserver | None = None  # the server's metrics
        self.compile_fn = compile_fn if compile_fn is not None else compile_kernel
        self.compiler_version = compiler_version
        self.tileiras_fingerprint = assembler.fingerprint

    @property
    def cache_layers(self) -> tuple[str, ...]:
        """The cache's layers, in lookup order (none without a cache)."""
        if self.cache is None:
            return ()
        return (*(("memory",) if self.memory is not None else ()), *self.cache.layers)

    def lookup_memory(self, key: RequestKey) -> Outcome | None:
        """The outcome of `key` from the memory layer only (never blocks on I/O)."""
        if self.memory is None:
            return None
        artifact = self.memory.get(key.sha256)
        if artifact is None:
            return None
        return Outcome(key, (), artifact, cache_hit=True, cache_layer="memory")

    def key(self, request: CompileRequest) -> RequestKey:
        return request_key(
            request,
            tileiras_fingerprint=self.tileiras_fingerprint,
            compiler_version=self.compiler_version,
        )

    def compile(self, request: CompileRequest, *, skip_cache: bool = False) -> Outcome:
        """The artifact for `request`: from the cache, or compiled (and then stored)."""
        start = time.perf_counter()
        key = self.key(request)
        if not skip_cache:
            hit = self.lookup(key, start=start)
            if hit is not None:
                return hit
        return self.compile_uncached(request, key, start=start)

    async def serve(
        self,
        request: CompileRequest,
        *,
        scheduler: Scheduler,
        skip_cache: bool = False,
        remaining: float | None = None,
        large: bool = False,
        parse_limit_ms: int | None = None,
    ) -> tuple[Outcome, bool]:
        """(outcome, joined another caller's compile) for the server: see the module
        docstring. `remaining` seconds bound the wait (TimeoutError); a `large` request is
        keyed on a thread. A compile too costly for its worker is the request's own error
        (a compile-too-costly diagnostic); other `CompileFault`s and `Overloaded` propagate."""
        key = await asyncio.to_thread(self.key, request) if large else self.key(request)
        cached = not skip_cache and self.cache is not None
        if cached:
            remembered = self.lookup_memory(key)  # the fast path: no task, no thread
            if remembered is not None:
                self._count_lookup(remembered)
                return remembered, False
        deadline = None if remaining is None else time.monotonic() + remaining
        found = self._find_or_compile(
            request, key, scheduler, cached, skip_cache, deadline, parse_limit_ms
        )
        try:
            return await asyncio.wait_for(found, timeout=remaining)
        except CompileFault as fault:
            if fault.kind != "costly":
                raise
            log.warning("compile of entry %r was too costly: %s", request.entry, fault.message)
            diagnostic = Diagnostic(Severity.ERROR, codes.COMPILE_TOO_COSTLY, fault.message)
            return Outcome(key, (diagnostic,)), False

    async def _find_or_compile(
        self,
        request: CompileRequest,
        key: RequestKey,
        scheduler: Scheduler,
        cached: bool,
        skip_cache: bool,
        deadline: float | None,
        parse_limit_ms: int | None,
    ) -> tuple[Outcome, bool]:
        """The store on a thread, then one single-flight run per key (memory was looked at)."""
        hit = await asyncio.to_thread(self.lookup, key) if cached else None
        if hit is not None:
            self._count_lookup(hit)
            return hit, False
        # the file names too: they are not in the key (the artifact does not depend on them),
        # but the diagnostics a joined caller gets do; one client's file names never reach
        # another's answer
        flight_key = (key.sha256, skip_cache, tuple(s.name for s in request.sources))
        joined = scheduler.in_flight(flight_key)
        if not joined and scheduler.full:  # refused: no miss to count, nothing to run
            raise Overloaded(scheduler.retry_delay_s)
        if cached:
            self._count_lookup(None)
        if self.observer is not None:
            self.observer.cache("flight", "joined" if joined else "miss")

        def work(flight: Flight) -> Outcome:
            return self._run_flight(request, key, flight, cached, parse_limit_ms)

        outcome = await scheduler.run(flight_key, work, deadline=deadline)
        return outcome, joined

    def _run_flight(
        self,
        request: CompileRequest,
        key: RequestKey,
        flight: Flight,
        cached: bool,
        parse_limit_ms: int | None,
    ) -> Outcome:
        """One single-flight run: the store again (a run that finished since our lookup may
        have stored it), then the lease and the compile."""
        start = time.perf_counter()
        if cached:
            hit = self.lookup(key, start=start)
            if hit is not None:
                self._count_lookup(hit)
                return hit
        runner = None if self.pool is not None else _killable(self.assembler)
        if runner is not None:
            flight.when_abandoned(runner.kill)
        try:
            outcome = self.compile_leased(
                request,
                key,
                start=start,
                may_store=flight.may_store,
                assembler=runner,
                parse_limit_ms=parse_limit_ms,
            )
        finally:
            if runner is not None:
                runner.cleanup()
        if outcome.cache_hit:  # another replica compiled it while we held off
            self._count_lookup(outcome)
        elif self.observer is not None:
            self.observer.compiled(outcome.timings, outcome.diagnostics)
        return outcome

    def _count_lookup(self, hit: Outcome | None) -> None:
        """One cache lookup: a miss in every layer before the one that hit (or all)."""
        if self.observer is None:
            return
        for layer in self.cache_layers:
            if hit is not None and hit.cache_layer == layer:
                self.observer.cache(layer, "hit")
                return
            self.observer.cache(layer, "miss")

    def _content_observer(self) -> Callable[[str], None] | None:
        return self.observer.content_lookup if self.observer is not None else None

    def lookup(self, key: RequestKey, *, start: float | None = None) -> Outcome | None:
        """The cached outcome of `key`, or None."""
        start = time.perf_counter() if start is None else start
        remembered = self.lookup_memory(key)
        if remembered is not None:
            return remembered
        found = self._lookup(key)
        if found is None:
            return None
        artifact, layer = found
        if self.memory is not None:
            self.memory.put(key.sha256, artifact)
        return Outcome(key, (), artifact, cache_hit=True, timings=_since(start), cache_layer=layer)

    def compile_leased(
        self,
        request: CompileRequest,
        key: RequestKey,
        *,
        start: float | None = None,
        may_store: Callable[[], bool] | None = None,
        assembler: Tileiras | None = None,
        poll_s: float = LEASE_POLL_S,
        parse_limit_ms: int | None = None,
    ) -> Outcome:
        """Compile under the shared store's lease: when another replica holds it, wait
        for its result (or for the lease to go) instead of compiling the same key too.
        Without a leasing store this is `compile_uncached`."""
        compile_now = functools.partial(
            self.compile_uncached,
            request,
            key,
            start=start,
            may_store=may_store,
            assembler=assembler,
            parse_limit_ms=parse_limit_ms,
        )
        cache = self.cache
        if cache is None or not hasattr(cache, "acquire_lease"):
            return compile_now()
        owner = uuid.uuid4().hex
        while True:
            if cache.acquire_lease(key.sha256, owner):
                renew = functools.partial(cache.renew_lease, key.sha256, owner)
                try:
                    hit = self.lookup(key, start=start)  # stored while we waited?
                    if hit is not None:
                        return hit
                    with LeaseKeeper(renew, cache.lease_ms / 1000 / 3):
                        return compile_now()
                finally:
                    cache.release_lease(key.sha256, owner)
            while cache.lease_held(key.sha256):
                if may_store is not None and not may_store():
                    break  # our callers are gone: stop waiting, compile (and not store)
                time.sleep(poll_s)
            hit = self.lookup(key, start=start)
            if hit is not None:
                return hit
            if may_store is not None and not may_store():
                return compile_now()

    def compile_uncached(
        self,
        request: CompileRequest,
        key: RequestKey,
        *,
        start: float | None = None,
        may_store: Callable[[], bool] | None = None,
        assembler: Tileiras | None = None,
        parse_limit_ms: int | None = None,
    ) -> Outcome:
        """Run the compiler (with `assembler`, default ours; in a worker with a pool), its
        sources parsed within `parse_limit_ms` (CT0007 past it); store a success unless
        `may_store()` says no (a passed deadline, every caller gone)."""
        start = time.perf_counter() if start is None else start
        if self.pool is not None:
            result = self.pool.run(
                request,
                self.cache,
                may_store or _always,
                observer=self._content_observer(),
                parse_limit_ms=parse_limit_ms,
            )
        else:
            tool = assembler or self.assembler
            if self.cache is not None:  # the bytecode's cubin may be cached by content key
                tool = ContentCachedAssembler(tool, self.cache, self._content_observer())
            result = self._run_compiler(request, tool, parse_limit_ms)
        timings = _since(start, result.timings)
        if not result.ok:
            return Outcome(key, result.diagnostics, timings=timings)
        if result.cubin is None or result.contract is None:
            raise RuntimeError("the compiler reported success without a cubin and contract")
        artifact = Artifact(result.cubin, contract_to_proto(result.contract))
        _check_artifact(artifact)
        if may_store is None or may_store():
            self._store(key, artifact)
        else:
            log.info("not caching %s: its callers are gone or past their deadline", key.short)
        return Outcome(key, result.diagnostics, artifact, timings=timings)

    def artifact(self, key: str) -> Artifact | None:
        """The verified cached artifact of the hex request `key`, or None: also for what
        the cache holds under that key that is no artifact (a content-key cubin has no
        contract) or no longer passes `_check_artifact`."""
        found = self._lookup(RequestKey(key, 0))
        if found is None or not found[0].contract.kernel.entry_symbol:
            return None
        try:
            _check_artifact(found[0])
        except CompileFault:
            return None
        return found[0]

    def _run_compiler(
        self,
        request: CompileRequest,
        assembler: Tileiras | ContentCachedAssembler,
        parse_limit_ms: int | None = None,
    ) -> CompileResult:
        try:
            return self.compile_fn(request, assembler=assembler, parse_limit_ms=parse_limit_ms)
        except TileirasOverBudget as exc:  # the input's doing: the request's own error
            raise CompileFault("costly", str(exc)) from None
        except TileirasFault as exc:
            raise CompileFault("tileiras", str(exc)) from None
        except MemoryError:
            raise CompileFault("costly", "the compile ran out of memory") from None
        except TileirasError as exc:  # compile_kernel reports these itself; a compile_fn may not
            return CompileResult(diagnostics=(tileiras_diagnostic(exc),))

    def _lookup(self, key: RequestKey) -> tuple[Artifact, str] | None:
        """The verified artifact of `key` and the cache layer that held it."""
        if self.cache is None:
            return None
        found = self.cache.find(key.sha256)
        if found is None:
            return None
        entry, layer = found
        try:
            contract = contract_pb2.LaunchContract.FromString(entry.contract)
        except DecodeError:
            log.warning("cache entry %s holds an unreadable contract; removing it", key.short)
            self.cache.delete(key.sha256)
            return None
        return Artifact(entry.cubin, contract), layer

    def _store(self, key: RequestKey, artifact: Artifact) -> None:
        if self.cache is None:
            return
        if self.memory is not None:
            self.memory.put(key.sha256, artifact)
        entry = CacheEntry(artifact.cubin, artifact.contract.SerializeToString(deterministic=True))
        self.cache.put(key.sha256, entry)


def _always() -> bool:
    return True


def _killable(assembler: object) -> KillableTileiras | None:
    """A per-run tileiras the server can kill (None for a test's fake assembler)."""
    return KillableTileiras(assembler) if isinstance(assembler, Tileiras) else None


def _check_artifact(artifact: Artifact) -> None:
    """CompileFault unless the cubin is one for the contract's target holding its entry."""
    contract = artifact.contract
    try:
        check_cubin(artifact.cubin, contract.target.sm, contract.kernel.entry_symbol)
    except ValueError as exc:
        raise CompileFault("tileiras", f"not caching a bad artifact: {exc}") from None


def tileiras_diagnostic(exc: BaseException) -> Diagnostic:
    """An error diagnostic carrying tileiras's message: first line, the rest as a note."""
    text = str(exc).strip() or type(exc).__name__
    first, _, rest = text.partition("\n")
    notes = (rest.strip()[:_MAX_NOTE_CHARS],) if rest.strip() else ()
    return Diagnostic(
        Severity.ERROR, codes.TILEIRAS_FAILED, f"tileiras failed: {first}", notes=notes
    )


def _since(start: float, stages: Timings | None = None) -> Timings:
    """`stages` with `total_ms` measured from `start` (lookup and storing included)."""
    total_ms = (time.perf_counter() - start) * 1000.0
    stages = stages or Timings()
    return Timings(stages.frontend_ms, stages.tileiras_ms, total_ms)
