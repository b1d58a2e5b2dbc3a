"""Fuzz the Python host's pending-work registry (client_stubs/pending.py) against a model GPU.

    python -m tests.fuzz.pending_work --inputs N [--seed S] [--steps K]

Each input is a random program of K steps over the tensors of one `add` kernel on two GPUs
(four on device 0, three on device 1): eager launches and `.start()`s on a device's legacy
stream (the same handle, another stream on each device) or on streams of the caller's (two of
device 0, one of device 1), `await op`
(there, or on the await pool's streams; another task runs the GPU meanwhile), `op.sync()`,
graphs captured, replayed (waiting or not) and closed,
`Pending.sync()` and `.done()`, `synchronize(stream)`, host reads, partitioning and
unpartitioning, and steps of the GPU. The GPU (`FifoGpu`) runs each stream's work in order,
one item per step: launches, event records, host functions and cross-stream waits (a wait
blocks its stream until its event fired). A synchronize runs the GPU until the stream (or the
event) is done. The legacy handle names the current device's legacy stream in every call, and
an event is recorded only on a stream of the device it was made on (as in CUDA).

Every step checks the registry against what the GPU really did:
- a host read, an unpartition (or a partition of a tensor) that the host allows touches no
  bytes an unfinished launch writes (or, for unpartitioning, touches at all);
- a launch that starts on the GPU finds no earlier launch on another stream unfinished that
  touches its bytes where one of the two writes (the registry must have ordered it after);
- `op.sync()`, `await op` and `replay(sync=True)` return only once their work finished on
  the GPU;
- the registry holds no more batches than the unfinished launches, the `Pending`s the program
  keeps and 2 * RETIRE_EVERY finished ones a stream (left until its FIFO is next tidied).
After the program the GPU drains and every stream is synchronized: nothing may stay pending.
Completion may be reported late, never early: a refusal is never a finding.
`tests/fuzz/test_pending_work.py` runs a brief campaign under pytest.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import random
import sys
from collections import defaultdict, deque
from dataclasses import dataclass, field

import pytest

from client_stubs import DeviceTensor, Graph, Kernel, driver, synchronize
from client_stubs.device_op import STREAMS
from client_stubs.errors import ClientError, DeviceMismatchError
from client_stubs.pending import DEFAULT_STREAMS, PENDING, RETIRE_EVERY
from tests.client_stubs.conftest import add_contract
from tests.client_stubs.fake_driver import CUBIN, Contexts, FakeDriver

N = 1024
# per device: the legacy stream and streams of the caller's
STREAM_CHOICES = {0: (0, 0x7100, 0x7200), 1: (0, 0x8100)}
SLOTS = {0: (0, 1, 2, 3), 1: (4, 5, 6)}  # the tensors of each device
STREAMS_IN_ALL = sum(len(s) for s in STREAM_CHOICES.values())
LEGACY = (0, 1)  # the handles of the current device's legacy stream
ACTIONS = ("launch", "launch", "start", "sync", "await", "graph", "gpu", "gpu", "gpu", "read")
ACTIONS += ("mixed",)
# finished batches a stream may keep before its FIFO is tidied (every RETIRE_EVERY-th batch)
LEFT_PER_STREAM = 2 * RETIRE_EVERY
QUERY_PROGRESS = 0.25  # the chance the GPU runs a step before a completion query answers
MAX_TICKS = 10_000  # GPU steps an await may take before it counts as hung
_HOST_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
Spans = tuple[tuple[int, int], ...]
Accesses = tuple[Spans, Spans]  # (writes, reads): byte ranges


@dataclass(eq=False)
class Item:
    """One piece of work queued on a stream of the model GPU (compared by identity)."""

    kind: str  # "launch", "event", "host", "wait"
    event: str = ""
    waits_for: Item | None = None  # a wait: the event's record it waits for (as at the call)
    host: tuple[int, int] = (0, 0)  # (address, token)
    writes: tuple[tuple[int, int], ...] = ()
    reads: tuple[tuple[int, int], ...] = ()
    order: int = 0  # issue order across streams
    done: bool = False


@dataclass
class FifoGpu(Contexts):
    """Each stream runs its items in order; `step(stream)` runs the head if it may run."""

    streams: dict[object, deque[Item]] = field(default_factory=dict)  # by `key`
    events: dict[str, Item] = field(default_factory=dict)  # the latest record of each event
    launched: list[Item] = field(default_factory=list)  # every launch, in issue order
    findings: list[str] = field(default_factory=list)
    accesses: Accesses = ((), ())
    order: int = 0
    rng: random.Random | None = None  # set: every query may let the GPU run a step first
    event_devices: dict[str, int] = field(default_factory=dict)  # the device each event is of
    # the device of each stream made (the caller's: STREAM_CHOICES)
    stream_devices: dict[int, int] = field(
        default_factory=lambda: {s: d for d, streams in STREAM_CHOICES.items() for s in streams}
    )

    def __post_init__(self) -> None:
        Contexts.__init__(self)  # the device whose context is current

    def device_of(self, stream: int) -> int:
        return self.current if stream in LEGACY else self.stream_devices[stream]

    def create_stream(self, **options: object) -> int:
        stream = 0x9000 + len(self.stream_devices)
        self.stream_devices[stream] = self.current
        return stream

    def key(self, stream: object) -> object:
        """The stream a handle names now: the legacy handles, the current device's."""
        return (self.current, stream) if stream in LEGACY else stream

    def tick(self) -> None:
        """One step of a stream that may run (the GPU runs while the host does other things)."""
        streams = [s for s in self.streams if self.runnable(s)]
        if streams and self.rng is not None:
            self.step(self.rng.choice(streams))

    def maybe_tick(self) -> None:
        if self.rng is not None and self.rng.random() < QUERY_PROGRESS:
            self.tick()

    def queue(self, stream: int, item: Item) -> None:
        self.order += 1
        item.order = self.order
        self.streams.setdefault(stream, deque()).append(item)

    capturing: dict[int, list[Accesses]] = field(default_factory=dict)  # stream -> launches
    graphs: dict[str, Accesses] = field(default_factory=dict)  # graph -> its launches' union

    def launch(self, stream: int) -> None:
        if stream in self.capturing:  # recorded into the graph, not run
            self.capturing[stream].append(self.accesses)
            return
        self.launch_accesses(self.key(stream), self.accesses)

    def launch_accesses(self, stream: int, accesses: Accesses) -> None:
        writes, reads = accesses
        item = Item("launch", writes=writes, reads=reads)
        self.queue(stream, item)
        self.launched.append(item)

    def end_capture(self, stream: int) -> str:
        captured = self.capturing.pop(stream)
        graph = f"G{len(self.graphs) + 1}"
        writes = tuple(span for w, _ in captured for span in w)
        reads = tuple(span for _, r in captured for span in r)
        self.graphs[graph] = (writes, reads)
        return graph

    def launch_graph(self, graph: str, stream: int) -> None:
        self.launch_accesses(self.key(stream), self.graphs[graph])  # one item: the replay

    def create_event(self) -> str:
        event = f"E{len(self.event_devices) + 1}"
        self.event_devices[event] = self.current
        return event

    def record(self, event: str, stream: int) -> None:
        device = self.device_of(stream)
        if self.event_devices.get(event, device) != device:
            self.findings.append(
                f"event {event} of device {self.event_devices[event]} recorded on device "
                f"{device}'s stream {stream:#x} (cuEventRecord refuses that)"
            )
        item = Item("event", event=event)
        self.events[event] = item
        self.queue(self.key(stream), item)

    def event_done(self, event: str) -> bool:
        self.maybe_tick()
        item = self.events.get(event)
        return item is None or item.done

    def stream_done(self, stream: int) -> bool:
        self.maybe_tick()
        return not self.streams.get(self.key(stream))  # type: ignore[call-overload]

    def stream_done_on(self, stream: int, device: int) -> bool:
        self.maybe_tick()
        return not self.streams.get((device, stream) if stream in LEGACY else stream)  # type: ignore[call-overload]

    def runnable(self, stream: int) -> bool:
        queue = self.streams.get(stream)
        if not queue:
            return False
        head = queue[0]
        return head.kind != "wait" or head.waits_for is None or head.waits_for.done

    def step(self, stream: int) -> bool:
        """Run the head item of `stream` if it may run; whether it ran."""
        if not self.runnable(stream):
            return False
        item = self.streams[stream].popleft()
        if item.kind == "launch":
            self.check_order(item)
        item.done = True
        if item.kind == "host":
            address, token = item.host
            _HOST_FN(address)(token)
        return True

    def check_order(self, item: Item) -> None:
        for other in self.launched:
            if other is item or other.done or other.order > item.order:
                continue
            mine, theirs = item.writes + item.reads, other.writes + other.reads
            if overlap(item.writes, theirs) or overlap(other.writes, mine):
                self.findings.append(
                    f"a launch started while an earlier conflicting launch (issue {other.order})"
                    f" on another stream had not finished (issue {item.order})"
                )

    def drain_stream(self, stream: int) -> None:
        """Run until `stream` is empty, running the streams its waits wait for."""
        for _ in range(100_000):
            queue = self.streams.get(stream)
            if not queue:
                return
            if not self.step(stream):
                self.drain_until(queue[0].waits_for)  # type: ignore[arg-type]
        raise AssertionError("the model GPU did not drain")

    def drain_until(self, target: Item) -> None:
        for stream, queue in self.streams.items():
            if any(item is target for item in queue):
                while not target.done:
                    head = queue[0]
                    if not self.step(stream):
                        self.drain_until(head.waits_for)  # type: ignore[arg-type]
                return

    def drain_all(self) -> None:
        for stream in list(self.streams):
            self.drain_stream(stream)

    def unfinished(self) -> int:
        return sum(not item.done for item in self.launched)

    def unfinished_touching(self, lo: int, hi: int, writes_only: bool) -> bool:
        span = ((lo, hi),)
        for item in self.launched:
            if not item.done:
                touched = item.writes if writes_only else item.writes + item.reads
                if overlap(span, touched):
                    return True
        return False


