"""Host overhead per launch of a tiny kernel, in every execution mode, next to the raw driver
call and torch (on the H200).

    PYTHONPATH=. python3 -m tests.benchmarks.launch_overhead BUNDLE [--profile]

The kernel is the bundle's `add<B=1024>` on 1024 f32 elements (one tile block). Figures are
medians over rounds (µs per launch); "issue" figures time only the host loop (the GPU drains
the queue afterwards, untimed), "round trip" figures include waiting for the GPU.

  raw            cuLaunchKernel from Python, same cubin, prebuilt kernelParams (the stream
                 as an int, and as a prebuilt CUstream object, as the bindings' path passes
                 it), with the parameters packed in one buffer (`extra`), and through the
                 client's compiled launcher (client_stubs.native; CUTILE_NATIVE_LAUNCH=0
                 runs every row on the bindings' path instead)
  GPU time       timing events around the same back-to-back launches: when it is close to
                 the host figure above it, that loop is bound by the GPU, not the host
  torch add      torch.add(x, y, out=z) on 1024 f32 elements
  eager          kernel(z, x, y): checks (memoized), launch, pending-work tracking (an event
                 every RETIRE_EVERY launches, client_stubs.pending)
  chained        a 100-launch `.then` chain built once, `.start()` (one event for all)
  graph replay   `Graph.capture` of the same 100-launch chain, `replay()`
  sync / asyncio one `kernel.op(...)` per round trip: `.sync()` against `await`; the rounds
                 of op.sync() alternate with those of the raw round trip, and the target
                 takes the median of their paired differences
  pipeline       16 asyncio tasks on 4 streams, each awaiting 16 launches in turn (16 in
                 flight at once), per launch, against the same launches run with .sync()
  spin budget    `await op` and the pipeline again with other bounds on the spin before a
                 task parks (completion.COMPLETIONS.spin_ns; 0: ask once, then park on a
                 host function, the path every await took before the spin existed)

`--profile` adds where one round trip's time goes: per-phase medians (perf_counter_ns probes
around the steps `op.sync()` and `await op` take) and a cProfile of 2000 awaits.

Targets (issues 6 and 14): eager <= torch add, op.sync() <= raw + cuStreamSynchronize +
1 µs, chained <= 1.2x raw, asyncio within 10% of sync, graph replay <= 1 µs per kernel.
BUNDLE/default from `tests.gpu.build_artifacts` holds add<B=1024> with its automatic variant:
there the kernel is a `Variants` and eager includes the per-launch choice of variant.
`tests.benchmarks.launch_host_cost` measures the Python side of the same modes without a GPU.
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

from client_stubs import Bundle, DeviceTensor, Graph, Kernel, Variants, driver, synchronize
from client_stubs.completion import COMPLETIONS
from client_stubs.device_op import DeviceOp, Run
from client_stubs.pending import PENDING
from client_stubs.plan import LaunchPlan

N = 1024
CHAIN = 100
ROUNDS = 30
PER_ROUND = 200
TASKS = 16
ROUNDS_PER_TASK = 16
SPIN_BUDGETS_NS = (0, 5_000, 50_000)  # besides the default (COMPLETIONS.spin_ns)


def median_us(run_round: Callable[[], float], launches: int, rounds: int = ROUNDS) -> float:
    """Median over `rounds` of (seconds one round took) / launches, in µs."""
    run_round()  # warm-up
    samples = [run_round() / launches * 1e6 for _ in range(rounds)]
    return statistics.median(samples)


def paired_medians_us(
    first: Callable[[], float], second: Callable[[], float], launches: int, rounds: int = ROUNDS
) -> tuple[float, float, float]:
    """Rounds of `first` and `second` taken in turn (so that drift, e.g. of clocks, touches
    both alike): the median of each, and the median of their paired differences, in µs per
    launch."""
    first(), second()  # warm-up
    pairs = [(first() / launches * 1e6, second() / launches * 1e6) for _ in range(rounds)]
    a, b = zip(*pairs, strict=True)
    return statistics.median(a), statistics.median(b), statistics.median(y - x for x, y in pairs)


def timed_loop(fn: Callable[[], object], count: int, after: Callable[[], object]) -> float:
    """Seconds for `count` calls of `fn`; `after` (e.g. a sync) runs untimed."""
    start = time.perf_counter()
    for _ in range(count):
        fn()
    elapsed = time.perf_counter() - start
    after()
    return elapsed


def chain_of(kernel: Kernel, args: tuple[object, ...], length: int) -> DeviceOp:
    op: DeviceOp = kernel.op(*args)
    for _ in range(length - 1):
        op = op.then(kernel.op(*args))
    return op


def bare_launch_parts(
    kernel: Kernel, args: tuple[object, ...]
) -> tuple[LaunchPlan, object, ctypes.Array, ctypes.Array]:
    """What a bare launch of `kernel` on `args` needs, built once: its plan, the loaded
    function (of the variant the arguments choose), the packed parameter buffer and the
    kernelParams array pointing into it (keep both alive while launching)."""
    plan = kernel.plan(*args)
    chosen = kernel.choose(*args) if isinstance(kernel, Variants) else kernel
    ctx = driver.ensure_context(0)
    function = driver.load_function(chosen.cubin, chosen.sha256, chosen.entry_symbol, ctx)
    buffer = ctypes.create_string_buffer(plan.param_buffer, len(plan.param_buffer))
    base = ctypes.addressof(buffer)
    params = (ctypes.c_void_p * len(plan.slot_offsets))(*[base + o for o in plan.slot_offsets])
    return plan, function, buffer, params


def raw_launcher(
    kernel: Kernel, args: tuple[object, ...], stream_object: bool = False, packed: bool = False
) -> Callable[[], object]:
    """A bare cuLaunchKernel of the same function with a kernelParams array built once; the
    legacy stream as the int 0, or as a prebuilt `CUstream` (the bindings build one from an
    int on every call; the client passes cached ones). `packed`: the parameters as one
    buffer through `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE), also built once."""
    from cuda.bindings import driver as cu

    plan, function, buffer, params = bare_launch_parts(kernel, args)
    base, address = ctypes.addressof(buffer), ctypes.addressof(params)
    size = ctypes.c_size_t(len(plan.param_buffer))
    # CU_LAUNCH_PARAM_BUFFER_POINTER = 1, CU_LAUNCH_PARAM_BUFFER_SIZE = 2, CU_LAUNCH_PARAM_END = 0
    extra = (ctypes.c_void_p * 5)(1, base, 2, ctypes.addressof(size), 0)
    address, extra_address = (0, ctypes.addressof(extra)) if packed else (address, 0)
    gx, gy, gz = plan.grid
    bx, by, bz = plan.block
    launch = cu.cuLaunchKernel
    stream = cu.CUstream(0) if stream_object else 0

    def raw() -> object:
        launched = launch(function, gx, gy, gz, bx, by, bz, 0, stream, address, extra_address)
        return launched, buffer, params, extra, size

    return raw


def compiled_launcher(kernel: Kernel, args: tuple[object, ...]) -> Callable[[], object] | None:
    """The same bare launch through the client's compiled launcher (client_stubs.native), or
    None where it is not built or not bound."""
    bound = driver._state.get("native")
    if bound is None:
        return None
    plan, function, buffer, params = bare_launch_parts(kernel, args)
    address, grid, block, launch = ctypes.addressof(params), plan.grid, plan.block, bound.launch

    def compiled() -> object:
        return launch(function, grid, block, 0, 0, address), buffer, params

    return compiled


def gpu_us_per_launch(launch: Callable[[], object], count: int = PER_ROUND) -> float:
    """GPU time per launch of `count` back-to-back launches (timing events around them): when
    it is close to the host figure, the loop is bound by the GPU, not by the host."""
    from cuda.bindings import driver as cu

    start = driver.check(cu.cuEventCreate(0), "cuEventCreate")
    end = driver.check(cu.cuEventCreate(0), "cuEventCreate")
    synchronize()
    driver.check(cu.cuEventRecord(start, 0), "cuEventRecord")
    for _ in range(count):
        launch()
    driver.check(cu.cuEventRecord(end, 0), "cuEventRecord")
    driver.check(cu.cuEventSynchronize(end), "cuEventSynchronize")
    elapsed_ms = driver.check(cu.cuEventElapsedTime(start, end), "cuEventElapsedTime")
    for event in (start, end):
        driver.destroy_event(event)
    synchronize()
    return float(elapsed_ms) * 1e3 / count


def torch_add() -> tuple[Callable[[], object], Callable[[], object]] | None:
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    x, y = torch.ones(N, device="cuda"), torch.ones(N, device="cuda")
    z = torch.empty_like(x)
    return (lambda: torch.add(x, y, out=z)), torch.cuda.synchronize


def nothing() -> None:
    pass


def report(name: str, value: float, note: str = "") -> None:
    print(f"  {name:<34} {value:8.2f} µs/launch{('   ' + note) if note else ''}")


def verdict(name: str, ratio: float, limit: float, unit: str = "x") -> None:
    state = "PASS" if ratio <= limit else "MISS"
    print(f"  {name:<34} {ratio:8.2f} {unit:<9} target <= {limit}   {state}")


def await_round_trip_us(kernel: Kernel, args: tuple[object, ...]) -> float:
    """`await kernel.op(...)` one at a time on the legacy stream, µs per round trip."""

    async def awaited(count: int) -> float:
        start = time.perf_counter()
        for _ in range(count):
            await kernel.op(*args).on(0)
        return time.perf_counter() - start

    return median_us(lambda: asyncio.run(awaited(50)), 50)


class Pipeline:
    """The seed's asyncio pipeline: TASKS tasks on 4 streams, each awaiting ROUNDS_PER_TASK
    launches in turn (each task its own output), against the same launches one by one."""

    def __init__(self, kernel: Kernel, x: DeviceTensor, y: DeviceTensor) -> None:
        self.kernel, self.x, self.y = kernel, x, y
        self.streams = [driver.create_stream() for _ in range(4)]
        self.outputs = [DeviceTensor.zeros(N).partition([1024]) for _ in range(TASKS)]
        self.total = TASKS * ROUNDS_PER_TASK

    async def _worker(self, out: object, stream: int) -> None:
        for _ in range(ROUNDS_PER_TASK):
            await self.kernel.op(out, self.x, self.y).on(stream)

    async def _all(self) -> float:
        start = time.perf_counter()
        tasks = (self._worker(o, self.streams[i % 4]) for i, o in enumerate(self.outputs))
        await asyncio.gather(*tasks)
        return time.perf_counter() - start

    def _serial(self) -> float:
        start = time.perf_counter()
        for _ in range(ROUNDS_PER_TASK):
            for out in self.outputs:
                self.kernel.op(out, self.x, self.y).sync()
        return time.perf_counter() - start

    def awaited_us(self) -> float:
        return median_us(lambda: asyncio.run(self._all()), self.total, rounds=10)

    def synced_us(self) -> float:
        return median_us(self._serial, self.total, rounds=10)


def spin_sweep(kernel: Kernel, args: tuple[object, ...], pipeline: Pipeline) -> None:
    """`await op` and the pipeline under other spin budgets than the default."""
    default_spin = COMPLETIONS.spin_ns
    print(f"spin budget before parking (default {default_spin / 1e3:g} µs):")
    try:
        for spin_ns in SPIN_BUDGETS_NS:
            COMPLETIONS.spin_ns = spin_ns
            label = f"spin {spin_ns / 1e3:g} µs"
            report(f"await op, {label}", await_round_trip_us(kernel, args))
            report(f"pipeline, {label}", pipeline.awaited_us())
    finally:
        COMPLETIONS.spin_ns = default_spin


def phase_medians(
    kernel: Kernel, args: tuple[object, ...], count: int = 2000
) -> tuple[list[float], list[float], float]:
    """Per-phase medians (µs) of one round trip: sync (issue, cuStreamSynchronize, release)
    and the steps of an await alone on its loop, without the loop (issue, register the work
    without an event, ask the stream until it ran idle, retire), and the median number of
    stream queries that took."""
    clock = time.perf_counter_ns
    sync_phases: list[list[int]] = [[], [], []]
    await_phases: list[list[int]] = [[], [], [], []]
    polls: list[int] = []
    stream_done = driver.stream_done
    for _ in range(count):
        t0 = clock()
        run = Run(0)
        kernel.op(*args)._issue(run)
        t1 = clock()
        newest = PENDING.newest(0)
        driver.synchronize(0)
        t2 = clock()
        if newest is not None:  # pending.synchronize_handle, in its two timed halves
            PENDING.retire(newest)
        t3 = clock()
        for phase, (a, b) in zip(sync_phases, ((t0, t1), (t1, t2), (t2, t3)), strict=True):
            phase.append(b - a)
        t0 = clock()
        op = kernel.op(*args)
        prepared = op.kernel.issue(op.args, 0, None, False, False, op.grid)
        t1 = clock()
        batch = PENDING.note(0, prepared.accesses, (op.args,))
        t2 = clock()
        asked = 1
        while not stream_done(0):
            asked += 1
        t3 = clock()
        PENDING.retire(batch)
        t4 = clock()
        polls.append(asked)
        spans = ((t0, t1), (t1, t2), (t2, t3), (t3, t4))
        for phase, (a, b) in zip(await_phases, spans, strict=True):
            phase.append(b - a)
    return (
        [statistics.median(p) / 1e3 for p in sync_phases],
        [statistics.median(p) / 1e3 for p in await_phases],
        statistics.median(polls),
    )


def profile(kernel: Kernel, args: tuple[object, ...]) -> None:
    import cProfile
    import pstats

    sync_phases, await_phases, polls = phase_medians(kernel, args)
    print("where a round trip goes (median µs per phase, perf_counter_ns probes):")
    print("  sync:  issue {:.2f}  cuStreamSynchronize {:.2f}  release {:.2f}".format(*sync_phases))
    print(
        "  await, alone on its loop: issue {:.2f}  register {:.2f}  cuStreamQuery until idle "
        "{:.2f} ({:g} queries)  retire {:.2f}".format(*await_phases[:3], polls, await_phases[3])
    )

    async def awaits(count: int) -> None:
        for _ in range(count):
            await kernel.op(*args).on(0)

    profiler = cProfile.Profile()
    profiler.enable()
    asyncio.run(awaits(2000))
    profiler.disable()
    print("cProfile of 2000 `await op` (top 14 by own time):")
    pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(14)


def main(argv: list[str]) -> int:
    with_profile = "--profile" in argv
    argv = [a for a in argv if a != "--profile"]
    if len(argv) != 1:
        print(__doc__)
        return 2
    kernel = Bundle.open(argv[0]).kernel("add", {"B": "1024"})
    driver.ensure_context(0)
    x = DeviceTensor.from_numpy(np.ones(N, np.float32))
    y = DeviceTensor.from_numpy(np.ones(N, np.float32))
    part = DeviceTensor.zeros(N).partition([1024])
    args = (part, x, y)
    kernel(*args, sync=True)
    gc.disable()

    print(f"host overhead per launch, add<B=1024> on {N} f32 (median of {ROUNDS} rounds)")
    kind = type(kernel).__name__
    if isinstance(kernel, Variants):
        kind += f" of {len(kernel.variants)}, launching {kernel.choose(*args).sha256[:12]}"
    print(f"kernel: {kind}")
    print("issue (host loop only):")
    raw = raw_launcher(kernel, args)
    raw_us = median_us(lambda: timed_loop(raw, PER_ROUND, synchronize), PER_ROUND)
    report("raw cuLaunchKernel", raw_us)
    raw_object = raw_launcher(kernel, args, stream_object=True)
    report(
        "raw, CUstream object",
        median_us(lambda: timed_loop(raw_object, PER_ROUND, synchronize), PER_ROUND),
    )
    raw_packed = raw_launcher(kernel, args, stream_object=True, packed=True)
    report(
        "raw, packed params (extra)",
        median_us(lambda: timed_loop(raw_packed, PER_ROUND, synchronize), PER_ROUND),
    )
    report("  GPU time per raw launch", gpu_us_per_launch(raw), "(events; ~host: GPU-bound)")
    compiled = compiled_launcher(kernel, args)
    if compiled is not None:
        report(
            "raw, compiled launcher",
            median_us(lambda: timed_loop(compiled, PER_ROUND, synchronize), PER_ROUND),
        )
    else:
        print("  raw, compiled launcher               (not built, or CUTILE_NATIVE_LAUNCH=0)")
    torch_us = None
    torch_pair = torch_add()
    if torch_pair is not None:
        torch_fn, torch_sync = torch_pair
        torch_us = median_us(lambda: timed_loop(torch_fn, PER_ROUND, torch_sync), PER_ROUND)
        report("torch add", torch_us)
    else:
        print("  torch add                          (torch with CUDA not available)")
    eager_us = median_us(
        lambda: timed_loop(lambda: kernel(*args), PER_ROUND, synchronize), PER_ROUND
    )
    report("eager kernel(...)", eager_us)
    report("  GPU time per eager launch", gpu_us_per_launch(lambda: kernel(*args)))
    chain = chain_of(kernel, args, CHAIN)
    chained_us = median_us(lambda: timed_loop(chain.start, 1, synchronize), CHAIN)
    report(f"chained ({CHAIN} launches, .start())", chained_us)
    built_us = median_us(
        lambda: timed_loop(lambda: chain_of(kernel, args, CHAIN).start(), 1, synchronize), CHAIN
    )
    report("chained, building the chain too", built_us)
    graph = Graph.capture(chain)
    replay_us = median_us(lambda: timed_loop(lambda: graph.replay(), 1, synchronize), CHAIN)
    report(f"graph replay ({CHAIN} kernels)", replay_us, "per kernel")

    print("round trip (launch + wait for the GPU):")
    raw_sync_us, sync_us, sync_over_raw_us = paired_medians_us(
        lambda: timed_loop(lambda: (raw(), driver.synchronize(0)), 50, nothing),
        lambda: timed_loop(lambda: kernel.op(*args).sync(), 50, nothing),
        50,
    )
    report("raw + cuStreamSynchronize", raw_sync_us)
    report("op.sync()", sync_us, "(rounds taken in turn with the raw ones)")
    report("  op.sync() - (raw + sync), paired", sync_over_raw_us)

    async_us = await_round_trip_us(kernel, args)
    report("await op", async_us)
    chain_sync_us = median_us(lambda: timed_loop(lambda: chain.sync(), 1, nothing), CHAIN)
    report(f"chain of {CHAIN}: .sync()", chain_sync_us)

    async def awaited_chain() -> float:
        start = time.perf_counter()
        await chain.on(0)
        return time.perf_counter() - start

    chain_async_us = median_us(lambda: asyncio.run(awaited_chain()), CHAIN)
    report(f"chain of {CHAIN}: await", chain_async_us)
    replay_sync_us = median_us(
        lambda: timed_loop(lambda: graph.replay(sync=True), 1, nothing), CHAIN
    )
    report(f"graph of {CHAIN}: replay(sync=True)", replay_sync_us, "per kernel")
    report(
        "  GPU time per kernel of a replay",
        gpu_us_per_launch(graph.replay, 20) / CHAIN,
        "(events; the floor of the round trip)",
    )

    print(f"asyncio pipeline ({TASKS} tasks on 4 streams, {ROUNDS_PER_TASK} awaits each):")
    pipeline = Pipeline(kernel, x, y)
    pipeline_us = pipeline.awaited_us()
    report("in flight at once", pipeline_us)
    serial_us = pipeline.synced_us()
    report("the same launches, op.sync() each", serial_us)
    spin_sweep(kernel, args, pipeline)
    if with_profile:
        profile(kernel, args)

    print("targets:")
    if torch_us is not None:
        verdict("eager / torch add", eager_us / torch_us, 1.0)
    verdict("op.sync() - (raw + sync)", sync_over_raw_us, 1.0, "µs")
    verdict("chained / raw", chained_us / raw_us, 1.2)
    verdict("await / sync (one op)", async_us / sync_us, 1.1)
    verdict(f"await / sync (chain of {CHAIN})", chain_async_us / chain_sync_us, 1.1)
    verdict("asyncio pipeline / sync each", pipeline_us / serial_us, 1.0)
    verdict("graph replay per kernel (issue)", replay_us, 1.0, "µs")
    verdict("graph replay per kernel (round trip)", replay_sync_us, 1.0, "µs")
    graph.close()
    gc.enable()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
