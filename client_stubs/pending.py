"""Which device memory is in use by GPU work that has not finished, and by live CUDA graphs.

Every launch that returns before its work completes records one `Batch`: the byte ranges its
arguments touch (`Access`, reads and writes), the argument objects (kept referenced, so no
memory is freed under the GPU) and a completion signal (an event, or a flag a host function
sets). An eager `kernel(...)` on a default stream records no event of its own (`note`, one
driver call less per launch): an event recorded behind a later batch of its stream covers it (every
`RETIRE_EVERY`-th batch gets one, and so does a batch another stream must wait for), and while
none does, it asks whether its stream is idle (`cuStreamQuery`). Both answers may come later
than the work finished, never earlier. The tensor operations ask `PENDING` before they act:

* reading on the host: refused while unfinished work writes any of the bytes;
* writing on the host, freeing, partitioning or unpartitioning: refused while unfinished work
  touches any of the bytes, or (freeing, moving) while a live graph captured them.

The refusal is a `PendingWorkError` naming the tensor, the kernel, its parameter and the
stream; it is decided from the completion signal, so it never races with the GPU. A launch on
another stream that touches memory in use by unfinished work waits for that work on the device
(`cuStreamWaitEvent`) instead of racing it.

Batches of one stream finish in order, so each stream's batches sit in a FIFO (an event is
recorded and queued under one lock, so that the FIFO's order is the stream's order even when
threads share a stream: a batch known complete vouches for every batch before it); events go
back to a pool. Retiring is housekeeping, never a safety decision (every check asks the completion
signal itself), so it is batched to keep driver calls off the launch path: every
`RETIRE_EVERY`-th batch of a stream looks at its newest predecessor first (finished: the whole
FIFO retires on one `cuEventQuery`) and otherwise retires finished batches from the front.
"""

from __future__ import annotations

import _thread
import threading
from collections import defaultdict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from client_stubs import driver
from client_stubs.errors import GraphCapturedError, PendingWorkError

RETIRE_EVERY = 8  # a stream's FIFO is tidied at every 8th new batch (amortized O(1) queries)

# The legacy default stream (0, or CU_STREAM_LEGACY): no one destroys it, so work on it can be
# tracked by asking the stream itself (`PendingWork.note`), as on the await pool's streams
# (`PendingWork.never_destroyed`). Work on a stream its owner may destroy gets an event, which
# outlives the stream (a handle reused by a new, idle stream would answer for work still
# running): `PendingWork.track` decides. The per-thread default stream is refused
# (`driver.stream_handle`).
DEFAULT_STREAMS = frozenset({0, 1})


def stream_key(stream: int, device: int) -> int:
    """The registry's name for stream handle `stream` used on `device`: the handle itself,
    but for the legacy default stream (0, CU_STREAM_LEGACY), whose handle names another
    stream on every device (the current context's), a negative number per device and
    handle. Batches of one key finish in order; two devices' legacy streams do not."""
    return stream if stream > 1 else -2 - 2 * device - stream  # inlined: `note`, `record`, `issue`


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


class HazardSpans:
    """Accesses as bare (device, lo, hi) tuples, writes and reads apart: the question "must
    this launch wait for that work" is asked per pending batch on every launch while other
    streams are busy, so it compares plain integers."""

    __slots__ = ("_verdicts", "reads", "touched", "writes")

    def __init__(self, accesses: Iterable[Access]) -> None:
        accesses = tuple(accesses)
        self.writes = tuple((a.device, a.lo, a.hi) for a in accesses if a.writes)
        self.reads = tuple((a.device, a.lo, a.hi) for a in accesses if not a.writes)
        self.touched = self.writes + self.reads
        self._verdicts: dict[HazardSpans, bool] = {}

    def must_wait_for(self, pending: HazardSpans) -> bool:
        """Whether work with these accesses races `pending` (a byte both touch, one writes).
        Remembered per `pending` object: repeated launches share theirs (`hazard_spans`)."""
        verdict = self._verdicts.get(pending)
        if verdict is None:
            if len(self._verdicts) >= _VERDICTS:
                self._verdicts.clear()
            verdict = _overlap(self.writes, pending.touched) or _overlap(self.reads, pending.writes)
            self._verdicts[pending] = verdict
        return verdict


