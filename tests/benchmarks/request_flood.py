"""A flood of large `Compile` requests, sent from a process of its own (so the sender's
CPU use does not show in the receiver's latency figures).

    python -m tests.benchmarks.request_flood TARGET KERNEL.rs COUNT

sends COUNT distinct requests of just under 1 MiB each (the kernel padded with comment
lines up to the service's source limit) from 64 threads and prints, as JSON, each one's
outcome: "ok", "diagnostic", or the gRPC status name. `flood_from_subprocess` runs it and
samples a health check meanwhile; `tests.benchmarks.service_load` and the fault suite use it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc

from protos.generated.cutile.compile.v1 import compile_pb2, compile_pb2_grpc

REPO_ROOT = Path(__file__).resolve().parents[2]
SOURCE_LIMIT = 1 << 20
SENDERS = 64


def padded(kernel: str, index: int) -> str:
    """`kernel` with comment lines up to the source limit, made distinct by `index`."""
    line = "// " + "x" * 1020 + "\n"
    return f"{kernel}// {index:08}\n" + line * ((SOURCE_LIMIT - len(kernel) - 16) >> 10)


def send_all(target: str, kernel: str, count: int) -> list[str]:
    options = [("grpc.max_send_message_length", 8 << 20)]
    with grpc.insecure_channel(target, options=options) as channel:
        stub = compile_pb2_grpc.CompileServiceStub(channel)

        def send(index: int) -> str:
            source = compile_pb2.SourceFile(name="k.rs", text=padded(kernel, index))
            request = compile_pb2.CompileRequest(
                sources=[source], entry="add", generics={"B": "128"}, target="sm_90"
            )
            try:
                return "ok" if stub.Compile(request, timeout=120).ok else "diagnostic"
            except grpc.RpcError as error:
                return error.code().name

        with ThreadPoolExecutor(SENDERS) as pool:
            return list(pool.map(send, range(count)))


def flood_from_subprocess(
    target: str, kernel: Path, count: int, probe: Callable[[], float]
) -> tuple[list[str], list[float]]:
    """The outcomes of `count` requests sent by a child process, and `probe()`'s results
    (health round trips in ms, say), sampled every 20 ms while they were in flight."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    module = "tests.benchmarks.request_flood"
    command = [sys.executable, "-m", module, target, str(kernel), str(count)]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env, cwd=REPO_ROOT)
    samples = []
    while child.poll() is None:
        samples.append(probe())
        time.sleep(0.02)
    return json.loads(child.stdout.read()), samples


if __name__ == "__main__":
    target, kernel_path, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    print(json.dumps(send_all(target, Path(kernel_path).read_text(), count)))
