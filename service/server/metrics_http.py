"""The HTTP server behind `--metrics-port`: prometheus_client's handler, bounded.

prometheus_client's own `start_http_server` starts a thread for every connection and waits
on it for ever: connections that never finish their headers (slowloris) once piled up to a
thread and a file descriptor each until the daemon ran out of descriptors, and then gRPC
clients could not connect either. Here at most `max_connections` are served at once (one
past that is closed at once), and each gets `deadline_s` in all, however slowly it sends,
before its socket is shut. A flood can then keep scrapers waiting, never the daemon.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from http.server import ThreadingHTTPServer

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import MetricsHandler

MAX_CONNECTIONS = 16
DEADLINE_S = 10.0


class BoundedMetricsServer(ThreadingHTTPServer):
    """Serves `registry` on (host, port) on daemon threads, within the bounds above."""

    daemon_threads = True

    def __init__(
        self,
        host: str,
        port: int,
        registry: CollectorRegistry,
        *,
        max_connections: int = MAX_CONNECTIONS,
        deadline_s: float = DEADLINE_S,
    ) -> None:
        bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
        self.address_family = socket.getaddrinfo(bare, port, type=socket.SOCK_STREAM)[0][0]
        self._slots = threading.BoundedSemaphore(max_connections)
        self._deadline_s = deadline_s
        super().__init__((bare, port), MetricsHandler.factory(registry))

    def process_request(self, request: socket.socket, client_address: object) -> None:  # type: ignore[override]
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)  # full: refused at once, not queued
            return
        request.settimeout(self._deadline_s)
        try:
            super().process_request(request, client_address)  # type: ignore[arg-type]
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: socket.socket, client_address: object) -> None:  # type: ignore[override]
        deadline = threading.Timer(self._deadline_s, _shut, (request,))
        deadline.daemon = True
        deadline.start()
        try:
            super().process_request_thread(request, client_address)  # type: ignore[arg-type]
        finally:
            deadline.cancel()
            self._slots.release()

    def serve_in_background(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, name="metrics-http", daemon=True)
        thread.start()
        return thread


def _shut(request: socket.socket) -> None:
    """End a connection past its deadline: its blocked read returns and its thread ends."""
    with contextlib.suppress(OSError):  # already closed
        request.shutdown(socket.SHUT_RDWR)
