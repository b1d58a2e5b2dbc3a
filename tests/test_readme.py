"""README.md: its commands work as written."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def _shell_blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", README, re.DOTALL)


def test_the_first_command_installs_what_the_daemon_needs() -> None:
    first = _shell_blocks()[0].strip()
    steps = [shlex.split(step) for step in first.split("&&")]
    installs = [s for s in steps if s[:2] == [".venv/bin/pip", "install"]]
    assert installs == [[".venv/bin/pip", "install", "-e", ".[server]"]], first
    assert steps[-1] == [".venv/bin/cutile-serve"]
