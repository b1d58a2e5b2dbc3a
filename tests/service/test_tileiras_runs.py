"""service.compile.tileiras_runs: a compile's tileiras is killed when its callers are all gone.

A fake tileiras (a shell script) answers --version and otherwise records its pid and
sleeps, standing in for a hung assembler.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import grpc
import pytest

from lowering.tileiras import Tileiras, TileirasError
from protos.generated.cutile.compile.v1 import compile_pb2, compile_pb2_grpc
from service.cache.disk import DiskCache
from service.compile.engine import CompileEngine
from service.compile.tileiras_runs import KillableTileiras, processes_under

WAIT_S = 20


@pytest.fixture
def hung_tileiras(tmp_path: Path) -> tuple[Tileiras, Path]:
    """(a Tileiras whose runs hang, the file each run writes its pid to)."""
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
    return Tileiras(script), pid_file


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "State:\tZ" not in status.read_text()


def _wait_for(path: Path) -> int:
    end = time.monotonic() + WAIT_S
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < end, "tileiras never started"
        time.sleep(0.02)
    return int(path.read_text())


def test_kill_ends_a_running_tileiras(hung_tileiras) -> None:
    base, pid_file = hung_tileiras
    runner = KillableTileiras(base)
    assert runner.fingerprint == base.fingerprint
    errors: list[BaseException] = []

    def assemble() -> None:
        try:
            runner.assemble(b"bytecode", arch="sm_90")
        except TileirasError as exc:
            errors.append(exc)

    thread = threading.Thread(target=assemble)
    thread.start()
    pid = _wait_for(pid_file)
    assert processes_under(runner._root)
    assert runner.kill() == 1
    thread.join(WAIT_S)
    assert not thread.is_alive()
    assert "SIGKILL" in str(errors[0])
    assert not _alive(pid)
    runner.cleanup()


def test_a_killed_run_does_not_start_tileiras(hung_tileiras) -> None:
    base, pid_file = hung_tileiras
    runner = KillableTileiras(base)
    runner.kill()
    with pytest.raises(TileirasError, match="cancelled"):
        runner.assemble(b"bytecode", arch="sm_90")
    assert not pid_file.exists()
    runner.cleanup()


def test_a_kill_between_the_check_and_the_start_still_ends_the_run(
    hung_tileiras, monkeypatch
) -> None:
    base, _ = hung_tileiras
    runner = KillableTileiras(base)
    looked = threading.Event()
    real = runner._killed.is_set

    def is_set() -> bool:  # `assemble` looks (not yet killed), then the kill comes
        if not looked.is_set():
            looked.set()
            runner.kill()
            return False
        return real()

    monkeypatch.setattr(runner._killed, "is_set", is_set)
    started = time.monotonic()
    with pytest.raises(TileirasError, match="SIGKILL"):
        runner.assemble(b"bytecode", arch="sm_90")  # the hung tileiras would sleep 60 s
    assert time.monotonic() - started < WAIT_S
    runner.cleanup()


def test_a_cancelled_compile_kills_tileiras_and_caches_nothing(
    start_server, hung_tileiras, add_rs: Path, tmp_path: Path
) -> None:
    base, pid_file = hung_tileiras
    cache = DiskCache(tmp_path / "cache")
    server = start_server(CompileEngine(base, cache=cache))
    request = compile_pb2.CompileRequest(
        sources=[compile_pb2.SourceFile(name="add.rs", text=add_rs.read_text())],
        entry="add",
        generics={"B": "128"},
        target="sm_90",
    )
    with grpc.insecure_channel(server.target) as channel:
        call = compile_pb2_grpc.CompileServiceStub(channel).Compile.future(request, timeout=60)
        pid = _wait_for(pid_file)
        call.cancel()  # the only caller leaves
        end = time.monotonic() + WAIT_S
        while _alive(pid):
            assert time.monotonic() < end, "tileiras was not killed"
            time.sleep(0.02)
    assert not list((tmp_path / "cache").rglob("*.artifact"))
