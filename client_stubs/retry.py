"""Retrying gRPC calls: exponential backoff with jitter, honouring the server's RetryInfo.

UNAVAILABLE (server starting, connection lost) and RESOURCE_EXHAUSTED (the compile queue is
full) are retried; every other status fails at once. When the status carries a
`google.rpc.RetryInfo` (cutile-serve sends one with RESOURCE_EXHAUSTED), the client waits at
least that long; otherwise it waits the current backoff scaled by a random factor in
[0.5, 1), doubling the backoff each time up to `max_backoff`. `call_with_retries` blocks
between attempts, `call_with_retries_async` awaits (the asyncio client); both decide alike
(`retry_delay`).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from client_stubs.errors import ServiceError

T = TypeVar("T")
RETRIED = frozenset({"UNAVAILABLE", "RESOURCE_EXHAUSTED"})
STATUS_DETAILS_KEY = "grpc-status-details-bin"


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry (seconds)."""

    max_attempts: int = 5
    initial_backoff: float = 0.1
    max_backoff: float = 3.0
    max_server_delay: float = 30.0  # a RetryInfo longer than this is capped

    def delay(self, attempt: int, server_delay: float | None, jitter: float) -> float:
        """The wait before retry number `attempt` (1-based); `jitter` is in [0, 1)."""
        backoff = min(self.initial_backoff * 2 ** (attempt - 1), self.max_backoff)
        waited = backoff * (0.5 + jitter / 2)
        if server_delay is not None:
            waited = max(waited, min(server_delay, self.max_server_delay))
        return waited


def status_name(exc: Exception) -> str:
    code = exc.code() if hasattr(exc, "code") else None
    return code.name if code is not None else "UNKNOWN"


def server_retry_delay(exc: Exception) -> float | None:
    """The RetryInfo delay (seconds) in the error's rich status details, or None."""
    trailing = exc.trailing_metadata() if hasattr(exc, "trailing_metadata") else None
    for key, value in trailing or ():
        if key != STATUS_DETAILS_KEY:
            continue
        from google.protobuf.message import DecodeError
        from google.rpc import error_details_pb2, status_pb2

        try:  # the server's bytes: details that do not parse are no delay, not a crash
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                    info = error_details_pb2.RetryInfo()
                    detail.Unpack(info)
                    return info.retry_delay.ToNanoseconds() / 1e9
        except (DecodeError, TypeError, ValueError):
            return None
    return None


def call_with_retries(
    call: Callable[[], T],
    policy: RetryPolicy,
    where: str,
    *,
    sleep: Callable[[float], Any] = time.sleep,
    jitter: Callable[[], float] = random.random,
) -> T:
    """`call()`, retried per `policy`; a final gRPC failure becomes `ServiceError` naming
    the status, its details, `where` and the attempts made."""
    import grpc

    attempts = max(1, policy.max_attempts)
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except grpc.RpcError as exc:
            sleep(retry_delay(exc, attempt, policy, where, jitter))
    raise AssertionError("unreachable")


async def call_with_retries_async(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    where: str,
    *,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    jitter: Callable[[], float] = random.random,
) -> T:
    """`call_with_retries` for coroutines (`grpc.aio`): the same policy, waiting with
    `asyncio.sleep` so the event loop runs on between attempts."""
    import grpc

    attempts = max(1, policy.max_attempts)
    for attempt in range(1, attempts + 1):
        try:
            return await call()
        except grpc.RpcError as exc:
            await sleep(retry_delay(exc, attempt, policy, where, jitter))
    raise AssertionError("unreachable")


def retry_delay(
    exc: Exception, attempt: int, policy: RetryPolicy, where: str, jitter: Callable[[], float]
) -> float:
    """How long to wait before retrying after `exc` failed attempt number `attempt`; raises
    `ServiceError` when the status is not retried or the attempts are spent."""
    attempts = max(1, policy.max_attempts)
    name = status_name(exc)
    if name in RETRIED and attempt < attempts:
        return policy.delay(attempt, server_retry_delay(exc), jitter())
    details = exc.details() if hasattr(exc, "details") else str(exc)
    raise ServiceError(name, f"{details} ({where}, attempt {attempt}/{attempts})") from None
