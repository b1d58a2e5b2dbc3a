"""Register `CompileService` so that a request that does not decode is INVALID_ARGUMENT.

The generated `add_CompileServiceServicer_to_server` decodes requests with `FromString`;
a malformed message (corrupt wire format, a string field with invalid UTF-8) then fails
inside grpcio as UNKNOWN "Unexpected DecodeError". Here each method's deserializer turns
a `DecodeError` into an `Undecodable` value, and the method answers it INVALID_ARGUMENT
with a BadRequest naming the request type, before the servicer sees anything. The
methods come from the service descriptor, so a new RPC is registered without edits here.
A servicer's `WIRE_METHODS` also get the request's wire bytes (`wire=`) and may answer
with bytes already serialized (`service.cache.hot_hits`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import DecodeError, Message

from protos.generated.cutile.compile.v1 import compile_pb2
from service.convert import FieldViolation
from service.server import errors

SERVICE = compile_pb2.DESCRIPTOR.services_by_name["CompileService"]
OFF_LOOP_BYTES = 64 << 10  # requests larger than this are decoded off the event loop


@dataclass(frozen=True)
class Undecodable:
    type_name: str
    reason: str


def add_compile_service(servicer: object, server: grpc.aio.Server) -> None:
    handlers = {method.name: _handler(servicer, method) for method in SERVICE.methods}
    generic = grpc.method_handlers_generic_handler(SERVICE.full_name, handlers)
    server.add_generic_rpc_handlers((generic,))
    server.add_registered_method_handlers(SERVICE.full_name, handlers)


def _handler(servicer: object, method: MethodDescriptor) -> grpc.RpcMethodHandler:
    request_type = message_factory.GetMessageClass(method.input_type)
    response_type = message_factory.GetMessageClass(method.output_type)
    behavior = getattr(servicer, method.name)
    decode = _lenient(request_type)
    if method.name in getattr(servicer, "WIRE_METHODS", ()) and not method.server_streaming:
        return grpc.unary_unary_rpc_method_handler(
            _unary_with_wire(behavior, decode),
            request_deserializer=None,  # the handler gets the bytes and decodes them itself
            response_serializer=_encode_or_pass(response_type),
        )
    if method.server_streaming:
        return grpc.unary_stream_rpc_method_handler(
            _streaming(behavior),
            request_deserializer=decode,
            response_serializer=response_type.SerializeToString,
        )
    return grpc.unary_unary_rpc_method_handler(
        _unary(behavior),
        request_deserializer=decode,
        response_serializer=response_type.SerializeToString,
    )


def _lenient(request_type: type[Message]) -> Callable[[bytes], Message | Undecodable]:
    def decode(data: bytes) -> Message | Undecodable:
        try:
            return request_type.FromString(data)
        except DecodeError as exc:
            reason = str(exc).rpartition(": ")[2] or "malformed message"
            return Undecodable(request_type.DESCRIPTOR.name, reason)

    return decode


def _invalid(request: Undecodable) -> grpc.Status:
    return errors.invalid_argument(
        [FieldViolation("request", f"not a valid {request.type_name}: {request.reason}")]
    )


def _unary(behavior: Callable) -> Callable:
    async def handle(request, context: grpc.aio.ServicerContext):
        if isinstance(request, Undecodable):
            await context.abort_with_status(_invalid(request))
        return await behavior(request, context)

    return handle


def _unary_with_wire(behavior: Callable, decode: Callable[[bytes], object]) -> Callable:
    async def handle(wire: bytes, context: grpc.aio.ServicerContext):
        # a large request is decoded on a thread: a flood of them must not stall the loop
        large = len(wire) > OFF_LOOP_BYTES
        request = await asyncio.to_thread(decode, wire) if large else decode(wire)
        if isinstance(request, Undecodable):
            await context.abort_with_status(_invalid(request))
        return await behavior(request, context, wire=wire)

    return handle


def _encode_or_pass(response_type: type[Message]) -> Callable[[Message | bytes], bytes]:
    """Serialize a response message; a response already in wire form passes as it is."""
    encode = response_type.SerializeToString

    def serialize(response: Message | bytes) -> bytes:
        return response if isinstance(response, bytes) else encode(response)

    return serialize


def _streaming(behavior: Callable) -> Callable:
    async def handle(request, context: grpc.aio.ServicerContext) -> AsyncIterator:
        if isinstance(request, Undecodable):
            await context.abort_with_status(_invalid(request))
            return
        async for item in behavior(request, context):
            yield item

    return handle
