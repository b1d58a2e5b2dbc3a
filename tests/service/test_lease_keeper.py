"""service.cache.lease: a lease is renewed while its compile runs, and only then."""

from __future__ import annotations

import threading
import time

from service.cache.lease import LeaseKeeper


def test_renews_until_the_block_ends() -> None:
    calls: list[float] = []
    with LeaseKeeper(lambda: calls.append(time.monotonic()) is None, 0.01) as keeper:
        time.sleep(0.1)
    done = len(calls)
    time.sleep(0.05)
    assert done >= 3 and len(calls) == done == keeper.renewals  # none after the block


def test_stops_when_the_lease_is_lost() -> None:
    calls = threading.Semaphore(0)

    def renew() -> bool:
        calls.release()
        return False  # someone else holds it now

    with LeaseKeeper(renew, 0.01) as keeper:
        time.sleep(0.1)
    assert keeper.renewals == 0
    assert calls.acquire(timeout=0) and not calls.acquire(timeout=0)  # exactly one try
