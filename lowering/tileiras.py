"""A small, honest wrapper around NVIDIA's `tileiras` (Tile IR bytecode -> cubin).

Each run gets a private temp dir (also its TMPDIR, removed afterwards), its own process
group (killed whole when the run ends: nothing it started, ptxas say, outlives it), rlimits
set by a tiny exec launcher, and capped output. Failures raise `TileirasError` carrying
tileiras's own message and a repro command line.

tileiras is untrusted: its output is checked before it is returned (a cubin for the target,
within `FILE_SIZE_CAP`, holding the expected entry symbol). A run that says nothing about
the bytecode (killed by a signal, could not start, exit 0 without a valid cubin) raises
`TileirasFault`: the server's problem, never reported as the kernel's. A run past its time
(the wall-clock timeout, or CPU time) or its address space (`memory_cap`: tileiras aborts
with std::bad_alloc) raises `TileirasOverBudget`: the input's doing.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lowering.cubin_info import check_cubin
from parser.arch import ARCHS

ENV_VAR = "CUTILE_TILEIRAS"
HOST_ARCHES = ("x86_64", "aarch64")
OUTPUT_CAP = 64 * 1024  # bytes of stdout/stderr kept per stream
ADDRESS_SPACE_CAP = 8 << 30  # the most address space one run may map
# the least: tileiras maps under 1 GB for the largest kernel we build (flash attention, bf16,
# D=128: 220 MB resident, assembles under a 1 GB cap)
MIN_ADDRESS_SPACE = 2 << 30
FILE_SIZE_CAP = 64 << 20  # any file tileiras writes, the cubin included (RLIMIT_FSIZE)
INPUT_NAME, OUTPUT_NAME = "input.tileirbc", "output.cubin"
_RELEASE = re.compile(r"release \d+\.\d+, V[\d.]+")


class TileirasError(RuntimeError):
    """tileiras failed; `stderr` is its own (capped) output."""

    def __init__(
        self, message: str, returncode: int | None, stderr: str, command: tuple[str, ...]
    ) -> None:
        super().__init__(message)
        self.message = message
        self.returncode = returncode
        self.stderr = stderr
        self.command = command

    def __str__(self) -> str:
        said = self.stderr.strip() or "(no output)"
        return f"{self.message}\ntileiras said:\n{said}\nrepro: {shlex.join(self.command)}"


class TileirasNotFound(TileirasError):
    """No usable tileiras binary was found."""

    def __init__(self, message: str) -> None:
        super().__init__(message, None, "", ())

    def __str__(self) -> str:
        return self.message


class TileirasFault(TileirasError):
    """A run that says nothing about the bytecode: killed, crashed, timed out, or exited 0
    without a valid cubin for the target. A server fault, never the kernel's error."""


class TileirasOverBudget(TileirasFault):
    """tileiras needed more than a run may use (its wall-clock limit, the CPU time its
    process may take, or its address space): the input's doing, which a retry would only
    repeat."""


class TileirasTimeout(TileirasOverBudget):
    """tileiras ran past its wall-clock limit; its process group was killed."""


def tileiras_flags(
    *, arch: str, opt_level: int = 3, host_arch: str = "x86_64", lineinfo: bool = False
) -> list[str]:
    """The option part of a tileiras command line; validates every choice."""
    if arch not in ARCHS:
        raise ValueError(f"unsupported GPU {arch!r}; expected one of {', '.join(ARCHS)}")
    if host_arch not in HOST_ARCHES:
        raise ValueError(f"unsupported host arch {host_arch!r}; expected one of {HOST_ARCHES}")
    if opt_level not in (0, 1, 2, 3):
        raise ValueError(f"opt_level must be 0..3, got {opt_level!r}")
    flags = [f"--gpu-name={arch}", f"-O{opt_level}", f"--host-arch={host_arch}"]
    return [*flags, "--lineinfo"] if lineinfo else flags


@dataclass(frozen=True)
class _Outcome:
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool


