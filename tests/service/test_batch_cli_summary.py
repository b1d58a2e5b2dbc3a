"""cutile-compile --summary-json and its progress (real compiler, tileiras)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from service.cli.batch import main


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _run(tmp_path: Path, *args: str, specialize: str = "none") -> int:
    out = tmp_path / "out"
    argv = [*args, "-o", str(out), "--cache-dir", str(tmp_path / "cache")]
    return main([*argv, "--specialize", specialize])


def test_summary_json_lists_every_kernel(tileiras, add_rs, tmp_path, capsys) -> None:
    summary_path = tmp_path / "reports" / "summary.json"
    argv = [str(add_rs), "--entry", "add", "--generics", "B=128", "--generics", "B=abc"]
    assert _run(tmp_path, *argv, "--summary-json", str(summary_path)) == 1
    summary = json.loads(summary_path.read_text())
    assert (summary["ok"], summary["failed"], summary["unparsed_files"]) == (1, 1, [])
    good, bad = summary["kernels"]
    assert good["file"] == str(add_rs) and good["entry"] == "add" and good["arch"] == "sm_90"
    assert good["generics"] == {"B": "128"} and good["ok"] is True
    assert (tmp_path / "out" / good["cubin"]).is_file()
    assert isinstance(good["ms"], float) and good["diagnostics"] == []
    assert bad["generics"] == {"B": "abc"} and bad["ok"] is False and bad["cubin"] is None
    (diagnostic,) = bad["diagnostics"]
    assert diagnostic["severity"] == "error"
    assert "invalid value `abc`" in diagnostic["message"]
    # stderr is not a terminal here: one line per kernel, in the order they finished
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("[")]
    assert sorted(line.split("] ")[1].rsplit(" ", 2)[0] for line in lines) == [
        "compiled add<B=128> (sm_90)",
        "failed add<B=abc> (sm_90)",
    ]
    assert sorted(line.split("]")[0] for line in lines) == ["[1/2", "[2/2"]


def test_summary_of_unparsable_file(tileiras, tmp_path) -> None:
    source = tmp_path / "broken.rs"
    source.write_text("#[cutile::module]\nmod kernel {\n    fn add( {\n}\n")
    summary_path = tmp_path / "summary.json"
    assert _run(tmp_path, str(source), "--entry", "add", "--summary-json", str(summary_path)) == 1
    summary = json.loads(summary_path.read_text())
    assert (summary["kernels"], summary["ok"], summary["failed"]) == ([], 0, 0)
    (unparsed,) = summary["unparsed_files"]
    assert unparsed["file"] == str(source) and unparsed["diagnostics"]


def test_a_progress_bar_on_a_terminal(tileiras, add_rs, tmp_path, monkeypatch) -> None:
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    argv = [str(add_rs), "--entry", "add", "--generics", "B=128", "--generics", "B=abc"]
    assert _run(tmp_path, *argv, "--generics", "64") == 1
    text = terminal.getvalue()
    assert "3/3 [" in text and "kernel/s]" in text  # the bar, its rate and ETA
    assert not [line for line in text.splitlines() if line.startswith("[")]  # no lines
    assert "error[CT0102]: invalid value `abc`" in text  # diagnostics above the bar
