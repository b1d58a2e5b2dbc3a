"""service.compile.worker_pool: compiles in isolated worker processes that the server can lose,
kill and replace without harm."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lowering.pipeline import CompileRequest
from parser.spans import SourceFile
from service.cache.disk import DiskCache
from service.compile.faults import CompileFault
from service.compile.worker import WorkerLimits
from service.compile.worker_pool import WorkerPool, clean_orphans, private_runs_root, runs_root
from tests.fake_cubin import fake_cubin
from tests.service import worker_targets

REQUEST = CompileRequest(sources=(SourceFile("k.rs", "mod k {}"),), entry="k")
ADD = (Path(__file__).resolve().parents[2] / "rust_examples" / "add.rs").read_text()


def _pool(target, size: int = 1, **limits: int) -> WorkerPool:  # type: ignore[no-untyped-def]
    pool = WorkerPool(size, "/nonexistent/tileiras", WorkerLimits(**limits), target=target)
    assert pool.wait_ready(), "the workers did not start"
    return pool


@pytest.fixture
def pools() -> Iterator[list[WorkerPool]]:
    made: list[WorkerPool] = []
    yield made
    for pool in made:
        pool.close()


def test_a_compile_asks_the_servers_cache_and_stores_there(pools, tmp_path: Path) -> None:
    pool = _pool(worker_targets.answering)
    pools.append(pool)
    cache = DiskCache(tmp_path)
    seen: list[str] = []
    result = pool.run(REQUEST, cache, observer=seen.append)
    assert result.ok and result.cubin == fake_cubin("sm_90")
    assert cache.get("ab" * 32).cubin == fake_cubin()  # stored through the parent
    pool.run(REQUEST, cache, observer=seen.append)
    assert seen == ["miss", "hit"]


def test_a_crashed_worker_is_internal_and_replaced(pools) -> None:
    pool = _pool(worker_targets.crashing)
    pools.append(pool)
    with pytest.raises(CompileFault) as raised:
        pool.run(REQUEST, None)
    assert raised.value.kind == "crashed" and "SIGSEGV" in raised.value.message
    assert pool.wait_ready() and pool.replaced == 1
    with pytest.raises(CompileFault):  # the replacement serves (and crashes) again
        pool.run(REQUEST, None)
    assert pool.replaced == 2


def test_a_compile_past_its_cpu_budget_is_the_inputs_fault(pools) -> None:
    pool = _pool(worker_targets.spinning)
    pools.append(pool)
    started = time.monotonic()
    with pytest.raises(CompileFault) as raised:
        pool.run(REQUEST, None)
    assert raised.value.kind == "costly"
    assert time.monotonic() - started < 20


def test_callers_gone_kills_the_worker_and_its_tileiras(pools) -> None:
    pool = _pool(worker_targets.hanging_tileiras)
    pools.append(pool)
    marker = pool.root / "tileiras.pid"
    started = time.monotonic()

    def wanted() -> bool:
        return not marker.exists() or time.monotonic() - started < 0.5

    with pytest.raises(CompileFault) as raised:
        pool.run(REQUEST, None, wanted)
    assert raised.value.kind == "cancelled"
    tileiras = int(marker.read_text())
    assert _gone(tileiras)
    assert pool.wait_ready() and pool.replaced == 1


def test_close_kills_everything_and_removes_the_temp_root(pools) -> None:
    pool = _pool(worker_targets.answering, size=2)
    workers = [w.process for w in list(pool._idle.queue)]
    pool.close()
    assert all(_gone(p.pid) for p in workers)
    assert not pool.root.exists()


def test_what_dead_servers_left_is_removed_at_start(tmp_path: Path) -> None:
    dead = tmp_path / "999999999-abc"  # no such pid
    (dead / "worker-1" / "tileiras-x").mkdir(parents=True)
    alive = tmp_path / f"{os.getpid()}-def"
    alive.mkdir()
    assert clean_orphans(tmp_path) == 1
    assert not dead.exists() and alive.exists()


def test_a_planted_link_is_never_followed_to_kill_or_delete(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep").write_text("mine")
    runs = tmp_path / "runs"
    runs.mkdir(mode=0o700)
    (runs / "999999999-planted").symlink_to(victim)  # a dead "server" pointing elsewhere
    bystander = subprocess.Popen(["sleep", "30"], cwd=victim)
    try:
        assert clean_orphans(runs) == 0
        time.sleep(0.1)
        assert bystander.poll() is None  # still running
        assert (victim / "keep").read_text() == "mine"
    finally:
        bystander.kill()
        bystander.wait()


def test_a_runs_root_others_may_write_is_refused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    root = runs_root()
    root.mkdir(mode=0o700)
    root.chmod(0o777)  # as another user's squatted folder would be
    with pytest.raises(PermissionError, match="not a private folder of this user"):
        WorkerPool(1, "/bin/true")
    with pytest.raises(PermissionError):
        clean_orphans()
    root.chmod(0o700)
    assert private_runs_root() == root


@pytest.mark.tileiras
def test_the_real_worker_compiles_a_kernel(pools, tileiras, tmp_path: Path) -> None:
    pool = WorkerPool(1, tileiras.path)
    pools.append(pool)
    request = CompileRequest((SourceFile("add.rs", ADD),), "add", (("B", "128"),))
    result = pool.run(request, DiskCache(tmp_path))
    assert result.ok, result.diagnostics
    assert result.contract.entry_symbol in result.cubin.decode("latin-1")
    assert str(pool.root).startswith(str(runs_root()))


def _gone(pid: int) -> bool:
    for _ in range(100):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split()[2]
        except FileNotFoundError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def test_a_worker_killed_from_two_threads_at_once_dies_once(tmp_path: Path) -> None:
    """A stopped compile kills its worker while the pool's `close` kills every worker: the
    second kill is a no-op (closing the connection twice raised EBADF at shutdown)."""
    import multiprocessing
    import threading

    from service.compile.worker_pool import Worker

    for round_ in range(20):
        ours, theirs = multiprocessing.Pipe()
        process = multiprocessing.get_context("spawn").Process(target=time.sleep, args=(60,))
        process.start()
        worker = Worker(process, ours, str(tmp_path / f"run{round_}"))
        start = threading.Barrier(2)
        errors: list[BaseException] = []

        def kill(
            worker: Worker = worker,
            start: threading.Barrier = start,
            errors: list[BaseException] = errors,
        ) -> None:
            start.wait()
            try:
                worker.kill()
            except BaseException as exc:  # any is the finding
                errors.append(exc)

        threads = [threading.Thread(target=kill) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        theirs.close()
        assert errors == [] and process.exitcode is not None and ours.closed
