"""Single-flight, bounded admission and the worker pool for compiles.

`Scheduler.run(key, fn, deadline=...)` runs the blocking `fn(flight)` on a worker thread
(at most `workers` at once) and returns its result. Identical in-flight calls (same `key`)
share one run: the first caller starts it as its own task and every caller awaits it
through `asyncio.shield`, so a caller that is cancelled (client gone, deadline passed)
detaches without cancelling the run the others wait on. When the last caller leaves, a
run still waiting for a worker is cancelled; one already running cannot be interrupted
(it is a thread), but `flight.may_store()` turns false, so its result is not cached, and
the callbacks it registered with `flight.when_abandoned` run (the server's kill its
tileiras). A server stopping past its grace period cancels every caller, so every run.
`may_store()` is also false once the latest deadline of its callers has passed.

Admission is bounded: at most `workers + max_queued` distinct runs exist at once (joining
an existing run is always admitted). Past that, `run` raises `Overloaded`, which the
server answers RESOURCE_EXHAUSTED with a RetryInfo.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_RETRY_DELAY_S = 1.0


def default_workers() -> int:
    """Worker threads sized to the machine: the CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class Overloaded(Exception):
    """Every worker is busy and the queue is full."""

    def __init__(self, retry_after_s: float) -> None:
        super().__init__(f"server overloaded; retry in {retry_after_s:.1f} s")
        self.retry_after_s = retry_after_s


class Flight(Generic[T]):
    """One shared run: its task, its callers and the latest deadline among them."""

    def __init__(self, deadline: float | None) -> None:
        self.task: asyncio.Task[T] | None = None
        self.waiters = 0
        self.deadline = deadline  # time.monotonic(); None = some caller has none
        self.started = False
        self._abandoned = threading.Event()
        self._on_abandon: list[Callable[[], object]] = []
        self._callbacks_lock = threading.Lock()

    def join(self, deadline: float | None) -> None:
        self.waiters += 1
        if self.deadline is not None:
            self.deadline = None if deadline is None else max(self.deadline, deadline)

    @property
    def abandoned(self) -> bool:
        return self._abandoned.is_set()

    def abandon(self) -> None:
        with self._callbacks_lock:
            self._abandoned.set()
            callbacks, self._on_abandon = self._on_abandon, []
        for callback in callbacks:
            try:
                callback()
            except Exception:
                log.exception("an abandon callback failed")

    def when_abandoned(self, callback: Callable[[], object]) -> None:
        """Call `callback` (from any thread) once the run is abandoned; now if it is."""
        with self._callbacks_lock:
            if not self._abandoned.is_set():
                self._on_abandon.append(callback)
                return
        callback()

    def may_store(self) -> bool:
        """Whether the result may be cached: someone still waits, within a deadline."""
        if self._abandoned.is_set():
            return False
        return self.deadline is None or time.monotonic() <= self.deadline


class Scheduler:
    def __init__(
        self,
        workers: int | None = None,
        *,
        max_queued: int | None = None,
        retry_delay_s: float = DEFAULT_RETRY_DELAY_S,
    ) -> None:
        self.workers = workers or default_workers()
        self.max_queued = 4 * self.workers if max_queued is None else max_queued
        self.retry_delay_s = retry_delay_s
        self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="compile")
        self._slots: asyncio.Semaphore | None = None  # bound to the serving loop on first use
        self._flights: dict[Hashable, Flight] = {}
        self.runs_started = 0

    @property
    def admitted(self) -> int:
        """Distinct runs now queued or running."""
        return len(self._flights)

    @property
    def full(self) -> bool:
        """Whether a new, distinct run would be refused now (`Overloaded`)."""
        return len(self._flights) >= self.workers + self.max_queued

    def in_flight(self, key: Hashable) -> bool:
        return key in self._flights

    @property
    def running(self) -> int:
        return sum(1 for f in self._flights.values() if f.started)

    async def run(
        self,
        key: Hashable,
        fn: Callable[[Flight], T],
        *,
        deadline: float | None = None,
    ) -> T:
        """`fn(flight)` on a worker, shared with every concurrent caller of `key`."""
        flight = self._flights.get(key)
        if flight is None:
            if self.full:
                raise Overloaded(self.retry_delay_s)
            flight = Flight(deadline)
            flight.waiters = 1
            flight.task = asyncio.get_running_loop().create_task(self._execute(flight, fn))
            self._flights[key] = flight
            flight.task.add_done_callback(lambda _task: self._finished(key, flight))
        else:
            flight.join(deadline)
        assert flight.task is not None
        try:
            return await asyncio.shield(flight.task)
        finally:
            flight.waiters -= 1
            if flight.waiters == 0 and not flight.task.done():
                self._abandon(key, flight)

    async def _execute(self, flight: Flight, fn: Callable[[Flight], T]) -> T:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.workers)
        async with self._slots:
            flight.started = True
            self.runs_started += 1
            loop = asyncio.get_running_loop()
            # not cancelled from here on: the slot is held until the thread is done
            future = loop.run_in_executor(self._executor, fn, flight)
            return await asyncio.shield(future)

    def _abandon(self, key: Hashable, flight: Flight) -> None:
        """The last caller left: drop the run (new callers start afresh)."""
        flight.abandon()
        if self._flights.get(key) is flight:
            del self._flights[key]
        if not flight.started and flight.task is not None:
            flight.task.cancel()
        elif flight.task is not None:
            # the thread keeps its worker slot until done; keep it counted
            self._flights[("abandoned", id(flight))] = flight

    def _finished(self, key: Hashable, flight: Flight) -> None:
        for name in (key, ("abandoned", id(flight))):
            if self._flights.get(name) is flight:
                del self._flights[name]
        task = flight.task
        failed = task is not None and not task.cancelled() and task.exception() is not None
        if failed and flight.waiters == 0:
            log.warning("abandoned compile failed: %r", task.exception())

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