def _overlap(
    ours: tuple[tuple[int, int, int], ...], theirs: tuple[tuple[int, int, int], ...]
) -> bool:
    for device, lo, hi in ours:
        for other_device, other_lo, other_hi in theirs:
            if lo < other_hi and other_lo < hi and device == other_device:
                return True
    return False


_VERDICTS = 64  # remembered verdicts per HazardSpans
_SPANS_BY_ID: dict[int, tuple[object, HazardSpans]] = {}


def hazard_spans(accesses: Sequence[Access]) -> HazardSpans:
    """`HazardSpans` of a launch's accesses, remembered per accesses object (a repeated launch
    passes the same tuple, from its memoized plan)."""
    entry = _SPANS_BY_ID.get(id(accesses))
    if entry is not None and entry[0] is accesses:
        return entry[1]
    spans = HazardSpans(accesses)
    if len(_SPANS_BY_ID) >= 512:
        _SPANS_BY_ID.clear()
    _SPANS_BY_ID[id(accesses)] = (accesses, spans)  # holding `accesses` keeps its id unique
    return spans


_LOCK = threading.RLock()  # the registry's lock (`PendingWork._lock`), shared with `Batch`
_MAIN_THREAD = threading.main_thread().ident


class Batch:
    """GPU work issued on one stream whose completion is not yet known on the host.

    A batch from `PendingWork.record` has its own completion event. One from `note` (an eager
    launch) has none: it is covered by the next batch of its stream that has one (its
    `anchor`: stream order makes it complete first), and an uncovered batch asks whether its
    whole stream is idle (`cuStreamQuery`). Either answer may come later than the work itself
    finished, never earlier.

    An uncovered batch may grow: a repeat of its launch joins it (`PendingWork.note`), which
    counts in `joins`. A waiter that saw the batch complete marks it done only if no launch
    joined it since the waiter began to look (`finished`, `PendingWork.retire(batch, joins)`):
    a launch that joined afterwards is not known complete. A `solo` batch (an awaited run's)
    is never joined."""

    __slots__ = (
        "_spans",
        "accesses",
        "anchor",
        "device",
        "done",
        "event",
        "joins",
        "key",
        "owners",
        "solo",
        "stream",
    )

    def __init__(
        self,
        stream: int,
        accesses: Sequence[Access],
        owners: tuple[object, ...],
        event: Any,
        solo: bool = False,
        device: int = 0,
        key: int | None = None,
    ) -> None:
        self.stream = stream
        self.device = device
        self.key = stream_key(stream, device) if key is None else key
        self.accesses = accesses if type(accesses) is tuple else tuple(accesses)
        self.owners = owners
        self.event = event
        self.anchor: Batch | None = None
        self.done = False
        self.joins = 0
        self.solo = solo
        self._spans: HazardSpans | None = None

    @property
    def spans(self) -> HazardSpans:
        spans = self._spans
        if spans is None:
            spans = self._spans = hazard_spans(self.accesses)
        return spans

    @property
    def covered(self) -> bool:
        """Whether an event tells when this batch finished (its own or its anchor's)."""
        return self.done or self.event is not None or self.anchor is not None

    def finished(self) -> bool:
        """True once the GPU completed the work (a host function said so, its event or its
        anchor's fired, or its stream ran idle)."""
        if self.done:
            return True
        event = self.event
        anchor = self.anchor  # read once: a release on another thread may clear it
        if event is not None:
            if driver.event_done(event):
                self.done = True
        elif anchor is not None:
            if anchor.finished():
                self.done = True
        else:
            joins = self.joins
            if _idle(self.stream, self.device):
                with _LOCK:  # the registry's: no launch joins while this is decided
                    if self.joins == joins:  # none joined since the question
                        self.done = True
        return self.done


def _idle(stream: int, device: int) -> bool:
    """Whether `stream` of `device` ran idle. The legacy stream's handle names the current
    context's, and anything may have made another device's current since the launch (an
    allocation, a copy, torch): it is asked in `device`'s context."""
    if stream in DEFAULT_STREAMS:
        return driver.stream_done_on(stream, device)
    return driver.stream_done(stream)


