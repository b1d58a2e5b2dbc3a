"""Lowering of raw pointers (`parser.prelude.pointers`) and assumptions
(`parser.prelude.assume`).

A pointer is a `tile<ptr<E>>`; `offset_tile` broadcasts a rank-0 pointer tile to the
offsets' shape and emits `offset`. Every raw access (`load_ptr_tko`, `store_ptr_tko`, the
atomics) consumes and produces the kernel's one raw-memory token
(`LoweringContext.pointer_chain`), so raw accesses happen in program order: a load after a
store through a pointer that may alias sees it, and two stores land in the order written.
A token the kernel passes is joined in (the access is ordered after it too), and the
access's result token is handed back. A padding value is broadcast to the tile.
"""

from __future__ import annotations

from lowering.element_types import ir_tile_type
from lowering.intrinsics.common import marker, value
from lowering.intrinsics.spec import IntrinsicLowering
from lowering.intrinsics.tokens import chained, optional_value
from lowering.intrinsics.views import ORDERINGS, SCOPES, load_hints
from lowering.ir.attributes import (
    Bounded,
    DivBy,
    LoadStoreHints,
    MemoryOrdering,
    MemoryScope,
    SameElements,
)
from lowering.ir.core import Value
from lowering.ir.ops_core import Assume, Broadcast, Reshape
from lowering.ir.ops_memory import LoadPtrTko, Offset, StorePtrTko
from lowering.ir.ops_pointer import IntToPtr, PtrToInt, PtrToPtr
from lowering.ir.types import TOKEN, PointerType, TileType
from lowering.lowered_expr import Lowered, TokenChain
from lowering.lowering_context import LoweringContext
from parser import ast_nodes as A
from parser.types import LatencyTy, MarkerTy


def broadcast_to(
    ctx: LoweringContext, source: Value, shape: tuple[int, ...], span: A.Span
) -> Value:
    """`source` (rank 0, or `shape`'s rank with dimensions of 1 to expand) as a tile of
    `shape`."""
    tile = source.type
    assert isinstance(tile, TileType)
    if tile.shape == shape:
        return source
    flat = source
    if not tile.shape:
        ones = TileType(tile.element, (1,) * len(shape))
        flat = ctx.builder.emit(Reshape, result=ones, source=source, span=span).result
    assert len(flat.type.shape) == len(shape), f"cannot broadcast {tile} to {shape}"  # type: ignore[union-attr]
    target = TileType(tile.element, shape)
    return ctx.builder.emit(Broadcast, result=target, source=flat, span=span).result


