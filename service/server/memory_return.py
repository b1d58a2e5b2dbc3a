"""Give memory that a burst of large requests took back to the system once it has passed.

A 1 MiB request goes through buffers that glibc's allocator keeps in its heaps after they
are freed (small pieces of them: protobuf, gRPC slices, Python objects), so an idle daemon
stayed hundreds of MiB above its baseline after a flood. `MemoryReturn.after_large_request`
schedules, for when they have stopped for a second and off the event loop, `malloc_trim(0)`,
which returns the free heap pages. It is a glibc facility: elsewhere it does nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging

log = logging.getLogger(__name__)
TRIM_DELAY_S = 1.0


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None)
    except OSError:
        return None


def trim() -> None:
    libc = _libc()
    with contextlib.suppress(AttributeError):
        if libc is not None:
            libc.malloc_trim(0)
            log.debug("returned free heap memory to the system")


class MemoryReturn:
    """Trims once the large requests have stopped for `delay_s` (never during a burst:
    `malloc_trim` holds the allocator's locks while it walks the heaps)."""

    def __init__(self, delay_s: float = TRIM_DELAY_S) -> None:
        self.delay_s = delay_s
        self.trims = 0
        self._timer: asyncio.TimerHandle | None = None

    def after_large_request(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(self.delay_s, self._trim)

    def _trim(self) -> None:
        self._timer = None
        self.trims += 1
        asyncio.get_running_loop().run_in_executor(None, trim)
