"""The parser's public surface: all that the service and the hosts' tools import from it.

Everything else under `parser/` is the front end's own business and may move or change.
The surface is the diagnostics model (codes, spans, rendering), the request facts a host
sends (`TensorFacts`), one-file parsing with its limits, and the read-only AST and typed
kernel types the editor support walks.
"""

from __future__ import annotations

from parser import codes
from parser.ast_nodes import ArrayType, Function, GenericParam, IntLit, PathType, TypeParam
from parser.codes import ALL_CODES, DiagnosticCode
from parser.cst_to_ast import MAX_NESTING_DEPTH, ParseDeadline, parse_file
from parser.diagnostics import Diagnostic, DiagnosticSink, Label, Severity
from parser.render import render, to_json
from parser.render_lsp import lsp_range, to_lsp
from parser.spans import SourceFile, Span
from parser.specialization import DEFAULT_BASE_ALIGN, TensorFacts
from parser.typed_kernel import TypedBody, TypedKernel

__all__ = [
    "ALL_CODES",
    "DEFAULT_BASE_ALIGN",
    "MAX_NESTING_DEPTH",
    "ArrayType",
    "Diagnostic",
    "DiagnosticCode",
    "DiagnosticSink",
    "Function",
    "GenericParam",
    "IntLit",
    "Label",
    "ParseDeadline",
    "PathType",
    "Severity",
    "SourceFile",
    "Span",
    "TensorFacts",
    "TypeParam",
    "TypedBody",
    "TypedKernel",
    "codes",
    "lsp_range",
    "parse_file",
    "render",
    "to_json",
    "to_lsp",
]
