"""service.convert: request validation and the domain → proto mappings."""

from __future__ import annotations

import pytest

from lowering.contract import AssumptionKind, ParamKind, SlotRole
from lowering.pipeline import DEFAULT_ARCH
from parser.codes import TILEIRAS_FAILED
from parser.diagnostics import Diagnostic, Label, Severity
from parser.render import MAX_DIAGNOSTICS
from parser.spans import SourceFile, Span
from parser.specialization import TensorFacts
from protos.generated.cutile.compile.v1 import compile_pb2, contract_pb2
from service.convert import (
    InvalidRequest,
    Limits,
    clip,
    contract_to_proto,
    diagnostic_to_proto,
    diagnostics_to_proto,
    digest,
    file_name_problem,
    request_from_proto,
    text_bytes,
    validate,
)


def _request(**fields: object) -> compile_pb2.CompileRequest:
    message = compile_pb2.CompileRequest(
        sources=[compile_pb2.SourceFile(name="add.rs", text="mod k {}")],
        entry="add",
        generics={"B": "128"},
    )
    for name, value in fields.items():
        if name == "sources":
            del message.sources[:]
            message.sources.extend(value)
        elif name == "generics":
            message.generics.clear()
            message.generics.update(value)
        elif name == "options":
            message.options.CopyFrom(value)
        elif name == "generic_args":
            message.generic_args.extend(value)
        elif name == "specialization":
            message.specialization.extend(value)
        else:
            setattr(message, name, value)
    return message


def _fields(message: compile_pb2.CompileRequest) -> list[str]:
    return [v.field for v in validate(message)]


def test_valid_request_gets_every_default() -> None:
    request = request_from_proto(_request(generics={"N": "4", "B": "128"}))
    assert [s.name for s in request.sources] == ["add.rs"]
    assert request.sources[0].text == "mod k {}"
    assert request.entry == "add"
    assert request.generics == (("B", "128"), ("N", "4"))  # sorted: map order is not stable
    assert request.arch == DEFAULT_ARCH
    assert request.opt_level == 3
    assert request.host_arch == "x86_64"
    assert request.lineinfo is False
    assert request.exact_accumulators is False
    assert request.exact_f32_products is False
    assert request.early_launch is True  # plain_launch unset


def test_an_explicit_zero_opt_level_means_O0() -> None:
    options = compile_pb2.CompileOptions(opt_level=0)
    assert request_from_proto(_request(generics={}, options=options)).opt_level == 0


def test_the_deprecated_early_launch_opt_in_is_the_default() -> None:
    options = compile_pb2.CompileOptions(early_launch=True)
    assert request_from_proto(_request(generics={}, options=options)).early_launch is True


def test_early_launch_and_plain_launch_together_are_refused() -> None:
    options = compile_pb2.CompileOptions(early_launch=True, plain_launch=True)
    with pytest.raises(InvalidRequest) as caught:
        request_from_proto(_request(generics={}, options=options))
    assert [v.field for v in caught.value.violations] == ["options.plain_launch"]


def test_an_occupancy_variant_is_asked_for_with_a_hint_in_tileiras_range() -> None:
    options = compile_pb2.CompileOptions(occupancy_variant=4)
    assert request_from_proto(_request(generics={}, options=options)).occupancy == 4
    assert request_from_proto(_request(generics={})).occupancy == 0
    options = compile_pb2.CompileOptions(occupancy_variant=33)
    with pytest.raises(InvalidRequest) as caught:
        request_from_proto(_request(generics={}, options=options))
    assert [v.field for v in caught.value.violations] == ["options.occupancy_variant"]


def test_explicit_options_are_kept() -> None:
    options = compile_pb2.CompileOptions(
        opt_level=1,
        host_arch="aarch64",
        lineinfo=True,
        exact_accumulators=True,
        exact_f32_products=True,
        plain_launch=True,
    )
    request = request_from_proto(
        _request(generics={}, generic_args=["128"], target="sm_100", options=options)
    )
    assert request.exact_accumulators is True
    assert request.exact_f32_products is True
    assert request.early_launch is False
    assert request.generic_args == ("128",)
    assert request.generics == ()
    assert (request.arch, request.opt_level, request.host_arch, request.lineinfo) == (
        "sm_100",
        1,
        "aarch64",
        True,
    )