def overlap(a: tuple[tuple[int, int], ...], b: tuple[tuple[int, int], ...]) -> bool:
    return any(lo < other_hi and other_lo < hi for lo, hi in a for other_lo, other_hi in b)


def install(gpu: FifoGpu, monkeypatch: pytest.MonkeyPatch) -> FakeDriver:
    """The recording fake driver with its stream, event and launch calls on `gpu`."""
    fake = FakeDriver(monkeypatch)
    fake.auto_complete = False

    def launch(*args: object) -> None:
        gpu.launch(int(args[4]))  # type: ignore[call-overload]

    def synchronize_stream(stream: int = 0) -> None:
        gpu.drain_stream(gpu.key(stream))  # type: ignore[arg-type]

    def event_synchronize(event: str) -> None:
        item = gpu.events.get(event)
        if item is not None and not item.done:
            gpu.drain_until(item)

    def host_func(stream: int, address: int, token: int) -> None:
        gpu.queue(gpu.key(stream), Item("host", host=(address, token)))  # type: ignore[arg-type]

    def wait_event(stream: int, event: str) -> None:
        item = Item("wait", event=event, waits_for=gpu.events.get(event))
        gpu.queue(gpu.key(stream), item)  # type: ignore[arg-type]

    def begin_capture(stream: int) -> None:
        gpu.capturing[stream] = []

    patches = {
        "begin_capture": begin_capture,
        "end_capture": gpu.end_capture,
        "instantiate_graph": lambda graph: graph,
        "launch_graph": gpu.launch_graph,
        "destroy_graph": lambda *a: None,
        "launch_params": launch,
        "launch_early": launch,
        "stream_done": gpu.stream_done,
        "stream_done_on": gpu.stream_done_on,
        "create_event": gpu.create_event,
        **gpu.patches(),
        "create_stream": gpu.create_stream,
        "synchronize": synchronize_stream,
        "synchronize_handle": synchronize_stream,
        "event_record": gpu.record,
        "event_done": gpu.event_done,
        "event_synchronize": event_synchronize,
        "launch_host_func": host_func,
        "stream_wait_event": wait_event,
    }
    for name, fn in patches.items():
        monkeypatch.setattr(driver, name, fn)
    return fake


