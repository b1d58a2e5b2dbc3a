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
    ("CompileBatchRequest", "sources"): 1,
    ("CompileBatchRequest", "items"): 2,
    ("CompileBatchRequest", "options"): 3,
    ("BatchItem", "source_indices"): 1,
    ("BatchItem", "entry"): 2,
    ("BatchItem", "generics"): 3,
    ("BatchItem", "generic_args"): 4,
    ("BatchItem", "target"): 5,
    ("BatchItem", "options"): 6,
    ("BatchItem", "specialization"): 7,
    ("CompileBatchResult", "index"): 1,
    ("CompileBatchResult", "status"): 2,
    ("CompileBatchResult", "response"): 3,
    ("FindMissingRequest", "keys"): 1,
    ("FindMissingResponse", "missing"): 1,
    ("GetArtifactRequest", "key"): 1,
    ("GetArtifactRequest", "max_chunk_bytes"): 2,
    ("ArtifactChunk", "artifact"): 1,
    ("ArtifactChunk", "offset"): 2,
    ("ArtifactChunk", "data"): 3,
    ("Capabilities", "service_version"): 1,
    ("Capabilities", "targets"): 3,
    ("Capabilities", "bytecode_versions"): 5,
    ("Capabilities", "tileiras_version"): 6,
    ("Capabilities", "limits"): 9,
    ("Limits", "max_source_bytes"): 1,
    ("Limits", "max_batch_items"): 8,
    ("Limits", "max_inline_cubin_bytes"): 10,
    ("Limits", "artifact_chunk_bytes"): 11,
    ("Limits", "workers"): 13,
    ("Limits", "max_queued"): 14,
    ("Limits", "max_nesting_depth"): 15,
    ("Limits", "max_parse_ms"): 16,
    ("Limits", "tileiras_timeout_ms"): 17,
    ("Limits", "tileiras_memory_bytes"): 18,
    ("Limits", "tileiras_output_bytes"): 19,
}


FROZEN_ENUM_VALUES = {("CacheOutcome", "CACHE_OUTCOME_JOINED"): 3}


def test_enum_values_are_frozen() -> None:
    for (enum, value), number in FROZEN_ENUM_VALUES.items():
        values = compile_pb2.DESCRIPTOR.enum_types_by_name[enum].values_by_name
        assert values[value].number == number


def test_generated_code_matches_the_proto_sources() -> None:
    assert differences(GENERATED) == [], "run: python -m protos.regenerate"


def test_field_numbers_are_frozen() -> None:
    messages = {
        **{m.name: m for m in compile_pb2.DESCRIPTOR.message_types_by_name.values()},
        **{m.name: m for m in contract_pb2.DESCRIPTOR.message_types_by_name.values()},
    }
    for (message, field), number in FROZEN_FIELDS.items():
        assert messages[message].fields_by_name[field].number == number, (message, field)
