"""service.cli.sarif and `cutile-compile --message-format sarif`: a SARIF 2.1.0 log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lowering.pipeline import CompileRequest, Stage, compile_kernel
from parser.codes import UNKNOWN_ENTRY
from parser.diagnostics import Diagnostic, Severity
from parser.render import render
from parser.spans import SourceFile
from service.cli.batch import main
from service.cli.sarif import artifact_uri, sarif_log

BAD = """\
#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn bad<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let tx = x.load_like(z);
        x.store(tx);
    }
}
"""


def _diagnostics(name: str = "k/bad.rs") -> tuple[Diagnostic, ...]:
    request = CompileRequest((SourceFile(name, BAD),), "bad", generics=(("B", "128"),))
    return compile_kernel(request, stop_after=Stage.CHECK).diagnostics


def test_the_log_has_a_rule_and_a_located_result_per_diagnostic() -> None:
    (diagnostic,) = _diagnostics()
    log = sarif_log([diagnostic, diagnostic], "cutile-compile", "0.1.0")
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("cutile-compile", "0.1.0")
    (rule,) = driver["rules"]  # one rule for the code, however often it occurs
    assert rule["id"] == diagnostic.code.id == "E0596"
    assert rule["name"] == diagnostic.code.name and rule["shortDescription"]["text"]
    assert run["columnKind"] == "unicodeCodePoints" and len(run["results"]) == 2
    result = run["results"][0]
    assert (result["ruleId"], result["ruleIndex"], result["level"]) == ("E0596", 0, "error")
    assert result["message"]["text"].startswith(diagnostic.message)
    (location,) = result["locations"]
    physical = location["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "k/bad.rs"
    region = physical["region"]
    line, column = diagnostic.primary_span.start_line_col  # type: ignore[union-attr]
    assert (region["startLine"], region["startColumn"]) == (line, column)
    assert f"--> k/bad.rs:{line}:{column}" in render(diagnostic)  # the same place as the text
    assert region["snippet"]["text"] == diagnostic.primary_span.text  # type: ignore[union-attr]
    assert region["endColumn"] > region["startColumn"]


def test_a_diagnostic_without_a_span_has_no_location_and_notes_join_the_message() -> None:
    diagnostic = Diagnostic(
        Severity.WARNING, UNKNOWN_ENTRY, "no entry", notes=("a note",), help=("a help",)
    )
    (result,) = sarif_log([diagnostic], "t", "1")["runs"][0]["results"]  # type: ignore[index]
    assert "locations" not in result and result["level"] == "warning"
    assert result["message"]["text"] == "no entry\nnote: a note\nhelp: a help"


@pytest.mark.parametrize(
    ("name", "uri"),
    [
        ("k/bad.rs", "k/bad.rs"),
        ("bad.rs", "bad.rs"),
        ("/abs/k/bad.rs", "file:///abs/k/bad.rs"),
        # reserved characters are escaped: not a fragment, an escape, a scheme, a query
        ("k#1.rs", "k%231.rs"),
        ("50%41.rs", "50%2541.rs"),
        ("c:k.rs", "c%3Ak.rs"),
        ("a b?.rs", "a%20b%3F.rs"),
        ("d/\u00e9.rs", "d/%C3%A9.rs"),
        ("/abs/k#1.rs", "file:///abs/k%231.rs"),
    ],
)
def test_artifact_uris(name: str, uri: str) -> None:
    assert artifact_uri(name) == uri


def test_cutile_compile_writes_the_log_on_stdout(
    tileiras, tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("bad.rs").write_text(BAD)
    argv = ["bad.rs", "--entry", "bad", "--generics", "B=128", "-o", "out", "--no-cache"]
    assert main([*argv, "--message-format", "sarif"]) == 1
    captured = capsys.readouterr()
    log = json.loads(captured.out)
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "E0596" and result["level"] == "error"
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "bad.rs"
    assert "E0596" not in captured.err  # the diagnostics are in the log, not on stderr
