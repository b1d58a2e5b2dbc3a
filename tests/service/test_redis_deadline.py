"""service.cache.redis_deadline: a reply that trickles in ends at the command's deadline; a
normal server is unaffected; each URL scheme gets its connection class with deadlines."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
import redis

from service.cache.redis_deadline import (
    DeadlineConnection,
    DeadlineSSLConnection,
    DeadlineUnixConnection,
    deadline_client,
)


def _commands(stream) -> Iterator[list[bytes]]:  # type: ignore[no-untyped-def]
    """RESP arrays of bulk strings, as redis-py sends commands."""
    while line := stream.readline():
        args = []
        for _ in range(int(line[1:])):
            size = int(stream.readline()[1:])
            args.append(stream.read(size + 2)[:-2])
        yield args


@pytest.fixture
def trickling_server() -> Iterator[int]:
    """A fake Redis that answers GET with a 1000-byte value sent one byte every 50 ms (and
    anything else, such as the connect's CLIENT SETINFO, with +OK)."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        with conn, conn.makefile("rb") as stream:
            for command in _commands(stream):
                if command[0].upper() != b"GET":
                    conn.sendall(b"+OK\r\n")
                    continue
                conn.sendall(b"$1000\r\n")
                for _ in range(1002):
                    if stop.wait(0.05):
                        return
                    try:
                        conn.sendall(b"x")
                    except OSError:
                        return

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield listener.getsockname()[1]
    stop.set()
    listener.close()


def test_a_trickling_reply_ends_at_the_deadline(trickling_server: int) -> None:
    client = deadline_client(
        f"redis://127.0.0.1:{trickling_server}/0", deadline_s=0.5, timeout_s=0.2
    )
    start = time.monotonic()
    with pytest.raises(redis.TimeoutError):
        client.get("k")  # each byte comes well within the 0.2 s per read
    assert time.monotonic() - start < 2.0  # 1000 bytes would take 50 s


def test_commands_against_a_real_server_round_trip(redis_server) -> None:
    client = deadline_client(redis_server.url, deadline_s=1.0, timeout_s=0.5)
    assert client.set("k", b"v" * 100_000)
    assert client.get("k") == b"v" * 100_000
    time.sleep(1.2)  # past the first command's deadline: each command has its own
    assert client.get("k") == b"v" * 100_000


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("redis://127.0.0.1:1/0", DeadlineConnection),
        ("rediss://127.0.0.1:1/0", DeadlineSSLConnection),
        ("unix:///tmp/redis.sock", DeadlineUnixConnection),
    ],
)
def test_every_scheme_gets_deadlines(url: str, kind: type) -> None:
    pool = deadline_client(url, deadline_s=1.0, timeout_s=0.5).connection_pool
    assert pool.connection_class is kind
    assert pool.connection_kwargs["deadline_s"] == 1.0
