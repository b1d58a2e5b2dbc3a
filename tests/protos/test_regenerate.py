"""The generated protobuf code is fresh, and field numbers never change."""

from __future__ import annotations

from protos.generated.cutile.compile.v1 import compile_pb2, contract_pb2
from protos.regenerate import GENERATED, differences

# Frozen wire contract: (message, field) -> number. Add new fields here; never edit one.
FROZEN_FIELDS = {
    ("CompileRequest", "sources"): 1,
    ("CompileRequest", "entry"): 2,
    ("CompileRequest", "generics"): 3,
    ("CompileRequest", "generic_args"): 4,
    ("CompileRequest", "target"): 5,
    ("CompileRequest", "options"): 6,
    ("CompileResponse", "ok"): 1,
    ("CompileResponse", "diagnostics"): 2,
    ("CompileResponse", "artifact"): 3,
    ("Artifact", "cubin"): 1,
    ("Artifact", "contract"): 3,
    ("LaunchContract", "schema_version"): 1,
    ("LaunchContract", "params"): 4,
    ("LaunchContract", "abi"): 5,
    ("LaunchContract", "grid"): 6,
    ("LaunchContract", "assumptions"): 8,
    ("AbiSlot", "offset"): 5,
    ("Param", "tile_shape"): 7,
}


def test_generated_code_matches_the_proto_sources() -> None:
    assert differences(GENERATED) == [], "run: python -m protos.regenerate"


def test_field_numbers_are_frozen() -> None:
    messages = {
        **{m.name: m for m in compile_pb2.DESCRIPTOR.message_types_by_name.values()},
        **{m.name: m for m in contract_pb2.DESCRIPTOR.message_types_by_name.values()},
    }
    for (message, field), number in FROZEN_FIELDS.items():
        assert messages[message].fields_by_name[field].number == number, (message, field)
