"""PENDING: tensors in use by unfinished GPU work cannot be read, written, freed or moved on the
host; launches on other streams wait for conflicting work (with the fake driver)."""

from __future__ import annotations

import _thread
import asyncio
import gc
import itertools
import threading
import weakref

import numpy as np
import pytest

from client_stubs import (
    ClientError,
    DeviceMismatchError,
    DeviceTensor,
    Graph,
    Kernel,
    MovedArgumentError,
    MovedTensorError,
    PendingWorkError,
    driver,
    synchronize,
)
from client_stubs.device_op import Chain
from client_stubs.pending import PENDING, RETIRE_EVERY, Access, others_may_look, stream_key
from tests.client_stubs.fake_driver import CUBIN, Contexts

LEGACY = stream_key(0, 0)  # the registry's name for device 0's legacy stream

N = 4096


def tensors() -> tuple[DeviceTensor, DeviceTensor, DeviceTensor]:
    return DeviceTensor.empty(N), DeviceTensor.empty(N), DeviceTensor.empty(N)


@pytest.fixture
def busy(fake_driver):
    """The fake GPU: recorded work stays unfinished until `complete()`."""
    fake_driver.auto_complete = False
    return fake_driver


def test_reading_an_output_while_the_kernel_writes_it_raises(add, busy):
    z, x, y = tensors()
    part, _, _ = Kernel(CUBIN, add)(z.partition([128]), x, y, stream=9)
    with pytest.raises(PendingWorkError) as err:
        part.to_numpy()
    message = str(err.value)
    assert "kernel `add` writes it" in message and "parameter `z`" in message
    assert "stream 0x9" in message and "Partition(" in message
    assert "memcpy_dtoh" not in busy.names()
    busy.complete()
    part.to_numpy()
    assert "memcpy_dtoh" in busy.names()


def test_an_overlapping_view_of_the_output_is_protected_too(add, busy):
    z, x, y = tensors()
    view = DeviceTensor(z.ptr + 400, 10, dtype="f32", owner=z.owner)
    Kernel(CUBIN, add)(z.partition([128]), x, y)
    with pytest.raises(PendingWorkError, match="kernel `add` writes it"):
        view.to_numpy()


def test_inputs_may_be_read_but_not_overwritten_while_pending(add, busy):
    z, x, y = tensors()
    Kernel(CUBIN, add)(z.partition([128]), x, y)
    x.to_numpy()  # the kernel only reads x
    with pytest.raises(PendingWorkError, match=r"overwrite from the host.*kernel `add` reads it"):
        x.copy_from_numpy(np.zeros(N, np.float32))


def test_freeing_a_tensor_in_use_raises_until_the_work_finished(add, busy):
    z, x, y = tensors()
    Kernel(CUBIN, add)(z.partition([128]), x, y)
    with pytest.raises(PendingWorkError, match=r"cannot free.*parameter `x`"):
        x.free()
    assert ("mem_free", (x.ptr,)) not in busy.calls  # (a collected earlier test may free)
    busy.complete()
    x.free()
    assert ("mem_free", (x.ptr,)) in busy.calls


def _launches(fake) -> int:
    return fake.names().count("launch")


def test_a_freed_input_is_never_launched_on_even_when_memoized(add, fake_driver):
    z, x, y = tensors()
    kernel, part, view = Kernel(CUBIN, add), z.partition([128]), x.reshape(N)
    for args in ((part, x, y), (part, x, y), (part, view, y)):  # the second: the memo's hit
        kernel(*args)
    launched = _launches(fake_driver)
    x.free()
    for args in ((part, x, y), (part, view, y), (part, DeviceTensor(x.ptr, N, owner=x.owner), y)):
        with pytest.raises(MovedArgumentError, match=r"parameter `x`.*memory was freed"):
            kernel(*args)
        with pytest.raises(MovedArgumentError, match="memory was freed"):
            kernel.plan(*args)
        with pytest.raises(MovedArgumentError, match="memory was freed"):
            kernel.op(*args).sync()
    assert _launches(fake_driver) == launched


