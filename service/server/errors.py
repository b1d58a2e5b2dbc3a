"""Rich gRPC error statuses (AIP-193): `google.rpc.Status` with typed details.

Every status carries an `ErrorInfo` in the `cutile.compile.v1` domain with a stable
`reason`; malformed requests add a `BadRequest` listing each field violation. Clients read
them with `grpc_status.rpc_status.from_call(call)`. The `*_proto` builders return the
bare `google.rpc.Status`, which CompileBatch puts in each item's result.
"""

from __future__ import annotations

from collections.abc import Iterable

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.protobuf.message import Message
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from service.convert import FieldViolation, clip

DOMAIN = "cutile.compile.v1"

INVALID_REQUEST = "INVALID_REQUEST"
TOOLCHAIN_UNAVAILABLE = "TOOLCHAIN_UNAVAILABLE"
INTERNAL_ERROR = "INTERNAL_ERROR"
OVERLOADED = "OVERLOADED"
DEADLINE = "DEADLINE_EXCEEDED"
ARTIFACT_NOT_FOUND = "ARTIFACT_NOT_FOUND"
COMPILE_ERROR = "COMPILE_ERROR"
UNAUTHENTICATED = "UNAUTHENTICATED"
PARSE_TIME_LIMIT = "PARSE_TIME_LIMIT"
TILEIRAS_FAULT = "TILEIRAS_FAULT"
WORKER_CRASHED = "WORKER_CRASHED"


def invalid_argument(violations: Iterable[FieldViolation]) -> grpc.Status:
    return to_grpc(invalid_argument_proto(violations))


# what one INVALID_ARGUMENT status lists: the first MAX_VIOLATIONS violations, each field and
# description clipped, so that the status (a trailer, which gRPC clients cap at 16 KiB)
# stays a few KiB however many problems a hostile request holds
MAX_VIOLATIONS = 16
MAX_VIOLATION_CHARS = 200


def invalid_argument_proto(violations: Iterable[FieldViolation]) -> status_pb2.Status:
    violations = list(violations)
    listed = [
        error_details_pb2.BadRequest.FieldViolation(
            field=clip(v.field, MAX_VIOLATION_CHARS),
            description=clip(v.description, MAX_VIOLATION_CHARS),
        )
        for v in violations[:MAX_VIOLATIONS]
    ]
    if len(violations) > MAX_VIOLATIONS:
        more = f"{len(violations) - MAX_VIOLATIONS} more violations not listed"
        listed.append(error_details_pb2.BadRequest.FieldViolation(field="", description=more))
    first = listed[0] if listed else FieldViolation("", "malformed request")
    message = f"invalid request: {first.field}: {first.description}"
    if len(violations) > 1:
        message += f" (and {len(violations) - 1} more)"
    bad_request = error_details_pb2.BadRequest(field_violations=listed)
    return rich(code_pb2.INVALID_ARGUMENT, message, INVALID_REQUEST, bad_request)


def parse_too_slow(index: int, limit_ms: int) -> grpc.Status:
    """Source `index` did not parse within the limit: INVALID_ARGUMENT, not worth a retry."""
    violation = error_details_pb2.BadRequest.FieldViolation(
        field=f"sources[{index}].text",
        description=f"parsing took longer than the limit of {limit_ms} ms",
    )
    return to_grpc(
        rich(
            code_pb2.INVALID_ARGUMENT,
            f"invalid request: sources[{index}] does not parse within {limit_ms} ms",
            PARSE_TIME_LIMIT,
            error_details_pb2.BadRequest(field_violations=[violation]),
        )
    )


def unavailable(message: str, reason: str = TOOLCHAIN_UNAVAILABLE) -> grpc.Status:
    return to_grpc(rich(code_pb2.UNAVAILABLE, message, reason))


def internal(
    message: str = "internal compiler error; see the server log", reason: str = INTERNAL_ERROR
) -> grpc.Status:
    return to_grpc(rich(code_pb2.INTERNAL, message, reason))


def resource_exhausted(retry_after_s: float) -> grpc.Status:
    """The compile queue is full: RESOURCE_EXHAUSTED with a RetryInfo."""
    delay = duration_pb2.Duration()
    delay.FromNanoseconds(int(retry_after_s * 1e9))
    return to_grpc(
        rich(
            code_pb2.RESOURCE_EXHAUSTED,
            "the compile queue is full; retry later",
            OVERLOADED,
            error_details_pb2.RetryInfo(retry_delay=delay),
        )
    )


def deadline_exceeded() -> grpc.Status:
    return to_grpc(rich(code_pb2.DEADLINE_EXCEEDED, "the request deadline passed", DEADLINE))


def not_found(message: str) -> grpc.Status:
    return to_grpc(rich(code_pb2.NOT_FOUND, message, ARTIFACT_NOT_FOUND))


def unauthenticated(message: str) -> grpc.Status:
    return to_grpc(rich(code_pb2.UNAUTHENTICATED, message, UNAUTHENTICATED))


def compile_failed_proto() -> status_pb2.Status:
    """A batch item whose kernel did not compile (its diagnostics say why)."""
    return rich(code_pb2.INVALID_ARGUMENT, "the kernel did not compile", COMPILE_ERROR)


def to_grpc(status: status_pb2.Status) -> grpc.Status:
    return rpc_status.to_status(status)


def from_grpc(status: grpc.Status) -> status_pb2.Status:
    """The `google.rpc.Status` inside a status built here."""
    for key, value in status.trailing_metadata:
        if key == "grpc-status-details-bin":
            return status_pb2.Status.FromString(value)
    return status_pb2.Status(code=status.code.value[0], message=status.details)


def rich(code: int, message: str, reason: str, *details: Message) -> status_pb2.Status:
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN)
    packed = []
    for detail in (*details, info):
        any_detail = any_pb2.Any()
        any_detail.Pack(detail)
        packed.append(any_detail)
    return status_pb2.Status(code=code, message=message, details=packed)
