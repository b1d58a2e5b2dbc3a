"""Conversions between the wire messages and the compiler's domain types.

Inbound, `request_from_proto` validates a `compile_pb2.CompileRequest` against `Limits`
and builds a `lowering.pipeline.CompileRequest` with every default filled in (empty target,
opt level 0 and empty host arch become the defaults; named generics are sorted and every
generic argument spelled one way, `parser.generics.canonical_text`), so two requests
meaning the same compile get the same cache key. Problems are collected as
`FieldViolation`s (AIP-193 field paths) and raised together in one `InvalidRequest`.

Outbound, `contract_to_proto` and `diagnostic_to_proto` map the domain dataclasses onto
`contract_pb2.LaunchContract` and `compile_pb2.Diagnostic`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from lowering.contract import AssumptionKind, LaunchContract, ParamKind, Quantity, SlotRole
from lowering.pipeline import (
    ARCHS,
    DEFAULT_ARCH,
    HOST_ARCHES,
    CompileRequest,
)
from parser.front_end import (
    DEFAULT_BASE_ALIGN,
    MAX_DIAGNOSTICS,
    Diagnostic,
    Label,
    Severity,
    SourceFile,
    TensorFacts,
    canonical_text,
    render,
)
from protos.generated.cutile.compile.v1 import compile_pb2, contract_pb2

DEFAULT_OPT_LEVEL = 3
MAX_OPT_LEVEL = 3
MAX_OCCUPANCY = 32  # tileiras's range of the occupancy hint
FACT_DIVISORS = frozenset({1, 2, 4, 8, 16})  # powers of two up to 16 elements
MAX_FACT_AXES = 8  # per list: one entry per tensor axis
BASE_ALIGNS = frozenset({1, 2, 4, 8, 16})  # bytes dividing a base address (0 in a request: 16)
DEFAULT_HOST_ARCH = HOST_ARCHES[0]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ENTRY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*")


@dataclass(frozen=True)
class Limits:
    """Request limits, checked before any parsing (advertised to clients later)."""

    max_source_bytes: int = 1 << 20  # all sources together, UTF-8
    max_files: int = 64
    max_name_chars: int = 255  # a source file name
    max_entry_chars: int = 256
    max_generics: int = 64
    max_generic_value_chars: int = 256
    max_facts: int = 64  # specialization entries (one per tensor parameter)


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class FieldViolation:
    field: str  # "sources[0].name", "options.opt_level"
    description: str


def clip(text: str, chars: int = 64) -> str:
    """`text`, cut to `chars` characters with an ellipsis: a client's value quoted back in
    an error stays short whatever the client sent."""
    return text if len(text) <= chars else text[: chars - 1] + "\u2026"


class InvalidRequest(ValueError):
    """A malformed request; carries every violation found."""

    def __init__(self, violations: Iterable[FieldViolation]) -> None:
        self.violations = tuple(violations)
        super().__init__("; ".join(f"{v.field}: {v.description}" for v in self.violations))


# --------------------------------------------------------------------------- requests


def request_from_proto(
    message: compile_pb2.CompileRequest,
    limits: Limits = DEFAULT_LIMITS,
    make_source: Callable[[str, str], SourceFile] = SourceFile,
) -> CompileRequest:
    """The domain request for `message`, or `InvalidRequest` listing every problem.
    `make_source(name, text)` builds the source files (the server reuses recent ones)."""
    violations = validate(message, limits)
    if violations:
        raise InvalidRequest(violations)
    options = message.options
    return CompileRequest(
        sources=tuple(make_source(s.name, s.text) for s in message.sources),
        entry=message.entry,
        generics=tuple(sorted((n, canonical_text(v)) for n, v in message.generics.items())),
        generic_args=tuple(canonical_text(v) for v in message.generic_args),
        arch=message.target or DEFAULT_ARCH,
        opt_level=options.opt_level if options.HasField("opt_level") else DEFAULT_OPT_LEVEL,
        host_arch=options.host_arch or DEFAULT_HOST_ARCH,
        lineinfo=options.lineinfo,
        exact_accumulators=options.exact_accumulators,
        exact_f32_products=options.exact_f32_products,
        early_launch=not options.plain_launch,
        occupancy=options.occupancy_variant,
        specialization=tuple(
            sorted(
                (facts_from_proto(f) for f in message.specialization),
                key=lambda facts: facts.param,
            )
        ),
    )


def facts_from_proto(message: compile_pb2.TensorFacts) -> TensorFacts:
    """The domain facts; an unset `base_align` (0) is the default alignment."""
    return TensorFacts(
        message.param,
        tuple(message.dim_divisors),
        tuple(message.stride_divisors),
        base_align=message.base_align or DEFAULT_BASE_ALIGN,
        unit_last_stride=not message.any_last_stride,
    )


def validate(
    message: compile_pb2.CompileRequest, limits: Limits = DEFAULT_LIMITS
) -> list[FieldViolation]:
    """Every problem with `message`, in field order; empty when it is well formed."""
    return [
        *check_sources(message.sources, limits),
        *_check_entry(message.entry, limits),
        *_check_generics(message, limits),
        *_check_target(message.target),
        *_check_options(message.options),
        *_check_specialization(message.specialization, limits),
    ]


def check_sources(
    sources: Sequence[compile_pb2.SourceFile], limits: Limits
) -> list[FieldViolation]:
    """The problems of a request's (or a batch's) source files."""
    if not sources:
        return [FieldViolation("sources", "at least one source file is required")]
    if len(sources) > limits.max_files:  # and no look at any of them
        message = f"{len(sources)} files exceed the limit of {limits.max_files}"
        return [FieldViolation("sources", message)]
    found = []
    total = sum(text_bytes(s) for s in sources)
    if total > limits.max_source_bytes:
        found.append(
            FieldViolation(
                "sources", f"{total} source bytes exceed the limit of {limits.max_source_bytes}"
            )
        )
    seen: set[str] = set()
    for index, source in enumerate(sources):
        problem = file_name_problem(source.name, limits.max_name_chars)
        if problem is None and source.name in seen:
            problem = "duplicate source file name"
        if problem is not None:
            found.append(FieldViolation(f"sources[{index}].name", problem))
        seen.add(source.name)
    return found


def text_bytes(source: compile_pb2.SourceFile) -> int:
    """The UTF-8 size of `source.text`, from the message's wire size: no copy of the text
    (a 1 MiB source would otherwise be decoded and encoded again just to be measured).
    Bytes of fields the message does not know only make the estimate larger; where they
    leave no consistent reading of the wire size, the text is measured itself (never 0: a
    hostile unknown field once slipped 6 MiB of sources past the 1 MiB limit that way)."""
    name = len(source.name.encode("utf-8"))
    rest = source.ByteSize() - (1 + _varint_len(name) + name if name else 0)
    for prefix in range(1, 6):  # field tag + the varint length of the text
        size = rest - 1 - prefix
        if size >= 0 and _varint_len(size) == prefix:
            return size
    return len(source.text.encode("utf-8"))


def _varint_len(value: int) -> int:
    return max(1, (value.bit_length() + 6) // 7)


def file_name_problem(name: str, max_chars: int = Limits.max_name_chars) -> str | None:
    """Why `name` is not a plain file name (a label, never a path), or None."""
    if not name:
        return "a source file name is required"
    if len(name) > max_chars:
        return f"longer than {max_chars} characters"
    if name in (".", "..") or "/" in name or "\\" in name:
        return "must be a plain file name, not a path"
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in name):
        return "must not contain control characters"
    return None


def _check_entry(entry: str, limits: Limits) -> list[FieldViolation]:
    if not entry:
        return [FieldViolation("entry", "an entry function name is required")]
    if len(entry) > limits.max_entry_chars:
        return [FieldViolation("entry", f"longer than {limits.max_entry_chars} characters")]
    if not _ENTRY.fullmatch(entry):
        return [FieldViolation("entry", "must be a Rust path such as `add` or `kernel::add`")]
    return []


def _check_generics(message: compile_pb2.CompileRequest, limits: Limits) -> list[FieldViolation]:
    found = []
    if message.generics and message.generic_args:
        found.append(
            FieldViolation("generic_args", "give generics by name or by position, not both")
        )
    if len(message.generics) + len(message.generic_args) > limits.max_generics:
        found.append(FieldViolation("generics", f"more than {limits.max_generics} generics"))
        return found  # and no look at each of them
    for name, value in sorted(message.generics.items()):
        field = f"generics[{clip(name)!r}]"
        if not _IDENT.fullmatch(name):
            found.append(FieldViolation(field, "not a generic parameter name"))
        found.extend(_check_generic_value(field, value, limits))
    for index, value in enumerate(message.generic_args):
        found.extend(_check_generic_value(f"generic_args[{index}]", value, limits))
    return found


def _check_generic_value(field: str, value: str, limits: Limits) -> list[FieldViolation]:
    if not value.strip():
        return [FieldViolation(field, "a generic argument must not be empty")]
    if len(value) > limits.max_generic_value_chars:
        return [FieldViolation(field, f"longer than {limits.max_generic_value_chars} characters")]
    return []


def _check_target(target: str) -> list[FieldViolation]:
    if target and target not in ARCHS:
        supported = ", ".join(ARCHS)
        message = f"unsupported target {clip(target)!r}; supported: {supported}"
        return [FieldViolation("target", message)]
    return []


def _check_options(options: compile_pb2.CompileOptions) -> list[FieldViolation]:
    found = []
    if options.opt_level > MAX_OPT_LEVEL:
        found.append(FieldViolation("options.opt_level", f"must be 0..{MAX_OPT_LEVEL}"))
    if options.host_arch and options.host_arch not in HOST_ARCHES:
        arches = ", ".join(HOST_ARCHES)
        found.append(
            FieldViolation(
                "options.host_arch",
                f"unsupported host arch {clip(options.host_arch)!r}; use {arches}",
            )
        )
    if options.occupancy_variant > MAX_OCCUPANCY:
        found.append(
            FieldViolation("options.occupancy_variant", f"must be 0 (none) or 1..{MAX_OCCUPANCY}")
        )
    if options.early_launch and options.plain_launch:  # the deprecated opt-in against its opposite
        found.append(
            FieldViolation(
                "options.plain_launch",
                "contradicts options.early_launch (deprecated: kernels launch early by default)",
            )
        )
    return found


def _check_specialization(
    specialization: Sequence[compile_pb2.TensorFacts], limits: Limits
) -> list[FieldViolation]:
    if len(specialization) > limits.max_facts:  # and no look at each of them
        message = f"{len(specialization)} entries exceed the limit of {limits.max_facts}"
        return [FieldViolation("specialization", message)]
    found = []
    seen: set[str] = set()
    for index, facts in enumerate(specialization):
        where = f"specialization[{index}]"
        if not _IDENT.fullmatch(facts.param) or len(facts.param) > limits.max_entry_chars:
            found.append(FieldViolation(f"{where}.param", "must name a tensor parameter"))
        elif facts.param in seen:
            found.append(FieldViolation(f"{where}.param", "must name a distinct tensor parameter"))
        seen.add(facts.param)
        for name, divisors in (
            ("dim_divisors", facts.dim_divisors),
            ("stride_divisors", facts.stride_divisors),
        ):
            if len(divisors) > MAX_FACT_AXES:
                found.append(FieldViolation(f"{where}.{name}", f"at most {MAX_FACT_AXES} axes"))
            if any(d not in FACT_DIVISORS for d in divisors):
                allowed = sorted(FACT_DIVISORS)
                found.append(FieldViolation(f"{where}.{name}", f"each must be one of {allowed}"))
        if facts.base_align and facts.base_align not in BASE_ALIGNS:
            allowed = sorted(BASE_ALIGNS)
            message = f"{facts.base_align} is not one of {allowed} (0: the default, 16)"
            found.append(FieldViolation(f"{where}.base_align", message))
    return found


# --------------------------------------------------------------------------- results


def digest(data: bytes) -> compile_pb2.Digest:
    return compile_pb2.Digest(sha256=hashlib.sha256(data).hexdigest(), size=len(data))


_SEVERITY = {
    Severity.ERROR: compile_pb2.SEVERITY_ERROR,
    Severity.WARNING: compile_pb2.SEVERITY_WARNING,
    Severity.NOTE: compile_pb2.SEVERITY_NOTE,
    Severity.HELP: compile_pb2.SEVERITY_HELP,
}


def diagnostics_to_proto(diagnostics: Sequence[Diagnostic]) -> list[compile_pb2.Diagnostic]:
    """The first MAX_DIAGNOSTICS diagnostics (as the CLI renders them), then a note counting
    the rest: an answer stays bounded however many problems a source holds."""
    shown = [diagnostic_to_proto(d) for d in diagnostics[:MAX_DIAGNOSTICS]]
    if len(diagnostics) > MAX_DIAGNOSTICS:
        note = f"{len(diagnostics) - MAX_DIAGNOSTICS} more diagnostics not shown"
        shown.append(
            compile_pb2.Diagnostic(
                severity=compile_pb2.SEVERITY_NOTE, message=note, rendered=f"note: {note}"
            )
        )
    return shown


def diagnostic_to_proto(diagnostic: Diagnostic) -> compile_pb2.Diagnostic:
    return compile_pb2.Diagnostic(
        severity=_SEVERITY[diagnostic.severity],
        code=diagnostic.code.id,
        message=diagnostic.message,
        spans=[_span_to_proto(label) for label in diagnostic.labels],
        notes=diagnostic.notes,
        help=diagnostic.help,
        rendered=render(diagnostic),
    )


def _span_to_proto(label: Label) -> compile_pb2.SourceSpan:
    line_start, col_start = label.span.start_line_col
    line_end, col_end = label.span.end_line_col
    return compile_pb2.SourceSpan(
        source_name=label.span.file_name,
        byte_start=label.span.start,
        byte_end=label.span.end,
        line_start=line_start,
        col_start=col_start,
        line_end=line_end,
        col_end=col_end,
        label=label.message,
        primary=label.primary,
    )


_PARAM_KIND = {
    ParamKind.TENSOR_IN: contract_pb2.PARAM_KIND_TENSOR_IN,
    ParamKind.TENSOR_OUT: contract_pb2.PARAM_KIND_TENSOR_OUT,
    ParamKind.SCALAR: contract_pb2.PARAM_KIND_SCALAR,
    ParamKind.TENSOR_OUT_MAPPED: contract_pb2.PARAM_KIND_TENSOR_OUT_MAPPED,
    ParamKind.POINTER: contract_pb2.PARAM_KIND_POINTER,
}
_SLOT_ROLE = {
    SlotRole.PTR: contract_pb2.SLOT_ROLE_PTR,
    SlotRole.DIM: contract_pb2.SLOT_ROLE_DIM,
    SlotRole.STRIDE: contract_pb2.SLOT_ROLE_STRIDE,
    SlotRole.PART_DIM: contract_pb2.SLOT_ROLE_PART_DIM,
    SlotRole.PART_STRIDE: contract_pb2.SLOT_ROLE_PART_STRIDE,
    SlotRole.VALUE: contract_pb2.SLOT_ROLE_VALUE,
}
_ASSUMPTION_KIND = {
    AssumptionKind.BASE_ALIGN: contract_pb2.ASSUMPTION_KIND_BASE_ALIGN,
    AssumptionKind.DIM_DIV: contract_pb2.ASSUMPTION_KIND_DIM_DIV,
    AssumptionKind.STRIDE_DIV: contract_pb2.ASSUMPTION_KIND_STRIDE_DIV,
    AssumptionKind.STRIDE_ONE: contract_pb2.ASSUMPTION_KIND_STRIDE_ONE,
    AssumptionKind.NONNEG: contract_pb2.ASSUMPTION_KIND_NONNEG,
    AssumptionKind.STATIC_DIM: contract_pb2.ASSUMPTION_KIND_STATIC_DIM,
    AssumptionKind.FITS_I32: contract_pb2.ASSUMPTION_KIND_FITS_I32,
    AssumptionKind.SLAB_DIV: contract_pb2.ASSUMPTION_KIND_SLAB_DIV,
}


def contract_to_proto(contract: LaunchContract) -> contract_pb2.LaunchContract:
    """The wire form of a launch contract; every domain field has a home."""
    pb = contract_pb2
    return pb.LaunchContract(
        schema_version=contract.schema_version,
        kernel=pb.KernelIdentity(
            module=contract.module,
            function=contract.function,
            entry_symbol=contract.entry_symbol,
            source_sha256=contract.source_sha256,
            compiler_version=contract.compiler_version,
        ),
        target=pb.Target(
            sm=contract.sm,
            tileiras_version=contract.tileiras_version,
            bytecode_version=contract.bytecode_version,
            opt_level=contract.opt_level,
            host_arch=contract.host_arch,
        ),
        params=[
            pb.Param(
                index=p.index,
                name=p.name,
                kind=_PARAM_KIND[p.kind],
                dtype=p.dtype,
                rank=p.rank,
                declared_shape=p.declared_shape,
                tile_shape=p.tile_shape,
                map_shape=p.map_shape,
            )
            for p in contract.params
        ],
        abi=[
            pb.AbiSlot(
                param=s.param,
                role=_SLOT_ROLE[s.role],
                axis=s.axis,
                ctype=s.ctype,
                offset=s.offset,
                size=s.size,
            )
            for s in contract.abi
        ],
        grid=pb.GridRule(
            mode=pb.GridRule.MODE_PERSISTENT
            if contract.persistent
            else pb.GridRule.MODE_HOST
            if contract.host_grid
            else pb.GridRule.MODE_FROM_OUTPUTS,
            output_params=contract.grid_outputs,
        ),
        launch=pb.LaunchConfig(
            block=contract.block,
            shared_mem_bytes=contract.shared_mem_bytes,
            param_buffer_bytes=contract.param_buffer_bytes,
            cluster_blocks=contract.cluster_blocks,
            waits_for_prior_grids=contract.waits_for_prior_grids,
            min_tile_blocks=contract.min_tile_blocks,
            takes_occupancy_variant=contract.takes_occupancy_variant,
        ),
        assumptions=[
            pb.Assumption(param=a.param, kind=_ASSUMPTION_KIND[a.kind], axis=a.axis, value=a.value)
            for a in contract.assumptions
        ],
        safety=pb.Safety(
            unchecked_accesses=contract.safety.unchecked_accesses,
            checks_discharged=contract.safety.checks_discharged,
            checks_hoisted_to_host=contract.safety.checks_hoisted_to_host,
            checks_hoisted_to_preheader=contract.safety.checks_hoisted_to_preheader,
            checks_in_place=contract.safety.checks_in_place,
            outputs_exclusive=contract.safety.outputs_exclusive,
        ),
        specialization=pb.Specialization(
            generics=[pb.GenericBinding(name=n, value=v) for n, v in contract.generics]
        ),
        launch_checks=[
            pb.LaunchCheck(lhs=_quantity(c.lhs), rhs=_quantity(c.rhs), cause=c.cause)
            for c in contract.launch_checks
        ],
    )


def _quantity(quantity: Quantity) -> contract_pb2.Quantity:
    pb = contract_pb2
    if quantity.dim is not None:
        return pb.Quantity(dim=pb.ParamAxis(param=quantity.dim[0], axis=quantity.dim[1]))
    if quantity.tile_count is not None:
        param, axis, tile = quantity.tile_count
        return pb.Quantity(tile_count=pb.TileCount(param=param, axis=axis, tile=tile))
    if quantity.grid_axis is not None:
        return pb.Quantity(grid_axis=quantity.grid_axis)
    if quantity.slab_tiles is not None:
        param, axis, tile = quantity.slab_tiles
        return pb.Quantity(slab_tiles=pb.TileCount(param=param, axis=axis, tile=tile))
    return pb.Quantity(constant=quantity.constant or 0)
