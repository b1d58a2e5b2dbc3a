"""Lowering of raw pointers (`parser.prelude.pointers`) and assumptions
(`parser.prelude.assume`).

A pointer is a `tile<ptr<E>>`; `offset_tile` broadcasts a rank-0 pointer tile to the
offsets' shape and emits `offset`. `load_ptr_tko` / `store_ptr_tko` all consume and
produce the kernel's one pointer token (`KernelLowering.pointer_chain`), so raw accesses
happen in program order: a load after a store through a pointer that may alias sees it,
and two stores land in the order written. A padding value is broadcast to the tile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowering.element_types import ir_tile_type
from lowering.intrinsics.common import value
from lowering.intrinsics.spec import IntrinsicLowering
from lowering.ir.attributes import Bounded, DivBy
from lowering.ir.core import Value
from lowering.ir.ops_core import Assume, Broadcast, Reshape
from lowering.ir.ops_memory import LoadPtrTko, Offset, StorePtrTko
from lowering.ir.types import TOKEN, TileType
from lowering.lowered_values import Lowered, TokenChain
from parser import ast_nodes as A
from parser.prelude.pointers import option_inner

if TYPE_CHECKING:
    from lowering.lower_kernel import KernelLowering


def broadcast_to(ctx: KernelLowering, source: Value, shape: tuple[int, ...], span: A.Span) -> Value:
    """`source` (rank 0 or already `shape`) as a tile of `shape`."""
    tile = source.type
    assert isinstance(tile, TileType)
    if tile.shape == shape:
        return source
    assert not tile.shape, f"cannot broadcast {tile} to {shape}"
    ones = TileType(tile.element, (1,) * len(shape))
    flat = ctx.builder.emit(Reshape, result=ones, source=source, span=span).result
    target = TileType(tile.element, shape)
    return ctx.builder.emit(Broadcast, result=target, source=flat, span=span).result


def _same(ctx: KernelLowering, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    """`pointer_to_tile` / `tile_to_pointer`: the same `tile<ptr<E>>`."""
    return value(ctx, args[0])


def _offset_tile(ctx: KernelLowering, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    offsets = value(ctx, args[1])
    result = ir_tile_type(ctx.type_of(call))
    ptrs = broadcast_to(ctx, value(ctx, args[0]), result.shape, call.span)
    return ctx.builder.emit(
        Offset, result=result, ptrs=ptrs, offsets=offsets, span=call.span
    ).result


def _offset(ctx: KernelLowering, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    ptrs = value(ctx, args[0])
    shape = ir_tile_type(ctx.type_of(call)).shape
    offsets = broadcast_to(ctx, value(ctx, args[1]), shape, call.span)
    return ctx.builder.emit(
        Offset, result=ptrs.type, ptrs=ptrs, offsets=offsets, span=call.span
    ).result


def _broadcast(ctx: KernelLowering, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    shape = ir_tile_type(ctx.type_of(call)).shape
    return broadcast_to(ctx, value(ctx, args[0]), shape, call.span)


def _optional(ctx: KernelLowering, expr: A.Expr) -> Value | None:
    inner = option_inner(expr)
    return None if inner is None else value(ctx, inner)


def _chain(ctx: KernelLowering) -> TokenChain:
    chain = ctx.pointer_chain
    assert chain is not None, "raw-pointer access without a pointer parameter"
    return chain


def _load_ptr(ctx: KernelLowering, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    ptrs = value(ctx, args[0])
    tile = ir_tile_type(ctx.type_of(call))
    mask = _optional(ctx, args[2])
    padding = _optional(ctx, args[3])
    if padding is not None:
        padding = broadcast_to(ctx, padding, tile.shape, call.span)
    chain = _chain(ctx)
    op = ctx.builder.emit(
        LoadPtrTko,
        tile=tile,
        result_token=TOKEN,
        ptrs=ptrs,
        mask=mask,
        padding=padding,
        token=chain.token,
        span=call.span,
    )
    chain.token = op.result_token
    return op.tile


def _store_ptr(ctx: KernelLowering, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    ptrs = value(ctx, args[0])
    values = value(ctx, args[1])
    mask = _optional(ctx, args[3])
    chain = _chain(ctx)
    op = ctx.builder.emit(
        StorePtrTko,
        result_token=TOKEN,
        ptrs=ptrs,
        value=values,
        mask=mask,
        token=chain.token,
        span=call.span,
    )
    chain.token = op.result_token
    return None


def _assume(kind: str) -> IntrinsicLowering:
    def lower(ctx: KernelLowering, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
        written = call.function.generic_args if isinstance(call, A.Call) else call.generic_args
        bounds = [ctx.body.consts[g] for g in written[1:]]  # type: ignore[index, union-attr]
        predicate = {
            "assume_div_by": lambda: DivBy(bounds[0]),
            "assume_bounds_lower": lambda: Bounded(bounds[0], None),
            "assume_bounds_upper": lambda: Bounded(None, bounds[0]),
            "assume_bounds": lambda: Bounded(bounds[0], bounds[1]),
        }[kind]()
        source = value(ctx, args[0])
        return ctx.builder.emit(
            Assume, result=source.type, predicate=predicate, value=source, span=call.span
        ).result

    return lower


POINTER_LOWERINGS: dict[str, IntrinsicLowering] = {
    "pointer_to_tile": _same,
    "tile_to_pointer": _same,
    "pointer_offset_tile": _offset_tile,
    "pointer_offset": _offset,
    "pointer_broadcast": _broadcast,
    "load_ptr_tko": _load_ptr,
    "store_ptr_tko": _store_ptr,
    **{
        kind: _assume(kind)
        for kind in ("assume_div_by", "assume_bounds_lower", "assume_bounds_upper", "assume_bounds")
    },
}
