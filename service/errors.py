"""Rich gRPC error statuses (AIP-193): `google.rpc.Status` with typed details.

Every status carries an `ErrorInfo` in the `cutile.compile.v1` domain with a stable
`reason`; malformed requests add a `BadRequest` listing each field violation. Clients read
them with `grpc_status.rpc_status.from_call(call)`.
"""

from __future__ import annotations

from collections.abc import Iterable

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import Message
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from service.convert import FieldViolation

DOMAIN = "cutile.compile.v1"

INVALID_REQUEST = "INVALID_REQUEST"
TOOLCHAIN_UNAVAILABLE = "TOOLCHAIN_UNAVAILABLE"
INTERNAL_ERROR = "INTERNAL_ERROR"


def invalid_argument(violations: Iterable[FieldViolation]) -> grpc.Status:
    violations = list(violations)
    bad_request = error_details_pb2.BadRequest(
        field_violations=[
            error_details_pb2.BadRequest.FieldViolation(field=v.field, description=v.description)
            for v in violations
        ]
    )
    first = violations[0] if violations else FieldViolation("", "malformed request")
    message = f"invalid request: {first.field}: {first.description}"
    if len(violations) > 1:
        message += f" (and {len(violations) - 1} more)"
    return _status(code_pb2.INVALID_ARGUMENT, message, INVALID_REQUEST, bad_request)


def unavailable(message: str, reason: str = TOOLCHAIN_UNAVAILABLE) -> grpc.Status:
    return _status(code_pb2.UNAVAILABLE, message, reason)


def internal(message: str = "internal compiler error; see the server log") -> grpc.Status:
    return _status(code_pb2.INTERNAL, message, INTERNAL_ERROR)


def _status(code: int, message: str, reason: str, *details: Message) -> grpc.Status:
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN)
    packed = []
    for detail in (*details, info):
        any_detail = any_pb2.Any()
        any_detail.Pack(detail)
        packed.append(any_detail)
    return rpc_status.to_status(status_pb2.Status(code=code, message=message, details=packed))
