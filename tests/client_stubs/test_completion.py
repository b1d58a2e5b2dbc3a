"""Completions: finished work completes without a host function; a bounded spin; parked
waiters on one stream share one host function, and host functions that fire before the loop
wakes share one wake-up (fake driver, real ctypes trampoline)."""

from __future__ import annotations

import asyncio
import ctypes
import threading

import pytest

from client_stubs import DeviceTensor, Kernel, PendingWorkError, driver
from client_stubs.completion import COMPLETIONS, Completions, others_ready, spin_until_finished
from client_stubs.pending import PENDING, Batch, stream_key
from tests.client_stubs.fake_driver import CUBIN

LEGACY = stream_key(0, 0)  # the registry's name for device 0's legacy stream

HOST_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
N = 4096


@pytest.fixture
def busy(fake_driver):
    """The fake GPU: recorded work stays unfinished until `complete()`; no spinning."""
    fake_driver.auto_complete = False
    return fake_driver


@pytest.fixture(autouse=True)
def no_spin(monkeypatch):
    monkeypatch.setattr(COMPLETIONS, "spin_ns", 0)


def ops(kernel: Kernel, count: int) -> list:
    x, y = DeviceTensor.empty(N), DeviceTensor.empty(N)
    return [kernel.op(DeviceTensor.empty(N).partition([128]), x, y) for _ in range(count)]


def test_others_ready_reads_the_loops_ready_queue():
    loop = asyncio.new_event_loop()
    try:
        assert not others_ready(loop)
        loop.call_soon(lambda: None)
        assert others_ready(loop)
        assert others_ready(object())  # type: ignore[arg-type]  # a loop it cannot read: busy
    finally:
        loop.close()


def test_the_spin_asks_until_the_event_fires_and_gives_up_at_its_bound(monkeypatch):
    answers = iter([False, False, True])
    monkeypatch.setattr(driver, "event_done", lambda event: next(answers))
    assert spin_until_finished(Batch(0, (), (), "E"), 10**9)
    monkeypatch.setattr(driver, "event_done", lambda event: False)
    batch = Batch(0, (), (), "E")
    assert not spin_until_finished(batch, 50_000) and not batch.done
    assert not spin_until_finished(batch, 0)


def test_one_question_to_the_newest_work_answers_for_its_whole_stream(add, busy, monkeypatch):
    asked: list[str] = []
    monkeypatch.setattr(
        driver, "event_done", lambda event: asked.append(event) or event in busy.done
    )
    kernel = Kernel(CUBIN, add)
    first, second, newest = (op.start(stream=5) for op in ops(kernel, 3))
    other = ops(kernel, 1)[0].start(stream=6)
    assert not PENDING.finished_in_order(first.batch)  # the newest is not done: ask `first` itself
    assert asked == [newest.batch.event, first.batch.event]
    newest_event = newest.batch.event
    busy.done.add(newest_event)  # (a real GPU finishes `first` before `newest`)
    asked.clear()
    assert PENDING.finished_in_order(first.batch) and asked == [newest_event]
    assert first.batch.done and second.batch.done and newest.batch.done
    assert len(PENDING) == 1 and not other.done()  # stream 6 is not stream 5's business


def test_the_newest_batch_asks_for_itself(add, busy, monkeypatch):
    asked: list[str] = []
    monkeypatch.setattr(driver, "event_done", lambda event: asked.append(event) or False)
    (op,) = ops(Kernel(CUBIN, add), 1)
    pending = op.start(stream=5)
    assert not PENDING.finished_in_order(pending.batch) and asked == [pending.batch.event]


def test_work_done_by_the_time_it_is_awaited_needs_no_host_function(add, fake_driver):
    (op,) = ops(Kernel(CUBIN, add), 1)
    results = asyncio.run(asyncio.wait_for(op.on(3), 5))
    assert results == op.args
    assert "launch_host_func" not in fake_driver.names() and len(PENDING) == 0


