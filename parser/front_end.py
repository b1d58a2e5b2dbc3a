"""The parser's one door: all that the compile pipeline, the service and the tools import
from it.

Everything else under `parser/` is the front end's own business and may move or change.
The door is the pipeline's two steps (sources to a linked program, `parse_program`; one entry
of it to a checked, specialized typed kernel, `check_entry`), the diagnostics model (codes,
spans, rendering), the request facts a host sends (`TensorFacts`), one-file parsing with its
limits, and the read-only AST and typed kernel types that lowering and the editor support
walk (all lowering may read of the front end's work is in the typed kernel).
"""

from __future__ import annotations

from parser import codes
from parser.ast_nodes import ArrayType, Function, GenericParam, IntLit, PathType, TypeParam
from parser.checks.arch_elements import check_arch_elements
from parser.checks.ownership import check_ownership
from parser.codes import ALL_CODES, DiagnosticCode
from parser.cst_to_ast import MAX_NESTING_DEPTH, ParseDeadline, parse_file
from parser.diagnostics import Diagnostic, DiagnosticSink, Label, Severity
from parser.generics import bind_generics, canonical_text
from parser.optimization_hints import divisibility_cap
from parser.parsed_files import PARSED_FILES
from parser.program import Program, find_entry, link
from parser.render import MAX_DIAGNOSTICS, render, to_json
from parser.render_lsp import lsp_range, to_lsp
from parser.spans import SourceFile, Span
from parser.specialization import (
    DEFAULT_BASE_ALIGN,
    TensorFacts,
    ViewLayout,
    specialize,
    view_layouts,
)
from parser.typecheck import typecheck_entry
from parser.typed_kernel import TypedBody, TypedKernel

__all__ = [
    "ALL_CODES",
    "DEFAULT_BASE_ALIGN",
    "MAX_DIAGNOSTICS",
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
    "Program",
    "Severity",
    "SourceFile",
    "Span",
    "TensorFacts",
    "TypeParam",
    "TypedBody",
    "TypedKernel",
    "ViewLayout",
    "canonical_text",
    "check_entry",
    "codes",
    "entry_names",
    "kernel_view_layouts",
    "lsp_range",
    "parse_file",
    "parse_program",
    "render",
    "to_json",
    "to_lsp",
]


def parse_program(
    sources: tuple[SourceFile, ...],
    sink: DiagnosticSink,
    deadline: ParseDeadline | None = None,
) -> Program:
    """Parse every file (tree-sitter stops here; `deadline` bounds its wall time over all
    of them, CT0007 past it; a file's clean parse is reused for the same `SourceFile`,
    `parsed_files`) and link the kernel modules."""
    parsed = tuple(PARSED_FILES.parse(source, sink, deadline) for source in sources)
    return link(parsed, sink)


def check_entry(
    program: Program,
    entry_name: str,
    generics: tuple[tuple[str, str], ...],
    generic_args: tuple[str, ...],
    arch: str,
    facts: tuple[TensorFacts, ...],
    sink: DiagnosticSink,
) -> TypedKernel | None:
    """Find the entry, bind its generics, type check it (shapes become concrete), check
    borrows, moves, `unsafe` and the arch's element types, and specialize it to the host's
    tensor facts; None when any of it reported an error."""
    entry = find_entry(program, entry_name, sink)
    bound = bind_generics(entry, generics, generic_args, sink) if entry else None
    kernel = typecheck_entry(program, entry, bound, sink) if entry and bound is not None else None
    if kernel is None and not sink.has_errors:  # a silent stop would look like success
        raise AssertionError("the entry check stopped without reporting why")
    if kernel is None or sink.has_errors:
        return kernel
    # Borrows, moves and `unsafe` (rustc's rules in the reference) need the typed facts
    # (which call is which intrinsic, the inlined device-function bodies, the types that
    # are not Copy) and must pass before lowering, which assumes a sound program.
    check_ownership(kernel, sink)
    check_arch_elements(kernel, arch, sink)
    kernel = specialize(kernel, facts, sink, _cap(kernel, arch))
    return None if sink.has_errors else kernel


def kernel_view_layouts(
    kernel: TypedKernel, facts: tuple[TensorFacts, ...], arch: str
) -> dict[int, ViewLayout]:
    """Parameter index -> the view layout the lowering may assume on `arch`."""
    return view_layouts(kernel, facts, _cap(kernel, arch))


def entry_names(sources: tuple[SourceFile, ...]) -> dict[str, tuple[str, ...]]:
    """The qualified entry names each file defines (files that do not parse define none)."""
    sink = DiagnosticSink()
    return {
        parsed.source.name: tuple(
            f.qualified_name for m in parsed.modules for f in m.functions if f.entry
        )
        for parsed in (parse_file(source, sink) for source in sources)
    }


def _cap(kernel: TypedKernel, arch: str) -> int | None:
    return divisibility_cap(kernel.signature.options.optimization_hints, arch)
