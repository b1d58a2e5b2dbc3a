"""service.server.daemon: the real `cutile-serve` process, its arguments and its server factory."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from protos.generated.cutile.compile.v1 import compile_pb2, compile_pb2_grpc
from service.server.daemon import create_server, parse_args
from service.server.servicer import SERVICE_NAME

REPO_ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 30


def _start_daemon(*args: str) -> tuple[subprocess.Popen[str], int]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "service.server.daemon", *args],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = _read_line(proc, START_TIMEOUT_S)
    prefix = "cutile-serve listening on 127.0.0.1:"
    if not line.startswith(prefix):
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"unexpected first line {line!r}; stderr:\n{err}")
    return proc, int(line[len(prefix) :])


def _read_line(proc: subprocess.Popen[str], timeout_s: float) -> str:
    """The first stdout line, without hanging the test if the daemon never prints it."""
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout_s)
    return lines[0].strip() if lines else ""


def test_daemon_serves_compiles_and_stops_on_sigterm(tileiras, add_rs: Path, tmp_path) -> None:
    cache_dir = tmp_path / "cache"
    proc, port = _start_daemon("--port", "0", "--cache-dir", str(cache_dir), "--workers", "2")
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            for service in ("", SERVICE_NAME):
                reply = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
                assert reply.status == health_pb2.HealthCheckResponse.SERVING
            request = compile_pb2.CompileRequest(
                sources=[compile_pb2.SourceFile(name="add.rs", text=add_rs.read_text())],
                entry="add",
                generics={"B": "128"},
                target="sm_90",
            )
            response = compile_pb2_grpc.CompileServiceStub(channel).Compile(request, timeout=60)
        assert response.ok, [d.rendered for d in response.diagnostics]
        assert list(cache_dir.rglob("*.artifact"))  # the daemon used --cache-dir
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            _, stderr = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert proc.returncode == 0, stderr
    assert "outcome=miss" in stderr  # the per-request log line
    assert "Traceback" not in stderr


def test_sigint_also_stops_cleanly(tmp_path) -> None:
    proc, _ = _start_daemon("--port", "0", "--no-cache", "--grace", "1")
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 0, stderr


def test_busy_port_fails_to_start() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(OSError):
            asyncio.run(create_server(f"127.0.0.1:{port}", None))


def test_arguments() -> None:
    args = parse_args([])
    assert (args.host, args.port, args.cache_dir, args.no_cache) == (
        "127.0.0.1",
        50051,
        None,
        False,
    )
    assert (parse_args(["--grace", "0"]).grace, parse_args(["--grace", "2.5"]).grace) == (0, 2.5)
    assert parse_args(["--worker-memory", "512M"]).worker_memory == 512 << 20
    args = parse_args(["--port", "0", "--cache-dir", "/tmp/c", "--workers", "3"])
    assert (args.port, str(args.cache_dir), args.workers) == (0, "/tmp/c", 3)
    args = parse_args(["--cache", "redis://u:p@127.0.0.1:6379/2", "--cache-ttl", "60"])
    assert (args.cache, args.cache_ttl, args.memory_cache_bytes) == (
        "redis://u:p@127.0.0.1:6379/2",
        60,
        64 << 20,
    )
    bad_arguments = (
        ["--port", "70000"],
        ["--workers", "0"],
        ["--cache-dir", "x", "--no-cache"],
        ["--cache", "http://127.0.0.1:6379"],
        ["--cache", "redis://127.0.0.1:6379/0", "--no-cache"],
        ["--grace", "nan"],
        ["--grace", "inf"],
        ["--grace", "-5"],
        ["--worker-memory", "300M"],  # too little for a worker to start a compile
        ["--worker-memory", "inf"],
        # past what the server can use: each once failed every RPC after a clean start
        ["--max-queued", "4294967296"],
        ["--compile-cpu-seconds", "9223372036854775808"],
        ["--worker-memory", "1e30"],
        ["--tileiras-memory-total", "1e30"],
        ["--workers", "4294967296"],
        ["--cache-ttl", str(10**30)],
        ["--workers", "many"],
    )
    for bad in bad_arguments:
        with pytest.raises(SystemExit) as caught:
            parse_args(bad)
        assert caught.value.code == 2


def test_importing_the_service_turns_off_grpc_fork_handlers() -> None:
    assert os.environ.get("GRPC_ENABLE_FORK_SUPPORT") is not None


def test_busy_port_exits_1_with_a_message() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "service.server.daemon", "--port", str(port), "--no-cache"],
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_S,
        )
    assert result.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr


def test_shutdown_past_grace_kills_tileiras(add_rs: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "tileiras.pid"
    script = tmp_path / "tileiras"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release 13.5, V13.5.37";'
        " exit 0; fi\n"
        f"echo $$ > {pid_file}\n"
        "exec sleep 60\n"
    )
    script.chmod(0o755)
    cache_dir = tmp_path / "cache"
    proc, port = _start_daemon(
        "--port", "0", "--tileiras", str(script), "--grace", "0.5", "--cache-dir", str(cache_dir)
    )
    request = compile_pb2.CompileRequest(
        sources=[compile_pb2.SourceFile(name="add.rs", text=add_rs.read_text())],
        entry="add",
        generics={"B": "128"},
        target="sm_90",
    )
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = compile_pb2_grpc.CompileServiceStub(channel).Compile.future(request, timeout=60)
        end = time.monotonic() + 30
        while not (pid_file.exists() and pid_file.read_text().strip()):
            assert time.monotonic() < end, "tileiras never started"
            time.sleep(0.02)
        pid = int(pid_file.read_text())
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=20)
        with pytest.raises(grpc.RpcError):
            call.result(timeout=20)  # answered (cancelled by the shutdown), not left hanging
    assert proc.returncode == 0, stderr
    # the killed worker takes its tileiras along (its death signal), or the scan of its temp
    # root after it does
    end = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and "State:\tZ" not in _status(pid):
        assert time.monotonic() < end, "tileiras outlived the daemon"
        time.sleep(0.02)
    assert not list(cache_dir.rglob("*.artifact"))


def _status(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return "State:\tZ"


def test_sigterm_during_50_in_flight_compiles_answers_them_all(tileiras, add_rs: Path) -> None:
    proc, port = _start_daemon(
        "--port", "0", "--no-cache", "--workers", "2", "--max-queued", "60", "--grace", "120"
    )
    text = add_rs.read_text()
    sizes = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
    targets = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_100")
    requests = [
        compile_pb2.CompileRequest(
            sources=[compile_pb2.SourceFile(name="add.rs", text=text)],
            entry="add",
            generics={"B": str(size)},
            target=target,
        )
        for size in sizes
        for target in targets
    ]
    assert len(requests) == 50
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = compile_pb2_grpc.CompileServiceStub(channel)
            calls = [stub.Compile.future(r, timeout=300) for r in requests]
            time.sleep(0.5)  # all sent; a few compiling, the rest queued
            proc.send_signal(signal.SIGTERM)
            responses = [call.result(timeout=300) for call in calls]
        _, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert all(r.ok for r in responses), [r.diagnostics for r in responses if not r.ok][:1]
    assert proc.returncode == 0, stderr


def test_daemon_with_redis_shares_compiles(tileiras, add_rs: Path, redis_server, tmp_path) -> None:
    url = redis_server.url
    first, port_a = _start_daemon("--port", "0", "--cache-dir", str(tmp_path / "a"), "--cache", url)
    second, port_b = _start_daemon(
        "--port", "0", "--cache-dir", str(tmp_path / "b"), "--cache", url
    )
    request = compile_pb2.CompileRequest(
        sources=[compile_pb2.SourceFile(name="add.rs", text=add_rs.read_text())],
        entry="add",
        generics={"B": "128"},
        target="sm_90",
    )
    try:
        replies = []
        for port in (port_a, port_b):
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = compile_pb2_grpc.CompileServiceStub(channel)
                replies.append(stub.Compile(request, timeout=60))
    finally:
        for proc in (first, second):
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=20)
    assert [r.cache for r in replies] == [
        compile_pb2.CACHE_OUTCOME_MISS,
        compile_pb2.CACHE_OUTCOME_HIT,
    ]
    assert replies[1].artifact.cubin == replies[0].artifact.cubin
