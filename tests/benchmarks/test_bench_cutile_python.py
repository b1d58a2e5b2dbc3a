"""tests/benchmarks/bench_cutile_python.py: its command line works without cuTile Python, and
says so when a step needs it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.benchmarks import bench_cutile_python


@pytest.mark.skipif(
    importlib.util.find_spec("cuda.tile") is not None, reason="cuTile Python is installed"
)
@pytest.mark.parametrize(
    "argv",
    [["capture", "requests.pkl"], ["compile", "requests.pkl", "cache"], ["run", "cache"]],
)
def test_each_step_reports_a_missing_cutile_python(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert bench_cutile_python.main(argv) == 2
    assert "cuTile Python is not installed" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_an_unknown_step_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as exited:
        bench_cutile_python.main(["bench"])
    assert exited.value.code == 2