def test_an_await_alone_on_its_loop_asks_its_stream_and_records_no_event(add, fake_driver):
    """No other task is ready, so the awaiting task spins at once: on the legacy stream or a
    stream of the await pool (no one destroys them) the stream running idle (cuStreamQuery)
    tells it, and no event is recorded; on a caller's stream its work gets an event."""
    kernel = Kernel(CUBIN, add)
    for awaited in (lambda op: op.on(0), lambda op: op):
        (op,) = ops(kernel, 1)
        fake_driver.calls.clear()
        assert asyncio.run(asyncio.wait_for(awaited(op), 5)) == op.args
        names = fake_driver.names()
        assert "event_record" not in names and "launch_host_func" not in names
        assert names.count("stream_done") >= 1 and len(PENDING) == 0
    (op,) = ops(kernel, 1)
    fake_driver.calls.clear()
    assert asyncio.run(asyncio.wait_for(op.on(3), 5)) == op.args
    assert fake_driver.names().count("event_record") == 1 and len(PENDING) == 0


def test_no_launch_joins_an_awaited_batch(add, busy, monkeypatch):
    """The awaiting task asks its stream; if the same launch is issued eagerly (by another
    thread) right after the answer and before the task retires its batch, that launch is a
    batch of its own, still protected once the await returned."""
    kernel = Kernel(CUBIN, add)
    (op,) = ops(kernel, 1)
    stream_done = driver.stream_done

    def idle_then_relaunched(stream: int) -> bool:
        busy.complete()  # the awaited kernel finished: the answer is "idle"...
        kernel(*op.args, stream=0)  # ...and the same launch is issued before the retire
        monkeypatch.setattr(driver, "stream_done", stream_done)
        return True

    monkeypatch.setattr(driver, "stream_done", idle_then_relaunched)
    assert asyncio.run(asyncio.wait_for(op.on(0), 5)) == op.args
    (later,) = PENDING._streams[LEGACY]
    assert not later.finished()  # the relaunch still runs
    with pytest.raises(PendingWorkError):
        op.args[0].unpartition()
    busy.complete()
    op.args[0].unpartition()


def test_an_await_with_other_tasks_ready_gets_an_event_of_its_own(add, fake_driver):
    """With another task ready the awaiting task yields first and asks about its own work:
    its batch has an event."""
    (op,) = ops(Kernel(CUBIN, add), 1)

    async def main() -> tuple[object, ...]:
        asyncio.get_running_loop().call_soon(lambda: None)  # another task is ready
        return await op.on(0)

    fake_driver.calls.clear()
    assert asyncio.run(asyncio.wait_for(main(), 5)) == op.args
    assert fake_driver.names().count("event_record") == 1 and len(PENDING) == 0


def test_a_launch_after_a_parked_await_is_not_done_with_it(add, busy):
    """An await alone on its loop parks when its spin runs out; a later eager launch of the
    same memoized plan on the same stream is a batch of its own, still unfinished when the
    host function marks the await's work done."""
    kernel = Kernel(CUBIN, add)
    (op,) = ops(kernel, 1)

    async def main() -> tuple[object, ...]:
        task = asyncio.ensure_future(op.on(0))
        await asyncio.sleep(0.01)
        assert not task.done() and busy.names().count("launch_host_func") == 1
        (awaited,) = PENDING._streams[LEGACY]
        kernel(*op.args, stream=0)  # the same plan, issued after the host function
        later = PENDING._streams[LEGACY][-1]
        assert later is not awaited
        queued, busy.host_funcs = busy.host_funcs, []
        for _, address, token in queued:  # the host function runs; the launch after it does not
            HOST_FN(address)(token)
        results = await task
        assert awaited.done and not later.finished()  # the eager launch still runs
        return results

    assert asyncio.run(asyncio.wait_for(main(), 5)) == op.args
    busy.complete()
    assert all(b.finished() for queue in PENDING._streams.values() for b in queue)


def test_an_exception_out_of_the_spin_leaves_the_work_registered(add, busy, monkeypatch):
    """An exception out of the spin (a KeyboardInterrupt, say) while the work may still run:
    the work stays registered, so its tensors stay protected."""

    class Interrupted(BaseException):
        pass

    def interrupted(stream: int) -> bool:
        raise Interrupted

    (op,) = ops(Kernel(CUBIN, add), 1)
    monkeypatch.setattr(driver, "stream_done", interrupted)
    with pytest.raises(Interrupted):
        asyncio.run(asyncio.wait_for(op.on(0), 5))
    (batch,) = PENDING._streams[LEGACY]
    assert batch.owners == (op.args,) and not batch.done


