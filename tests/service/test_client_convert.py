"""service.cli.client_convert: requests to batch items, diagnostics back from the wire."""

from __future__ import annotations

from lowering.pipeline import CompileRequest
from parser.render import render, to_json
from parser.spans import SourceFile
from parser.specialization import TensorFacts
from protos.generated.cutile.compile.v1 import compile_pb2
from service.cli.client_convert import batch_item, diagnostic_from_proto
from service.convert import diagnostic_to_proto, request_from_proto


def test_a_batch_item_means_the_same_request() -> None:
    source = SourceFile("k.rs", "mod k {}")
    request = CompileRequest(
        sources=(source,),
        entry="kernel::add",
        generics=(("B", "128"), ("E", "f16")),
        arch="sm_80",
        opt_level=1,
        host_arch="aarch64",
        lineinfo=True,
        exact_accumulators=True,
        exact_f32_products=True,
        early_launch=False,
        occupancy=4,
        specialization=(
            TensorFacts("x", (16,), (1,)),
            TensorFacts("y", base_align=4, unit_last_stride=False),
        ),
    )
    item = batch_item(request, [0])
    assert item.specialization[0].base_align == 0  # the default is left unset
    assert (item.specialization[1].base_align, item.specialization[1].any_last_stride) == (4, True)
    message = compile_pb2.CompileRequest(
        sources=[compile_pb2.SourceFile(name="k.rs", text="mod k {}")],
        entry=item.entry,
        generics=item.generics,
        generic_args=item.generic_args,
        target=item.target,
        options=item.options,
        specialization=item.specialization,
    )
    back = request_from_proto(message)
    assert back.generics == request.generics
    assert (back.entry, back.arch, back.opt_level) == ("kernel::add", "sm_80", 1)
    assert (back.host_arch, back.lineinfo, back.exact_accumulators) == ("aarch64", True, True)
    assert back.exact_f32_products
    assert not back.early_launch
    assert back.occupancy == 4
    assert back.specialization == request.specialization
    assert list(item.source_indices) == [0]


def test_diagnostics_survive_the_round_trip(make_error) -> None:
    diagnostic = make_error("k.rs")
    file = diagnostic.labels[0].span.file
    back = diagnostic_from_proto(diagnostic_to_proto(diagnostic), {"k.rs": file})
    assert render(back) == render(diagnostic)
    assert to_json(back) == to_json(diagnostic)


def test_spans_into_unknown_files_are_dropped(make_error) -> None:
    message = diagnostic_to_proto(make_error("k.rs"))
    message.code = "CT9999"
    back = diagnostic_from_proto(message, {})
    assert back.labels == ()
    assert back.code.id == "CT9999"
    assert back.message == "a bad thing"
