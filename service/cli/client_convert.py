"""Client-side conversions: domain requests to wire items, wire diagnostics back.

`cutile-compile --server` builds `lowering.pipeline.CompileRequest`s exactly as it does
locally, sends them as `CompileBatch` items (`batch_item`), and turns the diagnostics the
server returns into `parser.diagnostics.Diagnostic`s over its own copies of the sources
(`diagnostic_from_proto`), so they render and serialize as local ones do.
"""

from __future__ import annotations

from collections.abc import Mapping

from lowering.pipeline import CompileRequest
from parser.front_end import (
    ALL_CODES,
    DEFAULT_BASE_ALIGN,
    Diagnostic,
    DiagnosticCode,
    Label,
    Severity,
    SourceFile,
    Span,
)
from protos.generated.cutile.compile.v1 import compile_pb2

_SEVERITY = {
    compile_pb2.SEVERITY_ERROR: Severity.ERROR,
    compile_pb2.SEVERITY_WARNING: Severity.WARNING,
    compile_pb2.SEVERITY_NOTE: Severity.NOTE,
    compile_pb2.SEVERITY_HELP: Severity.HELP,
}


def batch_item(request: CompileRequest, source_indices: list[int]) -> compile_pb2.BatchItem:
    """The `BatchItem` of `request`, whose sources sit at `source_indices` of the batch."""
    return compile_pb2.BatchItem(
        source_indices=source_indices,
        entry=request.entry,
        generics=dict(request.generics),
        generic_args=list(request.generic_args),
        target=request.arch,
        options=compile_pb2.CompileOptions(
            opt_level=request.opt_level,
            host_arch=request.host_arch,
            lineinfo=request.lineinfo,
            exact_accumulators=request.exact_accumulators,
            exact_f32_products=request.exact_f32_products,
            plain_launch=not request.early_launch,
            occupancy_variant=request.occupancy,
        ),
        specialization=[
            compile_pb2.TensorFacts(
                param=facts.param,
                dim_divisors=facts.dim_divisors,
                stride_divisors=facts.stride_divisors,
                base_align=0 if facts.base_align == DEFAULT_BASE_ALIGN else facts.base_align,
                any_last_stride=not facts.unit_last_stride,
            )
            for facts in request.specialization
        ],
    )


def diagnostic_from_proto(
    message: compile_pb2.Diagnostic, files: Mapping[str, SourceFile]
) -> Diagnostic:
    """The domain diagnostic; spans into files not in `files` (or out of range) are
    dropped, an unknown code keeps its id."""
    code = ALL_CODES.get(message.code) or DiagnosticCode(message.code, "unknown", "")
    labels = []
    for span in message.spans:
        file = files.get(span.source_name)
        if file is None or not span.byte_start <= span.byte_end <= len(file.data):
            continue
        labels.append(Label(Span(file, span.byte_start, span.byte_end), span.label, span.primary))
    return Diagnostic(
        severity=_SEVERITY.get(message.severity, Severity.ERROR),
        code=code,
        message=message.message,
        labels=tuple(labels),
        notes=tuple(message.notes),
        help=tuple(message.help),
    )