class Tileiras:
    """One tileiras binary. Queries of it are cached; `assemble` runs are independent."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        temp_root: str | None = None,
        memory_cap: int = ADDRESS_SPACE_CAP,
    ) -> None:
        self._path = str(path)
        self._temp_root = temp_root
        self.memory_cap = memory_cap  # each run's address space (RLIMIT_AS)

    @classmethod
    def locate(cls, explicit: str | None = None, memory_cap: int = ADDRESS_SPACE_CAP) -> Tileiras:
        """Explicit path, then $CUTILE_TILEIRAS, then the nvidia wheel, then PATH."""
        if explicit is not None:
            return cls(_checked_binary(explicit, "the explicit path"), memory_cap=memory_cap)
        if os.environ.get(ENV_VAR):
            return cls(_checked_binary(os.environ[ENV_VAR], f"${ENV_VAR}"), memory_cap=memory_cap)
        found = nvidia_binary("tileiras") or shutil.which("tileiras")
        if found is None:
            raise TileirasNotFound(
                "tileiras not found: set $CUTILE_TILEIRAS, install nvidia-cuda-tileiras, "
                "or put tileiras on PATH"
            )
        return cls(found, memory_cap=memory_cap)

    @property
    def path(self) -> str:
        return self._path

    @functools.cached_property
    def version_text(self) -> str:
        """The full `--version` output."""
        return self._query("--version")

    @property
    def version(self) -> str:
        """e.g. "release 13.5, V13.5.37"."""
        match = _RELEASE.search(self.version_text)
        if match is None:
            raise TileirasError("unrecognised --version output", 0, self.version_text, ())
        return match.group(0)

    @property
    def fingerprint(self) -> str:
        """sha256 of the full `--version` output: a cache-key component."""
        return hashlib.sha256(self.version_text.encode()).hexdigest()

    @functools.cached_property
    def bytecode_versions(self) -> tuple[tuple[int, int], ...]:
        """The bytecode versions this tileiras reads (`--list-versions`)."""
        found = re.findall(r"^\s*(\d+)\.(\d+)\s*$", self._query("--list-versions"), re.M)
        return tuple((int(major), int(minor)) for major, minor in found)

    def assemble(
        self,
        bytecode: bytes,
        *,
        arch: str,
        opt_level: int = 3,
        host_arch: str = "x86_64",
        lineinfo: bool = False,
        timeout_s: float = 120,
        symbol: str | None = None,
    ) -> bytes:
        """Assemble Tile IR bytecode into a cubin for `arch` (holding `symbol`, when given)."""
        flags = tileiras_flags(
            arch=arch, opt_level=opt_level, host_arch=host_arch, lineinfo=lineinfo
        )
        if not isinstance(bytecode, bytes) or not bytecode:
            raise ValueError("bytecode must be non-empty bytes")
        command = (self._path, *flags, INPUT_NAME, "-o", OUTPUT_NAME)
        workdir = self._workdir(command)
        try:
            Path(workdir, INPUT_NAME).write_bytes(bytecode)
            outcome = _run_limited(command, workdir, timeout_s, self.memory_cap, self._started)
            cubin = _cubin_or_raise(outcome, workdir, command, timeout_s, self.memory_cap)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        try:
            check_cubin(cubin, arch, symbol)
        except ValueError as exc:
            raise TileirasFault(f"tileiras wrote no valid cubin: {exc}", 0, "", command) from None
        return cubin

    def _started(self, pid: int) -> None:
        """Called once a run's process `pid` (its group's leader) exists; for subclasses
        that may have to end it at once."""

    def _workdir(self, command: tuple[str, ...]) -> str:
        """A new folder for one run, in the temp root (made again if something removed it,
        as a cleaner of old temp folders may)."""
        try:
            if self._temp_root is not None:
                os.makedirs(self._temp_root, mode=0o700, exist_ok=True)
            return tempfile.mkdtemp(prefix="tileiras-", dir=self._temp_root)
        except OSError as exc:
            raise TileirasFault(f"no folder for a tileiras run: {exc}", None, "", command) from None

    def _query(self, flag: str) -> str:
        command = (self._path, flag)
        workdir = self._workdir(command)
        try:
            outcome = _run_limited(command, workdir, 30, self.memory_cap)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        if outcome.returncode != 0:
            message = f"tileiras {flag} failed"
            raise TileirasError(message, outcome.returncode, outcome.stderr, command)
        return outcome.stdout


def _checked_binary(path: str, where: str) -> str:
    """`path` made absolute (runs start in a folder of their own) once it is executable."""
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise TileirasNotFound(f"tileiras from {where} is not an executable file: {path}")
    return os.path.abspath(path)


def nvidia_binary(name: str) -> str | None:
    """The executable `name` of NVIDIA's CUDA 13 wheels (`nvidia/cu13/bin/`), or None."""
    try:
        import nvidia
    except ImportError:
        return None
    for base in getattr(nvidia, "__path__", []):
        candidate = os.path.join(base, "cu13", "bin", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


# Applies the rlimits (and lifts the compile worker's CPU budget, which tileiras would
# otherwise inherit: its own bound is the wall-clock timeout), asks to be killed when its
# parent dies (a compile worker killed mid-run leaves no orphan), then execs tileiras; a
# binary that cannot be executed exits NOT_STARTED_STATUS, saying why after a marker. A
# separate interpreter rather than `preexec_fn`: preexec runs Python between fork and exec,
# which is unsafe in a threaded server (with it, the gRPC service tests saw intermittent
# SIGSEGV children). argv: address-space cap, file-size cap, the pid of its parent (a parent
# that died before the death signal was asked for is seen: the launcher exits), the command.
NOT_STARTED_STATUS = 127
NOT_STARTED = "cutile-serve: tileiras could not be started: "
_LAUNCHER = f"""\
import ctypes, os, resource, signal, sys
caps = ((resource.RLIMIT_AS, int(sys.argv[1])), (resource.RLIMIT_FSIZE, int(sys.argv[2])),
        (resource.RLIMIT_CORE, 0))
for kind, cap in caps:
    hard = resource.getrlimit(kind)[1]
    cap = cap if hard == resource.RLIM_INFINITY else min(cap, hard)
    resource.setrlimit(kind, (cap, cap))
hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))
try:  # die with whoever started us (PR_SET_PDEATHSIG survives the exec; Linux only)
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)
except (OSError, AttributeError):
    pass
if os.getppid() != int(sys.argv[3]):  # it died before that took effect: no orphan run
    os._exit(1)
try:
    os.execv(sys.argv[4], sys.argv[4:])
except OSError as exc:
    sys.stderr.write({NOT_STARTED!r} + str(exc) + "\\n")
    os._exit({NOT_STARTED_STATUS})
"""


def _limited(command: tuple[str, ...], memory_cap: int) -> list[str]:
    caps = (str(memory_cap), str(FILE_SIZE_CAP))
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, *caps, str(os.getpid()), *command]


