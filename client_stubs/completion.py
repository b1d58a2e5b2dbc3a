"""Completion of awaited GPU work on asyncio: the cheapest signal that is already there wins.

`COMPLETIONS.wait(batch, stream)` is what `await op` and `await pending` run once the work is
issued and tracked (a generator, for `__await__`). In order:

1. **Overlap.** When other tasks of the loop are ready to run, yield to the loop once: they
   issue their own work meanwhile (many small kernels in flight on several streams), and by
   the time this task resumes its kernel has usually finished.
2. **Check, then a bounded spin.** Ask the batch's event (`cuEventQuery`; an `await` alone on
   its loop records none and asks its stream, `cuStreamQuery`) until it reports completion,
   for at most `spin_ns` (`SPIN_NS`, 20 µs by default; 0 asks once). A tiny
   kernel finishes within a few µs of its launch: noticing that here costs what
   `cuStreamSynchronize` costs `.sync()` (the driver spins there too), where a host function
   costs two thread wake-ups (about 35 µs on the H200). The spin is bounded, so a long kernel
   costs at most `spin_ns` of one core before parking. The first question goes to the newest
   work on the batch's stream: when that finished, so did everything queued before it, and
   one query (about 1.5 µs on the H200) answers for every task sharing the stream.
3. **Park.** Wait on an asyncio future, resolved by a CUDA host function (`cuLaunchHostFunc`)
   behind the work. Coalesced: the tasks that park on one stream during one loop iteration
   share one host function, enqueued at the end of that iteration (it fires after all their
   work); and the host functions that fire while the loop has not yet woken share one
   `call_soon_threadsafe`. No thread per operation and no polling: the loop sleeps in its
   selector until the driver's callback thread wakes it. The callback, one shared ctypes
   trampoline, makes no CUDA call (the driver forbids it in host functions).

Whether other tasks are ready is read from the asyncio event loop's ready queue (`_ready`, a
CPython implementation detail); a loop without one (e.g. uvloop) is treated as busy, so step 1
always yields once there.
"""

from __future__ import annotations

import asyncio
import ctypes
import itertools
import threading
import time
from collections.abc import Callable, Generator
from typing import Any

from client_stubs import driver
from client_stubs.pending import DEFAULT_STREAMS, PENDING, Batch

SPIN_NS = 20_000
_HOST_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class ParkedGroup:
    """Waiters parked on one stream of one loop, released by one host function (`device`: the
    stream's, which the legacy stream's handle needs current when the function is enqueued)."""

    __slots__ = ("batches", "device", "futures", "loop", "stream")

    def __init__(self, loop: asyncio.AbstractEventLoop, stream: int, device: int = 0) -> None:
        self.loop = loop
        self.stream = stream
        self.device = device
        self.batches: list[Batch] = []
        self.futures: list[asyncio.Future[None]] = []


def others_ready(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether the loop has other callbacks ready to run (True when it cannot tell)."""
    ready = getattr(loop, "_ready", None)
    return True if ready is None else len(ready) > 0


def spin_until_finished(batch: Batch, spin_ns: int) -> bool:
    """Ask until `batch` finished, for at most `spin_ns`; whether it finished. The first
    question goes to the newest work on its stream (`PENDING.finished_in_order`)."""
    return PENDING.finished_in_order(batch) or _keep_asking(batch.finished, spin_ns)


def spin_until_idle(stream: int, spin_ns: int) -> bool:
    """Ask whether `stream` ran idle (`cuStreamQuery`) until it did, for at most `spin_ns`;
    whether it did. What an await alone on its loop spins on: nothing was issued on the stream
    since its work but by other threads, whose work only makes the answer come later."""
    stream_done = driver.stream_done
    return stream_done(stream) or _keep_asking(lambda: stream_done(stream), spin_ns)


def _keep_asking(done: Callable[[], bool], spin_ns: int) -> bool:
    """Ask `done()` until it says so, for at most `spin_ns` (0: not at all); whether it did."""
    if spin_ns <= 0:
        return False
    clock = time.perf_counter_ns
    deadline = clock() + spin_ns
    while clock() < deadline:
        if done():
            return True
    return False


class Completions:
    """Parked waiters by loop and stream, and host functions in flight by token."""

    def __init__(self, spin_ns: int = SPIN_NS) -> None:
        self.spin_ns = spin_ns
        self._lock = threading.Lock()
        self._tokens = itertools.count(1)
        # by loop and stream (`Batch.key`: each device's legacy stream apart)
        self._open: dict[tuple[asyncio.AbstractEventLoop, int], ParkedGroup] = {}
        self._in_flight: dict[int, ParkedGroup] = {}  # token -> group, until its host fn ran
        self._woken: dict[asyncio.AbstractEventLoop, list[ParkedGroup]] = {}
        self._trampoline = _HOST_FN(self._fire)  # kept alive as long as this object
        self.address = int(ctypes.cast(self._trampoline, ctypes.c_void_p).value or 0)

    def wait(self, batch: Batch, stream: int) -> Generator[Any, None, None]:
        """Return once `batch` (issued on `stream`) finished; see the module docstring."""
        loop = asyncio.get_running_loop()
        if others_ready(loop):
            yield  # a bare yield: the task runs again on the loop's next iteration
        if not spin_until_finished(batch, self.spin_ns):
            yield from self.park(batch, stream, loop)

    def park(
        self, batch: Batch, stream: int, loop: asyncio.AbstractEventLoop
    ) -> Generator[Any, None, None]:
        """Wait on a future that the host function behind `stream`'s work resolves."""
        future: asyncio.Future[None] = loop.create_future()
        key = (loop, batch.key)
        group = self._open.get(key)
        if group is None:
            group = self._open[key] = ParkedGroup(loop, stream, batch.device)
            loop.call_soon(self._enqueue, key)
        group.batches.append(batch)
        group.futures.append(future)
        yield from future

    def _enqueue(self, key: tuple[asyncio.AbstractEventLoop, int]) -> None:
        """End of the loop iteration: one host function behind the group's stream."""
        group = self._open.pop(key)
        token = next(self._tokens)
        with self._lock:
            self._in_flight[token] = group
        try:
            if group.stream in DEFAULT_STREAMS:  # the handle names the current device's
                with driver.on_device(group.device):
                    driver.launch_host_func(group.stream, self.address, token)
            else:
                driver.launch_host_func(group.stream, self.address, token)
        except BaseException as exc:
            with self._lock:
                self._in_flight.pop(token, None)
            for future in group.futures:
                if not future.done():
                    future.set_exception(exc)

    def _fire(self, token: Any) -> None:
        """Runs on the driver's callback thread: no CUDA calls here."""
        with self._lock:
            group = self._in_flight.pop(int(token or 0), None)
            if group is None:
                return
            for batch in group.batches:
                batch.done = True
            loop = group.loop
            woken = self._woken.get(loop)
            if woken is not None:  # the loop has a wake-up coming: ride along
                woken.append(group)
                return
            self._woken[loop] = [group]
        try:
            loop.call_soon_threadsafe(self._resolve, loop)
        except RuntimeError:  # the loop was closed meanwhile
            with self._lock:
                self._woken.pop(loop, None)

    def _resolve(self, loop: asyncio.AbstractEventLoop) -> None:
        """On the loop: resolve every future whose host function fired since the last call."""
        with self._lock:
            groups = self._woken.pop(loop, ())
        for group in groups:
            for future in group.futures:
                if not future.done():  # a cancelled waiter
                    future.set_result(None)

    def __len__(self) -> int:
        """Host functions enqueued that have not run yet."""
        return len(self._in_flight)


COMPLETIONS = Completions()