@dataclass(frozen=True, slots=True)
class Pin:
    """Memory a live CUDA graph captured: it may not be freed or moved while the graph lives."""

    accesses: tuple[Access, ...]
    graph: str


class PendingWork:
    """The registry behind `PENDING` (one per process)."""

    def __init__(self) -> None:
        self._lock = _LOCK
        self._streams: dict[int, deque[Batch]] = {}  # by `stream_key`
        self._pins: list[Pin] = []
        # recycled events, by device: an event is recorded only on its own context's streams
        self._events: defaultdict[int, list[Any]] = defaultdict(list)
        self._eventless: frozenset[int] = DEFAULT_STREAMS  # streams no one destroys

    # ---- recording --------------------------------------------------------------------

    def record(
        self,
        stream: int,
        accesses: Sequence[Access],
        owners: tuple[object, ...],
        *,
        device: int = 0,
    ) -> Batch:
        """Record an event on `stream` after the work just issued on `device` (whose context
        is current) and track it."""
        event = self._event(device)
        key = stream if stream > 1 else -2 - 2 * device - stream  # stream_key, inlined
        batch = Batch(stream, accesses, owners, event, False, device, key)
        with self._lock:  # record and queue together: a FIFO's order is its stream's order
            driver.event_record(event, stream)
            queue = self._streams.get(key)
            if queue is None:
                self._streams[key] = deque((batch,))
                return batch
            if queue and len(queue) % RETIRE_EVERY == 0:
                self._tidy(queue)
            queue.append(batch)
            _cover(queue)
        return batch

    def never_destroyed(self, streams: Iterable[int]) -> None:
        """`streams` live as long as the process (the await pool's): `track` follows their
        work without events, as the legacy stream's."""
        with self._lock:
            self._eventless = self._eventless | frozenset(streams)

    def track(
        self,
        stream: int,
        accesses: Sequence[Access],
        owners: tuple[object, ...],
        solo: bool = False,
        device: int = 0,
    ) -> Batch:
        """Track work just issued on `stream` of `device` (whose context is current): without
        an event on a stream no one destroys (`note`), with one on a stream its owner may
        destroy (`record`)."""
        if stream in self._eventless:
            return self.note(stream, accesses, owners, solo, device)
        return self.record(stream, accesses, owners, device=device)

    def note(
        self,
        stream: int,
        accesses: Sequence[Access],
        owners: tuple[object, ...],
        solo: bool = False,
        device: int = 0,
    ) -> Batch:
        """Track work just issued on `stream` without an event of its own (an eager launch,
        or an `await` alone on its loop: one driver call less); only for streams no one
        destroys (`track` decides). Whenever a stream's FIFO reaches a
        multiple of `RETIRE_EVERY` batches, its newest gets an event that covers the batches
        before it, and the front whose covering event fired retires (amortized: one record
        and one query per `RETIRE_EVERY` launches). A launch that repeats the newest
        uncovered batch (the same memoized plan, hence the same memory and owners) joins it
        (counted in `joins`): nothing tells when an uncovered batch finished but events
        recorded later or its stream running idle, and those answer for the repeat too. A
        `solo` batch (an awaited run, whose waiter retires it as complete) is never joined,
        and joins nothing."""
        key = stream if stream > 1 else -2 - 2 * device - stream  # stream_key, inlined
        with self._lock:
            queue = self._streams.get(key)
            if queue and accesses and not solo:
                newest = queue[-1]
                if (
                    newest.accesses is accesses  # the same memoized plan: the same memory
                    and newest.event is None
                    and newest.anchor is None
                    and not newest.done
                    and not newest.solo
                ):
                    newest.joins += 1
                    return newest  # only later events and the idle stream answer for it
            batch = Batch(stream, accesses, owners, None, solo, device, key)
            if queue is None:
                self._streams[key] = deque((batch,))
                return batch
            queue.append(batch)
            if len(queue) % RETIRE_EVERY == 0:
                self._anchor(queue)
                self._retire_covered(queue)
        return batch

    def _retire_covered(self, queue: deque[Batch]) -> None:
        """Retire the front of `queue` whose covering events fired (a query per event: the
        batches an event covers then retire on its cached answer)."""
        while len(queue) > 1:
            front = queue[0]
            if not front.covered or not front.finished():
                return
            self._release(queue.popleft())

    def event_of(self, batch: Batch) -> Any:
        """An event that fires once `batch` finished, for another stream to wait on: its own,
        its anchor's, or one recorded now behind its stream's work (which then covers it)."""
        with self._lock:
            if not batch.covered:  # it is in the uncovered tail of its stream's FIFO
                queue = self._streams.get(batch.key)
                if queue:
                    self._anchor(queue)
                if not batch.covered:  # (not queued: cannot happen) an event of its own
                    batch.event = self._event(batch.device)
                    driver.event_record(batch.event, batch.stream)
            if batch.event is not None:
                return batch.event
            anchor = batch.anchor
            return None if anchor is None else anchor.event  # None: retired, nothing to wait

    def _event(self, device: int) -> Any:
        """An event of `device` (whose context is current)."""
        try:
            return self._events[device].pop()  # atomic: no lock needed
        except IndexError:
            return driver.create_event()

    def _anchor(self, queue: deque[Batch]) -> None:
        """Give the newest batch of `queue` an event if it has none and cover the uncovered
        batches before it (under the lock)."""
        newest = queue[-1]
        if newest.event is None and not newest.done:
            event = self._event(newest.device)
            driver.event_record(event, newest.stream)
            newest.event = event
            newest.anchor = None
        _cover(queue)

    def _tidy(self, queue: deque[Batch]) -> None:
        """Retire the finished front of `queue`: all of it when its newest batch finished."""
        if queue[-1].finished():
            while queue:
                self._release(queue.popleft())
            return
        for _ in range(RETIRE_EVERY):
            # an uncovered front could only ask its stream, which the newest batch just did
            if not queue or not queue[0].covered or not queue[0].finished():
                return
            self._release(queue.popleft())

    def newest(self, stream: int, device: int = 0) -> Batch | None:
        """The newest batch on `stream` of `device` (None: none): what a wait that begins now
        covers."""
        queue = self._streams.get(stream_key(stream, device))
        try:
            return queue[-1] if queue else None
        except IndexError:  # emptied meanwhile by another thread
            return None

    def retire(self, batch: Batch, joins: int | None = None) -> None:
        """`batch` is known complete (its event or stream was synchronized, or a host function
        ran behind it): it and every batch issued before it on its stream retire, with no
        driver call (a stream completes its work in order). `joins`: the batch's count of
        joined launches when the waiter began to look; if a launch joined it since, only the
        batches before it retire (that launch is not known complete)."""
        with self._lock:
            key = batch.key
            queue = self._streams.get(key)
            if joins is not None and batch.joins != joins:
                if queue is None or batch not in queue:
                    return  # retired meanwhile, with everything before it
                while queue[0] is not batch:
                    self._release(queue.popleft())
                return
            batch.done = True
            if queue is None:
                return
            if queue and queue[-1] is batch:  # the newest (an awaited op): the whole stream
                del self._streams[key]
                events = self._events[batch.device]
                for front in queue:  # _release, inlined: on every await
                    front.done = True
                    front.owners = ()
                    front.anchor = None
                    if front.event is not None:
                        events.append(front.event)
                        front.event = None
                return
            if batch in queue:
                while queue:
                    front = queue.popleft()
                    self._release(front)
                    if front is batch:
                        break
            if not queue:
                del self._streams[key]

    def finished_in_order(self, batch: Batch) -> bool:
        """Whether `batch` finished, asking the newest batch of its stream first: a stream
        completes in order, so one query then answers (and retires) every batch queued on it;
        the tasks of a pipeline that share a stream ask once per round, not once each."""
        if batch.done:
            return True
        queue = self._streams.get(batch.key)
        try:
            newest = queue[-1] if queue else None
        except IndexError:  # emptied meanwhile by another thread
            newest = None
        if newest is not None and newest is not batch:
            joins = newest.joins
            if newest.finished():
                self.retire(newest, joins)  # `batch` was queued before it (or retired)
                return True
        return batch.finished()

    def _release(self, batch: Batch) -> None:
        batch.done = True
        batch.owners = ()
        batch.anchor = None
        if batch.event is not None:
            self._events[batch.device].append(batch.event)
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

    def others_pending(self, stream: int, device: int = 0) -> bool:
        """Whether any stream other than `stream` of `device` has unretired work (the launch
        fast path)."""
        streams = self._streams
        if not streams:
            return False
        return len(streams) > 1 or stream_key(stream, device) not in streams

    def conflicts(self, stream: int, accesses: Sequence[Access], device: int = 0) -> list[Batch]:
        """Unfinished batches on other streams that write what `accesses` touch, or touch
        what they write: a launch on `stream` of `device` must wait for them."""
        key = stream_key(stream, device)
        ours = hazard_spans(accesses)
        verdicts = ours._verdicts  # must_wait_for's memo, read inline: once per pending batch
        found: list[Batch] = []
        with self._lock:
            for other, queue in self._streams.items():
                if other == key:
                    continue
                for batch in queue:
                    spans = batch._spans or batch.spans
                    verdict = verdicts.get(spans)
                    if verdict is None:
                        verdict = ours.must_wait_for(spans)
                    if verdict and not batch.finished():
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


