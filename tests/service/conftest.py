"""Fixtures for the service tests: sample domain objects, fakes, a real server in a thread.

Test modules import nothing from here: everything shared is a fixture (`start_daemon` runs
real `cutile-serve` processes). Tests that use the
`tileiras` fixture (tests/conftest.py) run the real compiler and the real tileiras, and
skip only when tileiras is not installed; they are marked `tileiras`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from lowering.contract import (
    AbiSlot,
    Assumption,
    AssumptionKind,
    ContractParam,
    LaunchContract,
    ParamKind,
    SafetySummary,
    SlotRole,
)
from lowering.pipeline import CompileRequest, CompileResult, Stage, Timings
from lowering.tileiras import ADDRESS_SPACE_CAP
from parser.codes import OUTPUT_RANK
from parser.diagnostics import Diagnostic, error
from parser.spans import SourceFile, Span
from protos.generated.cutile.compile.v1 import compile_pb2, compile_pb2_grpc
from tests.fake_cubin import fake_cubin

REPO_ROOT = Path(__file__).resolve().parents[2]
ADD_RS = REPO_ROOT / "rust_examples" / "add.rs"
T = TypeVar("T")

# Storing through a shared reference: E0596 at bad.rs:8:9.
STORE_THROUGH_SHARED = """\
#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn bad<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let tx = x.load_like(z);
        x.store(tx);
    }
}
"""


def sample_contract(function: str = "add", sm: str = "sm_90") -> LaunchContract:
    return LaunchContract(
        module="kernel",
        function=function,
        entry_symbol=f"{function}_B128",
        source_sha256="ab" * 32,
        compiler_version="0.1.0",
        sm=sm,
        tileiras_version="13.5",
        bytecode_version="13.3",
        opt_level=3,
        host_arch="x86_64",
        params=(
            ContractParam(0, "z", ParamKind.TENSOR_OUT, "f32", 1, (-1,), (128,)),
            ContractParam(1, "x", ParamKind.TENSOR_IN, "f32", 1, (-1,)),
            ContractParam(2, "n", ParamKind.SCALAR, "i32"),
        ),
        abi=(
            AbiSlot(0, SlotRole.PTR, 0, "u64", 0, 8),
            AbiSlot(0, SlotRole.DIM, 0, "i32", 8, 4),
            AbiSlot(0, SlotRole.STRIDE, 0, "i32", 12, 4),
            AbiSlot(0, SlotRole.PART_DIM, 0, "i32", 16, 4),
            AbiSlot(0, SlotRole.PART_STRIDE, 0, "i32", 20, 4),
            AbiSlot(1, SlotRole.PTR, 0, "u64", 24, 8),
            AbiSlot(2, SlotRole.VALUE, 0, "i32", 32, 4),
        ),
        grid_outputs=(0,),
        param_buffer_bytes=36,
        assumptions=(
            Assumption(0, AssumptionKind.BASE_ALIGN, 0, 16),
            Assumption(1, AssumptionKind.STRIDE_ONE, 0, 0),
        ),
        safety=SafetySummary(checks_discharged=2, checks_hoisted_to_host=1),
        generics=(("B", "128"),),
    )


def error_diagnostic(name: str = "k.rs", text: str = "fn a() {\n    let x = 1;\n}\n") -> Diagnostic:
    """An error whose primary span is `x` on line 2, column 9."""
    file = SourceFile(name, text)
    start = text.index("x")
    return error(OUTPUT_RANK, "a bad thing", Span(file, start, start + 1), "here")


@dataclass(frozen=True)
class FakeAssembler:
    version: str = "13.5-fake"
    fingerprint: str = "fake-fingerprint"
    memory_cap: int = ADDRESS_SPACE_CAP

    def assemble(self, *args: object, **kwargs: object) -> bytes:
        raise AssertionError("the fake compile function never assembles")


@dataclass
class FakeCompiler:
    """A `compile_fn` that counts calls and returns a canned result or raises."""

    result: CompileResult | None = None
    raises: BaseException | None = None
    calls: list[CompileRequest] = field(default_factory=list)

    def __call__(self, request: CompileRequest, **kwargs: object) -> CompileResult:
        self.calls.append(request)
        if self.raises is not None:
            raise self.raises
        if self.result is not None:
            return self.result
        function = request.entry.split("::")[-1]
        return CompileResult(
            diagnostics=(),
            stage_reached=Stage.CUBIN,
            cubin=fake_cubin(request.arch, f"{function}_B128", b"fake cubin"),
            contract=sample_contract(function, request.arch),
            timings=Timings(1.0, 2.0, 3.0),
        )


@pytest.fixture
def fake_compiler() -> FakeCompiler:
    return FakeCompiler()


@pytest.fixture
def fake_assembler() -> FakeAssembler:
    return FakeAssembler()


@pytest.fixture
def make_contract() -> Callable[..., LaunchContract]:
    return sample_contract


@pytest.fixture
def make_error() -> Callable[..., Diagnostic]:
    return error_diagnostic


@pytest.fixture
def add_rs() -> Path:
    return ADD_RS


@pytest.fixture
def bad_kernel_source() -> str:
    return STORE_THROUGH_SHARED


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests here that run the real tileiras (`-m "not tileiras"` deselects them)."""
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here) and "tileiras" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.tileiras)


