"""The Python host cost of a launch, without a GPU: the client on the recording fake driver.

    PYTHONPATH=. python3 -m benchmarks.launch_host_cost [--profile] [--rounds N]

`tests/client_stubs/fake_driver.py` stands in for `client_stubs.driver`: every driver call is
a Python function that records its name, so what is left is the client's own work per launch
(checks, memo lookups, pending-work tracking, packing) plus a small constant per driver call.
Figures are medians over rounds (µs per launch, `gc` off). On the H200 add the driver calls
listed per row (`benchmarks.launch_overhead` measures them there).

  fake driver floor   one fake `launch_params` call: the floor every launch row includes
  eager               kernel(z, x, y): memoized checks, launch, completion tracking
  eager, variants     the same through `Bundle.kernel(...)` of an entry with a specialized
                      variant: the per-launch choice of variant is the difference
  choice alone        that difference (the target is < 0.5 µs)
  op.sync()           kernel.op(z, x, y).sync(): one round trip
  graph replay        `Graph.capture` of a 100-launch chain, `replay()` / `replay(sync=True)`,
                      per kernel

`--profile` prints a cProfile of 20000 eager launches and 20000 `op.sync()` round trips.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import hashlib
import json
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from client_stubs import Bundle, DeviceTensor, Graph, Kernel, driver
from client_stubs.device_op import DeviceOp
from client_stubs.pending import PENDING
from protos.generated.cutile.compile.v1 import contract_pb2 as pb
from tests.client_stubs.conftest import add_contract
from tests.client_stubs.fake_driver import CUBIN, FakeDriver

N = 1024
CHAIN = 100
PER_ROUND = 500
MIN = True


def median_us(
    fn: Callable[[], object], count: int, rounds: int, reset: Callable[[], None]
) -> float:
    """Median over `rounds` of the µs per call of `count` calls of `fn`."""
    samples = []
    for _ in range(rounds + 1):  # the first round warms up
        reset()
        start = time.perf_counter_ns()
        for _ in range(count):
            fn()
        samples.append((time.perf_counter_ns() - start) / count / 1e3)
    reset()
    return min(samples[1:]) if MIN else statistics.median(samples[1:])


def calls_per(fn: Callable[[], object], fake: FakeDriver, per: int = 1) -> str:
    """The driver calls one `fn()` makes (after a warm-up call), as "name, name"."""
    fn()
    fake.calls.clear()
    fn()
    names = fake.names()
    fake.calls.clear()
    if per > 1:
        return f"{len(names) / per:g} per kernel ({', '.join(dict.fromkeys(names))})"
    return ", ".join(names) or "none"


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


def report(name: str, value: float, calls: str = "") -> None:
    print(f"  {name:<28} {value:7.3f} µs   {calls}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--rounds", type=int, default=15)
    options = parser.parse_args(argv)
    rounds = options.rounds
    with pytest.MonkeyPatch.context() as patch, tempfile.TemporaryDirectory() as folder:
        patch.setattr(PENDING, "_streams", {})
        patch.setattr(PENDING, "_pins", [])
        patch.setattr(PENDING, "_events", [])
        patch.setattr(driver, "device_count", lambda: 0)
        fake = FakeDriver(patch)
        kernel = Kernel(CUBIN, add_contract(block=N))
        try:
            chooser = variant_bundle(Path(folder)).kernel("add", {"B": str(N)})
        except Exception as exc:
            print("no variant choice:", exc)
            chooser = None
        z = DeviceTensor(0x7F00_0000_0000, (N,)).partition([N])
        x = DeviceTensor(0x7F10_0000_0000, (N,))
        y = DeviceTensor(0x7F20_0000_0000, (N,))
        args = (z, x, y)

        def reset() -> None:
            fake.calls.clear()
            driver.synchronize(0)
            PENDING.completed(0)

        gc.disable()
        print(f"Python host cost per launch, add<B={N}> on the fake driver (median of {rounds})")
        launch = driver.launch_params
        floor = median_us(
            lambda: launch("F", (1, 1, 1), (1, 1, 1), 0, 0, 0), PER_ROUND, rounds, reset
        )
        report("fake driver floor", floor, "launch")
        eager = median_us(lambda: kernel(*args), PER_ROUND, rounds, reset)
        report("eager kernel(...)", eager, calls_per(lambda: kernel(*args), fake))
        if chooser is not None:
            chosen = median_us(lambda: chooser(*args), PER_ROUND, rounds, reset)
            report("eager, variants", chosen, calls_per(lambda: chooser(*args), fake))
            report("choice alone", chosen - eager)
        sync = median_us(lambda: kernel.op(*args).sync(), PER_ROUND, rounds, reset)
        report("op.sync()", sync, calls_per(lambda: kernel.op(*args).sync(), fake))
        graph = Graph.capture(chain_of(kernel, args, CHAIN))
        replay = median_us(graph.replay, PER_ROUND // 10, rounds, reset) / CHAIN
        report(f"graph replay ({CHAIN} kernels)", replay, calls_per(graph.replay, fake, CHAIN))
        replay_sync = median_us(lambda: graph.replay(sync=True), PER_ROUND // 10, rounds, reset)
        report("graph replay(sync=True)", replay_sync / CHAIN, "per kernel")
        graph.close()
        if options.profile:
            for label, fn in (
                ("eager", lambda: kernel(*args)),
                ("op.sync()", lambda: kernel.op(*args).sync()),
            ):
                profiler = cProfile.Profile()
                profiler.enable()
                for _ in range(20000):
                    fn()
                profiler.disable()
                reset()
                print(f"cProfile of 20000 launches, {label} (top 12 by own time):")
                pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(12)
        gc.enable()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