@dataclass
class Program:
    """The host side of one input: four tensors (or their partitions) and pending starts."""

    kernel: Kernel
    slots: list[object]  # a DeviceTensor, or the Partition it was moved into
    pendings: list[object] = field(default_factory=list)
    graphs: list[Graph] = field(default_factory=list)


def run_input(seed: int, number: int, steps: int) -> list[str]:
    """One random program; its findings (empty: the registry kept every promise)."""
    rng = random.Random(seed * 1_000_003 + number)
    gpu = FifoGpu(rng=random.Random(rng.random()))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(PENDING, "_streams", {})
        patch.setattr(PENDING, "_pins", [])
        patch.setattr(PENDING, "_events", defaultdict(list))
        patch.setattr(STREAMS, "_streams", {})
        patch.setattr(PENDING, "_eventless", DEFAULT_STREAMS)
        install(gpu, patch)
        tensors = [
            DeviceTensor.empty(N, device=device) for device, slots in SLOTS.items() for _ in slots
        ]
        spans = [t.byte_extent for t in tensors]
        program = Program(Kernel(CUBIN, add_contract(block=128)), list(tensors))
        for _ in range(steps):
            step(rng, gpu, program, spans)
            bound = gpu.unfinished() + len(program.pendings) + LEFT_PER_STREAM * STREAMS_IN_ALL
            if len(PENDING) > bound:
                gpu.findings.append(f"{len(PENDING)} batches pending, more than {bound}")
            if gpu.findings:
                return gpu.findings
        gpu.drain_all()
        for device, streams in STREAM_CHOICES.items():
            driver.ensure_context(device)
            for stream in streams:
                synchronize(stream)
        for pending in program.pendings:
            pending.sync()  # type: ignore[attr-defined]
        for graph in program.graphs:
            graph.close()
        if len(PENDING):
            gpu.findings.append(f"{len(PENDING)} batches still pending after every sync")
        return gpu.findings


