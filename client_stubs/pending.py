"""Which device memory is in use by GPU work that has not finished, and by live CUDA graphs.

Every launch that returns before its work completes records one `Batch`: the byte ranges its
arguments touch (`Access`, reads and writes), the argument objects (kept referenced, so no
memory is freed under the GPU) and a completion signal (an event, or a flag a host function
sets). The tensor operations ask `PENDING` before they act:

* reading on the host: refused while unfinished work writes any of the bytes;
* writing on the host, freeing, partitioning or unpartitioning: refused while unfinished work
  touches any of the bytes, or (freeing, moving) while a live graph captured them.

The refusal is a `PendingWorkError` naming the tensor, the kernel, its parameter and the
stream; it is decided from the completion signal, so it never races with the GPU. A launch on
another stream that touches memory in use by unfinished work waits for that work on the device
(`cuStreamWaitEvent`) instead of racing it.

Batches of one stream finish in order, so each stream's batches sit in a FIFO and are retired
from the front; events go back to a pool.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from client_stubs import driver
from client_stubs.errors import GraphCapturedError, PendingWorkError

_RETIRE_PER_ADD = 2  # front batches tested per new batch: keeps retirement amortized O(1)


class Span(Protocol):
    """What `PENDING` needs to know about a tensor: its device and byte range."""

    @property
    def device(self) -> int: ...

    @property
    def byte_extent(self) -> tuple[int, int]: ...


@dataclass(frozen=True, slots=True)
class Access:
    """Bytes [lo, hi) of `device` that parameter `param` of kernel `kernel` reads or writes."""

    lo: int
    hi: int
    device: int
    writes: bool
    kernel: str
    param: str

    def overlaps(self, device: int, lo: int, hi: int) -> bool:
        return self.device == device and self.lo < hi and lo < self.hi


class Batch:
    """GPU work issued on one stream whose completion is not yet known on the host."""

    __slots__ = ("accesses", "done", "event", "owners", "stream")

    def __init__(
        self, stream: int, accesses: Sequence[Access], owners: tuple[object, ...], event: Any
    ) -> None:
        self.stream = stream
        self.accesses = tuple(accesses)
        self.owners = owners
        self.event = event
        self.done = False

    def finished(self) -> bool:
        """True once the GPU completed the work (a host function said so, or the event fired)."""
        if not self.done and (self.event is None or driver.event_done(self.event)):
            self.done = True
        return self.done


@dataclass(frozen=True, slots=True)
class Pin:
    """Memory a live CUDA graph captured: it may not be freed or moved while the graph lives."""

    accesses: tuple[Access, ...]
    graph: str


class PendingWork:
    """The registry behind `PENDING` (one per process)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._streams: dict[int, deque[Batch]] = {}
        self._pins: list[Pin] = []
        self._events: list[Any] = []  # recycled events

    # ---- recording --------------------------------------------------------------------

    def record(self, stream: int, accesses: Sequence[Access], owners: tuple[object, ...]) -> Batch:
        """Record an event on `stream` after the work just issued and track it."""
        with self._lock:
            event = self._events.pop() if self._events else driver.create_event()
        driver.event_record(event, stream)
        batch = Batch(stream, accesses, owners, event)
        self.add(batch)
        return batch

    def add(self, batch: Batch) -> None:
        with self._lock:
            queue = self._streams.get(batch.stream)
            if queue is None:
                queue = self._streams[batch.stream] = deque()
            for _ in range(min(_RETIRE_PER_ADD, len(queue))):
                if not queue[0].finished():
                    break
                self._release(queue.popleft())
            queue.append(batch)

    def completed(self, stream: int) -> None:
        """The host waited for all of `stream`'s work: retire every batch on it."""
        with self._lock:
            queue = self._streams.pop(stream, None)
            for batch in queue or ():
                batch.done = True
                self._release(batch)

    def retire(self, batch: Batch) -> None:
        """`batch` is known complete (its event or stream was synchronized)."""
        with self._lock:
            batch.done = True
            queue = self._streams.get(batch.stream)
            while queue and queue[0].finished():
                self._release(queue.popleft())
            if queue is not None and not queue:
                del self._streams[batch.stream]

    def _release(self, batch: Batch) -> None:
        batch.owners = ()
        if batch.event is not None:
            self._events.append(batch.event)
            batch.event = None

    def __len__(self) -> int:
        """Batches not yet retired (some may have finished on the GPU already)."""
        return sum(len(q) for q in self._streams.values())

    # ---- graphs -----------------------------------------------------------------------

    def pin(self, accesses: Sequence[Access], graph: str) -> Pin:
        pin = Pin(tuple(accesses), graph)
        with self._lock:
            self._pins.append(pin)
        return pin

    def unpin(self, pin: Pin) -> None:
        with self._lock:
            if pin in self._pins:
                self._pins.remove(pin)

    # ---- questions --------------------------------------------------------------------

    def others_pending(self, stream: int) -> bool:
        """Whether any stream other than `stream` has unretired work (the launch fast path)."""
        streams = self._streams
        if not streams:
            return False
        return len(streams) > 1 or stream not in streams

    def conflicts(self, stream: int, accesses: Iterable[Access]) -> list[Batch]:
        """Unfinished batches on other streams that write what `accesses` touch, or touch
        what they write: a launch on `stream` must wait for them."""
        found: list[Batch] = []
        with self._lock:
            for other, queue in list(self._streams.items()):
                if other == stream:
                    continue
                for batch in queue:
                    if batch in found or not _hazard(batch.accesses, accesses):
                        continue
                    if not batch.finished():
                        found.append(batch)
        return found

    def check_host(self, span: Span, action: str, *, reads_only: bool) -> None:
        """Raise `PendingWorkError` when unfinished work conflicts with `action` on `span`:
        with any write when the host only reads, with any access otherwise."""
        if not self._streams:
            return
        lo, hi = span.byte_extent
        if lo == hi:
            return
        with self._lock:
            for queue in self._streams.values():
                for batch in queue:
                    for access in batch.accesses:
                        if (access.writes or not reads_only) and access.overlaps(
                            span.device, lo, hi
                        ):
                            if batch.finished():
                                break
                            raise PendingWorkError(_pending_message(span, action, access, batch))

    def check_pinned(self, span: Span, action: str) -> None:
        """Raise `GraphCapturedError` when a live graph captured any byte of `span`."""
        if not self._pins:
            return
        lo, hi = span.byte_extent
        with self._lock:
            for pin in self._pins:
                for access in pin.accesses:
                    if access.overlaps(span.device, lo, hi):
                        raise GraphCapturedError(
                            f"cannot {action} {span!r}: CUDA graph {pin.graph} captured it as "
                            f"parameter `{access.param}` of kernel `{access.kernel}`; close the "
                            "graph first"
                        )

    def check_release(self, span: Span, action: str) -> None:
        """Freeing or moving: no unfinished work may touch it and no live graph hold it."""
        self.check_host(span, action, reads_only=False)
        self.check_pinned(span, action)


def _hazard(pending: Sequence[Access], new: Iterable[Access]) -> bool:
    for a in new:
        for b in pending:
            if (a.writes or b.writes) and b.overlaps(a.device, a.lo, a.hi):
                return True
    return False


def _pending_message(span: Span, action: str, access: Access, batch: Batch) -> str:
    verb = "writes" if access.writes else "reads"
    return (
        f"cannot {action} {span!r}: kernel `{access.kernel}` {verb} it (parameter "
        f"`{access.param}`) in work on stream {batch.stream:#x} that has not finished; wait "
        "for it first (op.sync(), await, pending.sync() or synchronize(stream))"
    )


def wait_for_conflicts(stream: int, accesses: Sequence[Access]) -> None:
    """Order a launch on `stream` after unfinished conflicting work on other streams."""
    if PENDING.others_pending(stream):
        for batch in PENDING.conflicts(stream, accesses):
            driver.stream_wait_event(stream, batch.event)


def synchronize(stream: object = None) -> None:
    """Wait for all work on `stream` (None: the legacy default stream) and retire it."""
    handle = driver.stream_handle(stream)
    driver.synchronize(handle)
    PENDING.completed(handle)


PENDING = PendingWork()