def _same(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    """`pointer_to_tile` / `tile_to_pointer`: the same `tile<ptr<E>>`."""
    return value(ctx, args[0])


def _offset_tile(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    offsets = value(ctx, args[1])
    result = ir_tile_type(ctx.type_of(call))
    ptrs = broadcast_to(ctx, value(ctx, args[0]), result.shape, call.span)
    return ctx.builder.emit(
        Offset, result=result, ptrs=ptrs, offsets=offsets, span=call.span
    ).result


def _offset(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    ptrs = value(ctx, args[0])
    shape = ir_tile_type(ctx.type_of(call)).shape
    offsets = broadcast_to(ctx, value(ctx, args[1]), shape, call.span)
    return ctx.builder.emit(
        Offset, result=ptrs.type, ptrs=ptrs, offsets=offsets, span=call.span
    ).result


def _broadcast(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    shape = ir_tile_type(ctx.type_of(call)).shape
    return broadcast_to(ctx, value(ctx, args[0]), shape, call.span)


def _conversion(op_class: type) -> IntrinsicLowering:
    """`int_to_ptr` / `ptr_to_int` / `ptr_to_ptr`: one op to the checked result type."""

    def lower(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
        source = value(ctx, args[0])
        result = ir_tile_type(ctx.type_of(call))
        return ctx.builder.emit(op_class, result=result, source=source, span=call.span).result

    return lower


def _reshape(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    source = value(ctx, args[0])
    result = ir_tile_type(ctx.type_of(call))
    if source.type == result:
        return source
    return ctx.builder.emit(Reshape, result=result, source=source, span=call.span).result


def raw_chain(ctx: LoweringContext) -> TokenChain:
    """The kernel's raw-memory token chain; using it marks the kernel unchecked."""
    chain = ctx.pointer_chain
    assert chain is not None, "raw access without the raw-memory chain"
    ctx.raw_memory = True
    return chain


def latency_hints(ctx: LoweringContext, expr: A.Expr) -> tuple[LoadStoreHints, ...]:
    latency = ctx.type_of(expr)
    assert isinstance(latency, LatencyTy)
    return load_hints(latency.cycles or None, allow_tma=True)


def access_scope(
    ctx: LoweringContext, ordering: MemoryOrdering, expr: A.Expr
) -> MemoryScope | None:
    """The scope of an access: an `Option<scope::X>` operand, dropped when it is weak."""
    scope = ctx.expr(expr)
    if ordering is MemoryOrdering.WEAK or scope is None:
        return None
    assert isinstance(scope, MarkerTy)
    return SCOPES[scope.variant]


def _load_ptr(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    ptrs = value(ctx, args[0])
    tile = ptrs.type
    assert isinstance(tile, TileType) and isinstance(tile.element, PointerType)
    result = TileType(tile.element.pointee, tile.shape)
    ordering = ORDERINGS[marker(ctx, args[1])]
    scope = access_scope(ctx, ordering, args[2])
    mask = optional_value(ctx, args[3])
    padding = optional_value(ctx, args[4])
    if padding is not None:
        padding = broadcast_to(ctx, padding, result.shape, call.span)
    user = optional_value(ctx, args[5])
    chain = raw_chain(ctx)
    op = ctx.builder.emit(
        LoadPtrTko,
        tile=result,
        result_token=TOKEN,
        ordering=ordering,
        scope=scope,
        hints=latency_hints(ctx, args[6]),
        ptrs=ptrs,
        mask=mask,
        padding=padding,
        token=chained(ctx, chain, user, call.span),
        span=call.span,
    )
    chain.token = op.result_token
    return (op.tile, op.result_token)


def _store_ptr(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    ptrs = value(ctx, args[0])
    values = value(ctx, args[1])
    ordering = ORDERINGS[marker(ctx, args[2])]
    scope = access_scope(ctx, ordering, args[3])
    mask = optional_value(ctx, args[4])
    user = optional_value(ctx, args[5])
    chain = raw_chain(ctx)
    op = ctx.builder.emit(
        StorePtrTko,
        result_token=TOKEN,
        ordering=ordering,
        scope=scope,
        hints=latency_hints(ctx, args[6]),
        ptrs=ptrs,
        value=values,
        mask=mask,
        token=chained(ctx, chain, user, call.span),
        span=call.span,
    )
    chain.token = op.result_token
    return op.result_token


def _assume(kind: str) -> IntrinsicLowering:
    def lower(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
        written = call.function.generic_args if isinstance(call, A.Call) else call.generic_args
        bounds = [ctx.body.consts[g] for g in written[1:]]  # type: ignore[index, union-attr]
        predicate = {
            "assume_div_by": lambda: DivBy(bounds[0]),
            "assume_bounds_lower": lambda: Bounded(bounds[0], None),
            "assume_bounds_upper": lambda: Bounded(None, bounds[0]),
            "assume_bounds": lambda: Bounded(bounds[0], bounds[1]),
        }.get(kind, lambda: SameElements(tuple(bounds)))()
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
    "pointer_reshape": _reshape,
    "int_to_ptr": _conversion(IntToPtr),
    "ptr_to_int": _conversion(PtrToInt),
    "ptr_to_ptr": _conversion(PtrToPtr),
    "load_ptr_tko": _load_ptr,
    "store_ptr_tko": _store_ptr,
    **{
        kind: _assume(kind)
        for kind in (
            "assume_div_by",
            "assume_bounds_lower",
            "assume_bounds_upper",
            "assume_bounds",
            *(f"assume_same_elements_{rank}d" for rank in range(1, 5)),
        )
    },
}
