"""Stand-in worker mains for the worker-pool tests: they speak the worker protocol
(`service.compile.worker`) and then misbehave as a hostile input or a bug could make the
real worker misbehave. Module-level functions, so a spawned process can import them."""

from __future__ import annotations

import ctypes
import os
import resource
import subprocess
import time
from multiprocessing.connection import Connection

from lowering.pipeline import Timings
from service.cache.store import CacheEntry
from service.compile.worker import (
    CacheAsk,
    CacheReply,
    CacheStore,
    JobDone,
    Ready,
    WorkerLimits,
    main,
)
from tests.fake_cubin import fake_cubin

__all__ = ["main"]  # the real one, for the tests that compile for real


def _jobs(conn: Connection):  # type: ignore[no-untyped-def]
    conn.send(Ready(os.getpid()))
    while True:
        try:
            yield conn.recv()
        except EOFError:
            return


def answering(conn: Connection, tileiras: str, temp_root: str, limits: WorkerLimits) -> None:
    """Asks the parent's cache, stores what it did not have, answers with a cubin."""
    for job in _jobs(conn):
        conn.send(CacheAsk("ab" * 32))
        reply = conn.recv()
        assert isinstance(reply, CacheReply)
        if reply.entry is None:
            conn.send(CacheStore("ab" * 32, CacheEntry(fake_cubin(), b"")))
        conn.send(JobDone(cubin=fake_cubin(job.request.arch), timings=Timings(1.0, 0.0, 1.0)))


def crashing(conn: Connection, tileiras: str, temp_root: str, limits: WorkerLimits) -> None:
    """Dies of a segfault in native code on its first job (as deep recursion in C does)."""
    for _ in _jobs(conn):
        ctypes.string_at(0)


def spinning(conn: Connection, tileiras: str, temp_root: str, limits: WorkerLimits) -> None:
    """Burns CPU for ever under a 1-second budget (the kernel sends SIGXCPU)."""
    for _ in _jobs(conn):
        used = int(sum(resource.getrusage(resource.RUSAGE_SELF)[:2])) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (used, resource.RLIM_INFINITY))
        while True:
            pass


def hanging_tileiras(conn: Connection, tileiras: str, temp_root: str, limits: WorkerLimits) -> None:
    """Starts a long 'tileiras' (a sleep in its own session, in the temp root) and waits."""
    for _ in _jobs(conn):
        work = os.path.join(temp_root, "tileiras-run")
        os.makedirs(work, exist_ok=True)
        child = subprocess.Popen(["sleep", "300"], cwd=work, start_new_session=True)
        with open(os.path.join(temp_root, "..", "tileiras.pid"), "w") as marker:
            marker.write(str(child.pid))
        time.sleep(300)


def tileiras_faulting(
    conn: Connection, tileiras: str, temp_root: str, limits: WorkerLimits
) -> None:
    """Answers every job with what a killed tileiras leaves: a fault, no verdict."""
    for _ in _jobs(conn):
        conn.send(JobDone(fault=("tileiras", "tileiras was killed by SIGKILL")))
