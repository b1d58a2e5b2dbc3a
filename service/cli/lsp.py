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
"""

from __future__ import annotations

import sys
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.lsp.server import LanguageServer

from lowering.build_id import RELEASE
from parser.front_end import Span, lsp_range, to_lsp
from service.cli.editor_check import DocumentCheck, check_document

NAME = "cutile-lsp"


class CutileLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(NAME, RELEASE, text_document_sync_kind=types.TextDocumentSyncKind.Full)
        self.generics: dict[str, str] = {}
        self.checks: dict[str, DocumentCheck] = {}

    def check(self, uri: str) -> None:
        """Check the document at `uri` and publish its diagnostics (none to clear them)."""
        document = self.workspace.get_text_document(uri)
        result = check_document(_file_name(uri), document.source, self.generics)
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
    server.start_io()
    return 0


if __name__ == "__main__":
    sys.exit(main())
