"""CUDA graphs: capture a `DeviceOp` (one launch or a chain) once, replay it many times.

    graph = Graph.capture(k1.op(z, x, y).then(k2.op(w, z_in, y)))
    graph.replay(sync=True)            # or: pending = graph.replay(); await pending
    z.to_numpy()                       # outputs stay partitioned; Partition.to_numpy reads them
    graph.close()                      # or use the graph as a context manager

Capture runs the op's checks and launches into a private stream under stream capture
(`cuStreamBeginCapture`/`cuStreamEndCapture`, relaxed mode), then instantiates the graph. The
graph keeps every argument object alive for its lifetime and pins the memory it captured:
freeing, partitioning, unpartitioning or unmapping any of it raises `GraphCapturedError` until
`close()`; each replay is tracked like any launch (reading an output while a replay writes it
raises `PendingWorkError`). Host-side data may change between replays (same addresses).
"""

from __future__ import annotations

import contextlib
import itertools
from typing import Any

from client_stubs import driver
from client_stubs.device_op import DeviceOp, Pending, Results, Run
from client_stubs.errors import ClientError
from client_stubs.pending import (
    PENDING,
    Access,
    Batch,
    Pin,
    others_may_look,
    synchronize_handle,
    wait_for_conflicts,
)

_NUMBERS = itertools.count(1)


class Graph:
    """An instantiated CUDA graph of captured launches; see the module docstring."""

    def __init__(
        self,
        graph: Any,
        graph_exec: Any,
        run: Run,
        results: Results,
        capture_stream: int,
        label: str,
    ) -> None:
        self._graph = graph
        self._exec = graph_exec
        self._capture_stream = capture_stream
        self.accesses: tuple[Access, ...] = tuple(run.accesses)
        self.launches: tuple[str, ...] = tuple(run.launches)
        self.results = results
        self.label = label
        self._owners: tuple[object, ...] = tuple(run.owners)
        self.device = run.device
        self._pin: Pin | None = PENDING.pin(self.accesses, label)
        self._last_replay: dict[int, Batch] = {}  # per stream: close() waits for these

    @classmethod
    def capture(cls, op: DeviceOp, *, device: int | None = None) -> Graph:
        """Check and capture every launch of `op` (nothing runs on the GPU yet)."""
        ordinal = driver.current_device() if device is None else device
        driver.ensure_context(ordinal)
        stream = driver.create_stream(non_blocking=True)
        run = Run(stream, capturing=True)
        driver.begin_capture(stream)
        try:
            results = op._issue(run)
        except BaseException:
            with contextlib.suppress(Exception):
                driver.destroy_graph(driver.end_capture(stream), None)
            with contextlib.suppress(Exception):
                driver.destroy_stream(stream)
            raise
        graph = driver.end_capture(stream)
        try:
            graph_exec = driver.instantiate_graph(graph)
        except BaseException:
            with contextlib.suppress(Exception):
                driver.destroy_graph(graph, None)
            driver.destroy_stream(stream)
            raise
        names = ", ".join(dict.fromkeys(run.launches))
        label = f"#{next(_NUMBERS)} ({len(run.launches)} launches of {names})"
        return cls(graph, graph_exec, run, results, stream, label)

    @property
    def closed(self) -> bool:
        return self._exec is None

    def replay(self, stream: object = None, *, sync: bool = False) -> Pending:
        """Launch the whole graph on `stream` (None: the legacy default stream). `sync` waits;
        otherwise the returned `Pending` completes when the replay has (sync() or await)."""
        if self._exec is None:
            raise ClientError(f"CUDA graph {self.label} is closed")
        handle = driver.stream_handle(stream)
        device = self.device
        driver.ensure_context(device)  # the legacy stream's handle names the current device's
        if PENDING.others_pending(handle, device):
            wait_for_conflicts(handle, self.accesses, device)
        driver.launch_graph(self._exec, handle)
        if sync:
            if others_may_look():  # which may read, free or close meanwhile: an event
                self._last_replay[handle] = PENDING.record(
                    handle, self.accesses, (self,), device=device
                )
            synchronize_handle(handle, device)
            return Pending(None, self.results, handle)
        batch = PENDING.record(handle, self.accesses, (self,), device=device)
        self._last_replay[handle] = batch
        return Pending(batch, self.results, handle)

    def close(self) -> None:
        """Destroy the graph and release its arguments (after pending replays finish)."""
        if self._exec is None:
            return
        for batch in self._last_replay.values():
            if not batch.finished() and batch.event is not None:
                driver.event_synchronize(batch.event)
        self._last_replay.clear()
        graph, graph_exec, self._graph, self._exec = self._graph, self._exec, None, None
        if self._pin is not None:
            PENDING.unpin(self._pin)
            self._pin = None
        driver.destroy_graph(graph, graph_exec)
        driver.destroy_stream(self._capture_stream)
        self._owners = ()

    def __enter__(self) -> Graph:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    def __repr__(self) -> str:
        state = "closed" if self._exec is None else "live"
        return f"Graph({self.label}, {state})"