def test_a_partition_or_mapped_partition_of_freed_memory_is_never_launched_on(
    add, persistent, fake_driver
):
    z, x, y = tensors()
    kernel, part = Kernel(CUBIN, add), z.reshape(N).partition([128])
    kernel(part, x, y)
    square = DeviceTensor.empty((256, 256))
    mapped = square.reshape((256, 256)).partition([64, 64]).map([4, 1], 4)
    copy, x2 = Kernel(CUBIN, persistent), DeviceTensor.empty((256, 256))
    copy(mapped, x2)
    launched = _launches(fake_driver)
    z.free()
    square.free()
    for launch, args in ((kernel, (part, x, y)), (copy, (mapped, x2))):
        with pytest.raises(MovedArgumentError, match=r"parameter `z`.*memory was freed"):
            launch(*args)
    assert _launches(fake_driver) == launched


def test_a_freed_tensors_memory_is_not_touched_on_the_host(fake_driver):
    x = DeviceTensor.zeros(N)
    view, part = x.narrow(0, 8, 64), x.reshape(N).partition([128])
    x.free()
    fake_driver.calls.clear()
    uses = [
        lambda: x.copy_from_numpy(np.zeros(N, np.float32)),
        x.to_numpy,
        view.to_numpy,
        part.to_numpy,
        lambda: part.map([1], 1),
        lambda: x.narrow(0, 0, 8),
        lambda: view.reshape(64),
        lambda: x.partition([128]),
        x.__dlpack__,
        lambda: view.__cuda_array_interface__,
    ]
    for use in uses:
        with pytest.raises(MovedTensorError, match=r"memory was freed by free\(\)"):
            use()
    assert fake_driver.calls == []
    assert part.unpartition().shape == (N,)  # giving the handle back touches no memory


def test_free_refuses_foreign_memory():
    with pytest.raises(ValueError, match="does not own its memory"):
        DeviceTensor(0x1000, 4, owner=object()).free()


def test_repartitioning_while_pending_raises(add, busy):
    z, x, y = tensors()
    part, _, _ = Kernel(CUBIN, add)(z.partition([128]), x, y)
    with pytest.raises(PendingWorkError, match="cannot unpartition"):
        part.unpartition()
    with pytest.raises(PendingWorkError, match="cannot partition"):
        x.partition([128])
    synchronize(0)
    assert part.unpartition() is z and len(PENDING) == 0


def test_a_synchronous_launch_leaves_nothing_pending(add, busy):
    z, x, y = tensors()
    part, _, _ = Kernel(CUBIN, add)(z.partition([128]), x, y, sync=True)
    assert len(PENDING) == 0 and "event_record" not in busy.names()
    part.to_numpy()


def test_a_launch_on_another_stream_waits_for_conflicting_work(add, busy):
    kernel = Kernel(CUBIN, add)
    z, x, y = tensors()
    w = DeviceTensor.empty(N)
    z_alias = DeviceTensor(z.ptr, N, owner=z.owner)
    kernel(z.partition([128]), x, y, stream=1)
    assert "event_record" not in busy.names()  # an eager launch records no event
    part_w = w.partition([128])
    kernel(part_w, x, y, stream=5)  # only reads what stream 1 reads: no wait
    assert "stream_wait_event" not in busy.names()
    out = DeviceTensor.empty(N).partition([128])
    kernel(out, z_alias, y, stream=3)  # reads stream 1's output
    # an event recorded behind stream 1's work when stream 3 had to wait for it
    (event,) = [a[0] for name, a in busy.calls if name == "event_record" and a[1] == 1]
    assert ("stream_wait_event", (3, event)) in busy.calls
    assert busy.names().index("stream_wait_event") < len(busy.names()) - 1  # before the launch


