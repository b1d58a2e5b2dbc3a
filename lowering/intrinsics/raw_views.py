"""Lowering of raw tensor and partition views (`parser.prelude.raw_views`).

`make_tensor_view` makes a tensor in the kernel: a `make_tensor_view` op over the base
pointer (static extents and strides in the view type, the `-1` ones as operands) whose
token chain starts at the given token and is carried like an output's. A partition view
of a tensor that is written (an output, a made tensor, an input written through an
unsafe view) merges its token into the tensor's chain, so every access through it comes
after that token and after the tensor's earlier accesses; a read-only view of an input
keeps its token for its own loads. Gather/scatter and strided views (`cutile::tileir`)
are `make_gather_scatter_view` / `make_strided_view` ops whose layout is in their type,
read with `load_view_tko` after the given token.
"""

from __future__ import annotations

from lowering.element_types import ir_element, ir_tile_type
from lowering.intrinsics.common import marker, value
from lowering.intrinsics.spec import IntrinsicLowering
from lowering.intrinsics.tensors import index_operands, output_index, partition_operand
from lowering.intrinsics.tokens import advance, merge_tokens, view_token
from lowering.intrinsics.views import ORDERINGS, SCOPES, load_hints
from lowering.ir.attributes import MemoryOrdering
from lowering.ir.core import Value
from lowering.ir.ops_memory import (
    LoadViewTko,
    MakeGatherScatterView,
    MakeStridedView,
    MakeTensorView,
    StoreViewTko,
)
from lowering.ir.types import (
    TOKEN,
    GatherScatterViewType,
    PaddingValue,
    StridedViewType,
    TensorViewType,
)
from lowering.lowered_expr import Lowered, PartitionValue, TensorHandle
from lowering.lowering_context import LoweringContext
from parser import ast_nodes as A
from parser.types import (
    DYNAMIC,
    ArrayTy,
    GatherScatterViewTy,
    MarkerTy,
    PartitionTy,
    ShapeTy,
    StridedViewTy,
    TensorTy,
)

PADDINGS = {
    "None": None,
    "Zero": PaddingValue.ZERO,
    "NegZero": PaddingValue.NEG_ZERO,
    "Nan": PaddingValue.NAN,
    "PosInf": PaddingValue.POS_INF,
    "NegInf": PaddingValue.NEG_INF,
}


