"""`cutile-lsp`: a Language Server that shows cuTile's rules in the editor.

rust-analyzer checks Rust; it cannot see partitions, borrows of tensors, tile shapes or where
bounds checks go, which a cutile-rs user otherwise learns of only when the kernel is compiled.
`cutile-lsp` (pygls, over stdio) runs our checks (`service.cli.editor_check`) on every open,
change and save of a document holding a `#[cutile::module]`, and publishes their diagnostics
with the codes and spans `cutile-compile` prints (`parser.render_lsp`). Hovering over an
expression or binding of an entry shows its type, tile shapes included
(`Tile<f32, {[128]}>`), with the generic arguments it was checked with.

Generic arguments: the initialization option `generics` maps entry names to
`cutile-compile --generics` specs (`{"generics": {"add": "B=1024", "gemm": "E=f16,..."}}`);
entries without one are checked with sample values (see `service.cli.editor_check`).

Only open documents are checked (a save of another is ignored: the server reads no files). A
check that fails publishes one internal-error diagnostic in place of the document's others; a
message longer than MAX_MESSAGE_BYTES is refused and the server reads on from the next header.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from typing import Any, BinaryIO, cast
from urllib.parse import unquote, urlparse

from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.lsp.server import LanguageServer

from lowering.build_id import RELEASE
from parser.front_end import Diagnostic, Severity, SourceFile, Span, codes, lsp_range, to_lsp
from service.cli.editor_check import DocumentCheck, check_document

NAME = "cutile-lsp"
MAX_MESSAGE_BYTES = 64 << 20  # a JSON-RPC message's Content-Length

log = logging.getLogger(__name__)


class CutileLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(NAME, RELEASE, text_document_sync_kind=types.TextDocumentSyncKind.Full)
        self.generics: dict[str, str] = {}
        self.checks: dict[str, DocumentCheck] = {}

    def check(self, uri: str) -> None:
        """Check the open document at `uri` and publish its diagnostics (none to clear them).
        A document that is not open is left alone: pygls would read it from disk, on the
        event loop (a FIFO blocks the server, /dev/zero fills its memory)."""
        document = self.workspace.text_documents.get(unquote(uri))  # pygls' key
        if document is None:
            return
        result = safe_check(_file_name(uri), document.source, self.generics)
        self.checks[uri] = result
        converter = get_converter()
        published = [
            converter.structure(to_lsp(d, lambda _name: uri), types.Diagnostic)
            for d in result.diagnostics
        ]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=published, version=document.version)
        )

    def hover(self, uri: str, position: types.Position) -> types.Hover | None:
        result = self.checks.get(uri)
        if result is None:
            return None
        offset = _offset(result, position)
        found = result.type_at(offset) if offset is not None else None
        if found is None:
            return None
        text = (
            f"```rust\n{found.text}: {found.type}\n```\n"
            f"in `{found.entry}` checked with {found.generics or 'no generic arguments'}"
        )
        span = Span(result.source, found.start, found.end)
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
            range=get_converter().structure(lsp_range(span), types.Range),
        )


server = CutileLanguageServer()


@server.feature(types.INITIALIZE)
def _initialize(ls: CutileLanguageServer, params: types.InitializeParams) -> None:
    options: Any = params.initialization_options or {}
    generics = options.get("generics", {}) if isinstance(options, dict) else {}
    ls.generics = (
        {str(k): str(v) for k, v in generics.items()} if isinstance(generics, dict) else {}
    )


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def _did_open(ls: CutileLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.check(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def _did_change(ls: CutileLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.check(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def _did_save(ls: CutileLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.check(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def _did_close(ls: CutileLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.checks.pop(params.text_document.uri, None)
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
    )


@server.feature(types.TEXT_DOCUMENT_HOVER)
def _hover(ls: CutileLanguageServer, params: types.HoverParams) -> types.Hover | None:
    return ls.hover(params.text_document.uri, params.position)


def safe_check(name: str, text: str, generics: Mapping[str, str]) -> DocumentCheck:
    """`check_document` of `text`, its lone surrogates (JSON can carry them, UTF-8 cannot)
    replaced; a check that fails is one internal-error diagnostic, so that the document's
    earlier diagnostics do not stay as if they were current."""
    text = text.encode("utf-8", "replace").decode("utf-8")  # one `?` per surrogate
    try:
        return check_document(name, text, generics)
    except Exception as exc:  # a bug: reported like rustc's ICE
        log.exception("checking %s failed", name)
        result = DocumentCheck(SourceFile(name, text))
        message = f"internal compiler error: {type(exc).__name__}: {exc}"
        result.diagnostics.append(Diagnostic(Severity.ERROR, codes.INTERNAL_ERROR, message))
        return result


class BoundedReader:
    """stdin for pygls, which reads a message body with `read(Content-Length)`: a length
    over MAX_MESSAGE_BYTES (`99999999999999999999` raised OverflowError and ended the server)
    is refused, and the lines up to the next `Content-Length` header are skipped."""

    HEADER = b"Content-Length:"

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._skipping = False

    def readline(self) -> bytes:
        line = self._stream.readline()
        while self._skipping and line:
            start = line.find(self.HEADER)  # the refused body may run into the header
            if start >= 0:
                self._skipping = False
                return line[start:]
            line = self._stream.readline()
        return line

    def read(self, size: int) -> bytes:
        if size <= MAX_MESSAGE_BYTES:
            return self._stream.read(size)
        log.error("refused a %d-byte message (at most %d)", size, MAX_MESSAGE_BYTES)
        self._skipping = True
        return b" "  # not JSON, so pygls drops it (empty would end its loop)


def _file_name(uri: str) -> str:
    """The path of a `file:` URI (diagnostics name it), else the URI itself."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def _offset(result: DocumentCheck, position: types.Position) -> int | None:
    """The byte offset of an LSP position (UTF-16 character offsets) in the document."""
    lines = result.source.data.split(b"\n")
    if not 0 <= position.line < len(lines):
        return None
    line_start = sum(len(line) + 1 for line in lines[: position.line])
    text = lines[position.line].decode("utf-8", errors="replace")
    units, chars = 0, 0
    for char in text:
        if units >= position.character:
            break
        units += len(char.encode("utf-16-le")) // 2
        chars += 1
    return line_start + len(text[:chars].encode("utf-8"))


def main() -> int:
    if "--version" in sys.argv[1:]:
        print(f"{NAME} {RELEASE}")
        return 0
    if "--help" in sys.argv[1:] or "-h" in sys.argv[1:]:
        print(__doc__)
        return 0
    server.start_io(cast(BinaryIO, BoundedReader(sys.stdin.buffer)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
