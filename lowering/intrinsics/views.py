"""Lowering of raw view access (`parser.prelude.views`): `load_view_tko` with its
ordering, scope and optimization hints, `load_pipelined::<L>`, `get_shape_dim`."""

from __future__ import annotations

from lowering.element_types import ir_tile_type
from lowering.intrinsics.common import marker
from lowering.intrinsics.spec import IntrinsicLowering
from lowering.intrinsics.tensors import checked_load
from lowering.intrinsics.tokens import advance, view_token
from lowering.ir.attributes import HINTS_ARCH, LoadStoreHints, MemoryOrdering, MemoryScope
from lowering.ir.core import Value
from lowering.ir.ops_memory import LoadViewTko
from lowering.ir.types import TOKEN
from lowering.lowered_expr import Lowered, PartitionValue
from lowering.lowering_context import LoweringContext
from parser import ast_nodes as A

ORDERINGS = {
    "Weak": MemoryOrdering.WEAK,
    "Relaxed": MemoryOrdering.RELAXED,
    "Acquire": MemoryOrdering.ACQUIRE,
    "Release": MemoryOrdering.RELEASE,
    "AcqRel": MemoryOrdering.ACQ_REL,
}
SCOPES = {
    "TileBlock": MemoryScope.TILE_BLOCK,
    "Device": MemoryScope.DEVICE,
    "System": MemoryScope.SYSTEM,
}


def load_hints(latency: int | None, allow_tma: bool) -> tuple[LoadStoreHints, ...]:
    """Optimization hints of a view load; none when there is nothing to say (no latency,
    TMA allowed: the assembler's default)."""
    if latency is None and allow_tma:
        return ()
    return (LoadStoreHints(HINTS_ARCH, latency=latency, allow_tma=None if allow_tma else False),)


def _load(
    ctx: LoweringContext,
    call: A.Call | A.MethodCall,
    args: tuple,
    ordering: MemoryOrdering = MemoryOrdering.WEAK,
    scope: MemoryScope | None = None,
    hints: tuple[LoadStoreHints, ...] = (),
) -> Value:
    """A view load of `args[0]` at `args[1]`; a weak load carries no scope (Tile IR)."""
    part = ctx.expr(args[0])
    assert isinstance(part, PartitionValue)
    index = ctx.expr(args[1])
    assert isinstance(index, tuple)
    op = ctx.builder.emit(
        LoadViewTko,
        tile=ir_tile_type(ctx.type_of(call)),
        result_token=TOKEN,
        ordering=ordering,
        scope=None if ordering is MemoryOrdering.WEAK else scope,
        hints=hints,
        view=part.view,
        index=tuple(ctx.scalar(v, args[1].span) for v in index),
        token=view_token(ctx, part, call.span),
        span=call.span,
    )
    advance(part, op.result_token)
    return op.tile


def _load_view_tko(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    latency = ctx.body.consts.get(args[4])  # set for `Some(n)`, absent for `None`
    assert latency is None or isinstance(latency, int)
    hints = load_hints(latency, marker(ctx, args[5]) == "Enabled")
    ordering = ORDERINGS[marker(ctx, args[2])]
    return _load(ctx, call, args, ordering, SCOPES[marker(ctx, args[3])], hints)


def _load_pipelined(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    """`p.load_pipelined::<L>(idx)`: `p.load(idx)` (the same bounds check) with a latency."""
    assert isinstance(call, A.MethodCall)
    latency = ctx.body.consts[call.generic_args[0]]  # type: ignore[index]
    assert isinstance(latency, int)
    part = ctx.expr(args[0])
    assert isinstance(part, PartitionValue)
    return checked_load(ctx, part, args[1], call, load_hints(latency, allow_tma=True))


def _get_shape_dim(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    dims = ctx.expr(args[0])
    axis = ctx.body.consts[args[1]]
    assert isinstance(dims, tuple) and isinstance(axis, int)
    return ctx.scalar(dims[axis], call.span)


VIEW_LOWERINGS: dict[str, IntrinsicLowering] = {
    "load_view_tko": _load_view_tko,
    "load_pipelined": _load_pipelined,
    "get_shape_dim": _get_shape_dim,
}