def test_awaiting_a_finished_pending_asks_first_and_does_not_yield(add, fake_driver):
    (op,) = ops(Kernel(CUBIN, add), 1)
    pending = op.start(stream=3)
    steps = pending.__await__()
    with pytest.raises(StopIteration) as stop:
        next(steps)  # no loop needed: the event already fired
    assert stop.value.value == op.args and len(PENDING) == 0


def test_gathered_ops_overlap_and_finish_without_parking(add, busy, monkeypatch):
    """Each task yields once while others are ready; the GPU finishes the work the others
    issued meanwhile, so no task parks."""
    kernel = Kernel(CUBIN, add)
    batch_of = ops(kernel, 6)

    def event_done(event: str) -> bool:  # the GPU drains once every op was issued
        return len([c for c in busy.names() if c == "launch"]) == len(batch_of)

    monkeypatch.setattr(driver, "event_done", event_done)

    async def main() -> list[tuple[object, ...]]:
        return await asyncio.gather(*(op.on(4 + i % 2) for i, op in enumerate(batch_of)))

    results = asyncio.run(asyncio.wait_for(main(), 5))
    assert results == [op.args for op in batch_of]
    assert "launch_host_func" not in busy.names() and len(PENDING) == 0


def test_waiters_parked_on_one_stream_share_one_host_function(add, busy):
    batch_of = ops(Kernel(CUBIN, add), 3)

    async def main() -> list[tuple[object, ...]]:
        tasks = [asyncio.ensure_future(op.on(7)) for op in batch_of]
        await asyncio.sleep(0.01)
        assert not any(t.done() for t in tasks)  # parked: nothing polls
        assert busy.names().count("launch_host_func") == 1 and len(COMPLETIONS) == 1
        threading.Timer(0.01, lambda: busy.complete(on_thread=True)).start()
        return await asyncio.gather(*tasks)

    assert asyncio.run(asyncio.wait_for(main(), 5)) == [op.args for op in batch_of]
    assert len(COMPLETIONS) == 0 and len(PENDING) == 0


def test_host_functions_firing_before_the_loop_wakes_share_one_wake_up(add, busy, monkeypatch):
    batch_of = ops(Kernel(CUBIN, add), 2)
    wake_ups: list[object] = []

    async def main() -> list[tuple[object, ...]]:
        loop = asyncio.get_running_loop()
        plain = loop.call_soon_threadsafe

        def counted(callback, *args):  # type: ignore[no-untyped-def]
            wake_ups.append(callback)
            return plain(callback, *args)

        monkeypatch.setattr(loop, "call_soon_threadsafe", counted)
        tasks = [
            asyncio.ensure_future(op.on(stream))
            for op, stream in zip(batch_of, (1, 3), strict=True)
        ]
        await asyncio.sleep(0.01)
        assert busy.names().count("launch_host_func") == 2  # one per stream
        busy.complete()  # both host functions run before the loop gets back
        return await asyncio.gather(*tasks)

    assert asyncio.run(asyncio.wait_for(main(), 5)) == [op.args for op in batch_of]
    assert len(wake_ups) == 1


def test_cancelling_one_parked_waiter_leaves_the_others_waiting(add, busy):
    batch_of = ops(Kernel(CUBIN, add), 2)

    async def main() -> tuple[object, ...]:
        first, second = (asyncio.ensure_future(op.on(4)) for op in batch_of)
        await asyncio.sleep(0.01)
        first.cancel()
        await asyncio.sleep(0.01)
        assert first.cancelled() and not second.done()
        busy.complete(on_thread=True)
        return await second

    assert asyncio.run(asyncio.wait_for(main(), 5)) == batch_of[1].args