def test_finished_work_is_not_waited_for(add, fake_driver):
    kernel = Kernel(CUBIN, add)
    z, x, y = tensors()
    z_alias = DeviceTensor(z.ptr, N, owner=z.owner)
    kernel(z.partition([128]), x, y, stream=1)
    kernel(DeviceTensor.empty(N).partition([128]), z_alias, y, stream=5)
    assert "stream_wait_event" not in fake_driver.names()


def test_owners_stay_alive_until_the_work_is_retired(add, busy):
    z, x, y = tensors()
    allocation = weakref.ref(x.owner)
    Kernel(CUBIN, add)(z.partition([128]), x, y, stream=4)
    del x
    gc.collect()
    assert allocation() is not None
    synchronize(4)
    gc.collect()
    assert allocation() is None


def test_finished_batches_are_retired_as_new_ones_arrive(add, fake_driver):
    kernel = Kernel(CUBIN, add)
    z, x, y = tensors()
    part = z.partition([128])
    for _ in range(50):
        kernel(part, x, y)
    assert len(PENDING) <= RETIRE_EVERY
    events = {a[0] for name, a in fake_driver.calls if name == "event_record"}
    assert len(events) <= RETIRE_EVERY + 1  # recycled


def count_queries(monkeypatch, busy) -> list[str]:
    asked: list[str] = []

    def event_done(event: str) -> bool:
        asked.append(event)
        return event in busy.done

    def stream_done(stream: int) -> bool:
        asked.append(f"stream {stream}")
        return stream not in busy.busy

    monkeypatch.setattr(driver, "event_done", event_done)
    monkeypatch.setattr(driver, "stream_done", stream_done)
    return asked


def events_recorded(busy, stream: int) -> list[str]:
    return [a[0] for name, a in busy.calls if name == "event_record" and a[1] == stream]


def test_eager_launches_share_one_event_per_retire_batch(add, busy, monkeypatch):
    asked = count_queries(monkeypatch, busy)
    kernel = Kernel(CUBIN, add)
    z, w, x, y = DeviceTensor.empty(N), *tensors()
    parts = z.partition([128]), w.partition([128])  # alternating outputs: one batch each
    turn = itertools.count()

    def launches(count: int) -> None:
        for _ in range(count):
            kernel(parts[next(turn) % 2], x, y, stream=0)

    launches(RETIRE_EVERY - 1)
    assert asked == [] and events_recorded(busy, 0) == []  # nothing but the launch itself
    launches(1)  # the eighth: an event behind it covers all eight
    (first,) = events_recorded(busy, 0)
    assert asked == [first] and len(PENDING) == RETIRE_EVERY  # not finished yet
    launches(RETIRE_EVERY - 1)
    busy.done.add(first)  # the first eight finished; the stream is still busy
    asked.clear()
    launches(1)
    second = events_recorded(busy, 0)[-1]
    # one query retires the eight the fired event covers; the next asks the new event
    assert asked == [first, second] and len(PENDING) == RETIRE_EVERY
    synchronize(0)
    assert len(PENDING) == 0


def test_a_repeated_eager_launch_joins_its_uncovered_batch(add, busy, monkeypatch):
    asked = count_queries(monkeypatch, busy)
    kernel = Kernel(CUBIN, add)
    z, x, y = tensors()
    z_alias = DeviceTensor(z.ptr, N, owner=z.owner)
    part = z.partition([128])
    for _ in range(3 * RETIRE_EVERY):
        kernel(part, x, y, stream=0)
    assert len(PENDING) == 1 and asked == [] and events_recorded(busy, 0) == []
    with pytest.raises(PendingWorkError):
        part.to_numpy()  # it stands for every repeat: the stream is busy
    out = DeviceTensor.empty(N).partition([128])
    kernel(out, z_alias, y, stream=4)  # reads z: waits for the batch, which an event now covers
    (event,) = events_recorded(busy, 0)
    assert ("stream_wait_event", (4, event)) in busy.calls
    kernel(part, x, y, stream=0)  # after the event: a batch of its own
    assert len(PENDING) == 3
    busy.complete()
    part.to_numpy()


