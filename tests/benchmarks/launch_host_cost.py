"""The Python host cost of a launch, without a GPU: the client on the recording fake driver.

    PYTHONPATH=. python3 -m tests.benchmarks.launch_host_cost [--profile] [--rounds N]

`tests/client_stubs/fake_driver.py` stands in for `client_stubs.driver`: every driver call is
a Python function that records its name, so what is left is the client's own work per launch
(checks, memo lookups, pending-work tracking, packing) plus a small constant per driver call
(the "fake driver floor" row: one such call). Figures are the best of N rounds of CPU time of
this thread (`time.thread_time_ns`, `gc` off), µs per launch: on a shared machine the best
round is the stable figure. Each row lists the driver calls one launch makes; on the H200,
`tests.benchmarks.launch_overhead` measures the same modes with the real driver.

  fake driver floor    one fake `launch_params` call
  eager                kernel(z, x, y): memoized checks, launch, pending-work tracking
  eager, on a stream   kernel(z, x, y, stream=S) on a stream of the caller's: its work is
                       tracked with an event of its own (one `cuEventRecord` a launch)
  eager, variants      the same through `Bundle.kernel(...)` of an entry built with a
                       specialized variant: the per-launch choice of variant
  choice alone         the difference of the two (target: < 0.5 µs)
  eager, host grid     a raw-pointer kernel (`scale_ptr`, grid given by the host): its plan is
                       memoized with the grid (fake driver only)
  new arguments        eager launches with new tensor objects each time (a full check of
                       every argument per launch), plain kernel and variants
  op.sync()            kernel.op(z, x, y).sync(): one round trip
  await op             `await kernel.op(z, x, y).on(0)`, one at a time on an event loop of
                       its own (target: within 10% of op.sync() on the GPU host)
  graph replay         `Graph.capture` of a 100-launch chain: `replay()` and
                       `replay(sync=True)`, per kernel

`--profile` prints a cProfile of 20000 eager launches, of 20000 `op.sync()` round trips and
(on the fake driver) of 20000 launches with new arguments.
`--bindings` runs the real `client_stubs.driver` and cuda-python instead of the fake: on a
machine without a GPU, over `tests/benchmarks/stub_libcuda.c` (its header says how to build and
load it), where every driver call succeeds at once, so the figures are the client plus the
bindings' own cost, next to a raw `cuLaunchKernel` through the same bindings; the stub counts
the driver calls each row makes (the compiled launcher's too, which Python cannot see). The
script also runs on checkouts older than `client_stubs.variants` (without those rows).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import hashlib
import json
import pstats
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from client_stubs import AmbiguousKernelError, Bundle, DeviceTensor, Graph, Kernel, driver
from client_stubs.device_op import DeviceOp
from client_stubs.pending import PENDING, synchronize_handle
from protos.generated.cutile.compile.v1 import contract_pb2 as pb
from tests.client_stubs.conftest import add_contract, scale_ptr_contract
from tests.client_stubs.fake_driver import CUBIN, FakeDriver

N = 1024
CHAIN = 100
PER_ROUND = 500
Z, X, Y = 0x7F00_0000_0000, 0x7F10_0000_0000, 0x7F20_0000_0000
STREAM = 0x5000  # a stream handle of the caller's (not a default stream: an event per launch)


def best_us(fn: Callable[[], object], count: int, rounds: int, reset: Callable[[], None]) -> float:
    """The least CPU time per call (µs) over `rounds` rounds of `count` calls of `fn`."""
    samples = []
    for _ in range(rounds + 1):  # the first round warms up
        reset()
        start = time.thread_time_ns()
        for _ in range(count):
            fn()
        samples.append((time.thread_time_ns() - start) / count / 1e3)
    reset()
    return min(samples[1:])


def calls_per(fn: Callable[[], object], fake: FakeDriver, per: int = 1) -> str:
    """The driver calls one `fn()` makes, counted over 64 calls after a warm-up call."""
    fn()
    fake.calls.clear()
    for _ in range(64):
        fn()
    counts: dict[str, int] = {}
    for name in fake.names():
        counts[name] = counts.get(name, 0) + 1
    fake.calls.clear()
    return ", ".join(f"{name} {count / 64 / per:g}" for name, count in counts.items()) or "none"


def variant_bundle(root: Path) -> Bundle:
    """A bundle holding add<B=1024> twice: the general kernel and a variant that assumes
    every extent of x and y divisible by 16 (what `cutile-compile` builds by default)."""
    kernels = []
    for stem, divisor in (("general", 0), ("div16", 16)):
        contract = add_contract(block=N)
        facts = []
        if divisor:
            for param, name in ((1, "x"), (2, "y")):
                contract.assumptions.add(
                    param=param, kind=pb.ASSUMPTION_KIND_DIM_DIV, axis=0, value=divisor
                )
                facts.append({"param": name, "dim_divisors": [divisor], "stride_divisors": [1]})
        cubin = CUBIN + stem.encode()
        (root / f"{stem}.cubin").write_bytes(cubin)
        blob = contract.SerializeToString(deterministic=True)
        (root / f"{stem}.contract.pb").write_bytes(blob)
        kernels.append(
            {
                "module": "kernel",
                "function": "add",
                "generics": {"B": str(N)},
                "sm": "sm_90",
                "cubin": f"{stem}.cubin",
                "contract": f"{stem}.contract.pb",
                "cubin_sha256": hashlib.sha256(cubin).hexdigest(),
                "contract_sha256": hashlib.sha256(blob).hexdigest(),
                "facts": facts,
            }
        )
    (root / "manifest.json").write_text(json.dumps({"schema": 1, "kernels": kernels}))
    return Bundle.open(root)


def chain_of(kernel: Kernel, args: tuple[object, ...], length: int) -> DeviceOp:
    op: DeviceOp = kernel.op(*args)
    for _ in range(length - 1):
        op = op.then(kernel.op(*args))
    return op


def fresh_arguments(count: int) -> list[tuple[object, ...]]:
    """`count` argument sets of new objects with the same layouts (each misses the memo)."""
    return [
        (DeviceTensor(Z, (N,)).partition([N]), DeviceTensor(X, (N,)), DeviceTensor(Y, (N,)))
        for _ in range(count)
    ]


def report(name: str, value: float, calls: str = "") -> None:
    print(f"  {name:<30} {value:7.3f} µs   {calls}")


def profile(label: str, fn: Callable[[], object], reset: Callable[[], None]) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(20000):
        fn()
    profiler.disable()
    reset()
    print(f"cProfile of 20000 launches, {label} (top 12 by own time):")
    pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(12)


class AwaitLoop:
    """`await kernel.op(*args).on(0)` in turn on one event loop, alone on it (the round trip
    `op.sync()` is compared with): CPU time per await, the loop's own cost included."""

    def __init__(self, kernel: Kernel, args: tuple[object, ...]) -> None:
        self.kernel, self.args = kernel, args
        self.loop = asyncio.new_event_loop()

    async def _awaits(self, count: int) -> None:
        kernel, args = self.kernel, self.args
        for _ in range(count):
            await kernel.op(*args).on(0)

    def one(self) -> None:
        self.loop.run_until_complete(self._awaits(1))

    def best_us(self, rounds: int, reset: Callable[[], None]) -> float:
        def awaits() -> None:
            self.loop.run_until_complete(self._awaits(PER_ROUND))

        return best_us(awaits, 1, rounds, reset) / PER_ROUND

    def close(self) -> None:
        self.loop.close()