def test_a_failed_host_function_enqueue_fails_every_waiter_of_the_group(add, busy, monkeypatch):
    batch_of = ops(Kernel(CUBIN, add), 2)

    def fail(*args: object) -> None:
        raise RuntimeError("no host functions today")

    monkeypatch.setattr(driver, "launch_host_func", fail)

    async def main() -> list[object]:
        return await asyncio.gather(*(op.on(4) for op in batch_of), return_exceptions=True)

    errors = asyncio.run(asyncio.wait_for(main(), 5))
    assert [str(e) for e in errors] == ["no host functions today"] * 2
    assert len(COMPLETIONS) == 0
    busy.complete()
    assert all(b.finished() for queue in PENDING._streams.values() for b in queue)


def test_the_trampoline_resolves_from_another_thread_and_ignores_strangers(monkeypatch):
    queued: list[tuple[int, int, int]] = []
    monkeypatch.setattr(driver, "launch_host_func", lambda *a: queued.append(a))
    monkeypatch.setattr(driver, "event_done", lambda event: False)
    completions = Completions(spin_ns=0)
    HOST_FN(completions.address)(12345)  # nobody waits for it
    batch = Batch(3, (), (), "E")

    async def main() -> None:
        waiting = asyncio.ensure_future(_drive(completions.wait(batch, 3)))
        await asyncio.sleep(0.01)
        ((stream, address, token),) = queued
        assert stream == 3 and address == completions.address and len(completions) == 1
        thread = threading.Thread(target=lambda: HOST_FN(address)(token))
        thread.start()
        await waiting
        thread.join()

    asyncio.run(asyncio.wait_for(main(), 5))
    assert batch.done and len(completions) == 0


def test_a_host_function_firing_after_its_loop_closed_is_harmless(monkeypatch):
    queued: list[tuple[int, int, int]] = []
    monkeypatch.setattr(driver, "launch_host_func", lambda *a: queued.append(a))
    monkeypatch.setattr(driver, "context_is_on", lambda device: True)
    monkeypatch.setattr(driver, "event_done", lambda event: False)
    completions = Completions(spin_ns=0)
    batch = Batch(0, (), (), "E")
    loop = asyncio.new_event_loop()
    task = loop.create_task(_drive(completions.wait(batch, 0)))
    loop.run_until_complete(asyncio.sleep(0.01))
    assert not task.done()
    task.cancel()  # (the host function stays in flight)
    loop.run_until_complete(asyncio.sleep(0))
    loop.close()
    HOST_FN(completions.address)(queued[0][2])  # must not raise on the driver's thread
    assert batch.done and len(completions) == 0


def test_waiters_on_two_devices_legacy_streams_park_apart_in_their_own_contexts(monkeypatch):
    """The legacy stream's handle names each device's own stream: waiters of two devices on it
    get a host function each, enqueued with their device's context current (another task may
    have moved the thread to the other device by the end of the loop iteration)."""
    current = [1]
    pushed: list[int] = []
    queued: list[tuple[int, int]] = []  # (stream, device current at the enqueue)

    def push(device: int) -> None:
        pushed.append(current[0])
        current[0] = device

    monkeypatch.setattr(driver, "current_device", lambda: current[0])
    monkeypatch.setattr(driver, "context_is_on", lambda device: current[0] == device)
    monkeypatch.setattr(driver, "push_context", push)
    monkeypatch.setattr(driver, "pop_context", lambda: current.__setitem__(0, pushed.pop()))
    monkeypatch.setattr(driver, "launch_host_func", lambda s, a, t: queued.append((s, current[0])))
    monkeypatch.setattr(driver, "event_done", lambda event: False)
    completions = Completions(spin_ns=0)
    batches = [Batch(0, (), (), "E0", device=0), Batch(0, (), (), "E1", device=1)]

    async def main() -> None:
        waiting = [asyncio.ensure_future(_drive(completions.wait(b, 0))) for b in batches]
        await asyncio.sleep(0.01)
        for waiter in waiting:
            waiter.cancel()

    asyncio.run(asyncio.wait_for(main(), 5))
    assert sorted(queued) == [(0, 0), (0, 1)] and current == [1]


async def _drive(steps) -> None:  # type: ignore[no-untyped-def]
    """Await a bare generator (what `__await__` returns)."""

    class Awaitable:
        def __await__(self):  # type: ignore[no-untyped-def]
            return steps

    await Awaitable()