def test_a_launch_joining_after_a_waiter_looked_is_not_retired_with_the_batch(add, busy):
    """A waiter saw the newest batch of a stream complete (a synchronize returned) and retires
    it with the join count it saw; a repeat of the launch that joined the batch meanwhile is
    not known complete, so the batch stays (only its predecessors retire)."""
    kernel = Kernel(CUBIN, add)
    z, x, y = tensors()
    part = z.partition([128])
    other = DeviceTensor.empty(N).partition([128])
    kernel(other, x, y, stream=0)  # a predecessor
    kernel(part, x, y, stream=0)
    seen = PENDING.newest(0)
    joins = seen.joins
    busy.complete()  # both finished: the waiter's synchronize returns...
    kernel(part, x, y, stream=0)  # ...and before it retires, the same launch joins the batch
    assert PENDING.newest(0) is seen and seen.joins == joins + 1
    PENDING.retire(seen, joins)
    assert not seen.done and list(PENDING._streams[LEGACY]) == [seen]  # the predecessor retired
    with pytest.raises(PendingWorkError):
        part.to_numpy()  # the joined launch still writes it
    busy.complete()
    part.to_numpy()


def test_a_stream_query_answered_across_a_join_does_not_finish_the_batch(add, busy, monkeypatch):
    """`Batch.finished` asks the stream; a launch that joins the batch while the question is
    out is not covered by the answer, so the batch is not marked done."""
    kernel = Kernel(CUBIN, add)
    z, x, y = tensors()
    part = z.partition([128])
    kernel(part, x, y, stream=0)
    (batch,) = PENDING._streams[LEGACY]

    def idle_then_joined(stream: int) -> bool:
        kernel(part, x, y, stream=0)  # another thread joins while the query is answered
        return True  # (the answer was taken before that launch)

    monkeypatch.setattr(driver, "stream_done", idle_then_joined)
    assert not batch.finished() and not batch.done and batch.joins == 1


def test_an_uncovered_launch_asks_its_stream(add, busy, monkeypatch):
    asked = count_queries(monkeypatch, busy)
    z, x, y = tensors()
    part, _, _ = Kernel(CUBIN, add)(z.partition([128]), x, y, stream=0)
    with pytest.raises(PendingWorkError, match="kernel `add` writes it"):
        part.to_numpy()
    assert asked == ["stream 0"]
    busy.complete()  # the stream ran idle
    part.to_numpy()
    assert "memcpy_dtoh" in busy.names()


def test_retiring_a_batch_retires_its_stream_predecessors_without_asking(add, busy, monkeypatch):
    asked = count_queries(monkeypatch, busy)
    kernel = Kernel(CUBIN, add)
    z, x, y = tensors()
    part = z.partition([128])
    kernel(part, x, y, stream=4)
    kernel(part, x, y, stream=4)
    other = kernel.op(DeviceTensor.empty(N).partition([128]), x, y).start(stream=5)
    last = kernel.op(part, x, y).start(stream=4)
    assert last.sync() == (part, x, y)
    assert asked == [] and len(PENDING) == 1  # stream 5's work is not stream 4's business
    assert not other.done()
    part.to_numpy()


def test_access_overlap_is_per_device_and_half_open():
    access = Access(100, 200, 0, True, "k", "z")
    assert access.overlaps(0, 199, 300) and not access.overlaps(0, 200, 300)
    assert not access.overlaps(1, 100, 200)


def test_events_are_recorded_under_the_registry_lock(add, busy, monkeypatch):
    """Recording and queueing are one step, so a stream's FIFO order is its stream order
    (retiring a batch retires the ones queued before it without asking the GPU)."""
    held: list[bool] = []

    def event_record(event: str, stream: int) -> None:
        held.append(PENDING._lock._is_owned())  # type: ignore[attr-defined]

    monkeypatch.setattr(driver, "event_record", event_record)
    z, x, y = tensors()
    kernel = Kernel(CUBIN, add)
    part = z.partition([128])
    kernel.op(part, x, y).start(stream=0)
    assert held == [True]
    other = DeviceTensor.empty(N).partition([128])
    for i in range(RETIRE_EVERY):  # alternating outputs: a batch each
        kernel(other if i % 2 else part, x, y, stream=0)
    assert held == [True, True]  # the eighth batch got an event that covers the ones before


