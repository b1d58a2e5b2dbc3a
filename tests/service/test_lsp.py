"""cutile-lsp, spoken to as an editor does: JSON-RPC over the process's stdin and stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
URI = "file:///work/kernels/add.rs"
DEADLINE_S = 60  # a server that hangs is killed, failing its test instead of the run

GOOD = (REPO_ROOT / "rust_examples" / "add.rs").read_text()
BAD = GOOD.replace("z.store(tx + ty);", "x.store(tx + ty);", 1)


class Editor:
    """A minimal LSP client over a `cutile-lsp` process."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "service.cli.lsp"],
            cwd=REPO_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.next_id = 0
        self.notifications: list[dict[str, Any]] = []
        self.watchdog = threading.Timer(DEADLINE_S, self.process.kill)
        self.watchdog.start()

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = 0
        while True:
            line = self.process.stdout.readline()
            assert line, "cutile-lsp closed its output"
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(self.process.stdout.read(length))

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            message = self.receive()
            if message.get("id") == self.next_id and "method" not in message:
                assert "error" not in message, message
                return message["result"]
            self.notifications.append(message)

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"method": method, "params": params})

    def diagnostics(self) -> list[dict[str, Any]]:
        """The next publishDiagnostics notification's diagnostics."""
        while True:
            message = self.notifications.pop(0) if self.notifications else self.receive()
            if message.get("method") == "textDocument/publishDiagnostics":
                assert message["params"]["uri"] == URI
                return message["params"]["diagnostics"]

    def close(self) -> None:
        self.watchdog.cancel()
        try:
            self.request("shutdown", {})
            self.notify("exit", {})
            self.process.wait(timeout=10)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def editor():
    client = Editor()
    yield client
    client.close()


def _initialize(editor: Editor, options: dict[str, Any] | None = None) -> dict[str, Any]:
    result = editor.request(
        "initialize",
        {"processId": None, "rootUri": None, "capabilities": {}, "initializationOptions": options},
    )
    editor.notify("initialized", {})
    return result


def _open(editor: Editor, text: str) -> None:
    document = {"uri": URI, "languageId": "rust", "version": 1, "text": text}
    editor.notify("textDocument/didOpen", {"textDocument": document})


def _line_of(text: str, needle: str) -> tuple[int, int]:
    for index, line in enumerate(text.splitlines()):
        if needle in line:
            return index, line.index(needle)
    raise AssertionError(needle)


def test_diagnostics_on_open_change_and_save(editor: Editor) -> None:
    result = _initialize(editor)
    assert result["serverInfo"]["name"] == "cutile-lsp"
    capabilities = result["capabilities"]
    assert capabilities["hoverProvider"] and capabilities["textDocumentSync"]["openClose"]
    _open(editor, BAD)
    (diagnostic,) = editor.diagnostics()
    line, column = _line_of(BAD, "x.store(tx + ty)")
    assert diagnostic["code"] == "E0596" and diagnostic["severity"] == 1
    assert diagnostic["source"] == "cutile"
    assert diagnostic["range"] == {
        "start": {"line": line, "character": column},
        "end": {"line": line, "character": column + 1},
    }
    assert diagnostic["message"].startswith("cannot store through `x`")
    assert "checked with the sample generic arguments B=16" in diagnostic["message"]

    changed = {"textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"text": GOOD}]}
    editor.notify("textDocument/didChange", changed)
    assert editor.diagnostics() == []  # fixed: the diagnostic is cleared
    editor.notify("textDocument/didChange", {**changed, "contentChanges": [{"text": BAD}]})
    assert [d["code"] for d in editor.diagnostics()] == ["E0596"]
    editor.notify("textDocument/didSave", {"textDocument": {"uri": URI}})
    assert [d["code"] for d in editor.diagnostics()] == ["E0596"]


def test_hover_shows_tile_shapes_with_the_configured_generics(editor: Editor) -> None:
    _initialize(editor, {"generics": {"add": "B=1024"}})
    _open(editor, GOOD)
    assert editor.diagnostics() == []
    line, column = _line_of(GOOD, "tx + ty")
    hover = editor.request(
        "textDocument/hover",
        {"textDocument": {"uri": URI}, "position": {"line": line, "character": column + 1}},
    )
    value = hover["contents"]["value"]
    assert "tx: Tile<f32, {[1024]}>" in value and "B=1024" in value
    assert hover["range"]["start"] == {"line": line, "character": column}
    nothing = editor.request(
        "textDocument/hover",
        {"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}},
    )
    assert nothing is None


def test_a_file_without_a_cutile_module_is_not_checked(editor: Editor) -> None:
    _initialize(editor)
    _open(editor, 'fn main() { let x: u32 = "not checked"; }\n')
    assert editor.diagnostics() == []


def _hover_at_start(editor: Editor) -> Any:
    position = {"line": 0, "character": 0}
    return editor.request(
        "textDocument/hover", {"textDocument": {"uri": URI}, "position": position}
    )


def test_a_save_of_a_document_that_is_not_open_reads_no_file(editor: Editor, tmp_path) -> None:
    """pygls read an unopened document from disk, on its event loop: a FIFO hung the server."""
    _initialize(editor)
    fifo = tmp_path / "k.rs"
    os.mkfifo(fifo)
    editor.notify("textDocument/didSave", {"textDocument": {"uri": fifo.as_uri()}})
    assert _hover_at_start(editor) is None  # still answering


@pytest.mark.parametrize("length", [b"99999999999999999999", b"%d" % (2**63 - 1)])
def test_an_absurd_content_length_is_refused_and_the_server_reads_on(
    editor: Editor, length: bytes
) -> None:
    """pygls read(Content-Length) raised OverflowError: the server exited."""
    _initialize(editor)
    editor.raw(b"Content-Length: " + length + b"\r\n\r\n{}")
    assert _hover_at_start(editor) is None
    assert _hover_at_start(editor) is None


def test_a_lone_surrogate_is_checked_like_any_other_character(editor: Editor) -> None:
    """JSON can carry `\\ud800`; encoding the document raised and no diagnostics came."""
    _initialize(editor)
    _open(editor, BAD.replace("// Element-wise", "// \ud800 Element-wise"))
    assert [d["code"] for d in editor.diagnostics()] == ["E0596"]


def test_a_check_that_fails_is_one_internal_error_diagnostic(monkeypatch) -> None:
    from service.cli import lsp

    def failing(*args: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(lsp, "check_document", failing)
    (diagnostic,) = lsp.safe_check("k.rs", GOOD, {}).diagnostics
    assert diagnostic.code.id == "CT0999"
    assert diagnostic.message == (
        "internal compiler error: RecursionError: maximum recursion depth exceeded"
    )
