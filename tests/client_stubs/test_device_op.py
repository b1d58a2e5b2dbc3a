"""DeviceOps: lazy launches, `.then` chains, `.sync()`, `.start()` and `await` (fake driver)."""

from __future__ import annotations

import _thread
import asyncio
import threading

import pytest

from client_stubs import (
    DeviceOp,
    DeviceTensor,
    DTypeMismatchError,
    Kernel,
    Pending,
    PendingWorkError,
    driver,
)
from client_stubs.pending import PENDING
from tests.client_stubs.fake_driver import CUBIN

N = 4096


def tensors() -> tuple[DeviceTensor, DeviceTensor, DeviceTensor]:
    return DeviceTensor.empty(N), DeviceTensor.empty(N), DeviceTensor.empty(N)


def launches(fake) -> list[tuple]:
    return [a for name, a in fake.calls if name == "launch"]


def test_an_op_is_lazy_and_checks_only_when_run(add, fake_driver):
    kernel = Kernel(CUBIN, add)
    z, x, _ = tensors()
    y16 = DeviceTensor.empty(N, "f16")
    before = len(fake_driver.calls)
    op = kernel.op(z.partition([128]), x, y16)
    assert isinstance(op, DeviceOp) and len(fake_driver.calls) == before
    with pytest.raises(DTypeMismatchError, match="kernel `add`: parameter `y`"):
        op.sync()
    assert launches(fake_driver) == []


def test_sync_launches_waits_and_gives_the_arguments_back_in_order(add, fake_driver):
    z, x, y = tensors()
    part = z.partition([128])
    results = Kernel(CUBIN, add).op(part, x, y).sync(stream=6)
    assert results == (part, x, y) and results[0] is part
    assert [a[4] for a in launches(fake_driver)] == [6]
    assert fake_driver.names()[-1] == "synchronize" and "event_record" not in fake_driver.names()
    assert len(PENDING) == 0


def test_then_runs_steps_in_order_on_one_stream_and_passes_results(add, fake_driver):
    kernel = Kernel(CUBIN, add)
    z, x, y = tensors()
    w = DeviceTensor.empty(N).partition([128])
    z_in = DeviceTensor(z.ptr, N, owner=z.owner)
    seen: list[tuple[object, ...]] = []

    def second(results: tuple[object, ...]) -> DeviceOp:
        seen.append(results)
        return kernel.op(w, z_in, results[2])

    part = z.partition([128])
    op = (
        kernel.op(part, x, y)
        .then(second)
        .then(kernel.op(DeviceTensor.empty(N).partition([128]), x, y))
    )
    results = op.sync(stream=3)
    assert seen == [(part, x, y)]
    assert len(results) == 3 and results[1] is x
    calls = launches(fake_driver)
    assert len(calls) == 3 and {c[4] for c in calls} == {3}
    assert "stream_wait_event" not in fake_driver.names()  # stream order suffices


def test_a_then_function_must_return_an_op(add, fake_driver):
    z, x, y = tensors()
    op = Kernel(CUBIN, add).op(z.partition([128]), x, y).then(lambda r: r)  # type: ignore[arg-type, return-value]
    with pytest.raises(TypeError, match="must return a DeviceOp"):
        op.sync()


def test_start_tracks_a_whole_chain_with_one_event(add, fake_driver):
    fake_driver.auto_complete = False
    kernel = Kernel(CUBIN, add)
    z, x, y = tensors()
    part = z.partition([128])
    op = kernel.op(part, x, y)
    for _ in range(9):
        op = op.then(kernel.op(part, x, y))
    pending = op.start(stream=3)
    assert isinstance(pending, Pending) and not pending.done()
    assert len(launches(fake_driver)) == 10 and fake_driver.names().count("event_record") == 1
    with pytest.raises(PendingWorkError, match="kernel `add` writes it"):
        part.to_numpy()
    assert pending.sync() == (part, x, y)
    assert "event_synchronize" in fake_driver.names() and len(PENDING) == 0
    part.to_numpy()


def test_work_issued_before_a_failed_step_stays_protected(add, fake_driver):
    fake_driver.auto_complete = False
    kernel = Kernel(CUBIN, add)
    z, x, y = tensors()
    part = z.partition([128])
    bad = kernel.op(DeviceTensor.empty(N).partition([64]), x, y)
    with pytest.raises(Exception, match="partition tile shape"):
        kernel.op(part, x, y).then(bad).sync()
    assert len(launches(fake_driver)) == 1
    with pytest.raises(PendingWorkError):
        part.unpartition()


def test_await_resolves_when_the_host_function_fires(add, fake_driver):
    fake_driver.auto_complete = False
    z, x, y = tensors()
    part = z.partition([128])
    op = Kernel(CUBIN, add).op(part, x, y)

    async def main() -> tuple[object, ...]:
        task = asyncio.ensure_future(op.on(11))
        await asyncio.sleep(0.01)
        assert not task.done()  # no completion yet: nothing polls, the loop just waits
        timer = threading.Timer(0.02, lambda: fake_driver.complete(on_thread=True))
        timer.start()
        return await task

    results = asyncio.run(main())
    assert results == (part, x, y)
    assert ("launch_host_func", (11,)) in fake_driver.calls
    assert [a[4] for a in launches(fake_driver)] == [11] and len(PENDING) == 0