def step(rng: random.Random, gpu: FifoGpu, program: Program, spans: list[tuple[int, int]]) -> None:
    action = rng.choice(ACTIONS)
    slots = program.slots
    if action == "gpu":
        stream = rng.choice(list(gpu.streams) or [0])
        gpu.step(stream)
    elif action == "graph":
        graph_step(rng, gpu, program, spans)
    elif action in ("launch", "start", "sync", "await", "mixed"):
        launch(rng, gpu, program, spans, action)
    elif action == "read":
        index = rng.randrange(len(slots))
        value = slots[index]
        if isinstance(value, DeviceTensor):
            try:
                value.to_numpy()
            except ClientError:
                return
            if gpu.unfinished_touching(*spans[index], writes_only=True):
                gpu.findings.append(f"a host read of tensor {index} while a launch writes it")
        else:
            unpartition(gpu, slots, spans, index)
    if rng.random() < 0.1:
        pending_step(rng, gpu, program)


def unpartition(
    gpu: FifoGpu, slots: list[object], spans: list[tuple[int, int]], index: int
) -> bool:
    """Take slot `index`'s tensor back from its partition; whether the host allowed it."""
    try:
        slots[index] = slots[index].unpartition()  # type: ignore[attr-defined]
    except ClientError:
        return False
    if gpu.unfinished_touching(*spans[index], writes_only=False):
        gpu.findings.append(f"unpartitioned tensor {index} while a launch touches it")
    return True


def arguments(
    gpu: FifoGpu, slots: list[object], spans: list[tuple[int, int]], out: int, ins: tuple[int, ...]
) -> bool:
    """Slot `out` partitioned and the `ins` tensors (a partitioned one taken back first);
    whether the host allowed it all."""
    if isinstance(slots[out], DeviceTensor):
        try:
            slots[out] = slots[out].partition([128])  # type: ignore[attr-defined]
        except ClientError:
            return False
        if gpu.unfinished_touching(*spans[out], writes_only=False):
            gpu.findings.append(f"partitioned tensor {out} while a launch touches it")
            return False
    for index in ins:
        if not isinstance(slots[index], DeviceTensor) and not unpartition(gpu, slots, spans, index):
            return False
    return True


def launch(
    rng: random.Random,
    gpu: FifoGpu,
    program: Program,
    spans: list[tuple[int, int]],
    how: str,
) -> None:
    slots = program.slots
    device = rng.choice(tuple(SLOTS))
    out, x, y = rng.sample(SLOTS[device], 3)
    if not arguments(gpu, slots, spans, out, (x, y)):
        return
    stream = rng.choice(STREAM_CHOICES[device])
    gpu.accesses = ((spans[out],), (spans[x], spans[y]))
    args = (slots[out], slots[x], slots[y])
    launched = len(gpu.launched)
    try:
        if how == "capture":
            program.graphs.append(Graph.capture(program.kernel.op(*args), device=device))
            return
        if how == "mixed":  # then a launch on the other device: refused before it runs
            mixed(gpu, program, args, device, stream)
            return
        if how == "launch":
            program.kernel(*args, stream=stream)
        elif how == "start":
            program.pendings.append(program.kernel.op(*args).start(stream=stream))
        elif how == "await":
            awaited(rng, gpu, program.kernel.op(*args), stream)
        else:
            program.kernel.op(*args).sync(stream=stream)
    except ClientError:
        return
    if how in ("sync", "await") and not all(i.done for i in gpu.launched[launched:]):
        gpu.findings.append(f"{how} returned before its launch finished")


