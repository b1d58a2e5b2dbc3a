"""Completions: a host function firing on a foreign thread resolves an asyncio future."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import threading

from client_stubs import driver
from client_stubs.completion import Completions
from client_stubs.pending import Batch

HOST_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def test_the_trampoline_resolves_the_future_from_another_thread(monkeypatch):
    queued: list[tuple[int, int, int]] = []
    monkeypatch.setattr(driver, "launch_host_func", lambda *a: queued.append(a))
    completions = Completions()
    batch = Batch(3, (), (), None)

    async def main() -> None:
        future = completions.future_for(batch, 3, asyncio.get_running_loop())
        ((stream, address, token),) = queued
        assert stream == 3 and address == completions.address and len(completions) == 1
        thread = threading.Thread(target=lambda: HOST_FN(address)(token))
        thread.start()
        await asyncio.wait_for(future, 5)
        thread.join()

    asyncio.run(main())
    assert batch.done and len(completions) == 0


def test_unknown_tokens_and_closed_loops_are_ignored(monkeypatch):
    queued: list[tuple[int, int, int]] = []
    monkeypatch.setattr(driver, "launch_host_func", lambda *a: queued.append(a))
    completions = Completions()
    HOST_FN(completions.address)(12345)  # nobody waits for it
    loop = asyncio.new_event_loop()
    batch = Batch(0, (), (), None)
    completions.future_for(batch, 0, loop)
    loop.close()
    HOST_FN(completions.address)(queued[0][2])  # must not raise on the driver's thread
    assert batch.done


def test_a_failed_enqueue_forgets_the_future(monkeypatch):
    def fail(*args: object) -> None:
        raise RuntimeError("no driver")

    monkeypatch.setattr(driver, "launch_host_func", fail)
    completions = Completions()
    loop = asyncio.new_event_loop()
    try:
        with contextlib.suppress(RuntimeError):
            completions.future_for(Batch(0, (), (), None), 0, loop)
        assert len(completions) == 0
    finally:
        loop.close()