def test_await_without_a_stream_takes_pooled_streams_in_turn(add, fake_driver):
    kernel = Kernel(CUBIN, add)

    async def main() -> list[tuple[object, ...]]:
        ops = []
        for _ in range(3):
            z, x, y = tensors()
            ops.append(kernel.op(z.partition([128]), x, y))
        return await asyncio.gather(*ops)

    results = asyncio.run(main())
    assert len(results) == 3
    streams = [a[4] for a in launches(fake_driver)]
    assert len(set(streams)) == 3 and fake_driver.names().count("create_stream") >= 3


def test_await_a_started_op(add, fake_driver):
    z, x, y = tensors()
    part = z.partition([128])

    async def main() -> tuple[object, ...]:
        return await Kernel(CUBIN, add).op(part, x, y).start(stream=5)

    assert asyncio.run(main())[0] is part


def test_an_awaited_chain_alone_on_its_loop_records_no_event(add, fake_driver):
    """A chain awaited with no other task ready on the legacy stream runs as one batch
    without an event: its stream running idle tells the task it finished. On a caller's
    stream, which its owner may destroy, the batch gets an event."""
    kernel = Kernel(CUBIN, add)
    for stream, events in ((0, 0), (3, 1)):
        z, x, y = tensors()
        w = DeviceTensor.empty(N).partition([128])
        chain = kernel.op(z.partition([128]), x, y).then(kernel.op(w, x, y))
        fake_driver.calls.clear()
        results = asyncio.run(asyncio.wait_for(chain.on(stream), 5))
        assert results[0] is w and len(launches(fake_driver)) == 2
        assert fake_driver.names().count("event_record") == events
        assert len(PENDING) == 0


def test_an_await_alone_whose_launch_is_refused_leaves_nothing_pending(add, fake_driver):
    kernel = Kernel(CUBIN, add)
    z, x, _ = tensors()
    y16 = DeviceTensor.empty(N, "f16")
    with pytest.raises(DTypeMismatchError):
        asyncio.run(asyncio.wait_for(kernel.op(z.partition([128]), x, y16).on(0), 5))
    assert launches(fake_driver) == [] and len(PENDING) == 0


def test_a_failed_await_alone_on_a_callers_stream_is_covered_by_an_event(add, fake_driver):
    """A chain whose `.then` step raises after its first launch, awaited alone on a caller's
    stream: the launched work stays tracked by an event, not by asking the stream (its owner
    may destroy it, and a new stream handed the same handle would answer for work still
    running)."""
    busy = fake_driver
    busy.auto_complete = False  # launched work runs until `complete()`
    kernel = Kernel(CUBIN, add)
    z, x, y = tensors()
    part = z.partition([128])

    def fails(results: tuple[object, ...]) -> DeviceOp:
        raise RuntimeError("the step fails")

    with pytest.raises(RuntimeError, match="the step fails"):
        asyncio.run(asyncio.wait_for(kernel.op(part, x, y).then(fails).on(0x7700), 5))
    (batch,) = PENDING._streams[0x7700]
    assert batch.event is not None
    busy.busy.discard(0x7700)  # the stream destroyed; its handle idle again
    with pytest.raises(PendingWorkError):
        part.to_numpy()  # the event has not fired: the kernel still writes it
    busy.complete()
    part.to_numpy()


@pytest.mark.parametrize("how", ["op", "chain", "launch"])
def test_a_host_wait_registers_its_work_where_another_thread_may_look(
    add, fake_driver, monkeypatch, how
):
    """`op.sync()`, a chain's `.sync()` and `kernel(..., sync=True)` wait on the host with the
    GIL released: with another Python thread alive, the work is registered meanwhile (that
    thread's read of the output is refused) and retired by the wait; alone, the round trip
    skips the registry."""
    fake_driver.auto_complete = False  # launched work runs until the wait
    kernel = Kernel(CUBIN, add)
    seen: list[str] = []
    synchronize = fake_driver._synchronize

    def waiting(stream: int = 0) -> None:
        try:
            part.to_numpy()  # what another thread could do during the wait
            seen.append("read allowed")
        except PendingWorkError:
            seen.append("refused")
        synchronize(stream)

    monkeypatch.setattr(driver, "synchronize_handle", waiting)

    def run() -> None:
        if how == "op":
            kernel.op(part, x, y).sync()
        elif how == "chain":
            kernel.op(part, x, y).then(kernel.op(part, x, y)).sync()
        else:
            kernel(part, x, y, sync=True)

    z, x, y = tensors()
    part = z.partition([128])
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        run()
    finally:
        release.set()
        other.join()
    assert seen == ["refused"] and len(PENDING) == 0
    with monkeypatch.context() as alone:
        alone.setattr(_thread, "_count", lambda: 0)
        run()
    assert seen == ["refused", "read allowed"] and len(PENDING) == 0