def _run_limited(
    command: tuple[str, ...],
    workdir: str,
    timeout_s: float,
    memory_cap: int,
    started: Callable[[int], None] | None = None,
) -> _Outcome:
    """Run in `workdir` with stdout/stderr going to files there (bounded by RLIMIT_FSIZE);
    `started(pid)` once the process exists."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TMPDIR": workdir, "LC_ALL": "C"}
    out_path, err_path = Path(workdir, "stdout.log"), Path(workdir, "stderr.log")
    with out_path.open("wb") as out, err_path.open("wb") as err:
        proc = subprocess.Popen(
            _limited(command, memory_cap),
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        if started is not None:
            started(proc.pid)
        timed_out = _wait_or_kill(proc, timeout_s)
    return _Outcome(proc.returncode, _read_capped(out_path), _read_capped(err_path), timed_out)


def _wait_or_kill(proc: subprocess.Popen[bytes], timeout_s: float) -> bool:
    """Wait at most `timeout_s` for tileiras; then kill whatever is left of its process group
    (a ptxas it started, or all of it on a timeout or any interruption) while tileiras is
    not yet reaped, so the group id cannot belong to anyone else; then reap it. True if it
    timed out."""
    timed_out = True
    try:
        timed_out = not _exits_within(proc.pid, timeout_s)
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return timed_out


def _exits_within(pid: int, timeout_s: float) -> bool:
    """Whether child `pid` exits within `timeout_s`; it is left unreaped either way."""
    deadline = time.monotonic() + timeout_s
    delay = 0.0005
    while os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is None:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(delay, left))
        delay = min(delay * 2, 0.05)
    return True


def _read_capped(path: Path) -> str:
    with path.open("rb") as handle:
        data = handle.read(OUTPUT_CAP + 1)
    text = data[:OUTPUT_CAP].decode("utf-8", errors="replace")
    return text + "\n[... output truncated]" if len(data) > OUTPUT_CAP else text


def _cubin_or_raise(
    outcome: _Outcome, workdir: str, command: tuple[str, ...], timeout_s: float, memory_cap: int
) -> bytes:
    said = "\n".join(s for s in (outcome.stderr, outcome.stdout) if s.strip())
    if outcome.timed_out:
        msg = f"tileiras did not finish within {timeout_s}s; its process group was killed"
        raise TileirasTimeout(msg, outcome.returncode, said, command)
    output = Path(workdir, OUTPUT_NAME)
    size = output.stat().st_size if output.is_file() else 0
    if size >= FILE_SIZE_CAP:  # stopped by RLIMIT_FSIZE, whatever its exit status says
        message = f"tileiras output reached the cap of {FILE_SIZE_CAP} bytes"
        raise TileirasFault(message, outcome.returncode, said, command)
    if outcome.returncode == NOT_STARTED_STATUS and NOT_STARTED in outcome.stderr:
        message = f"tileiras could not be started ({command[0]})"
        raise TileirasFault(message, outcome.returncode, said, command)
    if outcome.returncode == -signal.SIGXCPU:
        raise TileirasOverBudget(
            _exit_message(outcome.returncode), outcome.returncode, said, command
        )
    if outcome.returncode == -signal.SIGABRT and "std::bad_alloc" in outcome.stderr:
        message = f"tileiras ran out of its {memory_cap >> 20} MiB of address space"
        raise TileirasOverBudget(message, outcome.returncode, said, command)
    if outcome.returncode is not None and outcome.returncode < 0:
        raise TileirasFault(_exit_message(outcome.returncode), outcome.returncode, said, command)
    if outcome.returncode != 0:
        raise TileirasError(_exit_message(outcome.returncode), outcome.returncode, said, command)
    if size == 0:
        raise TileirasFault("tileiras exited 0 but wrote no cubin", 0, said, command)
    return output.read_bytes()


def _exit_message(returncode: int | None) -> str:
    if returncode is not None and returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"tileiras was killed by {name} (a resource limit may have been hit)"
    return f"tileiras failed with exit code {returncode}"