def test_a_wait_retires_only_what_was_queued_when_it_began(add, busy, monkeypatch):
    """Thread B launched on the stream while thread A's op.sync() waited: A's wait once
    retired B's batch too, so B's output could be read and freed while its kernel ran."""
    import threading

    kernel = Kernel(CUBIN, add)
    first, second = DeviceTensor.empty(N).partition([128]), DeviceTensor.empty(N).partition([128])
    x, y = DeviceTensor.empty(N), DeviceTensor.empty(N)
    wait = driver.synchronize_handle

    def wait_while_another_thread_launches(handle: int) -> None:
        wait(handle)
        other = threading.Thread(target=lambda: kernel(second, x, y, stream=77))
        other.start()
        other.join()

    monkeypatch.setattr(driver, "synchronize_handle", wait_while_another_thread_launches)
    kernel.op(first, x, y).sync(77)
    with pytest.raises(PendingWorkError, match="kernel `add` writes it"):
        second.unpartition()
    monkeypatch.setattr(driver, "synchronize_handle", wait)
    synchronize(77)  # a wait that begins after it covers it
    second.unpartition().free()


def test_the_allocation_behind_a_tensor_has_no_free_of_its_own(add, busy):
    """`tensor.owner.free()` once skipped every check, and the launch memo then relaunched
    the same argument objects on the freed memory unchecked: only the tensor frees it."""
    kernel = Kernel(CUBIN, add)
    z, x, y = tensors()
    part = z.partition([128])
    kernel(part, x, y)
    assert not hasattr(x.owner, "free")
    with pytest.raises(PendingWorkError, match="cannot free DeviceAllocation"):
        x.free()
    busy.complete()
    synchronize()
    x.free()
    with pytest.raises(MovedArgumentError):
        kernel(part, x, y)  # the memo's objects, freed since


def test_the_per_thread_default_stream_is_refused(add, fake_driver):
    """CU_STREAM_PER_THREAD is one handle for a stream in each thread: tracked as one stream,
    two threads' writers of the same memory on it did not wait for each other."""

    class TorchLikeStream:
        cuda_stream = 2

    kernel = Kernel(CUBIN, add)
    _, x, y = tensors()
    for stream in (2, TorchLikeStream()):
        with pytest.raises(ClientError, match="per-thread default stream"):
            kernel(DeviceTensor.empty(N).partition([128]), x, y, stream=stream)
        with pytest.raises(ClientError, match="per-thread default stream"):
            synchronize(stream)
    assert _launches(fake_driver) == 0


def test_a_stale_join_count_retires_nothing_once_the_batch_left_its_stream(add, busy):
    """A waiter comes back with the join count it saw after its batch was joined, retired by
    another waiter and replaced by newer work on the stream: it retires nothing (the newer
    work still runs)."""
    kernel = Kernel(CUBIN, add)
    z, x, y = tensors()
    part = z.partition([128])
    kernel(part, x, y, stream=0)
    seen = PENDING.newest(0)
    joins = seen.joins
    busy.complete()
    kernel(part, x, y, stream=0)  # joins `seen`
    synchronize(0)  # another waiter retires it, and the stream with it
    out = DeviceTensor.empty(N).partition([128])
    kernel(out, x, y, stream=0)  # newer work, running
    PENDING.retire(seen, joins)  # the first waiter, back with its old count
    with pytest.raises(PendingWorkError):
        out.to_numpy()
    busy.complete()
    out.to_numpy()


