from protos.generated.cutile.compile.v1 import contract_pb2 as _contract_pb2
from google.rpc import status_pb2 as _status_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CacheOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CACHE_OUTCOME_UNSPECIFIED: _ClassVar[CacheOutcome]
    CACHE_OUTCOME_MISS: _ClassVar[CacheOutcome]
    CACHE_OUTCOME_HIT: _ClassVar[CacheOutcome]
    CACHE_OUTCOME_JOINED: _ClassVar[CacheOutcome]

class Severity(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SEVERITY_UNSPECIFIED: _ClassVar[Severity]
    SEVERITY_ERROR: _ClassVar[Severity]
    SEVERITY_WARNING: _ClassVar[Severity]
    SEVERITY_NOTE: _ClassVar[Severity]
    SEVERITY_HELP: _ClassVar[Severity]
CACHE_OUTCOME_UNSPECIFIED: CacheOutcome
CACHE_OUTCOME_MISS: CacheOutcome
CACHE_OUTCOME_HIT: CacheOutcome
CACHE_OUTCOME_JOINED: CacheOutcome
SEVERITY_UNSPECIFIED: Severity
SEVERITY_ERROR: Severity
SEVERITY_WARNING: Severity
SEVERITY_NOTE: Severity
SEVERITY_HELP: Severity

class SourceFile(_message.Message):
    __slots__ = ("name", "text")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    name: str
    text: str
    def __init__(self, name: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class CompileRequest(_message.Message):
    __slots__ = ("sources", "entry", "generics", "generic_args", "target", "options", "specialization")
    class GenericsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    GENERICS_FIELD_NUMBER: _ClassVar[int]
    GENERIC_ARGS_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SPECIALIZATION_FIELD_NUMBER: _ClassVar[int]
    sources: _containers.RepeatedCompositeFieldContainer[SourceFile]
    entry: str
    generics: _containers.ScalarMap[str, str]
    generic_args: _containers.RepeatedScalarFieldContainer[str]
    target: str
    options: CompileOptions
    specialization: _containers.RepeatedCompositeFieldContainer[TensorFacts]
    def __init__(self, sources: _Optional[_Iterable[_Union[SourceFile, _Mapping]]] = ..., entry: _Optional[str] = ..., generics: _Optional[_Mapping[str, str]] = ..., generic_args: _Optional[_Iterable[str]] = ..., target: _Optional[str] = ..., options: _Optional[_Union[CompileOptions, _Mapping]] = ..., specialization: _Optional[_Iterable[_Union[TensorFacts, _Mapping]]] = ...) -> None: ...

class TensorFacts(_message.Message):
    __slots__ = ("param", "dim_divisors", "stride_divisors", "base_align", "any_last_stride")
    PARAM_FIELD_NUMBER: _ClassVar[int]
    DIM_DIVISORS_FIELD_NUMBER: _ClassVar[int]
    STRIDE_DIVISORS_FIELD_NUMBER: _ClassVar[int]
    BASE_ALIGN_FIELD_NUMBER: _ClassVar[int]
    ANY_LAST_STRIDE_FIELD_NUMBER: _ClassVar[int]
    param: str
    dim_divisors: _containers.RepeatedScalarFieldContainer[int]
    stride_divisors: _containers.RepeatedScalarFieldContainer[int]
    base_align: int
    any_last_stride: bool
    def __init__(self, param: _Optional[str] = ..., dim_divisors: _Optional[_Iterable[int]] = ..., stride_divisors: _Optional[_Iterable[int]] = ..., base_align: _Optional[int] = ..., any_last_stride: _Optional[bool] = ...) -> None: ...

class CompileOptions(_message.Message):
    __slots__ = ("opt_level", "host_arch", "lineinfo", "skip_cache", "exact_accumulators", "early_launch", "plain_launch", "occupancy_variant", "exact_f32_products")
    OPT_LEVEL_FIELD_NUMBER: _ClassVar[int]
    HOST_ARCH_FIELD_NUMBER: _ClassVar[int]
    LINEINFO_FIELD_NUMBER: _ClassVar[int]
    SKIP_CACHE_FIELD_NUMBER: _ClassVar[int]
    EXACT_ACCUMULATORS_FIELD_NUMBER: _ClassVar[int]
    EARLY_LAUNCH_FIELD_NUMBER: _ClassVar[int]
    PLAIN_LAUNCH_FIELD_NUMBER: _ClassVar[int]
    OCCUPANCY_VARIANT_FIELD_NUMBER: _ClassVar[int]
    EXACT_F32_PRODUCTS_FIELD_NUMBER: _ClassVar[int]
    opt_level: int
    host_arch: str
    lineinfo: bool
    skip_cache: bool
    exact_accumulators: bool
    early_launch: bool
    plain_launch: bool
    occupancy_variant: int
    exact_f32_products: bool
    def __init__(self, opt_level: _Optional[int] = ..., host_arch: _Optional[str] = ..., lineinfo: _Optional[bool] = ..., skip_cache: _Optional[bool] = ..., exact_accumulators: _Optional[bool] = ..., early_launch: _Optional[bool] = ..., plain_launch: _Optional[bool] = ..., occupancy_variant: _Optional[int] = ..., exact_f32_products: _Optional[bool] = ...) -> None: ...

class CompileResponse(_message.Message):
    __slots__ = ("ok", "diagnostics", "artifact", "cache", "timings")
    OK_FIELD_NUMBER: _ClassVar[int]
    DIAGNOSTICS_FIELD_NUMBER: _ClassVar[int]
    ARTIFACT_FIELD_NUMBER: _ClassVar[int]
    CACHE_FIELD_NUMBER: _ClassVar[int]
    TIMINGS_FIELD_NUMBER: _ClassVar[int]
    ok: bool
    diagnostics: _containers.RepeatedCompositeFieldContainer[Diagnostic]
    artifact: Artifact
    cache: CacheOutcome
    timings: CompileTimings
    def __init__(self, ok: _Optional[bool] = ..., diagnostics: _Optional[_Iterable[_Union[Diagnostic, _Mapping]]] = ..., artifact: _Optional[_Union[Artifact, _Mapping]] = ..., cache: _Optional[_Union[CacheOutcome, str]] = ..., timings: _Optional[_Union[CompileTimings, _Mapping]] = ...) -> None: ...

class Digest(_message.Message):
    __slots__ = ("sha256", "size")
    SHA256_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    sha256: str
    size: int
    def __init__(self, sha256: _Optional[str] = ..., size: _Optional[int] = ...) -> None: ...

class Artifact(_message.Message):
    __slots__ = ("cubin", "cubin_digest", "contract", "request_key", "contract_digest", "signature")
    CUBIN_FIELD_NUMBER: _ClassVar[int]
    CUBIN_DIGEST_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_KEY_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_DIGEST_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    cubin: bytes
    cubin_digest: Digest
    contract: _contract_pb2.LaunchContract
    request_key: Digest
    contract_digest: Digest
    signature: bytes
    def __init__(self, cubin: _Optional[bytes] = ..., cubin_digest: _Optional[_Union[Digest, _Mapping]] = ..., contract: _Optional[_Union[_contract_pb2.LaunchContract, _Mapping]] = ..., request_key: _Optional[_Union[Digest, _Mapping]] = ..., contract_digest: _Optional[_Union[Digest, _Mapping]] = ..., signature: _Optional[bytes] = ...) -> None: ...

class CompileTimings(_message.Message):
    __slots__ = ("frontend_ms", "tileiras_ms", "total_ms")
    FRONTEND_MS_FIELD_NUMBER: _ClassVar[int]
    TILEIRAS_MS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_MS_FIELD_NUMBER: _ClassVar[int]
    frontend_ms: float
    tileiras_ms: float
    total_ms: float
    def __init__(self, frontend_ms: _Optional[float] = ..., tileiras_ms: _Optional[float] = ..., total_ms: _Optional[float] = ...) -> None: ...

class SourceSpan(_message.Message):
    __slots__ = ("source_name", "byte_start", "byte_end", "line_start", "col_start", "line_end", "col_end", "label", "primary")
    SOURCE_NAME_FIELD_NUMBER: _ClassVar[int]
    BYTE_START_FIELD_NUMBER: _ClassVar[int]
    BYTE_END_FIELD_NUMBER: _ClassVar[int]
    LINE_START_FIELD_NUMBER: _ClassVar[int]
    COL_START_FIELD_NUMBER: _ClassVar[int]
    LINE_END_FIELD_NUMBER: _ClassVar[int]
    COL_END_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    PRIMARY_FIELD_NUMBER: _ClassVar[int]
    source_name: str
    byte_start: int
    byte_end: int
    line_start: int
    col_start: int
    line_end: int
    col_end: int
    label: str
    primary: bool
    def __init__(self, source_name: _Optional[str] = ..., byte_start: _Optional[int] = ..., byte_end: _Optional[int] = ..., line_start: _Optional[int] = ..., col_start: _Optional[int] = ..., line_end: _Optional[int] = ..., col_end: _Optional[int] = ..., label: _Optional[str] = ..., primary: _Optional[bool] = ...) -> None: ...

class Diagnostic(_message.Message):
    __slots__ = ("severity", "code", "message", "spans", "notes", "help", "rendered")
    SEVERITY_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    SPANS_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    HELP_FIELD_NUMBER: _ClassVar[int]
    RENDERED_FIELD_NUMBER: _ClassVar[int]
    severity: Severity
    code: str
    message: str
    spans: _containers.RepeatedCompositeFieldContainer[SourceSpan]
    notes: _containers.RepeatedScalarFieldContainer[str]
    help: _containers.RepeatedScalarFieldContainer[str]
    rendered: str
    def __init__(self, severity: _Optional[_Union[Severity, str]] = ..., code: _Optional[str] = ..., message: _Optional[str] = ..., spans: _Optional[_Iterable[_Union[SourceSpan, _Mapping]]] = ..., notes: _Optional[_Iterable[str]] = ..., help: _Optional[_Iterable[str]] = ..., rendered: _Optional[str] = ...) -> None: ...

class CompileBatchRequest(_message.Message):
    __slots__ = ("sources", "items", "options")
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    sources: _containers.RepeatedCompositeFieldContainer[SourceFile]
    items: _containers.RepeatedCompositeFieldContainer[BatchItem]
    options: CompileOptions
    def __init__(self, sources: _Optional[_Iterable[_Union[SourceFile, _Mapping]]] = ..., items: _Optional[_Iterable[_Union[BatchItem, _Mapping]]] = ..., options: _Optional[_Union[CompileOptions, _Mapping]] = ...) -> None: ...

class BatchItem(_message.Message):
    __slots__ = ("source_indices", "entry", "generics", "generic_args", "target", "options", "specialization")
    class GenericsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SOURCE_INDICES_FIELD_NUMBER: _ClassVar[int]
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    GENERICS_FIELD_NUMBER: _ClassVar[int]
    GENERIC_ARGS_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SPECIALIZATION_FIELD_NUMBER: _ClassVar[int]
    source_indices: _containers.RepeatedScalarFieldContainer[int]
    entry: str
    generics: _containers.ScalarMap[str, str]
    generic_args: _containers.RepeatedScalarFieldContainer[str]
    target: str
    options: CompileOptions
    specialization: _containers.RepeatedCompositeFieldContainer[TensorFacts]
    def __init__(self, source_indices: _Optional[_Iterable[int]] = ..., entry: _Optional[str] = ..., generics: _Optional[_Mapping[str, str]] = ..., generic_args: _Optional[_Iterable[str]] = ..., target: _Optional[str] = ..., options: _Optional[_Union[CompileOptions, _Mapping]] = ..., specialization: _Optional[_Iterable[_Union[TensorFacts, _Mapping]]] = ...) -> None: ...

class CompileBatchResult(_message.Message):
    __slots__ = ("index", "status", "response")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    index: int
    status: _status_pb2.Status
    response: CompileResponse
    def __init__(self, index: _Optional[int] = ..., status: _Optional[_Union[_status_pb2.Status, _Mapping]] = ..., response: _Optional[_Union[CompileResponse, _Mapping]] = ...) -> None: ...

class FindMissingRequest(_message.Message):
    __slots__ = ("keys",)
    KEYS_FIELD_NUMBER: _ClassVar[int]
    keys: _containers.RepeatedCompositeFieldContainer[Digest]
    def __init__(self, keys: _Optional[_Iterable[_Union[Digest, _Mapping]]] = ...) -> None: ...

class FindMissingResponse(_message.Message):
    __slots__ = ("missing",)
    MISSING_FIELD_NUMBER: _ClassVar[int]
    missing: _containers.RepeatedCompositeFieldContainer[Digest]
    def __init__(self, missing: _Optional[_Iterable[_Union[Digest, _Mapping]]] = ...) -> None: ...

class GetArtifactRequest(_message.Message):
    __slots__ = ("key", "max_chunk_bytes")
    KEY_FIELD_NUMBER: _ClassVar[int]
    MAX_CHUNK_BYTES_FIELD_NUMBER: _ClassVar[int]
    key: Digest
    max_chunk_bytes: int
    def __init__(self, key: _Optional[_Union[Digest, _Mapping]] = ..., max_chunk_bytes: _Optional[int] = ...) -> None: ...

class ArtifactChunk(_message.Message):
    __slots__ = ("artifact", "offset", "data")
    ARTIFACT_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    artifact: Artifact
    offset: int
    data: bytes
    def __init__(self, artifact: _Optional[_Union[Artifact, _Mapping]] = ..., offset: _Optional[int] = ..., data: _Optional[bytes] = ...) -> None: ...

class GetCapabilitiesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Capabilities(_message.Message):
    __slots__ = ("service_version", "compiler_version", "targets", "default_target", "bytecode_versions", "tileiras_version", "tileiras_available", "host_arches", "limits")
    SERVICE_VERSION_FIELD_NUMBER: _ClassVar[int]
    COMPILER_VERSION_FIELD_NUMBER: _ClassVar[int]
    TARGETS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_TARGET_FIELD_NUMBER: _ClassVar[int]
    BYTECODE_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    TILEIRAS_VERSION_FIELD_NUMBER: _ClassVar[int]
    TILEIRAS_AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    HOST_ARCHES_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    service_version: str
    compiler_version: str
    targets: _containers.RepeatedScalarFieldContainer[str]
    default_target: str
    bytecode_versions: _containers.RepeatedScalarFieldContainer[str]
    tileiras_version: str
    tileiras_available: bool
    host_arches: _containers.RepeatedScalarFieldContainer[str]
    limits: Limits
    def __init__(self, service_version: _Optional[str] = ..., compiler_version: _Optional[str] = ..., targets: _Optional[_Iterable[str]] = ..., default_target: _Optional[str] = ..., bytecode_versions: _Optional[_Iterable[str]] = ..., tileiras_version: _Optional[str] = ..., tileiras_available: _Optional[bool] = ..., host_arches: _Optional[_Iterable[str]] = ..., limits: _Optional[_Union[Limits, _Mapping]] = ...) -> None: ...

class Limits(_message.Message):
    __slots__ = ("max_source_bytes", "max_files", "max_file_name_chars", "max_entry_chars", "max_generics", "max_generic_value_chars", "max_opt_level", "max_batch_items", "max_find_missing_keys", "max_inline_cubin_bytes", "artifact_chunk_bytes", "max_receive_message_bytes", "workers", "max_queued", "max_nesting_depth", "max_parse_ms", "tileiras_timeout_ms", "tileiras_memory_bytes", "tileiras_output_bytes")
    MAX_SOURCE_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_FILES_FIELD_NUMBER: _ClassVar[int]
    MAX_FILE_NAME_CHARS_FIELD_NUMBER: _ClassVar[int]
    MAX_ENTRY_CHARS_FIELD_NUMBER: _ClassVar[int]
    MAX_GENERICS_FIELD_NUMBER: _ClassVar[int]
    MAX_GENERIC_VALUE_CHARS_FIELD_NUMBER: _ClassVar[int]
    MAX_OPT_LEVEL_FIELD_NUMBER: _ClassVar[int]
    MAX_BATCH_ITEMS_FIELD_NUMBER: _ClassVar[int]
    MAX_FIND_MISSING_KEYS_FIELD_NUMBER: _ClassVar[int]
    MAX_INLINE_CUBIN_BYTES_FIELD_NUMBER: _ClassVar[int]
    ARTIFACT_CHUNK_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_RECEIVE_MESSAGE_BYTES_FIELD_NUMBER: _ClassVar[int]
    WORKERS_FIELD_NUMBER: _ClassVar[int]
    MAX_QUEUED_FIELD_NUMBER: _ClassVar[int]
    MAX_NESTING_DEPTH_FIELD_NUMBER: _ClassVar[int]
    MAX_PARSE_MS_FIELD_NUMBER: _ClassVar[int]
    TILEIRAS_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    TILEIRAS_MEMORY_BYTES_FIELD_NUMBER: _ClassVar[int]
    TILEIRAS_OUTPUT_BYTES_FIELD_NUMBER: _ClassVar[int]
    max_source_bytes: int
    max_files: int
    max_file_name_chars: int
    max_entry_chars: int
    max_generics: int
    max_generic_value_chars: int
    max_opt_level: int
    max_batch_items: int
    max_find_missing_keys: int
    max_inline_cubin_bytes: int
    artifact_chunk_bytes: int
    max_receive_message_bytes: int
    workers: int
    max_queued: int
    max_nesting_depth: int
    max_parse_ms: int
    tileiras_timeout_ms: int
    tileiras_memory_bytes: int
    tileiras_output_bytes: int
    def __init__(self, max_source_bytes: _Optional[int] = ..., max_files: _Optional[int] = ..., max_file_name_chars: _Optional[int] = ..., max_entry_chars: _Optional[int] = ..., max_generics: _Optional[int] = ..., max_generic_value_chars: _Optional[int] = ..., max_opt_level: _Optional[int] = ..., max_batch_items: _Optional[int] = ..., max_find_missing_keys: _Optional[int] = ..., max_inline_cubin_bytes: _Optional[int] = ..., artifact_chunk_bytes: _Optional[int] = ..., max_receive_message_bytes: _Optional[int] = ..., workers: _Optional[int] = ..., max_queued: _Optional[int] = ..., max_nesting_depth: _Optional[int] = ..., max_parse_ms: _Optional[int] = ..., tileiras_timeout_ms: _Optional[int] = ..., tileiras_memory_bytes: _Optional[int] = ..., tileiras_output_bytes: _Optional[int] = ...) -> None: ...