def _cover(queue: deque[Batch]) -> None:
    """Make the newest batch of `queue`, which has an event, the anchor of the uncovered
    batches before it. They are its newest ones, up to the first with an event or an anchor;
    a batch found done on its own (its stream ran idle when asked) may stand among them, and
    the uncovered batches before it are covered too (else they would never retire)."""
    newest = queue[-1]
    for index in range(len(queue) - 2, -1, -1):
        batch = queue[index]
        if batch.event is not None or batch.anchor is not None:  # covered, and all before it
            return
        if not batch.done:
            batch.anchor = newest


def _pending_message(span: Span, action: str, access: Access, batch: Batch) -> str:
    verb = "writes" if access.writes else "reads"
    return (
        f"cannot {action} {span!r}: kernel `{access.kernel}` {verb} it (parameter "
        f"`{access.param}`) in work on stream {batch.stream:#x} that has not finished; wait "
        "for it first (op.sync(), await, pending.sync() or synchronize(stream))"
    )


def wait_for_conflicts(stream: int, accesses: Sequence[Access], device: int = 0) -> None:
    """Order a launch on `stream` of `device` after unfinished conflicting work on other
    streams."""
    if PENDING.others_pending(stream, device):
        for batch in PENDING.conflicts(stream, accesses, device):
            event = PENDING.event_of(batch)
            if event is not None:  # None: it retired meanwhile
                driver.stream_wait_event(stream, event)