def test_a_batch_found_done_mid_stream_leaves_none_before_it_uncovered(add, busy):
    """A check that finds a newer eager batch done (its stream ran idle) without asking about
    an older one: the older one is still covered by the next event, so the stream's eager
    batches keep retiring instead of piling up with their arguments."""
    kernel = Kernel(CUBIN, add)
    _, x, y = tensors()
    first, second = (DeviceTensor.empty(N).partition([128]) for _ in range(2))
    kernel(first, x, y)
    kernel(second, x, y)
    busy.complete()
    second.to_numpy()  # marks the second batch done; the first is not asked
    outs = [DeviceTensor.empty(N).partition([128]) for _ in range(2)]
    for i in range(10 * RETIRE_EVERY):
        kernel(outs[i % 2], x, y)
        busy.complete()  # every launch finishes at once
    assert len(PENDING) <= 2 * RETIRE_EVERY


def test_others_may_look_from_a_thread_that_is_not_the_main_one(monkeypatch):
    """A thread other than the main one is never alone: the main thread may look."""
    monkeypatch.setattr(_thread, "_count", lambda: 0)
    assert not others_may_look()
    answers: list[bool] = []
    worker = threading.Thread(target=lambda: answers.append(others_may_look()))
    worker.start()
    worker.join()
    assert answers == [True]


class TwoDevices(Contexts):
    """Two GPUs on the fake driver: the legacy stream's handle names the current device's
    legacy stream (launches, queries and waits on handle 0 go there), and every event belongs
    to the device current when it was made (recording it on another device's stream fails,
    as cuEventRecord does)."""

    def __init__(self, fake, monkeypatch: pytest.MonkeyPatch) -> None:
        super().__init__()
        self.busy = {0: False, 1: False}  # each legacy stream: work not yet finished
        self.events: dict[str, int] = {}
        self.launched: list[int] = []
        self.freed: list[tuple[int, int]] = []  # (address, the device current at the free)
        self._ids = itertools.count(1)

        def launch(*args: object) -> None:
            fake.calls.append(("launch", args))
            self.launched.append(self.current)
            self.busy[self.current] = True

        def event_record(event: str, stream: int) -> None:
            if self.events[event] != self.current:
                raise ClientError(
                    f"event {event} of device {self.events[event]} recorded "
                    f"on a stream of device {self.current}"
                )

        patches = {
            **self.patches(),
            "launch_params": launch,
            "launch_early": launch,
            "stream_done": lambda stream: not self.busy[self.current],
            "stream_done_on": lambda stream, device: not self.busy[device],
            "synchronize_handle": lambda stream=0: self.busy.__setitem__(self.current, False),
            "create_event": self.create_event,
            "event_record": event_record,
            "event_done": lambda event: not self.busy[self.events[event]],
            "mem_free": lambda ptr: self.freed.append((ptr, self.current)),
        }
        for name, fn in patches.items():
            monkeypatch.setattr(driver, name, fn)

    def create_event(self) -> str:
        event = f"E{next(self._ids)}"
        self.events[event] = self.current
        return event


@pytest.fixture
def two_devices(busy, monkeypatch) -> TwoDevices:
    return TwoDevices(busy, monkeypatch)


def device_tensors(device: int) -> tuple[DeviceTensor, DeviceTensor, DeviceTensor]:
    return tuple(DeviceTensor.empty(N, device=device) for _ in range(3))  # type: ignore[return-value]


def test_the_legacy_stream_is_one_registry_stream_per_device():
    assert stream_key(0, 0) != stream_key(0, 1) != stream_key(1, 0) != stream_key(1, 1)
    assert len({stream_key(s, d) for s in (0, 1) for d in range(4)}) == 8
    assert all(stream_key(s, d) < 0 for s in (0, 1) for d in range(4))
    assert stream_key(0x7100, 0) == stream_key(0x7100, 3) == 0x7100  # a stream has one device


