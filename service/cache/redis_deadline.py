"""Redis connections whose every command ends within a total deadline.

redis-py's `socket_timeout` bounds each read of the socket, not a command: a server (or a
proxy, or a swapping host) that sends a reply a byte at a time under that timeout keeps one
command, and the thread waiting on it, busy for as long as it likes. Here each command
starts a deadline (`deadline_s` after it is sent) and every read of its reply waits at most
until then; past it the read times out, redis-py drops the connection, and the caller sees
the `TimeoutError` an unreachable server gives (`RedisCache` then leaves Redis alone for a
while).

`deadline_client(url, ...)` is `redis.Redis.from_url` with these connections, for the
`redis://`, `rediss://` and `unix://` schemes alike.
"""

from __future__ import annotations

import socket
import time
from typing import Any

import redis
from redis.connection import Connection, SSLConnection, UnixDomainSocketConnection, parse_url


class _DeadlineSocket:
    """A connected socket whose reads end at its connection's command deadline; everything
    else is the socket's own. The timeout redis-py sets (`settimeout`: its per-read timeout,
    or 0 for a poll) still applies, capped by the time left."""

    __slots__ = ("_connection", "_sock", "_timeout")

    def __init__(self, sock: socket.socket, connection: _DeadlineMixin) -> None:
        self._sock = sock
        self._connection = connection
        self._timeout = sock.gettimeout()

    def settimeout(self, timeout: float | None) -> None:
        self._timeout = timeout
        self._sock.settimeout(timeout)

    def gettimeout(self) -> float | None:
        return self._timeout

    def _wait_at_most(self) -> None:
        wanted = self._timeout
        if wanted == 0:  # a poll: it never waits
            self._sock.settimeout(0)
            return
        left = self._connection.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the command's deadline passed")  # socket.timeout's class
        self._sock.settimeout(left if wanted is None else min(wanted, left))

    def recv(self, size: int, *flags: int) -> bytes:
        self._wait_at_most()
        return self._sock.recv(size, *flags)

    def recv_into(self, buffer: Any, size: int = 0, *flags: int) -> int:
        self._wait_at_most()
        return self._sock.recv_into(buffer, size, *flags)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class _DeadlineMixin:
    """What turns a redis-py connection class into one with command deadlines."""

    socket_timeout: float | None

    def __init__(self, *args: Any, deadline_s: float = 5.0, **kwargs: Any) -> None:
        self.deadline_s = deadline_s
        self.deadline = float("inf")
        super().__init__(*args, **kwargs)

    def _connect(self) -> Any:
        return _DeadlineSocket(super()._connect(), self)  # type: ignore[misc]

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        self.deadline = time.monotonic() + self.deadline_s
        super().send_packed_command(command, check_health)  # type: ignore[misc]


class DeadlineConnection(_DeadlineMixin, Connection):
    pass


class DeadlineSSLConnection(_DeadlineMixin, SSLConnection):
    pass


class DeadlineUnixConnection(_DeadlineMixin, UnixDomainSocketConnection):
    pass


_WITH_DEADLINE: dict[type, type] = {
    Connection: DeadlineConnection,
    SSLConnection: DeadlineSSLConnection,
    UnixDomainSocketConnection: DeadlineUnixConnection,
}


def deadline_client(url: str, *, deadline_s: float, timeout_s: float) -> redis.Redis:
    """A client of `url` whose commands each end within `deadline_s` (each read within
    `timeout_s`, the connect too)."""
    plain = parse_url(url).get("connection_class", Connection)
    return redis.Redis.from_url(
        url,
        connection_class=_WITH_DEADLINE[plain],
        deadline_s=deadline_s,
        socket_timeout=timeout_s,
        socket_connect_timeout=timeout_s,
    )
