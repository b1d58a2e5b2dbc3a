"""tileiras runs the server can kill: when every caller of a compile is gone, or on shutdown.

`lowering.tileiras` starts each tileiras in its own process group inside a private work
folder under the `Tileiras` object's temp root, and kills the group only on its own
timeout. `KillableTileiras` is that assembler with a temp root of its own (one per compile
run), so `kill()` finds the run's processes by their working folder (/proc/PID/cwd) and
kills each one's whole group (tileiras and its ptxas). A killed run fails ("tileiras was
killed by SIGKILL"), and failures are never cached. A run killed before it reaches
tileiras fails at once without starting it.

`KillableTileiras` shares the located assembler's version and fingerprint (no new
`--version` queries per run).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import tempfile
import threading
from pathlib import Path

from lowering.tileiras import Tileiras, TileirasError

log = logging.getLogger(__name__)

_PROC = Path("/proc")


class KillableTileiras(Tileiras):
    """`base` with a private temp root; `kill()` ends its running tileiras groups."""

    def __init__(self, base: Tileiras) -> None:
        self._root = tempfile.mkdtemp(prefix="cutile-run-")
        super().__init__(base.path, temp_root=self._root, memory_cap=base.memory_cap)
        self._base = base
        self._killed = threading.Event()

    @property
    def version_text(self) -> str:  # type: ignore[override]
        return self._base.version_text

    @property
    def fingerprint(self) -> str:
        return self._base.fingerprint

    @property
    def killed(self) -> bool:
        return self._killed.is_set()

    def assemble(self, bytecode: bytes, **options: object) -> bytes:  # type: ignore[override]
        if self._killed.is_set():
            raise TileirasError("tileiras was not started: the compile was cancelled", None, "", ())
        return super().assemble(bytecode, **options)  # type: ignore[arg-type]

    def _started(self, pid: int) -> None:
        """A run that started after `assemble` looked but before a `kill` set the flag is
        seen by that kill's scan; one that started after the flag ends here."""
        if self._killed.is_set():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)

    def kill(self) -> int:
        """Kill the process group of every tileiras this run started; how many."""
        self._killed.set()
        killed = kill_runs_under(self._root)
        if killed:
            log.info("killed %d tileiras process group(s) of a cancelled compile", killed)
        return killed

    def cleanup(self) -> None:
        shutil.rmtree(self._root, ignore_errors=True)


def kill_runs_under(folder: str) -> int:
    """SIGKILL the process group of every process working inside `folder` (tileiras runs
    in a session of its own); how many."""
    killed = 0
    ours = os.getpgid(0)
    for pid in processes_under(folder):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            group = os.getpgid(pid)
            if group != ours:
                os.killpg(group, signal.SIGKILL)
                killed += 1
    return killed


def processes_under(folder: str) -> list[int]:
    """Processes of this user whose working folder lies inside `folder`."""
    root = os.path.realpath(folder)
    found = []
    try:
        entries = list(os.scandir(_PROC))
    except OSError:
        return found
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(f"{entry.path}/cwd")
        except OSError:
            continue
        if cwd == root or cwd.startswith(root + os.sep):
            found.append(int(entry.name))
    return found
