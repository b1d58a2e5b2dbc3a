"""Graph: capture a DeviceOp, replay it, pin its arguments for its lifetime (fake driver)."""

from __future__ import annotations

import threading

import pytest

from client_stubs import (
    ClientError,
    DeviceTensor,
    Graph,
    GraphCapturedError,
    Kernel,
    PendingWorkError,
    driver,
)
from client_stubs.pending import PENDING
from tests.client_stubs.fake_driver import CUBIN

N = 4096


def setup(add):
    kernel = Kernel(CUBIN, add)
    z, x, y = DeviceTensor.empty(N), DeviceTensor.empty(N), DeviceTensor.empty(N)
    w = DeviceTensor.empty(N)
    z_in = DeviceTensor(z.ptr, N, owner=z.owner)
    part_z, part_w = z.partition([128]), w.partition([128])
    op = kernel.op(part_z, x, y).then(kernel.op(part_w, z_in, y))
    return op, part_z, part_w, x


def test_capture_records_launches_without_running_or_tracking_them(add, fake_driver):
    op, *_ = setup(add)
    graph = Graph.capture(op)
    names = fake_driver.names()
    begin = names.index("begin_capture")
    assert names.index("create_stream") < begin < names.index("end_capture")
    assert names.count("launch") == 2 and "event_record" not in names
    assert names[-1] == "instantiate_graph" and len(PENDING) == 0
    assert graph.launches == ("add", "add") and "2 launches of add" in repr(graph)


def test_captured_tensors_cannot_be_moved_or_freed_while_the_graph_lives(add, fake_driver):
    op, part_z, part_w, x = setup(add)
    graph = Graph.capture(op)
    with pytest.raises(GraphCapturedError, match=r"cannot unpartition.*parameter `z`"):
        part_z.unpartition()
    with pytest.raises(GraphCapturedError, match="cannot free"):
        x.free()
    part_w.to_numpy()  # reading between replays is fine
    graph.close()
    assert "destroy_graph" in fake_driver.names()
    part_z.unpartition()
    x.free()


def test_replay_is_tracked_until_it_completes(add, fake_driver):
    fake_driver.auto_complete = False
    op, _, part_w, _ = setup(add)
    with Graph.capture(op) as graph:
        pending = graph.replay(stream=4)
        assert ("launch_graph", ("EXEC", 4)) in fake_driver.calls
        with pytest.raises(PendingWorkError, match="kernel `add` writes it"):
            part_w.to_numpy()
        assert pending.sync() == graph.results and graph.results[0] is part_w
        part_w.to_numpy()
        graph.replay(sync=True)
        assert fake_driver.names()[-1] == "synchronize" and len(PENDING) == 0
        graph.replay(stream=4)
    assert "event_synchronize" in fake_driver.names()[-4:]  # close waited for the replay
    with pytest.raises(ClientError, match="is closed"):
        graph.replay()


def test_capture_refuses_arguments_in_use_on_another_stream(add, fake_driver):
    fake_driver.auto_complete = False
    kernel = Kernel(CUBIN, add)
    z, x, y = DeviceTensor.empty(N), DeviceTensor.empty(N), DeviceTensor.empty(N)
    x_alias = DeviceTensor(x.ptr, N, owner=x.owner)
    kernel(x.partition([128]), z, y, stream=1)  # writes x, unfinished
    op = kernel.op(DeviceTensor.empty(N).partition([128]), x_alias, y)
    with pytest.raises(PendingWorkError, match="cannot be captured"):
        Graph.capture(op)
    names = fake_driver.names()
    assert names[-3:] == ["end_capture", "destroy_graph", "destroy_stream"]


def test_a_rejected_launch_aborts_the_capture(add, fake_driver):
    kernel = Kernel(CUBIN, add)
    x, y = DeviceTensor.empty(N), DeviceTensor.empty(N)
    op = kernel.op(DeviceTensor.empty(N).partition([64]), x, y)
    with pytest.raises(Exception, match="partition tile shape"):
        Graph.capture(op)
    assert "instantiate_graph" not in fake_driver.names()
    assert "destroy_stream" in fake_driver.names()


def test_a_sync_replay_is_registered_where_another_thread_may_look(add, fake_driver, monkeypatch):
    """`replay(sync=True)` waits on the host with the GIL released: with another Python thread
    alive the replay is registered (with an event) for the wait, so that thread's read of an
    output is refused meanwhile; the wait retires it."""
    fake_driver.auto_complete = False
    kernel = Kernel(CUBIN, add)
    z, x, y = (DeviceTensor.empty(N) for _ in range(3))
    part = z.partition([128])
    graph = Graph.capture(kernel.op(part, x, y))
    seen: list[str] = []
    synchronize = fake_driver._synchronize

    def waiting(stream: int = 0) -> None:
        try:
            part.to_numpy()
            seen.append("read allowed")
        except PendingWorkError:
            seen.append("read refused")
        synchronize(stream)

    monkeypatch.setattr(driver, "synchronize_handle", waiting)
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        graph.replay(sync=True)
    finally:
        release.set()
        other.join()
    assert seen == ["read refused"] and len(PENDING) == 0
    graph.close()
