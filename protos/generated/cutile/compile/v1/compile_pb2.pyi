from protos.generated.cutile.compile.v1 import contract_pb2 as _contract_pb2
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
    __slots__ = ("sources", "entry", "generics", "generic_args", "target", "options")
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
    sources: _containers.RepeatedCompositeFieldContainer[SourceFile]
    entry: str
    generics: _containers.ScalarMap[str, str]
    generic_args: _containers.RepeatedScalarFieldContainer[str]
    target: str
    options: CompileOptions
    def __init__(self, sources: _Optional[_Iterable[_Union[SourceFile, _Mapping]]] = ..., entry: _Optional[str] = ..., generics: _Optional[_Mapping[str, str]] = ..., generic_args: _Optional[_Iterable[str]] = ..., target: _Optional[str] = ..., options: _Optional[_Union[CompileOptions, _Mapping]] = ...) -> None: ...

class CompileOptions(_message.Message):
    __slots__ = ("opt_level", "host_arch", "lineinfo", "skip_cache")
    OPT_LEVEL_FIELD_NUMBER: _ClassVar[int]
    HOST_ARCH_FIELD_NUMBER: _ClassVar[int]
    LINEINFO_FIELD_NUMBER: _ClassVar[int]
    SKIP_CACHE_FIELD_NUMBER: _ClassVar[int]
    opt_level: int
    host_arch: str
    lineinfo: bool
    skip_cache: bool
    def __init__(self, opt_level: _Optional[int] = ..., host_arch: _Optional[str] = ..., lineinfo: _Optional[bool] = ..., skip_cache: _Optional[bool] = ...) -> None: ...

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
    __slots__ = ("cubin", "cubin_digest", "contract", "request_key")
    CUBIN_FIELD_NUMBER: _ClassVar[int]
    CUBIN_DIGEST_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_KEY_FIELD_NUMBER: _ClassVar[int]
    cubin: bytes
    cubin_digest: Digest
    contract: _contract_pb2.LaunchContract
    request_key: Digest
    def __init__(self, cubin: _Optional[bytes] = ..., cubin_digest: _Optional[_Union[Digest, _Mapping]] = ..., contract: _Optional[_Union[_contract_pb2.LaunchContract, _Mapping]] = ..., request_key: _Optional[_Union[Digest, _Mapping]] = ...) -> None: ...

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
