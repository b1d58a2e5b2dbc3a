"""service.cli.entry_points: the console scripts in a host-only install say what to install."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from service.cli.entry_points import SERVER_MODULES, missing_server_module, run_tool

REPO_ROOT = Path(__file__).resolve().parents[2]

# runs a console script with the server extra's modules made unimportable
BLOCKED = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Block())
from service.cli import entry_points
sys.argv = [{tool!r}, "--help"]
sys.exit(getattr(entry_points, {function!r})())
"""


@pytest.mark.parametrize(
    ("tool", "function"),
    [("cutile-compile", "compile_batch"), ("cutile-serve", "serve"), ("cutile-lsp", "lsp")],
)
def test_a_host_only_install_is_told_to_install_the_server_extra(tool: str, function: str):
    code = BLOCKED.format(blocked=sorted(SERVER_MODULES), tool=tool, function=function)
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    first, second = result.stderr.splitlines()
    assert first.startswith(f"error: {tool} needs the compiler and server tools")
    assert second == (
        "help: install them with `pip install 'cutile-serve[server]'` "
        "(from a checkout: `pip install -e '.[server]'`)"
    )


def test_with_the_server_extra_the_tool_runs(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["cutile-compile", "--version"])
    assert run_tool("cutile-compile", "service.cli.batch") == 0
    assert capsys.readouterr().out.startswith("cutile-compile ")


def test_other_missing_modules_are_bugs_and_propagate():
    assert missing_server_module(ModuleNotFoundError("x", name="tree_sitter.binding")) == (
        "tree_sitter"
    )
    assert missing_server_module(ModuleNotFoundError("x", name="numpy")) is None
    with pytest.raises(ModuleNotFoundError):
        run_tool("cutile-compile", "service.no_such_module")