def mixed(gpu: FifoGpu, program: Program, args: tuple, device: int, stream: int) -> None:
    """An op whose second launch is on the other device (the legacy stream: a handle of
    both) must be refused before that launch runs; the first stays tracked."""
    if stream not in LEGACY:
        return
    other = SLOTS[1 - device][:3]
    second = tuple(program.slots[i] for i in other)
    if not all(isinstance(t, DeviceTensor) for t in second):
        return
    op = program.kernel.op(*args).then(program.kernel.op(*second))
    launched = len(gpu.launched)
    try:
        op.start(stream=stream)
    except DeviceMismatchError:
        if len(gpu.launched) != launched + 1:
            gpu.findings.append("an op's launch on a second device ran")
        return
    gpu.findings.append("an op over two devices was not refused")


def awaited(rng: random.Random, gpu: FifoGpu, op: object, stream: int) -> None:
    """`await op` (on `stream`, or on the await pool's next stream) alone on an event loop,
    whose timer runs the GPU a step at a time until the await returned (a timer is no ready
    task: the await takes its path alone on the loop, and its spin's queries run the GPU)."""

    async def main() -> None:
        target = op.on(stream) if rng.random() < 0.7 else op  # type: ignore[attr-defined]
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        ticks = [0]

        def tick() -> None:
            ticks[0] += 1
            if ticks[0] > MAX_TICKS and task is not None:
                task.cancel()  # the GPU ran dry long ago: the await hangs
                return
            gpu.tick()
            loop.call_later(0.0001, tick)

        loop.call_later(0.0001, tick)
        await target

    try:
        asyncio.run(main())
    except asyncio.CancelledError:
        gpu.findings.append("an await never returned")


def graph_step(
    rng: random.Random, gpu: FifoGpu, program: Program, spans: list[tuple[int, int]]
) -> None:
    """Capture a launch into a graph, replay a graph (waiting or not) or close one."""
    choice = rng.random()
    if choice < 0.3 or not program.graphs:
        if len(program.graphs) < 3:
            launch(rng, gpu, program, spans, "capture")
        return
    graph = rng.choice(program.graphs)
    if choice < 0.85:
        stream = rng.choice(STREAM_CHOICES[graph.device])
        launched = len(gpu.launched)
        sync = rng.random() < 0.4
        try:
            replayed = graph.replay(stream, sync=sync)
        except ClientError:
            return
        if sync and not all(item.done for item in gpu.launched[launched:]):
            gpu.findings.append("replay(sync=True) returned before the replay finished")
        program.pendings.append(replayed)
    else:
        program.graphs.remove(graph)
        graph.close()


def pending_step(rng: random.Random, gpu: FifoGpu, program: Program) -> None:
    choice = rng.random()
    if choice < 0.4 and program.pendings:
        pending = program.pendings.pop(rng.randrange(len(program.pendings)))
        pending.sync()  # type: ignore[attr-defined]
    elif choice < 0.7 and program.pendings:
        rng.choice(program.pendings).done()  # type: ignore[attr-defined]
    else:
        device = rng.choice(tuple(STREAM_CHOICES))
        driver.ensure_context(device)
        synchronize(rng.choice(STREAM_CHOICES[device]))


def campaign(inputs: int, seed: int, steps: int) -> int:
    failed = 0
    for number in range(inputs):
        findings = run_input(seed, number, steps)
        if findings:
            failed += 1
            print(f"input {number} (seed {seed}): {findings[0]}")
    print(f"inputs={inputs} steps={steps} findings={failed}")
    return failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=60)
    options = parser.parse_args(argv)
    return 1 if campaign(options.inputs, options.seed, options.steps) else 0


if __name__ == "__main__":
    sys.exit(main())
