"""Lowering of byte packing (`parser.prelude.packing`): `pack` / `unpack` on rank-1 tiles;
the shaped methods flatten with `reshape`, (un)pack, and reshape to the asked shape."""

from __future__ import annotations

import math

from lowering.intrinsics.common import result_type, value
from lowering.intrinsics.spec import IntrinsicLowering
from lowering.ir.core import Value
from lowering.ir.ops_convert import Pack, Unpack
from lowering.ir.ops_core import Reshape
from lowering.ir.types import ElementType, TileType
from lowering.lowered_expr import Lowered
from lowering.lowering_context import LoweringContext
from parser import ast_nodes as A


def _reshape(ctx: LoweringContext, source: Value, shape: tuple[int, ...], span: A.Span) -> Value:
    assert isinstance(source.type, TileType)
    target = TileType(source.type.element, shape)
    if source.type == target:
        return source
    return ctx.builder.emit(Reshape, result=target, source=source, span=span).result


def _op(op_class: type[Pack] | type[Unpack]) -> IntrinsicLowering:
    def lower(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
        source = value(ctx, args[0])
        target = result_type(ctx, call)
        assert isinstance(source.type, TileType)
        src, dst = source.type.element, target.element
        assert isinstance(src, ElementType) and isinstance(dst, ElementType)
        count = math.prod(source.type.shape)
        flat = _reshape(ctx, source, (count,), call.span)
        flat_result = TileType(dst, (count * src.bits // dst.bits,))
        packed = ctx.builder.emit(op_class, result=flat_result, source=flat, span=call.span)
        return _reshape(ctx, packed.result, target.shape, call.span)

    return lower


PACKING_LOWERINGS: dict[str, IntrinsicLowering] = {
    "pack": _op(Pack),
    "unpack": _op(Unpack),
    "pack_shaped": _op(Pack),
    "unpack_shaped": _op(Unpack),
}
