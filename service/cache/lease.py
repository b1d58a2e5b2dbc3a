"""Keeps a compile lease alive while its compile runs.

A lease expires on its own (so a replica that dies cannot hold a key forever), but a compile
may outlast it: tileiras alone may run for minutes. `LeaseKeeper` renews the lease every
`interval_s` on a daemon thread until the compile ends, so other replicas keep waiting for
the result instead of compiling the same key a second time. A renewal that finds the lease
gone (expired during a stall, or Redis unreachable) stops renewing; the compile goes on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import TracebackType


class LeaseKeeper:
    def __init__(self, renew: Callable[[], bool], interval_s: float) -> None:
        self._renew = renew
        self.interval_s = interval_s
        self.renewals = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lease-keeper", daemon=True)

    def __enter__(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            if not self._renew():
                return
            self.renewals += 1
