"""What the fuzzers that compare the two hosts share: the Rust host's tests run on a file of
fuzzed cases, and the report of a campaign's findings."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

RUST_HOST = Path(__file__).resolve().parents[2] / "client_stubs" / "rust"


def rust_disagrees(
    cases: Sequence[dict[str, Any]], folder: Path, env_var: str, test: Sequence[str]
) -> str | None:
    """Run `cargo test --test <test...>` with `env_var` naming a file of `cases`: None when
    it passes (the Rust host agrees on every case), else the end of cargo's report."""
    path = folder / f"{env_var.lower()}.json"
    path.write_text(json.dumps({"cases": list(cases)}), encoding="utf-8")
    command = ["cargo", "test", "-q", "--test", *test, "--", "--nocapture"]
    result = subprocess.run(
        command,
        cwd=RUST_HOST,
        env={**os.environ, env_var: str(path)},
        capture_output=True,
        text=True,
        check=False,
    )
    return None if result.returncode == 0 else (result.stdout + result.stderr)[-20000:]


def scratch_folder() -> Path:
    return Path(os.environ.get("TMPDIR", "/tmp"))


def report(
    head: str,
    findings: Mapping[int, list[str]],
    about: Callable[[int], str],
    shown: int = 50,
) -> None:
    """Print the campaign's summary line, then the first `shown` inputs' findings."""
    print(head)
    for index, found in list(findings.items())[:shown]:
        for finding in found:
            print(f"  input {index} [{about(index)[:300]}] {finding[:2000]}")
