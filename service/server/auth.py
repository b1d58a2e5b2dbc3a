"""Optional bearer-token authentication (`cutile-serve --auth-token-file PATH`).

`AuthInterceptor` (a grpc.aio server interceptor) requires `authorization: Bearer <token>`
metadata on every RPC except the standard health service (`grpc.health.v1.Health`, so
load balancers and orchestrators can probe without the token). Anything else is answered
UNAUTHENTICATED with an `ErrorInfo` (reason UNAUTHENTICATED, domain cutile.compile.v1).
The token is read once at start-up; the comparison is `hmac.compare_digest` over SHA-256
digests, so its time does not depend on the presented value (not even its length).
Send the token only over TLS (`--tls-cert` / `--tls-key`) beyond a trusted network.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
from grpc_health.v1 import health

from client_stubs.files import NotAFile, read_regular_file
from service.server import errors

HEADER = "authorization"
SCHEME = "Bearer "
EXEMPT_SERVICES = frozenset({health.SERVICE_NAME})


class TokenError(ValueError):
    """The token file is missing, unreadable or empty."""


MAX_TOKEN_FILE_BYTES = 64 << 10  # a secret, not a file to stream (/dev/zero was read for ever)


def read_token(path: Path) -> str:
    """The token in `path` (surrounding whitespace removed)."""
    try:
        token = read_regular_file(path, MAX_TOKEN_FILE_BYTES).decode("utf-8").strip()
    except (OSError, UnicodeDecodeError, NotAFile) as exc:
        raise TokenError(f"cannot read the auth token file {path}: {exc}") from exc
    if not token:
        raise TokenError(f"the auth token file {path} is empty")
    if any(ch.isspace() for ch in token):
        raise TokenError(f"the auth token in {path} must not contain whitespace")
    return token


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode("utf-8", "surrogateescape")).digest()


class AuthInterceptor(grpc.aio.ServerInterceptor):
    def __init__(self, token: str) -> None:
        if not token:
            raise ValueError("an empty token would admit anyone")
        self._expected = _digest(SCHEME + token)

    def authorized(self, metadata) -> bool:
        values = [v for k, v in metadata or () if k.lower() == HEADER]
        if len(values) != 1 or not isinstance(values[0], str):
            return False
        return hmac.compare_digest(_digest(values[0]), self._expected)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        service = handler_call_details.method.lstrip("/").partition("/")[0]
        if handler is None or service in EXEMPT_SERVICES:
            return handler
        if self.authorized(handler_call_details.invocation_metadata):
            return handler
        return _rejecting(handler)


def _rejecting(handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
    """A handler of the same shape as `handler` that answers UNAUTHENTICATED."""
    status = errors.unauthenticated("missing or invalid bearer token")

    async def reject(request, context: grpc.aio.ServicerContext):
        await context.abort_with_status(status)

    async def reject_stream(request, context: grpc.aio.ServicerContext):
        await context.abort_with_status(status)
        yield  # pragma: no cover - makes this an async generator

    if handler.unary_unary is not None:
        return handler._replace(unary_unary=reject)
    if handler.unary_stream is not None:
        return handler._replace(unary_stream=reject_stream)
    if handler.stream_unary is not None:
        return handler._replace(stream_unary=reject)
    return handler._replace(stream_stream=reject_stream)
