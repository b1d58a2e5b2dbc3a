"""The front end as the compile pipeline calls it: sources to a linked program, and one
entry of it to a checked, specialized typed kernel.

Everything lowering may read of the front end's work is in the typed kernel
(`parser.typed_kernel`); these functions are the only way in from outside the parser.
"""

from __future__ import annotations

from parser.checks.arch_elements import check_arch_elements
from parser.checks.ownership import check_ownership
from parser.cst_to_ast import parse_file
from parser.diagnostics import DiagnosticSink
from parser.generics import bind_generics
from parser.optimization_hints import divisibility_cap
from parser.program import Program, find_entry, link
from parser.spans import SourceFile
from parser.specialization import TensorFacts, ViewLayout, specialize, view_layouts
from parser.typecheck import typecheck_entry
from parser.typed_kernel import TypedKernel


def parse_program(sources: tuple[SourceFile, ...], sink: DiagnosticSink) -> Program:
    """Parse every file (tree-sitter stops here) and link the kernel modules."""
    return link(tuple(parse_file(source, sink) for source in sources), sink)


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
