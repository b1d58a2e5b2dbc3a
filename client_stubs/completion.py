"""Event-driven completion for asyncio: a CUDA host function resolves an asyncio future.

`future_for(batch, stream, loop)` enqueues one `cuLaunchHostFunc` behind the work on `stream`.
When the GPU reaches it, the driver calls one shared C callback (a ctypes trampoline) on its
own callback thread; the callback marks the batch done and hands the future's result to the
loop with `call_soon_threadsafe`. No thread per operation, no polling: the event loop sleeps in
its selector until the driver wakes it. The callback makes no CUDA call (the driver forbids
it in host functions).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import itertools
import threading
from typing import Any

from client_stubs import driver
from client_stubs.pending import Batch

_HOST_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Completions:
    """Futures waiting for host functions, by token (the host function's user data)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens = itertools.count(1)
        self._waiting: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Future[None], Batch]] = {}
        self._trampoline = _HOST_FN(self._fire)  # kept alive as long as this object
        self.address = int(ctypes.cast(self._trampoline, ctypes.c_void_p).value or 0)

    def future_for(
        self, batch: Batch, stream: int, loop: asyncio.AbstractEventLoop
    ) -> asyncio.Future[None]:
        """A future of `loop` that completes when the work queued on `stream` so far has."""
        future: asyncio.Future[None] = loop.create_future()
        token = next(self._tokens)
        with self._lock:
            self._waiting[token] = (loop, future, batch)
        try:
            driver.launch_host_func(stream, self.address, token)
        except BaseException:
            with self._lock:
                self._waiting.pop(token, None)
            raise
        return future

    def _fire(self, token: Any) -> None:
        """Runs on the driver's callback thread: no CUDA calls here."""
        with self._lock:
            entry = self._waiting.pop(int(token or 0), None)
        if entry is None:
            return
        loop, future, batch = entry
        batch.done = True
        with contextlib.suppress(RuntimeError):  # the loop was closed meanwhile
            loop.call_soon_threadsafe(_resolve, future)

    def __len__(self) -> int:
        return len(self._waiting)


COMPLETIONS = Completions()