class ServerThread:
    """A real grpc.aio server (`service.server.daemon.create_server`) on its own event loop."""

    def __init__(self, engine: object, **options: object) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.server, self.port = self._run(self._start(engine, options))

    async def _start(self, engine: object, options: dict) -> tuple[grpc.aio.Server, int]:
        from service.server.daemon import create_server

        server, port = await create_server("127.0.0.1:0", engine, **options)
        await server.start()
        return server, port

    def _run(self, coro: Coroutine[object, object, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=30)

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        self._run(self.server.stop(None))
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()


@pytest.fixture
def start_server() -> Iterator[Callable[..., ServerThread]]:
    started: list[ServerThread] = []

    def start(engine: object, **options: object) -> ServerThread:
        server = ServerThread(engine, **options)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


# --------------------------------------------------------------------------- redis


class RedisServer:
    """A private `redis-server` on a free loopback port (no persistence)."""

    def __init__(self, binary: str, workdir: Path) -> None:
        self.port = _free_port()
        self.process = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(workdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._wait_ready()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.process.returncode}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as conn,
            ):
                conn.sendall(b"PING\r\n")
                if conn.recv(16).startswith(b"+PONG"):
                    return
            time.sleep(0.02)
        raise RuntimeError("redis-server did not start within 10 s")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A private redis-server; skips where the binary is absent, except in CI (fails)."""
    binary = shutil.which("redis-server")
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("redis-server is not installed; .ci/run installs it")
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    workdir = tmp_path / "redis"
    workdir.mkdir()
    server = RedisServer(binary, workdir)
    yield server
    server.stop()


@pytest.fixture
def unused_redis_url() -> str:
    """A Redis URL where nothing listens."""
    return f"redis://127.0.0.1:{_free_port()}/0"


# --------------------------------------------------------------------------- daemons


class Daemon:
    """A real `cutile-serve` process on a free port; its stderr is kept for the test."""

    def __init__(self, args: tuple[str, ...], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "service.server.daemon", "--port", "0", *args],
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT), **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stderr = ""
        line = _first_line(self.proc, 60)
        prefix = "cutile-serve listening on 127.0.0.1:"
        if not line.startswith(prefix):
            self.proc.kill()
            _, err = self.proc.communicate()
            raise RuntimeError(f"the daemon did not start ({line!r}):\n{err}")
        self.port = int(line[len(prefix) :])
        self.channel = grpc.insecure_channel(self.target)

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def compile(self, request: compile_pb2.CompileRequest, timeout: float = 60):  # type: ignore[no-untyped-def]
        return compile_pb2_grpc.CompileServiceStub(self.channel).Compile(request, timeout=timeout)

    def health_ms(self) -> float:
        """The round trip of one health check, in ms (SERVING asserted)."""
        stub = health_pb2_grpc.HealthStub(self.channel)
        started = time.perf_counter()
        reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
        elapsed = (time.perf_counter() - started) * 1000
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        return elapsed

    def children(self) -> list[int]:
        """The daemon's child processes (its compile workers)."""
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                    if int(fields[1]) == self.proc.pid:
                        found.append(int(entry.name))
        return found

    def stop(self, timeout: float = 30) -> str:
        """SIGTERM, wait, and return stderr; the exit status is in `proc.returncode`."""
        self.channel.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            _, self.stderr = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, self.stderr = self.proc.communicate()
            raise
        return self.stderr


def _first_line(proc: subprocess.Popen[str], timeout_s: float) -> str:
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout_s)
    return lines[0].strip() if lines else ""


@pytest.fixture
def start_daemon() -> Iterator[Callable[..., Daemon]]:
    started: list[Daemon] = []

    def start(*args: str, env: dict[str, str] | None = None) -> Daemon:
        daemon = Daemon(args, env)
        started.append(daemon)
        return daemon

    yield start
    for daemon in started:
        if daemon.proc.poll() is None:
            daemon.proc.kill()
            daemon.proc.communicate()