CallsOf = Callable[..., str]


def run_rows(
    kernel: Kernel,
    chooser: Kernel | None,
    args: tuple[object, ...],
    rounds: int,
    reset: Callable[[], None],
    calls_of: CallsOf,
) -> None:
    """Every row of the module docstring but the floor."""

    def measure(fn: Callable[[], object], count: int = PER_ROUND) -> float:
        return best_us(fn, count, rounds, reset)

    eager = measure(lambda: kernel(*args))
    report("eager kernel(...)", eager, calls_of(lambda: kernel(*args)))
    on_stream = measure(lambda: kernel(*args, stream=STREAM))
    report("eager, on a stream", on_stream, calls_of(lambda: kernel(*args, stream=STREAM)))
    if chooser is not None:
        chosen = measure(lambda: chooser(*args))
        report("eager, variants", chosen, calls_of(lambda: chooser(*args)))
        report("choice alone", chosen - eager)
    for label, target in (("new arguments", kernel), ("new arguments, variants", chooser)):
        if target is not None:
            fresh = iter(fresh_arguments(PER_ROUND * (rounds + 2)))
            report(label, measure(lambda t=target, f=fresh: t(*next(f))))
    sync = measure(lambda: kernel.op(*args).sync())
    report("op.sync()", sync, calls_of(lambda: kernel.op(*args).sync()))
    awaited = AwaitLoop(kernel, args)
    await_us = awaited.best_us(rounds, reset)
    report("await op", await_us, calls_of(awaited.one))
    report("await - op.sync()", await_us - sync)
    awaited.close()
    graph = Graph.capture(chain_of(kernel, args, CHAIN))
    replay = measure(graph.replay, PER_ROUND // 10) / CHAIN
    report(f"graph replay ({CHAIN} kernels)", replay, calls_of(graph.replay, CHAIN))
    replay_sync = measure(lambda: graph.replay(sync=True), PER_ROUND // 10) / CHAIN
    report("graph replay(sync=True)", replay_sync, calls_of(lambda: graph.replay(sync=True), CHAIN))
    graph.close()


def with_fake_driver(rounds: int, profiling: bool) -> None:
    with pytest.MonkeyPatch.context() as patch, tempfile.TemporaryDirectory() as folder:
        patch.setattr(PENDING, "_streams", {})
        patch.setattr(PENDING, "_pins", [])
        patch.setattr(PENDING, "_events", [])
        patch.setattr(driver, "device_count", lambda: 0)
        fake = FakeDriver(patch)
        kernel = Kernel(CUBIN, add_contract(block=N))
        chooser = variant_kernel(Path(folder))
        args = (DeviceTensor(Z, (N,)).partition([N]), DeviceTensor(X, (N,)), DeviceTensor(Y, (N,)))

        def reset() -> None:
            fake.calls.clear()
            synchronize_handle(0)
            synchronize_handle(STREAM)

        print(f"Python host cost per launch, add<B={N}>, fake driver (best of {rounds} rounds)")
        launch = driver.launch_params
        floor = best_us(
            lambda: launch("F", (1, 1, 1), (1, 1, 1), 0, 0, 0), PER_ROUND, rounds, reset
        )
        report("fake driver floor", floor)
        run_rows(kernel, chooser, args, rounds, reset, lambda fn, per=1: calls_per(fn, fake, per))
        raw = Kernel(CUBIN, scale_ptr_contract(), allow_unchecked=True)
        raw_args = (DeviceTensor(Z, (N,)), DeviceTensor(X, (N,)), 3.0, N)

        def host_grid() -> object:
            return raw(*raw_args, grid=(4, 1, 1))

        cost = best_us(host_grid, PER_ROUND, rounds, reset)
        report("eager, host grid", cost, calls_per(host_grid, fake))
        if profiling:
            profile("eager", lambda: kernel(*args), reset)
            profile("op.sync()", lambda: kernel.op(*args).sync(), reset)
            fresh = iter(fresh_arguments(20000))
            profile("new arguments", lambda: kernel(*next(fresh)), reset)


def with_bindings(rounds: int, profiling: bool) -> None:
    """The real `client_stubs.driver` on whatever libcuda is found (tests/benchmarks/stub_libcuda.c:
    every call succeeds at once)."""
    import ctypes

    from cuda.bindings import driver as cu

    from client_stubs import launcher, synchronize

    launcher.host_arch = lambda: "x86_64"  # what the hand-built contract names
    with tempfile.TemporaryDirectory() as folder:
        driver.ensure_context(0)
        kernel = Kernel(CUBIN, add_contract(block=N))
        chooser = variant_kernel(Path(folder))
        args = (DeviceTensor(Z, (N,)).partition([N]), DeviceTensor(X, (N,)), DeviceTensor(Y, (N,)))
        kernel(*args, sync=True)
        plan = kernel.plan(*args)
        function = driver.load_function(kernel.cubin, kernel.sha256, kernel.entry_symbol, 0)
        buffer = ctypes.create_string_buffer(plan.param_buffer, len(plan.param_buffer))
        base = ctypes.addressof(buffer)
        params = (ctypes.c_void_p * len(plan.slot_offsets))(*[base + o for o in plan.slot_offsets])
        address, launch = ctypes.addressof(params), cu.cuLaunchKernel

        def raw() -> object:
            return launch(function, 1, 1, 1, 1, 1, 1, 0, 0, address, 0), buffer, params

        def reset() -> None:
            synchronize(0)
            synchronize_handle(STREAM)

        print(f"host cost per launch, add<B={N}>, cuda-python bindings (best of {rounds} rounds)")
        report("raw cuLaunchKernel", best_us(raw, PER_ROUND, rounds, reset))
        both = best_us(lambda: (raw(), cu.cuStreamSynchronize(0)), PER_ROUND, rounds, reset)
        report("raw + cuStreamSynchronize", both, stub_calls_per(lambda: (raw(), synchronize(0))))
        run_rows(kernel, chooser, args, rounds, reset, stub_calls_per)
        if profiling:
            profile("eager", lambda: kernel(*args), reset)
            profile("op.sync()", lambda: kernel.op(*args).sync(), reset)


def stub_calls_per(fn: Callable[[], object], per: int = 1) -> str:
    """The driver calls one `fn()` makes, counted by the stub libcuda over 64 calls after a
    warm-up call ("" on a libcuda that does not count: a real one)."""
    import ctypes

    lib = ctypes.CDLL("libcuda.so.1")
    if not hasattr(lib, "stub_count_start"):
        return ""
    fn()
    lib.stub_count_start()
    for _ in range(64):
        fn()
    text = ctypes.create_string_buffer(4096)
    lib.stub_counts(text, len(text))
    counts = (line.split() for line in text.value.decode().splitlines())
    return ", ".join(f"{name} {int(count) / 64 / per:g}" for name, count in counts) or "none"


def variant_kernel(folder: Path) -> Kernel | None:
    try:
        return variant_bundle(folder).kernel("add", {"B": str(N)})
    except AmbiguousKernelError:  # a client without per-launch variant choice
        return None


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--bindings", action="store_true")
    parser.add_argument("--rounds", type=int, default=100)
    options = parser.parse_args(argv)
    gc.disable()
    if options.bindings:
        with_bindings(options.rounds, options.profile)
    else:
        with_fake_driver(options.rounds, options.profile)
    gc.enable()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