@pytest.mark.parametrize(
    ("fields", "violated"),
    [
        ({"sources": []}, "sources"),
        ({"sources": [compile_pb2.SourceFile(name="", text="x")]}, "sources[0].name"),
        ({"sources": [compile_pb2.SourceFile(name="a/b.rs", text="x")]}, "sources[0].name"),
        ({"sources": [compile_pb2.SourceFile(name="..", text="x")]}, "sources[0].name"),
        ({"sources": [compile_pb2.SourceFile(name="a\\b.rs", text="x")]}, "sources[0].name"),
        ({"sources": [compile_pb2.SourceFile(name="a\nb.rs", text="x")]}, "sources[0].name"),
        (
            {"sources": [compile_pb2.SourceFile(name="a.rs"), compile_pb2.SourceFile(name="a.rs")]},
            "sources[1].name",
        ),
        ({"entry": ""}, "entry"),
        ({"entry": "add; rm -rf"}, "entry"),
        ({"entry": "kernel::"}, "entry"),
        ({"target": "sm_91"}, "target"),
        ({"target": "compute_90"}, "target"),
        ({"options": compile_pb2.CompileOptions(opt_level=4)}, "options.opt_level"),
        ({"options": compile_pb2.CompileOptions(host_arch="riscv")}, "options.host_arch"),
        ({"generic_args": ["128"]}, "generic_args"),  # and generics={"B": "128"}
        ({"generics": {"B": ""}}, "generics['B']"),
        ({"generics": {"1B": "128"}}, "generics['1B']"),
        ({"generics": {}, "generic_args": [" "]}, "generic_args[0]"),
        ({"specialization": [compile_pb2.TensorFacts(param="")]}, "specialization[0].param"),
        (
            {"specialization": [compile_pb2.TensorFacts(param="x", stride_divisors=[3])]},
            "specialization[0].stride_divisors",
        ),
        (
            {"specialization": [compile_pb2.TensorFacts(param="x", dim_divisors=[32])]},
            "specialization[0].dim_divisors",
        ),
        (
            {"specialization": [compile_pb2.TensorFacts(param="x", dim_divisors=[1] * 9)]},
            "specialization[0].dim_divisors",
        ),
        (
            {"specialization": [compile_pb2.TensorFacts(param="x")] * 2},
            "specialization[1].param",
        ),
        (
            {"specialization": [compile_pb2.TensorFacts(param="x", base_align=3)]},
            "specialization[0].base_align",
        ),
        (
            {"specialization": [compile_pb2.TensorFacts(param="x", base_align=32)]},
            "specialization[0].base_align",
        ),
    ],
)
def test_each_malformed_field_is_named(fields: dict, violated: str) -> None:
    assert violated in _fields(_request(**fields))
    with pytest.raises(InvalidRequest) as caught:
        request_from_proto(_request(**fields))
    assert violated in str(caught.value)


def test_specialization_is_mapped_sorted_by_parameter() -> None:
    facts = [
        compile_pb2.TensorFacts(param="y", dim_divisors=[16, 8], stride_divisors=[8, 1]),
        compile_pb2.TensorFacts(param="x", stride_divisors=[4]),
    ]
    request = request_from_proto(_request(specialization=facts))
    assert request.specialization == (
        TensorFacts("x", (), (4,)),
        TensorFacts("y", (16, 8), (8, 1)),
    )


def test_view_facts_default_to_an_aligned_unit_stride_view() -> None:
    facts = [
        compile_pb2.TensorFacts(param="x"),
        compile_pb2.TensorFacts(param="y", base_align=16),
        compile_pb2.TensorFacts(param="z", base_align=4, any_last_stride=True),
    ]
    request = request_from_proto(_request(specialization=facts))
    assert request.specialization == (
        TensorFacts("x", base_align=16, unit_last_stride=True),
        TensorFacts("y"),
        TensorFacts("z", base_align=4, unit_last_stride=False),
    )


def test_qualified_entry_is_accepted() -> None:
    assert _fields(_request(entry="kernel::add")) == []


def test_size_limits() -> None:
    limits = Limits(max_source_bytes=10, max_files=2)
    files = [compile_pb2.SourceFile(name=f"f{i}.rs", text="é" * 3) for i in range(3)]
    (violation,) = validate(_request(sources=files), limits)  # too many: nothing else read
    assert violation.field == "sources"
    assert "3 files exceed the limit of 2" in violation.description
    (violation,) = validate(_request(sources=files[:2]), Limits(max_source_bytes=10))
    assert "12 source bytes" in violation.description  # UTF-8 bytes, not characters


