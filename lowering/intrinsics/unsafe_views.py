"""Lowering of the unsafe output views (`parser.prelude.unsafe_views`)."""

from __future__ import annotations

from lowering.element_types import ir_tile_type
from lowering.intrinsics.spec import IntrinsicLowering
from lowering.intrinsics.tensors import (
    check_output_index,
    index_operands,
    output_index,
    partition_operand,
    store_to_output,
)
from lowering.ir.ops_memory import LoadViewTko
from lowering.ir.types import TOKEN
from lowering.lowered_expr import Lowered, PartitionValue, TensorHandle
from lowering.lowering_context import LoweringContext
from parser import ast_nodes as A
from parser.types import PartitionTy


def _partition_full_mut(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    """The whole output cut into tiles: tile index i is the tensor's tile i (no offset)."""
    handle = ctx.expr(args[0])
    assert isinstance(handle, TensorHandle)
    if handle.param is not None and not handle.param.role.is_output:
        ctx.raw_memory = True  # an input the host thinks read-only is written
    part_type = ctx.type_of(call)
    assert isinstance(part_type, PartitionTy)
    view = ctx.partition(handle, part_type.tile, None, call.span)
    return PartitionValue(handle, view, part_type.tile, mutable=True)


def _load_from_output(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    """Bounds-checked like a store, and on the output's token chain: it reads this
    block's earlier stores; other blocks' stores are unordered (the caller's promise)."""
    part = partition_operand(ctx, args[0])
    local = index_operands(ctx, args[1])
    check_output_index(ctx, part, ctx.type_of(args[0]), local, "PartitionMut load", call.span)
    op = ctx.builder.emit(
        LoadViewTko,
        tile=ir_tile_type(ctx.type_of(call)),
        result_token=TOKEN,
        view=part.view,
        index=output_index(ctx, part, local, call.span),
        token=part.handle.token,
        span=call.span,
    )
    part.handle.token = op.result_token
    return op.tile


def _store_unchecked(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    part = partition_operand(ctx, args[0])
    tile = ctx.expr(args[1])
    store_to_output(ctx, part, tile, index_operands(ctx, args[2]), call.span)
    return None


UNSAFE_VIEW_LOWERINGS: dict[str, IntrinsicLowering] = {
    "partition_full_mut": _partition_full_mut,
    "partition_mut_load": _load_from_output,
    "store_unchecked": _store_unchecked,
}
