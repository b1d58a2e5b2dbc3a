"""Host overhead per launch of a tiny kernel, in every execution mode, next to the raw driver
call and torch (on the H200).

    PYTHONPATH=. python3 -m benchmarks.launch_overhead BUNDLE

The kernel is the bundle's `add<B=1024>` on 1024 f32 elements (one tile block). Figures are
medians over rounds (µs per launch); "issue" figures time only the host loop (the GPU drains
the queue afterwards, untimed), "round trip" figures include waiting for the GPU.

  raw            cuLaunchKernel from Python, same cubin, prebuilt kernelParams
  torch add      torch.add(x, y, out=z) on 1024 f32 elements
  eager          kernel(z, x, y): checks (memoized), launch, completion event
  chained        a 100-launch `.then` chain built once, `.start()` (one event for all)
  graph replay   `Graph.capture` of the same 100-launch chain, `replay()`
  sync / asyncio one `kernel.op(...)` per round trip: `.sync()` against `await`
  pipeline       16 asyncio tasks on 4 streams, each awaiting 16 launches in turn (16 in
                 flight at once), per launch, against the same launches run with .sync()

Targets (from issue 6): chained <= 1.2x raw, asyncio within 10% of sync, graph replay
<= 1 µs per kernel.
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

from client_stubs import Bundle, DeviceTensor, Graph, Kernel, driver, synchronize
from client_stubs.device_op import DeviceOp

N = 1024
CHAIN = 100
ROUNDS = 30
PER_ROUND = 200
TASKS = 16
ROUNDS_PER_TASK = 16


def median_us(run_round: Callable[[], float], launches: int, rounds: int = ROUNDS) -> float:
    """Median over `rounds` of (seconds one round took) / launches, in µs."""
    run_round()  # warm-up
    samples = [run_round() / launches * 1e6 for _ in range(rounds)]
    return statistics.median(samples)


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


def raw_launcher(kernel: Kernel, args: tuple[object, ...]) -> Callable[[], object]:
    """A bare cuLaunchKernel of the same function with a kernelParams array built once."""
    from cuda.bindings import driver as cu

    plan = kernel.plan(*args)
    ctx = driver.ensure_context(0)
    function = driver.load_function(kernel.cubin, kernel.sha256, kernel.entry_symbol, ctx)
    buffer = ctypes.create_string_buffer(plan.param_buffer, len(plan.param_buffer))
    base = ctypes.addressof(buffer)
    params = (ctypes.c_void_p * len(plan.slot_offsets))(*[base + o for o in plan.slot_offsets])
    address = ctypes.addressof(params)
    gx, gy, gz = plan.grid
    launch = cu.cuLaunchKernel

    def raw() -> object:
        return launch(function, gx, gy, gz, 1, 1, 1, 0, 0, address, 0), buffer, params

    return raw


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


def main(argv: list[str]) -> int:
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
    print("issue (host loop only):")
    raw = raw_launcher(kernel, args)
    raw_us = median_us(lambda: timed_loop(raw, PER_ROUND, synchronize), PER_ROUND)
    report("raw cuLaunchKernel", raw_us)
    torch_pair = torch_add()
    if torch_pair is not None:
        torch_fn, torch_sync = torch_pair
        report(
            "torch add",
            median_us(lambda: timed_loop(torch_fn, PER_ROUND, torch_sync), PER_ROUND),
        )
    else:
        print("  torch add                          (torch with CUDA not available)")
    eager_us = median_us(
        lambda: timed_loop(lambda: kernel(*args), PER_ROUND, synchronize), PER_ROUND
    )
    report("eager kernel(...)", eager_us)
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
    report(
        "raw + cuStreamSynchronize",
        median_us(lambda: timed_loop(lambda: (raw(), driver.synchronize(0)), 50, nothing), 50),
    )
    sync_us = median_us(lambda: timed_loop(lambda: kernel.op(*args).sync(), 50, nothing), 50)
    report("op.sync()", sync_us)

    async def awaited(count: int) -> float:
        start = time.perf_counter()
        for _ in range(count):
            await kernel.op(*args).on(0)
        return time.perf_counter() - start

    async_us = median_us(lambda: asyncio.run(awaited(50)), 50)
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

    print(f"asyncio pipeline ({TASKS} tasks on 4 streams, {ROUNDS_PER_TASK} awaits each):")
    streams = [driver.create_stream() for _ in range(4)]
    outputs = [DeviceTensor.zeros(N).partition([1024]) for _ in range(TASKS)]
    total = TASKS * ROUNDS_PER_TASK

    async def worker(out: object, stream: int) -> None:
        for _ in range(ROUNDS_PER_TASK):
            await kernel.op(out, x, y).on(stream)

    async def pipeline() -> float:
        start = time.perf_counter()
        await asyncio.gather(*(worker(o, streams[i % 4]) for i, o in enumerate(outputs)))
        return time.perf_counter() - start

    report("in flight at once", median_us(lambda: asyncio.run(pipeline()), total, rounds=10))

    def serial() -> float:
        start = time.perf_counter()
        for _ in range(ROUNDS_PER_TASK):
            for out in outputs:
                kernel.op(out, x, y).sync()
        return time.perf_counter() - start

    report("the same launches, op.sync() each", median_us(serial, total, rounds=10))

    print("targets:")
    verdict("chained / raw", chained_us / raw_us, 1.2)
    verdict("await / sync (one op)", async_us / sync_us, 1.1)
    verdict(f"await / sync (chain of {CHAIN})", chain_async_us / chain_sync_us, 1.1)
    verdict("graph replay per kernel (issue)", replay_us, 1.0, "µs")
    verdict("graph replay per kernel (round trip)", replay_sync_us, 1.0, "µs")
    graph.close()
    gc.enable()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
