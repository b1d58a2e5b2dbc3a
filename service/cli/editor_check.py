"""The checks `cutile-lsp` runs on one open document, without a language-server library.

`check_document(name, text, generics)` parses the document and, for every entry of its
`#[cutile::module]`s, runs the compiler up to its checks (`Stage.CHECK`: resolution, types and
shapes, borrows and moves, `unsafe`, target rules) and collects their diagnostics (each
once) and the types of the entry's expressions and bindings (for hover). A document without
`#[cutile::module]` is not checked.

Types and shapes need the entry's generic arguments. They come from the `generics` map
(entry name to a `cutile-compile --generics` spec, `B=128,E=f16`), else from sample values:
`f32` for an element type, `false` for a `bool`, and each `i32` (and every element of an
`[i32; N]`) checked twice, at 16 and at 1. Only what both sample checks report is shown
(a kernel may be meant only for some values: a hint's range, a tile that must divide
another), with a note naming the values; the samples' own binding errors are not shown.
Hover shows the types of the first sample check. Device functions in other files are not
linked: the document is checked alone.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from lowering.pipeline import CompileRequest, CompileResult, Stage, compile_kernel, list_entries
from parser.front_end import (
    ArrayType,
    Diagnostic,
    DiagnosticSink,
    Function,
    GenericParam,
    IntLit,
    PathType,
    SourceFile,
    Span,
    TypedBody,
    TypedKernel,
    TypeParam,
    codes,
    parse_file,
    render,
)
from service.cli.generics_arg import UsageError, parse_generics

MODULE_MARK = "#[cutile::module]"
SAMPLE_I32 = ("16", "1")  # an `i32` generic's sample values, first one for hover


@dataclass(frozen=True)
class TypeAt:
    """The type of the expression or binding at `span` in the entry `entry`."""

    start: int  # byte offsets in the document
    end: int
    text: str  # the source of the expression
    type: str
    entry: str
    generics: str  # the generic arguments it was checked with, `B=64`


@dataclass
class DocumentCheck:
    source: SourceFile
    diagnostics: list[Diagnostic] = field(default_factory=list)
    types: list[TypeAt] = field(default_factory=list)  # sorted by (start, -end)

    def type_at(self, offset: int) -> TypeAt | None:
        """The innermost typed expression or binding containing byte `offset`."""
        starts = [t.start for t in self.types]
        best: TypeAt | None = None
        for t in self.types[: bisect.bisect_right(starts, offset)]:
            inside = t.start <= offset < t.end or t.start == offset == t.end
            if inside and (best is None or t.end - t.start <= best.end - best.start):
                best = t
        return best


def check_document(
    name: str, text: str, generics: Mapping[str, str] | None = None
) -> DocumentCheck:
    """Every entry of the document checked; see the module docstring."""
    source = SourceFile(name, text)
    result = DocumentCheck(source)
    if MODULE_MARK not in text:
        return result
    seen: set[str] = set()
    entries = list_entries((source,)).get(name, ())
    if not entries:  # a syntax error, or no entries: report what parsing and linking found
        parsed = compile_kernel(CompileRequest((source,), "_"), stop_after=Stage.PARSE)
        _add(result, parsed.diagnostics, seen, sample=None)
        return result
    for entry in entries:
        _check_entry(result, source, entry, (generics or {}), seen)
    result.types.sort(key=lambda t: (t.start, -t.end))
    return result


def _check_entry(
    result: DocumentCheck,
    source: SourceFile,
    entry: str,
    generics: Mapping[str, str],
    seen: set[str],
) -> None:
    given = generics.get(entry) or generics.get(entry.rpartition("::")[2])
    if given is not None:
        named, positional = _parse_spec(given)
        checked = _check(source, entry, named, positional)
        _add(result, checked.diagnostics, seen, None)
        described = ", ".join(f"{n}={v}" for n, v in named) or ", ".join(positional)
        if checked.kernel is not None:
            result.types.extend(typed_spans(checked.kernel, entry, described, source))
        return
    function = _function(source, entry)
    if function is None:
        return
    runs = []
    for value in SAMPLE_I32:
        named = tuple((p.name, _sample(p, value)) for p in function.generics)
        runs.append((named, _check(source, entry, named, ())))
    (named, first), *others = runs
    described = ", ".join(f"{n}={v}" for n, v in named)
    everywhere = [
        d
        for d in first.diagnostics
        if d.code is not codes.GENERIC_ARGUMENT
        and all(_where(d) in {_where(o) for o in run.diagnostics} for _, run in others)
    ]
    _add(result, tuple(everywhere), seen, described if function.generics else None)
    if first.kernel is not None:
        result.types.extend(typed_spans(first.kernel, entry, described, source))


def _check(
    source: SourceFile,
    entry: str,
    named: tuple[tuple[str, str], ...],
    positional: tuple[str, ...],
) -> CompileResult:
    request = CompileRequest((source,), entry, generics=named, generic_args=positional)
    return compile_kernel(request, stop_after=Stage.CHECK)


def _where(diagnostic: Diagnostic) -> tuple[str, int, int]:
    """What identifies a diagnostic across sample values: its code and primary span."""
    span = diagnostic.primary_span
    return (diagnostic.code.id, *((span.start, span.end) if span is not None else (-1, -1)))


def _parse_spec(text: str) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    try:
        spec = parse_generics(text)
    except UsageError:
        return (), ()
    return spec.named, spec.positional


def _function(source: SourceFile, entry: str) -> Function | None:
    parsed = parse_file(source, DiagnosticSink())
    for module in parsed.modules:
        for function in module.functions:
            if function.qualified_name == entry:
                return function
    return None


def _sample(param: GenericParam, value: str) -> str:
    if isinstance(param, TypeParam):
        return "f32"
    ty = param.type
    if isinstance(ty, ArrayType) and isinstance(ty.length, IntLit):
        return "[" + ", ".join([value] * ty.length.value) + "]"
    if isinstance(ty, PathType) and ty.segments == ("bool",):
        return "false"
    return value


def _add(
    result: DocumentCheck,
    diagnostics: tuple[Diagnostic, ...],
    seen: set[str],
    sample: str | None,
) -> None:
    for diagnostic in diagnostics:
        key = render(diagnostic)
        if key in seen:
            continue
        seen.add(key)
        if sample and diagnostic.primary_span is not None:
            note = (
                f"checked with the sample generic arguments {sample} (cutile-lsp's "
                "`generics` setting checks the values the kernel is meant for)"
            )
            diagnostic = replace(diagnostic, notes=(*diagnostic.notes, note))
        result.diagnostics.append(diagnostic)


def typed_spans(kernel: TypedKernel, entry: str, generics: str, source: SourceFile) -> list[TypeAt]:
    """The type of every expression and binding of `kernel` in `source` (inlined device
    functions included), once per span."""
    found: dict[tuple[int, int], TypeAt] = {}

    def add(span: Span, type_text: str) -> None:
        if span.file is source and (span.start, span.end) not in found:
            found[(span.start, span.end)] = TypeAt(
                span.start, span.end, span.text, type_text, entry, generics
            )

    def walk(body: TypedBody) -> None:
        for binding in (v for bound in body.lets.values() for v in bound):
            add(binding.span, str(binding.type))
        for expr, ty in body.expr_types.items():
            add(expr.span, str(ty))
        for call in body.inlined.values():
            walk(call.body)

    for param in kernel.params:
        add(param.span, str(param.type))
    walk(kernel.body)
    return list(found.values())