def test_another_devices_idle_legacy_stream_does_not_finish_this_devices_work(add, two_devices):
    """Eager launches on two devices' legacy streams: device 1's stream running idle says
    nothing of device 0's, whichever device is current when the host asks."""
    kernel = Kernel(CUBIN, add)
    z0, x0, y0 = device_tensors(0)
    z1, x1, y1 = device_tensors(1)
    part0, _, _ = kernel(z0.partition([128]), x0, y0)
    part1, _, _ = kernel(z1.partition([128]), x1, y1)
    assert two_devices.launched == [0, 1]
    two_devices.busy[1] = False  # device 1 finished; device 1's context is current
    with pytest.raises(PendingWorkError, match="kernel `add` writes it"):
        part0.unpartition()
    assert part1.unpartition() is z1
    two_devices.busy[0] = False
    assert part0.unpartition() is z0


def test_synchronize_retires_only_the_current_devices_legacy_stream(add, two_devices):
    kernel = Kernel(CUBIN, add)
    z0, x0, y0 = device_tensors(0)
    z1, x1, y1 = device_tensors(1)
    part0, _, _ = kernel(z0.partition([128]), x0, y0)
    part1, _, _ = kernel(z1.partition([128]), x1, y1)
    synchronize()  # device 1's legacy stream: device 1 is current
    assert part1.unpartition() is z1
    with pytest.raises(PendingWorkError):
        part0.unpartition()


def test_events_are_recorded_only_on_their_own_devices_streams(add, two_devices):
    """Events go back to a pool per device: one made on device 0 is never recorded on a
    stream of device 1 (cuEventRecord refuses that)."""
    kernel = Kernel(CUBIN, add)
    for device in (0, 1, 0, 1):
        z, x, y = device_tensors(device)
        pending = kernel.op(z.partition([128]), x, y).start(stream=0x7100 + device)
        two_devices.busy[device] = False
        pending.sync()
    assert sorted(set(two_devices.events.values())) == [0, 1]


def test_an_op_refuses_a_launch_on_a_second_device_before_it_runs(add, two_devices):
    kernel = Kernel(CUBIN, add)
    z0, x0, y0 = device_tensors(0)
    z1, x1, y1 = device_tensors(1)
    chain = kernel.op(z0.partition([128]), x0, y0).then(kernel.op(z1.partition([128]), x1, y1))
    with pytest.raises(DeviceMismatchError, match="an op runs on one device"):
        chain.start()
    assert two_devices.launched == [0]  # the first launch ran, and stays tracked
    with pytest.raises(PendingWorkError):
        x0.free()


def test_work_finished_on_one_devices_legacy_stream_retires_nothing_of_anothers(add, two_devices):
    """A stream finishes in order, so a finished batch retires those queued before it: never
    those of another device's legacy stream, which the same handle names."""
    kernel = Kernel(CUBIN, add)
    z0, x0, y0 = device_tensors(0)
    z1, x1, y1 = device_tensors(1)
    part0, _, _ = kernel(z0.partition([128]), x0, y0)  # eager: no event of its own
    pending = kernel.op(z1.partition([128]), x1, y1).start()  # device 1, with an event
    two_devices.busy[1] = False
    (part1, _, _) = pending.sync()
    assert part1.unpartition() is z1
    with pytest.raises(PendingWorkError, match="kernel `add` writes it"):
        part0.unpartition()


def test_a_graph_replays_on_its_own_devices_legacy_stream(add, two_devices):
    kernel = Kernel(CUBIN, add)
    z1, x1, y1 = device_tensors(1)
    graph = Graph.capture(kernel.op(z1.partition([128]), x1, y1), device=1)
    two_devices.make_current(0)
    pending = graph.replay()  # the legacy stream: device 1's, made current for the replay
    assert two_devices.current == 1
    assert pending.batch is not None and pending.batch.key == stream_key(0, 1)


def test_an_awaited_op_takes_a_pooled_stream_of_its_own_device(add, two_devices):
    kernel = Kernel(CUBIN, add)
    z1, x1, y1 = device_tensors(1)
    two_devices.make_current(0)
    two_devices.busy[1] = False
    made: list[int] = []
    real = driver.create_stream

    def create_stream(**options: object) -> int:
        made.append(two_devices.current)
        return real(**options)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(driver, "create_stream", create_stream)
        op = kernel.op(z1.partition([128]), x1, y1)
        two_devices.busy[1] = False
        asyncio.run(_awaited(op, two_devices))
    assert made and set(made) == {1}  # device 1's pool, not the current device 0's


