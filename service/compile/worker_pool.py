"""The server's compile workers: isolated processes it can kill and replace.

`WorkerPool(size, tileiras_path)` keeps `size` worker processes (`service.compile.worker`)
ready. `pool.run(request, cache, may_continue)` hands one compile to an idle worker and
serves its content-cache questions from `cache` until it answers; it returns a
`CompileResult` like `compile_kernel`'s, or raises `CompileFault`
(`service.compile.faults`):

- the worker died: by SIGXCPU (past its CPU budget) or out of memory, the request's input
  was too costly: a `CompileFault("costly", ...)`, which the server reports as the
  request's own error; by any other signal (a crash): `CompileFault("crashed", ...)`,
  INTERNAL;
- tileiras failed in a way that says nothing about the kernel (killed, timed out, no valid
  cubin): `CompileFault("tileiras", ...)`, UNAVAILABLE (retried elsewhere or later);
- `may_continue()` turned false (every caller gone, or past their latest deadline): the
  worker and its tileiras are killed at once: `CompileFault("cancelled", ...)`.

A worker that dies or is killed is replaced in the background. Every worker's tileiras runs
in that worker's temp root under `runs_root()/<server pid>-*/`, so killing a worker also
kills its tileiras, and a server starting after a crash removes what dead servers left
there (`clean_orphans`). Workers are started by one long-lived thread of the pool: a
worker dies with the thread that started it (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import queue
import shutil
import signal
import stat
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path

from lowering.pipeline import CompileRequest, CompileResult, Stage
from service.cache.store import ArtifactCache
from service.compile import worker as compile_worker
from service.compile.faults import CompileFault
from service.compile.tileiras_runs import kill_runs_under
from service.compile.worker import (
    CacheAsk,
    CacheReply,
    CacheStore,
    CompileJob,
    JobDone,
    Ready,
    WorkerLimits,
)

log = logging.getLogger(__name__)

POLL_S = 0.02  # how often a waiting run looks at its callers
START_TIMEOUT_S = 60.0
_CONTEXT = multiprocessing.get_context("spawn")  # no fork of a threaded gRPC server


def runs_root() -> Path:
    """Where every server of this user keeps its workers' temp roots."""
    return Path(tempfile.gettempdir()) / f"cutile-serve-runs-{os.getuid()}"


def private_runs_root() -> Path:
    """`runs_root()`, made if absent; PermissionError unless it is a folder of this user that
    no one else may write (a server kills the processes it finds under it, so a folder that
    another user made or can write could point it at anyone's)."""
    root = runs_root()
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.lstat(root)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise PermissionError(
            f"{root} is not a private folder of this user (owner uid {info.st_uid}, mode "
            f"{stat.S_IMODE(info.st_mode):o}): remove it, or point TMPDIR elsewhere"
        )
    return root


@dataclass(eq=False)
class Worker:
    process: multiprocessing.process.BaseProcess
    conn: Connection
    temp_root: str
    _killed: threading.Lock = field(default_factory=threading.Lock, repr=False)  # held once killed

    def kill(self) -> None:
        """SIGKILL the worker and every tileiras group running in its temp root, once: a
        stopped compile and the pool's `close` may kill the same worker at the same time
        (closing its connection twice raised EBADF out of the daemon's shutdown)."""
        if not self._killed.acquire(blocking=False):
            return
        with contextlib.suppress(ProcessLookupError, AttributeError):
            if self.process.pid is not None:
                os.kill(self.process.pid, signal.SIGKILL)
        self.process.join(timeout=5)
        killed = kill_runs_under(self.temp_root)  # after: a dead worker starts no more runs
        if killed:
            log.info("killed %d tileiras process group(s) of a stopped compile", killed)
        self.conn.close()
        shutil.rmtree(self.temp_root, ignore_errors=True)


