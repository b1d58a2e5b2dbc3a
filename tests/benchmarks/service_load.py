"""Load figures of `cutile-serve` over loopback, against daemons this script starts.

    python -m tests.benchmarks.service_load [--mixed-seconds 60] [--hits 2000] [--clients 64]
                                      [--throughput-seconds 10] [--mixed-clients 8]
                                      [--replica-kernels 12] [--skip-redis]

Each phase starts its own `cutile-serve` subprocess(es) (real tileiras, a fresh cache
folder, metrics on a free port) and stops them with SIGTERM afterwards:

1. cache-hit `Compile` latency: one warm-up compile, then `--hits` sequential calls on one
   channel; p50/p99/max (targets: p50 <= 1 ms, p99 <= 5 ms).
2. hit throughput: `--clients` concurrent clients (grpc.aio) calling for
   `--throughput-seconds`; requests/s and the latency percentiles under load.
3. 100 identical concurrent cold requests: `cutile_serve_tileiras_runs_total` and the
   compile-stage histogram count read from the metrics endpoint must both grow by 1.
4. mixed load for `--mixed-seconds` (default 60): `--mixed-clients` closed-loop clients,
   90% cache hits, 10% `skip_cache` recompiles of one of 54 kernels (the front end runs
   each time; tileiras only for a bytecode not yet under its content key); errors by
   status and the server's RSS before and after.
5. two replicas sharing one private redis-server (skipped without `redis-server` or with
   `--skip-redis`): every client asks both replicas for `--replica-kernels` distinct
   kernels at once; the compile and tileiras-run counts of both metrics endpoints must
   each add up to the number of kernels.
6. a flood of `--flood` requests of 1 MiB each from another process against a daemon with
   one worker and two queue places: outcomes by status (compiled or RESOURCE_EXHAUSTED,
   never CANCELLED), health-check round trips meanwhile (target: p95 <= 50 ms) and the
   daemon's RSS before, after, and after a second flood.

Every loop is bounded by a request count or a duration; all traffic stays on 127.0.0.1.
The daemons log at WARNING (one INFO line per request is the default).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families

from protos.generated.cutile.compile.v1 import compile_pb2, compile_pb2_grpc
from tests.benchmarks.request_flood import flood_from_subprocess

REPO_ROOT = Path(__file__).resolve().parents[2]
ADD_PATH = REPO_ROOT / "rust_examples" / "add.rs"
ADD_RS = ADD_PATH.read_text()
START_TIMEOUT_S = 60
RPC_TIMEOUT_S = 120
TILE_SIZES = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
TARGETS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120")


def request(b: int = 128, target: str = "sm_90", skip_cache: bool = False):
    return compile_pb2.CompileRequest(
        sources=[compile_pb2.SourceFile(name="add.rs", text=ADD_RS)],
        entry="add",
        generics={"B": str(b)},
        target=target,
        options=compile_pb2.CompileOptions(skip_cache=skip_cache),
    )


# --------------------------------------------------------------------------- daemons


@dataclass
class Daemon:
    process: subprocess.Popen[str]
    port: int
    metrics_port: int

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def rss_mib(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
        return float("nan")

    def metrics(self) -> dict[tuple[str, tuple], float]:
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as reply:
            text = reply.read().decode()
        return {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text)
            for s in family.samples
        }

    def compiler_runs(self) -> int:
        key = ("cutile_serve_compile_stage_seconds_count", (("stage", "total"),))
        return int(self.metrics().get(key, 0))

    def tileiras_runs(self) -> int:
        return int(self.metrics().get(("cutile_serve_tileiras_runs_total", ()), 0))


@contextmanager
def daemons(count: int = 1, *extra: str) -> Iterator[list[Daemon]]:
    folder = Path(tempfile.mkdtemp(prefix="service-load-"))
    started: list[Daemon] = []
    try:
        for index in range(count):
            started.append(_start(folder / f"cache-{index}", extra))
        yield started
    finally:
        for daemon in started:
            daemon.process.send_signal(signal.SIGTERM)
        for daemon in started:
            try:
                daemon.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                daemon.process.kill()
                daemon.process.wait()
        shutil.rmtree(folder, ignore_errors=True)


def _start(cache_dir: Path, extra: Sequence[str]) -> Daemon:
    command = [sys.executable, "-m", "service.server.daemon", "--port", "0", "--metrics-port", "0"]
    command += ["--cache-dir", str(cache_dir), "--log-level", "WARNING", *extra]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    process = subprocess.Popen(
        command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=sys.stderr, text=True
    )
    lines = _first_lines(process, 2)
    try:
        port = int(lines[0].rsplit(":", 1)[1].split()[0])
        metrics_port = int(lines[1].rsplit(":", 1)[1])
    except (IndexError, ValueError):
        process.kill()
        raise SystemExit(f"cutile-serve did not start: {lines!r}") from None
    return Daemon(process, port, metrics_port)


def _first_lines(process: subprocess.Popen[str], count: int) -> list[str]:
    lines: list[str] = []

    def read() -> None:
        for _ in range(count):
            lines.append(process.stdout.readline().strip())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(START_TIMEOUT_S)
    return lines


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --------------------------------------------------------------------------- phases


def percentiles(samples_ms: list[float]) -> str:
    ordered = sorted(samples_ms)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return (
        f"p50 {statistics.median(ordered):.3f} ms  p90 {at(0.90):.3f} ms  "
        f"p99 {at(0.99):.3f} ms  max {ordered[-1]:.3f} ms  (n={len(ordered)})"
    )


def hit_latency(daemon: Daemon, count: int) -> None:
    with grpc.insecure_channel(daemon.target) as channel:
        stub = compile_pb2_grpc.CompileServiceStub(channel)
        hit = request()  # a client sends the same message again
        first = stub.Compile(hit, timeout=RPC_TIMEOUT_S)
        assert first.ok, [d.rendered for d in first.diagnostics]
        for _ in range(50):  # warm the channel and the server
            stub.Compile(hit, timeout=RPC_TIMEOUT_S)
        samples = []
        for _ in range(count):
            start = time.perf_counter()
            reply = stub.Compile(hit, timeout=RPC_TIMEOUT_S)
            samples.append((time.perf_counter() - start) * 1000.0)
            assert reply.cache == compile_pb2.CACHE_OUTCOME_HIT
    print(f"  cache-hit Compile latency: {percentiles(samples)}")
    print(f"  (first, cold compile: {first.timings.total_ms:.1f} ms server-side)")


async def _closed_loop(
    target: str, clients: int, seconds: float, make_request
) -> tuple[list[float], Counter[str], int]:
    """`clients` tasks calling Compile back to back for `seconds`: latencies, errors, n."""
    latencies: list[float] = []
    errors: Counter[str] = Counter()
    end = time.monotonic() + seconds
    async with grpc.aio.insecure_channel(target) as channel:
        stub = compile_pb2_grpc.CompileServiceStub(channel)

        async def client() -> None:
            while time.monotonic() < end:
                start = time.perf_counter()
                try:
                    reply = await stub.Compile(make_request(), timeout=RPC_TIMEOUT_S)
                    if not reply.ok:
                        errors["compile failed"] += 1
                except grpc.aio.AioRpcError as exc:
                    errors[exc.code().name] += 1
                latencies.append((time.perf_counter() - start) * 1000.0)

        await asyncio.gather(*(client() for _ in range(clients)))
    return latencies, errors, len(latencies)


def hit_throughput(daemon: Daemon, clients: int, seconds: float) -> None:
    latencies, errors, total = asyncio.run(
        _closed_loop(daemon.target, clients, seconds, lambda: request())
    )
    print(
        f"  hit throughput, {clients} concurrent clients, {seconds:.0f} s: "
        f"{total / seconds:.0f} requests/s, errors {dict(errors) or 0}"
    )
    print(f"  latency under load: {percentiles(latencies)}")


def identical_cold(daemon: Daemon, count: int = 100) -> None:
    async def run() -> list[compile_pb2.CompileResponse]:
        async with grpc.aio.insecure_channel(daemon.target) as channel:
            stub = compile_pb2_grpc.CompileServiceStub(channel)
            cold = request(b=512, target="sm_100")
            calls = [stub.Compile(cold, timeout=RPC_TIMEOUT_S) for _ in range(count)]
            return await asyncio.gather(*calls)

    before = daemon.compiler_runs(), daemon.tileiras_runs()
    start = time.perf_counter()
    replies = asyncio.run(run())
    elapsed = (time.perf_counter() - start) * 1000.0
    runs = daemon.compiler_runs() - before[0]
    tileiras_runs = daemon.tileiras_runs() - before[1]
    outcomes = Counter(compile_pb2.CacheOutcome.Name(r.cache) for r in replies)
    ok = sum(r.ok for r in replies)
    verdict = "OK" if runs == tileiras_runs == 1 else "FAILED"
    print(
        f"  {count} identical concurrent cold requests: {ok} ok in {elapsed:.0f} ms, "
        f"tileiras runs = {tileiras_runs}, compiler runs = {runs} (metrics) [{verdict}], "
        f"outcomes {dict(outcomes)}"
    )


def mixed_load(daemon: Daemon, clients: int, seconds: float) -> None:
    rng = random.Random(5)

    def make() -> compile_pb2.CompileRequest:
        if rng.random() < 0.9:
            return request()
        return request(b=rng.choice(TILE_SIZES), target=rng.choice(TARGETS), skip_cache=True)

    with grpc.insecure_channel(daemon.target) as channel:  # the hit kernel is cached
        compile_pb2_grpc.CompileServiceStub(channel).Compile(request(), timeout=RPC_TIMEOUT_S)
    rss_before = daemon.rss_mib()
    runs_before = daemon.compiler_runs(), daemon.tileiras_runs()
    latencies, errors, total = asyncio.run(_closed_loop(daemon.target, clients, seconds, make))
    rss_after = daemon.rss_mib()
    runs = daemon.compiler_runs() - runs_before[0]
    tileiras_runs = daemon.tileiras_runs() - runs_before[1]
    print(
        f"  mixed load (90% hits), {clients} clients, {seconds:.0f} s: {total} requests "
        f"({total / seconds:.0f}/s), {runs} compiles ({tileiras_runs} ran tileiras), "
        f"errors {sum(errors.values())} {dict(errors) or ''}"
    )
    print(f"  latency: {percentiles(latencies)}")
    print(f"  server RSS: {rss_before:.1f} MiB before, {rss_after:.1f} MiB after")


def replicas_with_redis(kernels: int) -> None:
    binary = shutil.which("redis-server")
    if binary is None:
        print("  skipped: redis-server is not installed")
        return
    port = _free_port()
    folder = tempfile.mkdtemp(prefix="service-load-redis-")
    redis = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", folder],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.3)
        url = f"redis://127.0.0.1:{port}/0"
        with daemons(2, "--cache", url, "--max-queued", "64") as (a, b):
            wanted = [(size, target) for target in TARGETS for size in TILE_SIZES][:kernels]

            async def run() -> list[compile_pb2.CompileResponse]:
                async with (
                    grpc.aio.insecure_channel(a.target) as ca,
                    grpc.aio.insecure_channel(b.target) as cb,
                ):
                    stubs = [compile_pb2_grpc.CompileServiceStub(c) for c in (ca, cb)]
                    calls = [
                        stub.Compile(request(b=size, target=target), timeout=RPC_TIMEOUT_S)
                        for size, target in wanted
                        for stub in stubs
                    ]
                    return await asyncio.gather(*calls)

            start = time.perf_counter()
            replies = asyncio.run(run())
            elapsed = (time.perf_counter() - start) * 1000.0
            runs = a.compiler_runs() + b.compiler_runs()
            tileiras_runs = a.tileiras_runs() + b.tileiras_runs()
            ok = sum(r.ok for r in replies)
            verdict = "OK" if runs == tileiras_runs == len(wanted) else "FAILED"
            print(
                f"  two replicas, one redis: {len(wanted)} kernels asked of both at once, "
                f"{ok}/{len(replies)} ok in {elapsed:.0f} ms, compiles across both = {runs}, "
                f"tileiras runs = {tileiras_runs} [{verdict}] "
                f"(a: {a.compiler_runs()}, b: {b.compiler_runs()})"
            )
    finally:
        redis.terminate()
        redis.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)


def flood(daemon: Daemon, count: int) -> None:
    with grpc.insecure_channel(daemon.target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)

        def health_ms() -> float:
            start = time.perf_counter()
            stub.Check(health_pb2.HealthCheckRequest(), timeout=10)
            return (time.perf_counter() - start) * 1000.0

        for _ in range(20):
            health_ms()
        print(f"  RSS before: {_rss_mib(daemon.process.pid):.0f} MiB")
        for round_ in (1, 2):
            outcomes, samples = flood_from_subprocess(daemon.target, ADD_PATH, count, health_ms)
            time.sleep(2)
            print(f"  flood {round_}: {dict(Counter(outcomes))}")
            print(f"  health during it: {percentiles(samples)}")
            print(f"  RSS after flood {round_}: {_rss_mib(daemon.process.pid):.0f} MiB")


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hits", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--throughput-seconds", type=float, default=10.0)
    parser.add_argument("--mixed-seconds", type=float, default=60.0)
    parser.add_argument("--mixed-clients", type=int, default=8)
    parser.add_argument("--replica-kernels", type=int, default=12)
    parser.add_argument("--skip-redis", action="store_true")
    parser.add_argument("--flood", type=int, default=200)
    args = parser.parse_args()
    print(f"cutile-serve load, {os.cpu_count()} CPUs, loopback")
    with daemons() as (daemon,):
        print("1. cache hits")
        hit_latency(daemon, args.hits)
        print("2. hit throughput")
        hit_throughput(daemon, args.clients, args.throughput_seconds)
        print("3. single-flight")
        identical_cold(daemon)
        print("4. mixed load")
        mixed_load(daemon, args.mixed_clients, args.mixed_seconds)
    print("5. replicas sharing redis")
    if args.skip_redis:
        print("  skipped (--skip-redis)")
    else:
        replicas_with_redis(args.replica_kernels)
    print("6. a flood of 1 MiB requests")
    with daemons(1, "--workers", "1", "--max-queued", "2") as (daemon,):
        flood(daemon, args.flood)


if __name__ == "__main__":
    main()
