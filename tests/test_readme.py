"""README.md: its commands work as written."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from client_stubs import Bundle, Variants
from service.cli.batch import main as cutile_compile

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


def _command_with(flag: str) -> list[str]:
    """The README's shell command that passes `flag`, as argv."""
    for block in _shell_blocks():
        text = block.replace("\\\n", " ")
        for line in text.splitlines():
            if flag in line:
                return shlex.split(line)
    raise AssertionError(f"no README command passes {flag}")


@pytest.mark.tileiras
def test_the_facts_example_builds_the_general_kernel_and_the_variant(
    tileiras, tmp_path: Path, monkeypatch
) -> None:
    argv = _command_with("--facts")
    assert argv[0] == ".venv/bin/cutile-compile"
    (tmp_path / "rust_examples").symlink_to(REPO_ROOT / "rust_examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # not the user's cache
    assert cutile_compile(argv[1:]) == 0
    kernels = json.loads((tmp_path / "build" / "manifest.json").read_text())["kernels"]
    assert [(k["function"], k["facts"]) for k in kernels] == [
        ("gemm", []),
        ("gemm", [{"param": "x", "dim_divisors": [16, 16], "stride_divisors": [16, 1]}]),
    ]
    generics = {"E": "f16", "BM": "128", "BN": "128", "BK": "64"}
    assert isinstance(Bundle.open(tmp_path / "build").kernel("gemm", generics), Variants)
