"""A recording stand-in for `client_stubs.driver`: a GPU that runs nothing.

Every driver call the client makes is recorded in `calls`. Events model completion: with
`auto_complete` (the default) recorded work counts as finished at once; otherwise it stays
pending until `complete()`, which also runs the queued host functions through the real C
trampoline (optionally from another thread, as the driver does). A stream is idle
(`stream_done`) until work is launched on it without `auto_complete`, and again after
`complete()` or its `synchronize`.
"""

from __future__ import annotations

import ctypes
import gc
import itertools
import threading
from collections import defaultdict
from collections.abc import Iterator

import pytest

from client_stubs import driver, launcher
from client_stubs.device_op import STREAMS
from client_stubs.pending import DEFAULT_STREAMS, PENDING

CUBIN = b"\x7fELF fake cubin"
_HOST_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def packed_params(address: int, size: int) -> bytes:
    """The first `size` bytes of the parameter buffer a recorded kernelParams array points at."""
    first = ctypes.c_void_p.from_address(address).value or 0
    return ctypes.string_at(first, size)


class FakeDriver:
    """Records every driver call; see the module docstring."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, sm: str = "sm_90") -> None:
        self.calls: list[tuple[str, tuple]] = []
        self.sm = sm
        self.auto_complete = True
        self._ids = itertools.count(1)
        self.done: set[str] = set()
        self.recorded: dict[str, int] = {}  # event -> stream
        self.host_funcs: list[tuple[int, int, int]] = []  # (stream, address, token)
        self.busy: set[int] = set()  # streams with work launched since they were last idle
        patches = {
            "ensure_context": lambda device: self._rec("ensure_context", device) or 1234,
            "context_handle": lambda device: self._rec("ensure_context", device) or 1234,
            "current_device": lambda: 0,
            "current_context_handle": lambda: 1234,
            "context_is_on": lambda device: device == 0,
            "device_sm": lambda device: self._rec("device_sm", device) or self.sm,
            "load_function": lambda *a: self._rec("load_function", *a) or "FUNC",
            "verify_param_layout": lambda *a: self._rec("verify_param_layout", *a),
            "launch_params": lambda *a: self._launch("launch", *a),
            "launch_early": lambda *a: self._launch("launch_early", *a),
            "launch_packed": lambda *a: self._launch("launch_packed", *a),
            "stream_done": self._stream_done,
            # one device: its legacy stream is the one `stream_done` answers for (looked up
            # at each call, so that a test's stand-in for `stream_done` answers both)
            "stream_done_on": lambda stream, device: driver.stream_done(stream),
            "push_context": lambda device: self._rec("push_context", device),
            "pop_context": lambda: self._rec("pop_context"),
            "synchronize": self._synchronize,
            "synchronize_handle": self._synchronize,
            "create_event": lambda: f"E{next(self._ids)}",
            "event_record": self._event_record,
            "event_done": lambda event: event in self.done,
            "event_synchronize": self._event_synchronize,
            "destroy_event": lambda event: None,
            "stream_wait_event": lambda *a: self._rec("stream_wait_event", *a),
            "create_stream": lambda **kw: self._rec("create_stream") or 500 + next(self._ids),
            "destroy_stream": lambda *a: self._rec("destroy_stream", *a),
            "launch_host_func": self._launch_host_func,
            "begin_capture": lambda *a: self._rec("begin_capture", *a),
            "end_capture": lambda *a: self._rec("end_capture", *a) or "GRAPH",
            "instantiate_graph": lambda *a: self._rec("instantiate_graph", *a) or "EXEC",
            "launch_graph": lambda *a: self._launch("launch_graph", *a),
            "destroy_graph": lambda *a: self._rec("destroy_graph", *a),
            "mem_alloc": lambda nbytes: 0x7000_0000 + 0x100_0000 * next(self._ids),
            "mem_free": lambda ptr: self._rec("mem_free", ptr),
            "memcpy_dtoh": lambda *a: self._rec("memcpy_dtoh", *a),
            "memcpy_htod": lambda *a: self._rec("memcpy_htod", *a),
            "memset_d8": lambda *a: self._rec("memset_d8", *a),
        }
        for name, fn in patches.items():
            monkeypatch.setattr(driver, name, fn)
        monkeypatch.setattr(launcher, "host_arch", lambda: "x86_64")

    def _rec(self, name: str, *args: object) -> None:
        self.calls.append((name, args))

    def _launch(self, name: str, *args: object) -> None:
        self.calls.append((name, args))
        if not self.auto_complete:
            self.busy.add(args[1] if name == "launch_graph" else args[4])  # the stream

    def _stream_done(self, stream: int) -> bool:
        self._rec("stream_done", stream)
        return stream not in self.busy

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]

    def _event_record(self, event: str, stream: int) -> None:
        self._rec("event_record", event, stream)
        self.recorded[event] = stream
        if self.auto_complete:
            self.done.add(event)
        else:
            self.done.discard(event)  # a recycled event is pending again

    def _event_synchronize(self, event: str) -> None:
        self._rec("event_synchronize", event)
        self.done.add(event)

    def _synchronize(self, stream: int = 0) -> None:
        self._rec("synchronize", stream)
        self.done.update(e for e, s in self.recorded.items() if s == stream)
        self.busy.discard(stream)

    def _launch_host_func(self, stream: int, address: int, token: int) -> None:
        self._rec("launch_host_func", stream)
        self.host_funcs.append((stream, address, token))
        if self.auto_complete:
            self.complete()

    def complete(self, *, on_thread: bool = False) -> None:
        """Finish all recorded work and run the queued host functions."""
        self.done.update(self.recorded)
        self.busy.clear()
        queued, self.host_funcs = self.host_funcs, []

        def fire() -> None:
            for _, address, token in queued:
                _HOST_FN(address)(token)

        if on_thread:
            threading.Thread(target=fire).start()
        else:
            fire()


class Contexts:
    """The device whose context is current, as a fake of several GPUs keeps it: made current
    (a launch, an allocation), pushed and popped (`driver.on_device`); `patches` are the
    driver functions that read or move it."""

    def __init__(self) -> None:
        self.current = 0
        self._pushed: list[int] = []

    def make_current(self, device: int) -> int:
        self.current = device
        return 1000 + device

    def push_context(self, device: int) -> None:
        self._pushed.append(self.current)
        self.current = device

    def pop_context(self) -> None:
        self.current = self._pushed.pop()

    def patches(self) -> dict[str, object]:
        return {
            "context_handle": self.make_current,
            "ensure_context": self.make_current,
            "current_device": lambda: self.current,
            "current_context_handle": lambda: 1000 + self.current,
            "context_is_on": lambda device: device == self.current,
            "push_context": self.push_context,
            "pop_context": self.pop_context,
        }


@pytest.fixture
def fake_driver(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDriver]:
    """The fake driver, with an empty pending-work registry and an empty await stream pool
    (its streams are this driver's). Garbage is collected before it comes and before it
    goes, so tensors of other tests (allocated on another fake driver) never free themselves
    into this test's record."""
    gc.collect()
    monkeypatch.setattr(STREAMS, "_streams", {})
    monkeypatch.setattr(PENDING, "_eventless", DEFAULT_STREAMS)
    monkeypatch.setattr(PENDING, "_streams", {})
    monkeypatch.setattr(PENDING, "_pins", [])
    monkeypatch.setattr(PENDING, "_events", defaultdict(list))
    yield FakeDriver(monkeypatch)
    gc.collect()