class WorkerPool:
    def __init__(
        self,
        size: int,
        tileiras_path: str,
        limits: WorkerLimits | None = None,
        *,
        target: Callable[..., None] = compile_worker.main,
    ) -> None:
        self.size = size
        self.target = target  # the worker's main (tests give stand-ins that misbehave)
        self.tileiras_path = tileiras_path
        self.limits = limits or WorkerLimits()
        runs = private_runs_root()
        self.root = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=runs))
        self.replaced = 0  # workers started to replace dead or killed ones
        self._idle: queue.Queue[Worker] = queue.Queue()
        self._all: set[Worker] = set()  # idle and busy: what `close` kills
        self._lock = threading.Lock()
        self._requests: queue.Queue[bool] = queue.Queue()
        self._closed = threading.Event()
        self._spawner = threading.Thread(target=self._spawn_loop, name="worker-spawner")
        self._spawner.daemon = True
        self._spawner.start()
        for _ in range(size):
            self._requests.put(True)

    # ------------------------------------------------------------------ a compile

    def run(
        self,
        request: CompileRequest,
        cache: ArtifactCache | None,
        may_continue: Callable[[], bool] = lambda: True,
        observer: Callable[[str], None] | None = None,
        parse_limit_ms: int | None = None,
    ) -> CompileResult:
        """Compile `request` in a worker (see the module docstring); its sources must
        parse within `parse_limit_ms` (CT0007)."""
        worker = self._take(may_continue)
        try:
            worker.conn.send(CompileJob(request, cache is not None, parse_limit_ms))
            done = self._serve(worker, cache, may_continue, observer)
        except BaseException:  # a fault, or an error in this thread: the worker is suspect
            self._replace(worker)
            raise
        self._idle.put(worker)
        return _result(done)

    def _take(self, may_continue: Callable[[], bool]) -> Worker:
        while True:
            if self._closed.is_set():
                raise CompileFault("unavailable", "the server is stopping")
            if not may_continue():
                raise CompileFault("cancelled", "the compile's callers are gone")
            try:
                worker = self._idle.get(timeout=POLL_S * 5)
            except queue.Empty:
                continue
            if worker.process.is_alive():
                return worker
            self._replace(worker)

    def _serve(
        self,
        worker: Worker,
        cache: ArtifactCache | None,
        may_continue: Callable[[], bool],
        observer: Callable[[str], None] | None,
    ) -> JobDone:
        while True:
            if worker.conn.poll(POLL_S):
                try:
                    message = worker.conn.recv()
                except (EOFError, OSError):
                    raise _death(worker) from None
                if isinstance(message, JobDone):
                    return message
                self._answer(worker, message, cache, observer)
            elif not worker.process.is_alive():
                raise _death(worker)
            elif not may_continue():
                raise CompileFault("cancelled", "the compile's callers are gone")

    def _answer(
        self,
        worker: Worker,
        message: object,
        cache: ArtifactCache | None,
        observer: Callable[[str], None] | None,
    ) -> None:
        if isinstance(message, CacheAsk):
            entry = None if cache is None else cache.get(message.key)
            if observer is not None:
                observer("hit" if entry is not None else "miss")
            worker.conn.send(CacheReply(entry))
        elif isinstance(message, CacheStore) and cache is not None:
            cache.put(message.key, message.entry)

    # ------------------------------------------------------------------ workers

    def _replace(self, worker: Worker) -> None:
        worker.kill()  # still in `_all` meanwhile: a `close` now kills it too
        with self._lock:
            self._all.discard(worker)
        if not self._closed.is_set():
            self.replaced += 1
            self._requests.put(True)

    def _spawn_loop(self) -> None:
        """Start every worker from this one long-lived thread (see the module docstring)."""
        while not self._closed.is_set():
            try:
                self._requests.get(timeout=0.2)
            except queue.Empty:
                continue
            try:
                worker = self._start()
            except Exception:
                if self._closed.is_set():
                    return
                log.exception("could not start a compile worker; trying again")
                time.sleep(1.0)
                self._requests.put(True)
                continue
            with self._lock:
                if self._closed.is_set():
                    worker.kill()
                    return
                self._all.add(worker)
            self._idle.put(worker)

    def _start(self) -> Worker:
        temp_root = tempfile.mkdtemp(prefix="worker-", dir=self.root)
        ours, theirs = _CONTEXT.Pipe()
        process = _CONTEXT.Process(
            target=self.target,
            args=(theirs, self.tileiras_path, temp_root, self.limits),
            name="cutile-compile-worker",
            daemon=True,
        )
        process.start()
        theirs.close()
        worker = Worker(process, ours, temp_root)
        if not ours.poll(START_TIMEOUT_S) or not isinstance(ours.recv(), Ready):
            worker.kill()
            raise RuntimeError("a compile worker did not start")
        return worker

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> bool:
        """Whether all `size` workers are idle within `timeout_s` (for tests and start-up)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._idle.qsize() >= self.size:
                return True
            time.sleep(0.05)
        return False

    def close(self) -> None:
        """Kill every worker (and its tileiras) and remove the pool's temp root."""
        with self._lock:
            self._closed.set()
            workers, self._all = list(self._all), set()
        for worker in workers:  # a busy one's run then fails, and is not replaced
            worker.kill()
        # only now: a worker dies with the thread that started it (a starting one is killed
        # there, as the pool is closed)
        self._spawner.join(timeout=START_TIMEOUT_S)
        kill_runs_under(str(self.root))
        shutil.rmtree(self.root, ignore_errors=True)


def _death(worker: Worker) -> CompileFault:
    worker.process.join(timeout=5)
    code = worker.process.exitcode
    if code is not None and code < 0 and -code == signal.SIGXCPU:
        return CompileFault("costly", "the compile used more than its CPU time budget")
    if code is not None and code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        return CompileFault("crashed", f"the compile worker was killed by {name}")
    return CompileFault("crashed", f"the compile worker exited with status {code}")


def _result(done: JobDone) -> CompileResult:
    if done.fault is not None:
        kind, message = done.fault
        raise CompileFault("costly" if kind == "memory" else kind, message)
    stage = Stage.CUBIN if done.cubin is not None else None
    return CompileResult(
        done.diagnostics, stage, cubin=done.cubin, contract=done.contract, timings=done.timings
    )


def clean_orphans(root: Path | None = None) -> int:
    """Remove what servers that are gone left under `root` (default `runs_root()`): kill
    tileiras still running in their temp roots, delete the folders. How many were removed."""
    root = root or private_runs_root()
    removed = 0
    with contextlib.suppress(OSError):
        for folder in root.iterdir():
            owner = folder.name.split("-", 1)[0]
            if owner.isdigit() and _alive(int(owner)):
                continue
            info = os.lstat(folder)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
                log.warning("left %s alone: not a temp root this user made", folder)
                continue  # a link, or someone else's: never followed, never cleaned
            kill_runs_under(str(folder))
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    if removed:
        log.info("removed %d temp root(s) of servers that are gone", removed)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