async def _awaited(op, two_devices: TwoDevices) -> None:  # type: ignore[no-untyped-def]
    task = asyncio.ensure_future(op)
    await asyncio.sleep(0)
    two_devices.busy[1] = False
    await task


def test_freeing_another_devices_memory_leaves_the_current_device(two_devices):
    """A free (the collector's too) runs in its device's context and restores the thread's:
    between a launch and its tracking it must not move the legacy stream's handle."""
    tensor = DeviceTensor.empty(N, device=0)
    two_devices.make_current(1)
    ptr = tensor.ptr
    tensor.free()
    assert two_devices.freed == [(ptr, 0)] and two_devices.current == 1


def test_moving_the_thread_to_another_device_finishes_no_running_work(add, two_devices):
    """Anything may make another device's context current (an allocation, a synchronous
    launch that tracks nothing, torch): the legacy stream of the work's own device is asked."""
    kernel = Kernel(CUBIN, add)
    z0, x0, y0 = device_tensors(0)
    part0, _, _ = kernel(z0.partition([128]), x0, y0)  # eager, device 0's legacy stream
    DeviceTensor.empty(N, device=1)  # device 1 current; its legacy stream idle
    with pytest.raises(PendingWorkError):
        part0.unpartition()
    z1, x1, y1 = device_tensors(1)
    kernel(z1.partition([128]), x1, y1, sync=True)  # alone: registers nothing
    with pytest.raises(PendingWorkError):
        x0.free()


def test_an_op_refused_at_a_step_that_moved_the_thread_tracks_its_launch_on_its_device(
    add, two_devices
):
    kernel = Kernel(CUBIN, add)
    z0, x0, y0 = device_tensors(0)
    x1, y1 = DeviceTensor.empty(N, device=1), DeviceTensor.empty(N, device=1)

    def step(results):  # type: ignore[no-untyped-def]
        out = DeviceTensor.empty(N, device=1)  # device 1 current
        return kernel.op(out.partition([128]), x1, y1)

    with pytest.raises(DeviceMismatchError):
        kernel.op(z0.partition([128]), x0, y0).then(step).start()
    assert two_devices.launched == [0] and set(two_devices.events.values()) == {0}
    with pytest.raises(PendingWorkError):
        x0.free()


def test_an_ops_later_launches_go_out_in_its_own_context_again(add, two_devices):
    kernel = Kernel(CUBIN, add)
    z0, x0, y0 = device_tensors(0)
    w0 = DeviceTensor.empty(N, device=0)

    def step(results):  # type: ignore[no-untyped-def]
        DeviceTensor.empty(16, device=1)  # scratch on device 1: device 1 current
        return kernel.op(w0.partition([128]), x0, y0)

    kernel.op(z0.partition([128]), x0, y0).then(step).start()
    assert two_devices.launched == [0, 0]


def test_an_op_that_launches_nothing_retires_only_the_current_devices_work(add, two_devices):
    kernel = Kernel(CUBIN, add)
    z0, x0, y0 = device_tensors(0)
    kernel(z0.partition([128]), x0, y0)
    z1, x1, y1 = device_tensors(1)
    kernel(z1.partition([128]), x1, y1)
    Chain(()).sync()  # device 1 current: its legacy stream waited for, and only its work
    with pytest.raises(PendingWorkError):
        x0.free()


def test_a_free_on_a_thread_with_no_context_pushes_its_devices(add, fake_driver, monkeypatch):
    monkeypatch.setattr(driver, "context_is_on", lambda device: False)  # none current
    tensor = DeviceTensor.empty(N)
    tensor.free()
    names = [n for n in fake_driver.names() if n in ("push_context", "mem_free", "pop_context")]
    assert names == ["push_context", "mem_free", "pop_context"]
