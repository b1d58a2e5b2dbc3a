"""Keep launch arguments alive until the GPU is done with them.

A launch is asynchronous: after `cuLaunchKernel` returns, the caller may drop the last
reference to an input (a temporary torch tensor, a `DeviceTensor` whose allocation would be
freed). `InFlight.hold` records an event after the launch and keeps the owners referenced until
that event completes; `prune` releases finished entries.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from client_stubs import driver


class InFlight:
    """Owners of in-flight launches, each released once its completion event has fired."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: list[tuple[Any, tuple[object, ...]]] = []

    def hold(self, stream: int, owners: Iterable[object]) -> None:
        """Record an event on `stream` and keep `owners` referenced until it completes."""
        self.prune()
        event = driver.record_event(stream)
        with self._lock:
            self._pending.append((event, tuple(owners)))

    def prune(self) -> int:
        """Release every entry whose event completed; returns how many are still pending."""
        with self._lock:
            still: list[tuple[Any, tuple[object, ...]]] = []
            for event, owners in self._pending:
                if driver.event_done(event):
                    driver.destroy_event(event)
                else:
                    still.append((event, owners))
            self._pending = still
            return len(still)

    def __len__(self) -> int:
        return len(self._pending)


IN_FLIGHT = InFlight()