def others_may_look() -> bool:
    """Whether another Python thread may read, write or free tensors while this one waits
    for the GPU on the host (the wait releases the GIL): one that Python started
    (`_thread._count`, threading's included), or the main thread when this is not it.
    Alone, nothing else runs Python meanwhile: a signal handler runs only once the wait
    returned. A thread that native code started and that calls into Python during the
    main thread's wait is not seen."""
    return _thread._count() > 0 or _thread.get_ident() != _MAIN_THREAD


def register_for_wait(
    stream: int, accesses: Sequence[Access], owners: tuple[object, ...], device: int = 0
) -> None:
    """Register work this thread is about to wait for on the host (`synchronize_handle`
    retires it), where another thread may look meanwhile (`others_may_look`); alone, the
    round trip skips the registry."""
    if others_may_look():
        PENDING.track(stream, accesses, owners, solo=True, device=device)


def synchronize(stream: object = None) -> None:
    """Wait for all work on `stream` (None: the legacy default stream of the current
    device) and retire it."""
    synchronize_handle(driver.stream_handle(stream), driver.current_device())


def synchronize_handle(handle: int, device: int = 0) -> None:
    """Wait for the stream `handle` (the legacy one: `device`'s, whose context is current)
    and retire the work queued on it when the wait began. Work another thread queues during
    the wait is not this wait's to retire: retiring the whole stream once let such a
    kernel's output be read and its memory freed while it ran."""
    newest = PENDING.newest(handle, device)
    joins = 0 if newest is None else newest.joins
    driver.synchronize_handle(handle)
    if newest is not None:
        PENDING.retire(newest, joins)  # a launch that joined it during the wait is not done


PENDING = PendingWork()
