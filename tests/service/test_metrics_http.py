"""The bounded metrics HTTP server: slow or idle clients cannot pile up threads, and an
honest scrape is served beside them."""

from __future__ import annotations

import socket
import threading
import time
import urllib.request

import pytest
from prometheus_client import CollectorRegistry, Counter

from service.server.metrics_http import BoundedMetricsServer


@pytest.fixture
def server():  # type: ignore[no-untyped-def]
    registry = CollectorRegistry()
    Counter("probe", "a counter to find", registry=registry).inc()
    served = BoundedMetricsServer("127.0.0.1", 0, registry, max_connections=4, deadline_s=1.0)
    served.serve_in_background()
    yield served
    served.shutdown()
    served.server_close()


def _scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        return reply.read().decode()


def _half_open(port: int) -> socket.socket:
    """A client that sends part of a request line and then nothing."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(b"GET /metrics HTTP/1.1\r\n")
    return sock


def test_a_scrape_is_served(server: BoundedMetricsServer) -> None:
    assert "probe_total 1.0" in _scrape(server.server_port)


def test_a_client_that_never_finishes_is_cut_off_at_the_deadline(
    server: BoundedMetricsServer,
) -> None:
    sock = _half_open(server.server_port)
    started = time.monotonic()
    assert sock.recv(1) == b""  # the server shut it, not our timeout
    assert time.monotonic() - started < 5
    sock.close()


def test_a_trickling_client_gets_no_more_than_the_deadline_in_all(
    server: BoundedMetricsServer,
) -> None:
    sock = _half_open(server.server_port)
    started, cut = time.monotonic(), False
    while time.monotonic() - started < 5:
        try:
            sock.sendall(b"X")  # one header byte every 0.2 s: each read succeeds
            time.sleep(0.2)
        except OSError:
            cut = True
            break
    assert cut and time.monotonic() - started < 4
    sock.close()


def test_past_the_cap_connections_are_refused_and_threads_stay_bounded(
    server: BoundedMetricsServer,
) -> None:
    before = threading.active_count()
    flood = [_half_open(server.server_port) for _ in range(40)]
    time.sleep(0.3)
    assert threading.active_count() - before <= 4 + 4  # handlers and their deadline timers
    for sock in flood:
        sock.close()
    time.sleep(1.5)  # the held ones reach their deadline
    assert "probe_total 1.0" in _scrape(server.server_port)


def test_an_ipv6_host_in_brackets_is_served() -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6 here")
    try:
        served = BoundedMetricsServer("[::1]", 0, CollectorRegistry())
    except OSError as exc:
        pytest.skip(f"no ::1 here: {exc}")
    try:
        assert served.address_family == socket.AF_INET6
    finally:
        served.server_close()
