"""One compile worker: a child process that runs the front end and tileiras for the server.

The front end is native code too (tree-sitter) and can be driven into deep recursion or
long work; tileiras is untrusted. So the server compiles in worker processes
(`service.compile.worker_pool`): a crash, a stack overflow, a runaway or a memory blow-up costs one
worker, never the server. A worker applies its limits once at start (`WorkerLimits`:
address space, and a CPU-time budget re-armed before each compile, which the kernel enforces
with SIGXCPU), dies with its parent (PR_SET_PDEATHSIG), runs each compile on a thread with a
fixed stack, and runs tileiras inside its own temp root, so the parent can find and kill it.

The protocol over its pipe, one message at a time:
    parent -> worker: `CompileJob`, or `CacheReply` answering the worker's last `CacheAsk`
    worker -> parent: `Ready` once, then per job any number of `CacheAsk` / `CacheStore`
                      (the content cache stays in the parent) and one `JobDone`.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import sys
import threading
from dataclasses import dataclass, field
from multiprocessing.connection import Connection

from lowering.contract import LaunchContract
from lowering.pipeline import CompileRequest, Timings, compile_kernel
from lowering.tileiras import ADDRESS_SPACE_CAP, Tileiras, TileirasFault, TileirasOverBudget
from parser.front_end import Diagnostic
from service.cache.content import ContentCachedAssembler
from service.cache.store import CacheEntry

_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class WorkerLimits:
    """What one worker may use. `cpu_seconds` bounds each compile's own CPU time (the front
    end; tileiras is a separate process with its own limits)."""

    memory_bytes: int = 4 << 30
    cpu_seconds: int = 60
    stack_bytes: int = 256 << 20
    tileiras_memory_bytes: int = ADDRESS_SPACE_CAP  # each tileiras run's address space


@dataclass(frozen=True)
class CompileJob:
    request: CompileRequest
    content_cache: bool  # ask the parent for, and give it, cubins by content key
    parse_limit_ms: int | None = None  # tree-sitter's wall time over every source (CT0007)


@dataclass(frozen=True)
class CacheAsk:
    key: str


@dataclass(frozen=True)
class CacheReply:
    entry: CacheEntry | None


@dataclass(frozen=True)
class CacheStore:
    key: str
    entry: CacheEntry


@dataclass(frozen=True)
class Ready:
    pid: int


@dataclass(frozen=True)
class JobDone:
    """A compile's outcome. `fault` is set for what is not the kernel's doing: the
    assembler failed (`kind` "tileiras") or the compile ran out of memory ("memory")."""

    diagnostics: tuple[Diagnostic, ...] = ()
    cubin: bytes | None = None
    contract: LaunchContract | None = None
    timings: Timings = field(default_factory=Timings)
    fault: tuple[str, str] | None = None  # (kind, message)


class ParentCache:
    """The parent's artifact cache, as the content-cached assembler sees it: asks over
    the pipe (the worker is blocked in one compile, so replies come in order)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def get(self, key: str) -> CacheEntry | None:
        self.conn.send(CacheAsk(key))
        reply = self.conn.recv()
        return reply.entry if isinstance(reply, CacheReply) else None

    def put(self, key: str, entry: CacheEntry) -> None:
        self.conn.send(CacheStore(key, entry))

    def delete(self, key: str) -> None:
        """A bad cached cubin is replaced by the next `put` of the same key."""


def main(conn: Connection, tileiras_path: str, temp_root: str, limits: WorkerLimits) -> None:
    """The worker's whole life: limits, then compile jobs until the pipe closes."""
    _die_with_parent()
    _apply_limits(limits)
    threading.stack_size(min(limits.stack_bytes, 1 << 30))
    sys.setrecursionlimit(100_000)  # the thread's stack, not Python's count, is the bound
    tileiras = Tileiras(tileiras_path, temp_root, limits.tileiras_memory_bytes)
    conn.send(Ready(os.getpid()))
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if isinstance(job, CompileJob):
            _arm_cpu_budget(limits.cpu_seconds)
            conn.send(_run_on_thread(job, tileiras, conn))


def _run_on_thread(job: CompileJob, tileiras: Tileiras, conn: Connection) -> JobDone:
    """`_compile` on a thread with the worker's stack size (set in `main`)."""
    box: list[JobDone] = []
    thread = threading.Thread(target=lambda: box.append(_compile(job, tileiras, conn)))
    thread.start()
    thread.join()
    return box[0] if box else JobDone(fault=("internal", "the compile thread ended early"))


def _compile(job: CompileJob, tileiras: Tileiras, conn: Connection) -> JobDone:
    assembler = (
        ContentCachedAssembler(tileiras, ParentCache(conn))  # type: ignore[arg-type]
        if job.content_cache
        else tileiras
    )
    try:
        result = compile_kernel(job.request, assembler=assembler, parse_limit_ms=job.parse_limit_ms)
    except TileirasOverBudget as exc:  # the input's doing: the request's own error
        return JobDone(fault=("costly", str(exc)))
    except TileirasFault as exc:
        return JobDone(fault=("tileiras", str(exc)))
    except MemoryError:
        return JobDone(fault=("memory", "the compile ran out of memory"))
    return JobDone(result.diagnostics, result.cubin, result.contract, result.timings)


def _apply_limits(limits: WorkerLimits) -> None:
    for kind, cap in ((resource.RLIMIT_AS, limits.memory_bytes), (resource.RLIMIT_CORE, 0)):
        hard = resource.getrlimit(kind)[1]
        capped = cap if hard == resource.RLIM_INFINITY else min(cap, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(kind, (capped, hard))


def _arm_cpu_budget(seconds: int) -> None:
    """Let this process use `seconds` more of CPU from now (SIGXCPU ends it past that)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = int(usage.ru_utime + usage.ru_stime) + 1
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    soft = used + seconds
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _die_with_parent() -> None:
    """SIGKILL this worker when the server dies, however it dies (Linux only)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:  # the parent died before the request took effect
        os._exit(0)