def test_past_a_count_limit_no_entry_is_looked_at() -> None:
    """A hostile request of many bad entries gets one violation per limit, not one per
    entry (which would cost the server time and make an answer no client can read)."""
    unnamed = [compile_pb2.SourceFile() for _ in range(1000)]
    assert [v.field for v in validate(_request(sources=unnamed))] == ["sources"]
    facts = [compile_pb2.TensorFacts() for _ in range(1000)]
    (violation,) = validate(_request(specialization=facts))
    assert violation.field == "specialization"
    assert "1000 entries exceed the limit of 64" in violation.description
    generics = {f"G{i}": "1" for i in range(1000)}
    assert [v.field for v in validate(_request(generics=generics))] == ["generics"]


def test_a_fact_names_a_parameter() -> None:
    facts = [
        compile_pb2.TensorFacts(param="x"),
        compile_pb2.TensorFacts(param="not a name"),
        compile_pb2.TensorFacts(param="y" * 300),
        compile_pb2.TensorFacts(param="x"),
    ]
    violations = validate(_request(specialization=facts))
    assert [(v.field, v.description) for v in violations] == [
        ("specialization[1].param", "must name a tensor parameter"),
        ("specialization[2].param", "must name a tensor parameter"),
        ("specialization[3].param", "must name a distinct tensor parameter"),
    ]


def test_values_quoted_back_are_clipped() -> None:
    huge = "x" * 20_000
    message = _request(target=huge, generics={huge + "!": "1"})
    message.options.host_arch = huge
    violations = validate(message)
    assert {v.field for v in violations} == {
        f"generics[{clip(huge + '!')!r}]",
        "target",
        "options.host_arch",
    }
    assert all(len(v.field) + len(v.description) < 300 for v in violations)
    assert clip("short") == "short" and clip("abcdef", 4) == "abc\u2026"


def test_diagnostics_past_the_cap_become_one_note(make_error) -> None:
    many = [make_error("k.rs") for _ in range(MAX_DIAGNOSTICS + 50)]
    shown = diagnostics_to_proto(many)
    assert len(shown) == MAX_DIAGNOSTICS + 1
    assert shown[-1].severity == compile_pb2.SEVERITY_NOTE
    assert shown[-1].message == "50 more diagnostics not shown"
    assert len(diagnostics_to_proto(many[:3])) == 3


def test_all_violations_are_reported_together() -> None:
    message = _request(entry="", target="sm_1", sources=[])
    with pytest.raises(InvalidRequest) as caught:
        request_from_proto(message)
    assert [v.field for v in caught.value.violations] == ["sources", "entry", "target"]


def test_file_name_problem() -> None:
    assert file_name_problem("add.rs") is None
    assert file_name_problem("kernels-v2.rs") is None
    assert file_name_problem("x" * 300) is not None


def test_digest() -> None:
    d = digest(b"abc")
    assert d.size == 3
    assert d.sha256 == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_diagnostic_spans_are_one_based(make_error) -> None:
    message = diagnostic_to_proto(make_error("k.rs"))
    assert message.severity == compile_pb2.SEVERITY_ERROR
    assert message.code == "CT0201"
    assert message.message == "a bad thing"
    (span,) = message.spans
    assert (span.source_name, span.line_start, span.col_start) == ("k.rs", 2, 9)
    assert (span.line_end, span.col_end) == (2, 10)
    assert (span.byte_start, span.byte_end) == (17, 18)
    assert span.primary and span.label == "here"
    assert "--> k.rs:2:9" in message.rendered
    assert "^" in message.rendered


def test_diagnostic_columns_count_characters() -> None:
    file = SourceFile("u.rs", "let é = ü;\n")
    start = file.text.encode().index("ü".encode())
    label = Label(Span(file, start, start + 2), primary=True)
    diagnostic = Diagnostic(Severity.WARNING, TILEIRAS_FAILED, "w", (label,), notes=("n",))
    message = diagnostic_to_proto(diagnostic)
    assert message.severity == compile_pb2.SEVERITY_WARNING
    assert (message.spans[0].col_start, message.spans[0].col_end) == (9, 10)
    assert list(message.notes) == ["n"]


def test_diagnostic_without_span() -> None:
    diagnostic = Diagnostic(Severity.ERROR, TILEIRAS_FAILED, "tileiras failed: boom")
    message = diagnostic_to_proto(diagnostic)
    assert not message.spans
    assert message.rendered.startswith("error[CT0901]: tileiras failed: boom")


