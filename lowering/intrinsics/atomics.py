"""Lowering of atomics and module globals (`parser.prelude.atomics`).

The pointer atomics are raw accesses on the kernel's raw-memory chain, like
`load_ptr_tko`. A `static` global becomes a module `global` (its symbol, type
`tile<1xE>`, initial value) and each use a `get_global` pointer, read and written with
`load_ptr_tko` / `store_ptr_tko` / `atomic_rmw_tko` on the same chain (a global is memory
like any other: an access through a raw pointer may alias it only if it was made with
`int_to_ptr`, but ordering them all costs little).
"""

from __future__ import annotations

from lowering.element_types import ir_element
from lowering.intrinsics.common import marker, value
from lowering.intrinsics.pointers import raw_chain
from lowering.intrinsics.spec import IntrinsicLowering
from lowering.intrinsics.tensors import index_operands, output_index, partition_operand
from lowering.intrinsics.tokens import advance, chained, optional_value, view_token
from lowering.intrinsics.views import ORDERINGS, SCOPES
from lowering.ir.attributes import AtomicMode, MemoryOrdering
from lowering.ir.core import Value
from lowering.ir.ops_memory import LoadPtrTko, StorePtrTko
from lowering.ir.ops_pointer import (
    AtomicCasTko,
    AtomicRedViewTko,
    AtomicRmwTko,
    GetGlobal,
    GlobalVar,
)
from lowering.ir.types import TOKEN, PointerType, TileType
from lowering.lowered_expr import Lowered
from lowering.lowering_context import LoweringContext
from parser import ast_nodes as A
from parser.types import GlobalTy

MODES = {m.name.replace("_", "").lower(): m for m in AtomicMode}


def _mode(ctx: LoweringContext, expr: A.Expr) -> AtomicMode:
    return MODES[marker(ctx, expr).lower()]


def _result_of(ptrs: Value) -> TileType:
    tile = ptrs.type
    assert isinstance(tile, TileType) and isinstance(tile.element, PointerType)
    return TileType(tile.element.pointee, tile.shape)


def _atomic_rmw(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    ptrs, arg = value(ctx, args[0]), value(ctx, args[1])
    mask, user = optional_value(ctx, args[5]), optional_value(ctx, args[6])
    chain = raw_chain(ctx)
    op = ctx.builder.emit(
        AtomicRmwTko,
        old=_result_of(ptrs),
        result_token=TOKEN,
        ordering=ORDERINGS[marker(ctx, args[3])],
        scope=SCOPES[marker(ctx, args[4])],
        mode=_mode(ctx, args[2]),
        ptrs=ptrs,
        arg=arg,
        mask=mask,
        token=chained(ctx, chain, user, call.span),
        span=call.span,
    )
    chain.token = op.result_token
    return (op.old, op.result_token)


def _atomic_cas(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    ptrs, cmp, val = value(ctx, args[0]), value(ctx, args[1]), value(ctx, args[2])
    mask, user = optional_value(ctx, args[5]), optional_value(ctx, args[6])
    chain = raw_chain(ctx)
    op = ctx.builder.emit(
        AtomicCasTko,
        old=_result_of(ptrs),
        result_token=TOKEN,
        ordering=ORDERINGS[marker(ctx, args[3])],
        scope=SCOPES[marker(ctx, args[4])],
        ptrs=ptrs,
        cmp=cmp,
        val=val,
        mask=mask,
        token=chained(ctx, chain, user, call.span),
        span=call.span,
    )
    chain.token = op.result_token
    return (op.old, op.result_token)


def _atomic_red_view(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    """A reduction into a tile of a `PartitionMut` (its index is not checked: unsafe), on
    its tensor's token chain."""
    part = partition_operand(ctx, args[0])
    tile = value(ctx, args[1])
    index = output_index(ctx, part, index_operands(ctx, args[2]), call.span)
    op = ctx.builder.emit(
        AtomicRedViewTko,
        result_token=TOKEN,
        ordering=ORDERINGS[marker(ctx, args[4])],
        scope=SCOPES[marker(ctx, args[5])],
        mode=_mode(ctx, args[3]),
        view=part.view,
        index=index,
        value=tile,
        token=view_token(ctx, part, call.span),
        span=call.span,
    )
    advance(part, op.result_token)
    return op.result_token


def _global_pointer(ctx: LoweringContext, expr: A.Expr, span: A.Span) -> Value:
    """A pointer to the global `expr` names (declared in the module on first use)."""
    glob = ctx.type_of(expr)
    assert isinstance(glob, GlobalTy)
    element = ir_element(glob.elem)
    ctx.globals.setdefault(glob.symbol, GlobalVar(glob.symbol, element, glob.value, element.bytes))
    result = TileType(PointerType(element))
    return ctx.builder.emit(GetGlobal, result=result, name=glob.symbol, span=span).result


def _global_load(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    ptr = _global_pointer(ctx, args[0], call.span)
    ordering = ORDERINGS[marker(ctx, args[1])]
    weak = ordering is MemoryOrdering.WEAK
    chain = raw_chain(ctx) if weak else ctx.pointer_chain
    assert chain is not None
    op = ctx.builder.emit(
        LoadPtrTko,
        tile=_result_of(ptr),
        result_token=TOKEN,
        ordering=ordering,
        scope=None if weak else SCOPES[marker(ctx, args[2])],
        ptrs=ptr,
        token=chain.token,
        span=call.span,
    )
    chain.token = op.result_token
    return (op.tile, op.result_token)


def _global_store(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    ptr = _global_pointer(ctx, args[0], call.span)
    stored = value(ctx, args[1])
    ordering = ORDERINGS[marker(ctx, args[2])]
    weak = ordering is MemoryOrdering.WEAK  # blocks storing at once would race
    chain = raw_chain(ctx) if weak else ctx.pointer_chain
    assert chain is not None
    op = ctx.builder.emit(
        StorePtrTko,
        result_token=TOKEN,
        ordering=ordering,
        scope=None if weak else SCOPES[marker(ctx, args[3])],
        ptrs=ptr,
        value=stored,
        token=chain.token,
        span=call.span,
    )
    chain.token = op.result_token
    return op.result_token


def _global_atomic_add(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    ptr = _global_pointer(ctx, args[0], call.span)
    added = value(ctx, args[1])
    result = _result_of(ptr)
    chain = ctx.pointer_chain
    assert chain is not None
    op = ctx.builder.emit(
        AtomicRmwTko,
        old=result,
        result_token=TOKEN,
        ordering=ORDERINGS[marker(ctx, args[2])],
        scope=SCOPES[marker(ctx, args[3])],
        mode=AtomicMode.ADDF if result.element.is_float else AtomicMode.ADD,  # type: ignore[union-attr]
        ptrs=ptr,
        arg=added,
        token=chain.token,
        span=call.span,
    )
    chain.token = op.result_token
    return (op.old, op.result_token)


ATOMIC_LOWERINGS: dict[str, IntrinsicLowering] = {
    "atomic_rmw_tko": _atomic_rmw,
    "atomic_cas_tko": _atomic_cas,
    "atomic_red_view_tko": _atomic_red_view,
    "global_load": _global_load,
    "global_store": _global_store,
    "global_atomic_add": _global_atomic_add,
}
