""".ci/prerequisites: a machine that cannot install redis-server or buf is told what to do."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SCRIPT = REPO_ROOT / ".ci" / "prerequisites"


def _fake(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


@pytest.fixture
def machine(tmp_path: Path):
    """A checkout copy whose PATH holds only `dirname` and the fakes a test adds."""
    checkout = tmp_path / "checkout"
    (checkout / ".ci").mkdir(parents=True)
    shutil.copy(SCRIPT, checkout / ".ci" / "prerequisites")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "dirname").symlink_to(shutil.which("dirname"))

    def run(uid: int = 0, **fakes: str) -> subprocess.CompletedProcess:
        _fake(bin_dir, "id", f"echo {uid}")
        for name, body in fakes.items():
            _fake(bin_dir, name.replace("_", "-"), body)
        return subprocess.run(
            ["/bin/bash", str(checkout / ".ci" / "prerequisites")],
            env={"PATH": str(bin_dir)},
            capture_output=True,
            text=True,
            check=False,
        )

    return run


def test_not_root_without_redis_is_told_to_use_sudo(machine) -> None:
    result = machine(uid=1000, apt_get="echo apt-get ran >&2; exit 100")
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "error: redis-server is not installed and installing it with apt-get needs root",
        "help: run 'sudo apt-get install redis-server' (or run .ci/run as root), "
        "then run .ci/run again",
    ]


def test_no_apt_get_is_told_to_use_the_package_manager(machine) -> None:
    result = machine(uid=0)
    assert result.returncode == 1
    assert "there is no apt-get" in result.stderr and "help: install redis-server" in result.stderr


def test_missing_npm_is_named_with_the_way_out(machine) -> None:
    result = machine(uid=1000, redis_server="exit 0")
    assert result.returncode == 1
    first, second = result.stderr.splitlines()
    assert first.startswith("error: npm is not installed: buf")
    assert "apt-get install npm" in second and "set BUF" in second


def test_everything_present_installs_nothing(machine) -> None:
    result = machine(uid=1000, redis_server="exit 0", npm='echo npm "$@" >&2')
    assert result.returncode == 0, result.stderr
    assert "npm install --silent" in result.stderr  # buf is fetched into .tools/buf