def test_contract_maps_every_field(make_contract) -> None:
    domain = make_contract()
    pb = contract_to_proto(domain)
    assert pb.schema_version == domain.schema_version == 1
    assert (pb.kernel.module, pb.kernel.function, pb.kernel.entry_symbol) == (
        "kernel",
        "add",
        "add_B128",
    )
    assert pb.kernel.source_sha256 == "ab" * 32
    assert pb.kernel.compiler_version == "0.1.0"
    assert (pb.target.sm, pb.target.tileiras_version, pb.target.bytecode_version) == (
        "sm_90",
        "13.5",
        "13.3",
    )
    assert (pb.target.opt_level, pb.target.host_arch) == (3, "x86_64")
    assert [p.kind for p in pb.params] == [
        contract_pb2.PARAM_KIND_TENSOR_OUT,
        contract_pb2.PARAM_KIND_TENSOR_IN,
        contract_pb2.PARAM_KIND_SCALAR,
    ]
    assert list(pb.params[0].tile_shape) == [128]
    assert list(pb.params[0].declared_shape) == [-1]
    assert [(s.param, s.role, s.offset, s.size) for s in pb.abi][:2] == [
        (0, contract_pb2.SLOT_ROLE_PTR, 0, 8),
        (0, contract_pb2.SLOT_ROLE_DIM, 8, 4),
    ]
    assert pb.abi[-1].role == contract_pb2.SLOT_ROLE_VALUE
    assert pb.grid.mode == contract_pb2.GridRule.MODE_FROM_OUTPUTS
    assert list(pb.grid.output_params) == [0]
    assert list(pb.launch.block) == [1, 1, 1]
    assert (pb.launch.shared_mem_bytes, pb.launch.param_buffer_bytes) == (0, 36)
    assert [(a.kind, a.value) for a in pb.assumptions] == [
        (contract_pb2.ASSUMPTION_KIND_BASE_ALIGN, 16),
        (contract_pb2.ASSUMPTION_KIND_STRIDE_ONE, 0),
    ]
    assert pb.safety.checks_discharged == 2
    assert pb.safety.checks_hoisted_to_host == 1
    assert pb.safety.outputs_exclusive
    assert [(g.name, g.value) for g in pb.specialization.generics] == [("B", "128")]


@pytest.mark.parametrize(
    ("enum", "prefix", "proto_enum"),
    [
        (ParamKind, "PARAM_KIND_", contract_pb2.ParamKind),
        (SlotRole, "SLOT_ROLE_", contract_pb2.SlotRole),
        (AssumptionKind, "ASSUMPTION_KIND_", contract_pb2.AssumptionKind),
    ],
)
def test_every_domain_enum_value_has_the_same_proto_value(enum, prefix, proto_enum) -> None:
    from service import convert

    table = {
        ParamKind: convert._PARAM_KIND,
        SlotRole: convert._SLOT_ROLE,
        AssumptionKind: convert._ASSUMPTION_KIND,
    }[enum]
    for member in enum:
        assert table[member] == proto_enum.Value(prefix + member.name)


@pytest.mark.parametrize("size", [0, 1, 127, 128, 16383, 16384, (1 << 21) - 2, 1 << 21])
@pytest.mark.parametrize("unknown", [b"", b"\x78\x00", b"\x7a\x03abc"])
def test_source_size_is_never_under_its_text_whatever_unknown_fields_it_carries(
    size: int, unknown: bytes
) -> None:
    honest = compile_pb2.SourceFile(name="k.rs", text="x" * size)
    source = compile_pb2.SourceFile()
    source.MergeFromString(honest.SerializeToString() + unknown)
    assert text_bytes(source) >= size  # an unknown field once made it 0
    if not unknown:
        assert text_bytes(source) == size
    if size:
        problems = validate(_request(sources=[source]), Limits(max_source_bytes=size - 1))
        assert any("exceed the limit" in problem.description for problem in problems)


def test_spellings_of_one_generic_value_make_one_request() -> None:
    """ " 128", "+128", "1_28" and "0x80" once each got a cache key and an entry of their own."""
    spellings = ("128", " 128", "128 ", "+128", "1_28", "128_", "0x80", "128i32")
    named = {request_from_proto(_request(generics={"B": text})).generics for text in spellings}
    assert named == {(("B", "128"),)}
    positional = request_from_proto(_request(generics={}, generic_args=[" 0x80", "[8 ,1,]"]))
    assert positional.generic_args == ("128", "[8, 1]")