def _make_tensor_view(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    base = value(ctx, args[0])
    shape_ty, strides_ty, tensor = (ctx.type_of(e) for e in (args[1], args[2], call))
    assert isinstance(shape_ty, ShapeTy) and isinstance(strides_ty, ArrayTy)
    assert isinstance(tensor, TensorTy) and strides_ty.dims is not None
    dims, strides = ctx.expr(args[1]), ctx.expr(args[2])
    assert isinstance(dims, tuple) and isinstance(strides, tuple)
    token = value(ctx, args[3])
    extents: list[int | Value] = [
        d if d != DYNAMIC else ctx.scalar(dims[a], call.span) for a, d in enumerate(shape_ty.dims)
    ]
    dynamic_strides = [
        ctx.scalar(strides[a], call.span) for a, s in enumerate(strides_ty.dims) if s == DYNAMIC
    ]
    view_type = TensorViewType(
        ir_element(tensor.elem),
        tuple(d if isinstance(d, int) else None for d in extents),
        tuple(None if s == DYNAMIC else s for s in strides_ty.dims),
    )
    view = ctx.builder.emit(
        MakeTensorView,
        result=view_type,
        base=base,
        dynamic_shape=tuple(d for d in extents if isinstance(d, Value)),
        dynamic_strides=tuple(dynamic_strides),
        span=call.span,
    ).result
    return ctx.local_tensor(TensorHandle(None, view, tuple(extents), token))


def _dim_map(ctx: LoweringContext, expr: A.Expr) -> tuple[int, ...] | None:
    ty = ctx.type_of(expr)
    if isinstance(ty, MarkerTy):
        return None  # `dim_map::Identity`
    if isinstance(ty, ArrayTy) and ty.dims is not None:
        return ty.dims
    permutation = ctx.body.consts[expr]
    assert isinstance(permutation, tuple)
    return tuple(int(p) for p in permutation)


def _partition_of(
    ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple, dim_map: tuple[int, ...] | None
) -> tuple[TensorHandle, Value, PartitionTy]:
    handle = ctx.expr(args[0])
    part_type = ctx.type_of(call)
    assert isinstance(handle, TensorHandle) and isinstance(part_type, PartitionTy)
    padding = PADDINGS[marker(ctx, args[2])]
    view = ctx.partition(handle, part_type.tile, padding, call.span, dim_map)
    return handle, view, part_type


def _make_partition_view(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    dim_map = _dim_map(ctx, args[3])
    handle, view, part_type = _partition_of(ctx, call, args, dim_map)
    token = value(ctx, args[4])
    # logical axis a walks tensor axis dim_map[a]: its index is checked against that axis
    walked = dim_map or ()
    if handle.token is None:  # an input nobody writes: only its own loads wait for `token`
        return PartitionValue(
            handle, view, part_type.tile, mutable=False, token=token, dim_map=walked
        )
    handle.token = merge_tokens(ctx, [handle.token, token], call.span)
    return PartitionValue(handle, view, part_type.tile, mutable=False, dim_map=walked)


def _make_partition_view_mut(
    ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple
) -> Lowered:
    handle, view, part_type = _partition_of(ctx, call, args, None)
    token = value(ctx, args[3])
    assert handle.token is not None, "a written input has a token chain (see the prologue)"
    if handle.param is not None and not handle.param.role.is_output:
        ctx.raw_memory = True  # an input the host thinks read-only is written
    handle.token = merge_tokens(ctx, [handle.token, token], call.span)
    return PartitionValue(handle, view, part_type.tile, mutable=True)


def _access_attributes(ctx: LoweringContext, args: tuple, first: int) -> dict[str, object]:
    """ordering, scope (none when weak) and hints from ordering, scope, latency, tma."""
    ordering = ORDERINGS[marker(ctx, args[first])]
    latency = ctx.body.consts.get(args[first + 2])  # set for `Some(n)`
    assert latency is None or isinstance(latency, int)
    weak = ordering is MemoryOrdering.WEAK
    return {
        "ordering": ordering,
        "scope": None if weak else SCOPES[marker(ctx, args[first + 1])],
        "hints": load_hints(latency, marker(ctx, args[first + 3]) == "Enabled"),
    }


def _store_view_tko_mut(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    part = partition_operand(ctx, args[0])
    tile = value(ctx, args[1])
    index = output_index(ctx, part, index_operands(ctx, args[2]), call.span)
    op = ctx.builder.emit(
        StoreViewTko,
        result_token=TOKEN,
        tile=tile,
        view=part.view,
        index=index,
        token=view_token(ctx, part, call.span),
        span=call.span,
        **_access_attributes(ctx, args, 3),
    )
    advance(part, op.result_token)
    return op.result_token


def _load_view_tko_mut(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    part = partition_operand(ctx, args[0])
    index = output_index(ctx, part, index_operands(ctx, args[1]), call.span)
    op = ctx.builder.emit(
        LoadViewTko,
        tile=ir_tile_type(ctx.type_of(call)),
        result_token=TOKEN,
        view=part.view,
        index=index,
        token=view_token(ctx, part, call.span),
        span=call.span,
        **_access_attributes(ctx, args, 2),
    )
    advance(part, op.result_token)
    return op.tile


def _made_view(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    """`make_gather_scatter_view` / `make_strided_view`: the layout is in the view type."""
    handle = ctx.expr(args[0])
    assert isinstance(handle, TensorHandle)
    tensor_view = handle.view.type
    assert isinstance(tensor_view, TensorViewType)
    padding = PADDINGS[marker(ctx, args[2])]
    ty = ctx.type_of(call)
    view_type: GatherScatterViewType | StridedViewType
    op_class: type[MakeGatherScatterView] | type[MakeStridedView]
    if isinstance(ty, GatherScatterViewTy):
        view_type = GatherScatterViewType(ty.tile, tensor_view, ty.sparse_dim, padding)
        op_class = MakeGatherScatterView
    else:
        assert isinstance(ty, StridedViewTy)
        view_type = StridedViewType(ty.tile, ty.strides, tensor_view, ty.dim_map, padding)
        op_class = MakeStridedView
    view = ctx.builder.emit(
        op_class, result=view_type, tensor_view=handle.view, span=call.span
    ).result
    return PartitionValue(handle, view, ty.tile, mutable=False)


def _load_made_view(first: int) -> IntrinsicLowering:
    """A load from a gather/scatter (`first` = 3: sparse and dense index) or strided view
    (`first` = 2: one index per dimension), after the given token and the tensor's chain."""

    def lower(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
        part = partition_operand(ctx, args[0])
        if first == 3:
            index = (value(ctx, args[1]), value(ctx, args[2]))
        else:
            index = index_operands(ctx, args[1])
        token = value(ctx, args[first])
        ordering = ORDERINGS[marker(ctx, args[first + 1])]
        weak = ordering is MemoryOrdering.WEAK
        tile = ir_tile_type(ctx.type_of(call).elements[0])  # type: ignore[union-attr]
        op = ctx.builder.emit(
            LoadViewTko,
            tile=tile,
            result_token=TOKEN,
            ordering=ordering,
            scope=None if weak else SCOPES[marker(ctx, args[first + 2])],
            view=part.view,
            index=index,
            token=merge_tokens(ctx, [part.handle.token, token], call.span),
            span=call.span,
        )
        advance(part, op.result_token)
        return (op.tile, op.result_token)

    return lower


RAW_VIEW_LOWERINGS: dict[str, IntrinsicLowering] = {
    "make_tensor_view": _make_tensor_view,
    "make_partition_view": _make_partition_view,
    "make_partition_view_mut": _make_partition_view_mut,
    "store_view_tko_mut": _store_view_tko_mut,
    "load_view_tko_mut": _load_view_tko_mut,
    "make_gather_scatter_view": _made_view,
    "make_strided_view": _made_view,
    "load_gather_scatter_view_tko": _load_made_view(3),
    "load_strided_view_tko": _load_made_view(2),
}
