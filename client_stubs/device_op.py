"""Lazy device operations: build with `kernel.op(...)`, compose with `.then(...)`, run with
`.sync()`, `await`, `.start()` or a graph capture.

A `DeviceOp` does nothing until it runs. Running issues every launch of the op on one stream
(stream order makes a chain safe without waits), then tracks the whole run as one pending
`Batch` (one event, not one per launch). The results, the argument objects of the last launch
in parameter order, come back only once the GPU finished:

    op.sync(stream=None)       issue, wait on the host, return the results
    await op                   issue on the next pooled stream, wait without blocking the
                               loop (completion.py: let other tasks run once, a bounded
                               spin on cuEventQuery, or on cuStreamQuery when no other task
                               is ready, then a host function)
    await op.on(stream)        the same on a given stream
    pending = op.start(stream) issue now; pending.sync() / await pending / pending.done()

`op.then(next)` runs `next` after `op` on the same stream; `next` is a `DeviceOp` or a
function of `op`'s results returning one (to pass outputs along).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Generator
from typing import Any, Protocol

from client_stubs import driver
from client_stubs.completion import COMPLETIONS, spin_until_finished, spin_until_idle
from client_stubs.pending import (
    PENDING,
    Access,
    Batch,
    others_may_look,
    register_for_wait,
    synchronize_handle,
)

Results = tuple[object, ...]
POOL_STREAMS = 4


class Issued(Protocol):
    """What one issued launch leaves to track (`launcher.PreparedLaunch`)."""

    @property
    def accesses(self) -> tuple[Access, ...]: ...

    @property
    def keep_alive(self) -> tuple[object, ...]: ...


class Launchable(Protocol):
    """A kernel as a `LaunchOp` needs it (`launcher.Kernel`): a name, and a launch on a
    stream."""

    @property
    def name(self) -> str: ...

    def issue(
        self,
        args: tuple[object, ...],
        stream: int,
        contexts: dict[int, int] | None = None,
        capturing: bool = False,
        packed: bool = False,
        grid: tuple[int, int, int] | None = None,
    ) -> Issued: ...


class Run:
    """One execution of an op: its stream, the contexts made current, what it touched."""

    __slots__ = (
        "accesses",
        "capturing",
        "contexts",
        "last_accesses",
        "launches",
        "owners",
        "stream",
    )

    def __init__(self, stream: int, *, capturing: bool = False) -> None:
        self.stream = stream
        self.capturing = capturing
        self.contexts: dict[int, int] = {}
        self.accesses: list[Access] = []
        self.last_accesses: tuple[Access, ...] = ()  # the last launch's, as its plan has them
        self.owners: list[object] = []
        self.launches: list[str] = []

    @property
    def device(self) -> int:
        """The device the run's launches ran on (`Kernel.issue` refuses a second one); the
        current device for a run without launches."""
        for device in self.contexts:
            return device
        return driver.current_device()

    def track(self, own_event: bool = True) -> Batch | None:
        """Register what the run touched (None if empty), with a completion event of its own,
        or (`own_event=False`) as `PENDING.track` decides: without one on a stream no one
        destroys (a solo batch: its waiter retires it as complete, so no later launch may
        join it)."""
        if not self.owners:
            return None
        # one launch: its plan's own tuple, which the hazard checks recognize by identity
        accesses = self.last_accesses if len(self.launches) == 1 else self.accesses
        device = self.device
        # in the run's context: a step may have made another device's current since (an
        # allocation), and the event must be of the stream's context, on its legacy stream
        with driver.on_device(device):
            if own_event:
                return PENDING.record(self.stream, accesses, tuple(self.owners), device=device)
            return PENDING.track(self.stream, accesses, tuple(self.owners), True, device=device)


class DeviceOp:
    """Lazy GPU work; see the module docstring."""

    __slots__ = ()

    def _issue(self, run: Run) -> Results:
        raise NotImplementedError

    def then(self, next_op: DeviceOp | Callable[[Results], DeviceOp]) -> DeviceOp:
        """This op, then `next_op` (an op, or a function of this op's results giving one)."""
        return Chain((self, next_op))

    def on(self, stream: object) -> StreamBound:
        """This op bound to `stream`, for `await` (sync/start take the stream directly)."""
        return StreamBound(self, stream)

    def sync(self, stream: object = None) -> Results:
        """Run on `stream` (None: the legacy default stream), wait, return the results. The
        work is registered while the thread waits only where another thread may look
        (`others_may_look`)."""
        handle = driver.stream_handle(stream)
        run = Run(handle)
        try:
            results = self._issue(run)
        except BaseException:
            run.track()  # whatever was launched before the failure stays protected
            raise
        if others_may_look():
            run.track(own_event=False)
        synchronize_handle(handle, run.device)
        return results

    def start(self, stream: object = None) -> Pending:
        """Issue on `stream` now and return a handle to its completion."""
        handle = driver.stream_handle(stream)
        run = Run(handle)
        try:
            results = self._issue(run)
        finally:
            batch = run.track()
        return Pending(batch, results, handle)

    def __await__(self) -> Generator[Any, None, Results]:
        return self._awaited(None)

    def _awaited(self, stream: object) -> Generator[Any, None, Results]:
        """`await` on `stream` (None: the next pooled stream of the op's device), without a
        coroutine frame."""
        if stream is None:
            return self._awaited_on(STREAMS.next(self._device()))
        return self._awaited_on(driver.stream_handle(stream))

    def _device(self) -> int | None:
        """The device the op's first launch runs on, where its arguments say (None: not
        known before it is planned; the pool then gives the current device's stream)."""
        return None

    def _awaited_on(self, handle: int) -> Generator[Any, None, Results]:
        """`await` on the stream `handle`: issue when first iterated, then wait as `Pending`
        does (minus asking the GPU about work it just got).

        With other tasks ready (COMPLETIONS.wait's overlap step, inlined with others_ready:
        the hot path) the work gets an event of its own, so that this task, resuming after
        theirs, asks about its work and not theirs. Alone on the loop, on a stream no one
        destroys (`PENDING.track`), the task spins at once and no other task issues meanwhile,
        so it asks its stream (`cuStreamQuery`) and records no event: one driver call less
        per await (it is recorded only if the spin runs out and the task parks)."""
        loop = asyncio.get_running_loop()
        ready = getattr(loop, "_ready", None)
        others = ready is None or len(ready) > 0
        run = Run(handle)
        try:
            results = self._issue(run)
        finally:
            batch = run.track(own_event=others)
        if batch is not None:
            if not batch.done:
                if others:
                    yield  # let the other tasks issue their work first
                if not spin_until_finished(batch, COMPLETIONS.spin_ns):
                    yield from COMPLETIONS.park(batch, handle, loop)
            PENDING.retire(batch)
        return results


class LaunchOp(DeviceOp):
    """One kernel launch (`kernel.op(*args)`)."""

    __slots__ = ("args", "grid", "kernel")

    def __init__(
        self, kernel: Launchable, args: Results, grid: tuple[int, int, int] | None = None
    ) -> None:
        self.kernel = kernel
        self.args = args
        self.grid = grid

    @property
    def name(self) -> str:
        return self.kernel.name

    def _device(self) -> int | None:
        for arg in self.args:
            try:
                device = arg.device  # type: ignore[attr-defined]
            except Exception:  # no device, or a moved or freed tensor: planning will say
                continue
            if type(device) is int:
                return device
        return None

    def sync(self, stream: object = None) -> Results:
        """`DeviceOp.sync` for one launch, without a `Run` (the round-trip fast path: check
        or reuse the plan, launch, register only where another thread may look,
        cuStreamSynchronize, retire)."""
        handle = 0 if stream is None else driver.stream_handle(stream)
        args = self.args
        prepared = self.kernel.issue(args, handle, None, False, False, self.grid)
        device = prepared.launched_on
        register_for_wait(handle, prepared.accesses, (args, prepared.keep_alive), device)
        synchronize_handle(handle, device)
        return args

    def _awaited_on(self, handle: int) -> Generator[Any, None, Results]:
        """`DeviceOp._awaited_on` for one launch: alone on its loop, without a `Run` (the
        round-trip fast path, as `sync` has one); with other tasks ready, the general path."""
        loop = asyncio.get_running_loop()
        ready = getattr(loop, "_ready", None)
        if ready is None or ready:
            return DeviceOp._awaited_on(self, handle)
        return self._awaited_alone(handle, loop)

    def _awaited_alone(
        self, handle: int, loop: asyncio.AbstractEventLoop
    ) -> Generator[Any, None, Results]:
        """Issue, register (without an event on a stream no one destroys), spin until the
        work finished, park past the spin's bound, retire."""
        args = self.args
        prepared = self.kernel.issue(args, handle, None, False, False, self.grid)
        keep_alive = prepared.keep_alive
        owners = (args, keep_alive) if keep_alive else (args,)
        batch = PENDING.track(
            handle, prepared.accesses, owners, solo=True, device=prepared.launched_on
        )
        if batch.event is None:
            finished = spin_until_idle(handle, COMPLETIONS.spin_ns)
        else:
            finished = spin_until_finished(batch, COMPLETIONS.spin_ns)
        if not finished:
            yield from COMPLETIONS.park(batch, handle, loop)
        PENDING.retire(batch)
        return args

    def _issue(self, run: Run) -> Results:
        args = self.args
        prepared = self.kernel.issue(args, run.stream, run.contexts, run.capturing, grid=self.grid)
        run.accesses.extend(prepared.accesses)
        run.last_accesses = prepared.accesses
        run.owners.append(args)
        if prepared.keep_alive:
            run.owners.append(prepared.keep_alive)
        run.launches.append(self.name)
        return args

    def __repr__(self) -> str:
        return f"LaunchOp({self.name}, {len(self.args)} args)"


class Chain(DeviceOp):
    """Steps run in order on one stream; each function step gets the previous results."""

    __slots__ = ("steps",)

    def __init__(self, steps: tuple[DeviceOp | Callable[[Results], DeviceOp], ...]) -> None:
        self.steps = steps

    def then(self, next_op: DeviceOp | Callable[[Results], DeviceOp]) -> DeviceOp:
        return Chain((*self.steps, next_op))

    def _device(self) -> int | None:
        first = self.steps[0] if self.steps else None
        return first._device() if isinstance(first, DeviceOp) else None

    def _issue(self, run: Run) -> Results:
        results: Results = ()
        for step in self.steps:
            op = step if isinstance(step, DeviceOp) else step(results)
            if not isinstance(op, DeviceOp):
                raise TypeError(
                    f"a .then() function must return a DeviceOp (e.g. kernel.op(...)), "
                    f"got {type(op).__name__}"
                )
            results = op._issue(run)
        return results

    def __repr__(self) -> str:
        return f"Chain({len(self.steps)} steps)"


class StreamBound(DeviceOp):
    """An op that runs on a fixed stream when awaited."""

    __slots__ = ("op", "stream")

    def __init__(self, op: DeviceOp, stream: object) -> None:
        self.op = op
        self.stream = stream

    def _issue(self, run: Run) -> Results:
        return self.op._issue(run)

    def _device(self) -> int | None:
        return self.op._device()

    def _awaited(self, stream: object) -> Generator[Any, None, Results]:
        stream = self.stream if stream is None else stream
        return self.op._awaited_on(
            STREAMS.next(self._device()) if stream is None else driver.stream_handle(stream)
        )


class Pending:
    """Issued work: `sync()` waits on the host, `await` waits without blocking the loop;
    both give the results back once the GPU finished."""

    __slots__ = ("batch", "results", "stream")

    def __init__(self, batch: Batch | None, results: Results, stream: int) -> None:
        self.batch = batch
        self.results = results
        self.stream = stream

    def done(self) -> bool:
        return self.batch is None or self.batch.finished()

    def sync(self) -> Results:
        batch = self.batch
        if batch is not None:
            if not batch.done and batch.event is not None:
                driver.event_synchronize(batch.event)
            PENDING.retire(batch)
        return self.results

    def __await__(self) -> Generator[Any, None, Results]:
        """Wait without blocking the loop (`completion.COMPLETIONS.wait`), retire, give the
        results back. The event is asked first: the work may have finished meanwhile."""
        batch = self.batch
        if batch is not None:
            if not batch.finished():
                yield from COMPLETIONS.wait(batch, self.stream)
            PENDING.retire(batch)
        return self.results


class StreamPool:
    """A few streams per device that `await op` takes in turn (so that concurrent awaits
    overlap on the GPU). They are blocking streams: they order after the legacy stream, which
    `zeros` and the synchronous copies use."""

    def __init__(self, size: int = POOL_STREAMS) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._streams: dict[int, list[int]] = {}
        self._turn = 0

    def next(self, device: int | None = None) -> int:
        """A stream of `device` (None: the current device)."""
        if device is None:
            device = driver.current_device()
        streams = self._streams.get(device)
        if streams is None:
            with self._lock:
                streams = self._streams.get(device)
                if streams is None:
                    driver.ensure_context(device)
                    streams = [driver.create_stream() for _ in range(self.size)]
                    self._streams[device] = streams
                    PENDING.never_destroyed(streams)
        self._turn = (self._turn + 1) % self.size
        return streams[self._turn]


STREAMS = StreamPool()
