"""Tensor access: block ids, implicit per-block loads and stores, shapes, broadcast,
partitions."""

from __future__ import annotations

from parser import codes
from parser.diagnostics import error
from parser.prelude.spec import CallTyper, Intrinsic, Receiver
from parser.types import (
    DYNAMIC,
    UNIT,
    Elem,
    RefTy,
    ScalarTy,
    SemType,
    ShapeTy,
    TensorTy,
    TileTy,
    TupleTy,
    is_power_of_two,
)

# ----------------------------------------------------------------------------- helpers


def _tensor_arg(call: CallTyper, index: int, what: str) -> RefTy | None:
    ty = call.arg(index)
    if ty is None:
        return None
    if isinstance(ty, RefTy) and isinstance(ty.inner, TensorTy):
        return ty
    call.report(
        error(
            codes.MISMATCHED_TYPES,
            f"expected a tensor for {what}, found `{ty}`",
            call.args[index].span,
            "expected `&Tensor<..>`",
        )
    )
    return None


def _mutable_tensor_arg(call: CallTyper, index: int, action: str) -> TensorTy | None:
    ref = _tensor_arg(call, index, "the output")
    if ref is None:
        return None
    assert isinstance(ref.inner, TensorTy)
    if not ref.mutable:
        name = call.args[index].span.text
        call.report(
            error(
                codes.MUTATE_SHARED,
                f"cannot {action} `{name}`, as it is behind a `&` reference",
                call.args[index].span,
                f"`{name}` is a `&` reference, so it cannot be written",
                notes=(
                    "shared `&Tensor` inputs are read-only; only partitioned `&mut Tensor` "
                    "outputs are written, one disjoint tile per block",
                ),
                help=(
                    f"declare `{name}` as `&mut Tensor<{ref.inner.elem}, {{[..]}}>` to make it "
                    "a partitioned output",
                ),
            )
        )
        return None
    return ref.inner


def _shape_arg(call: CallTyper, index: int) -> tuple[int, ...] | None:
    ty = call.arg(index)
    if ty is None:
        return None
    if not isinstance(ty, ShapeTy):
        call.report(
            error(
                codes.MISMATCHED_TYPES,
                f"expected a shape, found `{ty}`",
                call.args[index].span,
                "expected `Shape<{[..]}>`",
                help=("use `z.shape()` or `const_shape![..]`",),
            )
        )
        return None
    if not all(is_power_of_two(d) for d in ty.dims):
        call.report(
            error(
                codes.TILE_NOT_POWER_OF_TWO,
                f"tile shape {list(ty.dims)} has a dimension that is not a positive power of two",
                call.args[index].span,
                "tile shape",
            )
        )
        return None
    return ty.dims


def _mismatch(call: CallTyper, index: int, expected: SemType, found: SemType, why: str) -> None:
    call.report(
        error(
            codes.MISMATCHED_TYPES,
            f"mismatched types: expected `{expected}`, found `{found}`",
            call.args[index].span,
            why,
        )
    )


# ----------------------------------------------------------------------------- rules


def _load_tile_like(call: CallTyper) -> SemType | None:
    source = _tensor_arg(call, 0, "the tensor to load from")
    like = _tensor_arg(call, 1, "the output whose tile shape is used")
    if source is None or like is None:
        return None
    assert isinstance(source.inner, TensorTy) and isinstance(like.inner, TensorTy)
    if source.inner.rank != like.inner.rank:
        call.report(
            error(
                codes.MISMATCHED_TYPES,
                f"`load_tile_like` needs tensors of the same rank, found rank {source.inner.rank} "
                f"and rank {like.inner.rank}",
                call.span,
                "rank mismatch",
                secondary=(
                    (call.args[0].span, f"`{source.inner}`"),
                    (call.args[1].span, f"`{like.inner}`"),
                ),
            )
        )
        return None
    if not like.mutable or any(d == DYNAMIC for d in like.inner.shape):
        call.report(
            error(
                codes.MISMATCHED_TYPES,
                "the second argument of `load_tile_like` must be a partitioned "
                "`&mut Tensor` output",
                call.args[1].span,
                f"found `{like}`",
                notes=("its tile shape is the shape loaded",),
            )
        )
        return None
    return TileTy(source.inner.elem, like.inner.shape)


def _store(call: CallTyper) -> SemType | None:
    out = _mutable_tensor_arg(call, 0, "store through")
    tile_ty = call.arg(1, TileTy(out.elem, out.shape) if out else None)
    if out is None or tile_ty is None:
        return None
    expected = TileTy(out.elem, out.shape)
    if tile_ty != expected:
        _mismatch(call, 1, expected, tile_ty, f"the output's tile is `{expected}`")
        return None
    return UNIT


def _load_output(call: CallTyper) -> SemType | None:
    out = _mutable_tensor_arg(call, 0, "load this block's output tile from")
    return None if out is None else TileTy(out.elem, out.shape)


def _tensor_shape(call: CallTyper) -> SemType | None:
    ty = call.arg(0)
    if isinstance(ty, RefTy) and isinstance(ty.inner, TensorTy):
        return ShapeTy(ty.inner.shape)
    if isinstance(ty, TileTy):
        return ShapeTy(ty.shape)
    return None


def _broadcast(call: CallTyper) -> SemType | None:
    source = call.arg(0)
    dims = _shape_arg(call, 1)
    if source is None or dims is None:
        return None
    if isinstance(source, ScalarTy):
        return TileTy(source.elem, dims)
    if isinstance(source, TileTy):
        if len(source.shape) == len(dims) and all(
            s in (1, d) for s, d in zip(source.shape, dims, strict=False)
        ):
            return TileTy(source.elem, dims)
        call.report(
            error(
                codes.MISMATCHED_TYPES,
                f"cannot broadcast `{source}` to shape {list(dims)}",
                call.span,
                "incompatible shapes",
                notes=("broadcast keeps the rank and expands dimensions of size 1",),
            )
        )
        return None
    call.report(
        error(
            codes.MISMATCHED_TYPES,
            f"cannot broadcast a value of type `{source}`",
            call.args[0].span,
            "expected a scalar or a tile",
        )
    )
    return None


def _mutable_partition(call: CallTyper) -> SemType | None:
    out = _mutable_tensor_arg(call, 0, "mutably partition")
    if out is not None:
        call.report(
            error(
                codes.UNSUPPORTED_SYNTAX,
                "`partition_mut` is not implemented yet in cutile-serve",
                call.span,
                "not implemented yet",
            )
        )
    return None


_BLOCK_IDS = TupleTy((ScalarTy(Elem.I32),) * 3)


def _block_ids(call: CallTyper) -> SemType | None:
    return _BLOCK_IDS


# ----------------------------------------------------------------------------- the table

TENSOR_INTRINSICS: tuple[Intrinsic, ...] = (
    Intrinsic(
        "get_tile_block_id",
        "fn get_tile_block_id() -> (i32, i32, i32)",
        (0,),
        _block_ids,
        functions=("get_tile_block_id",),
    ),
    Intrinsic(
        "get_num_tile_blocks",
        "fn get_num_tile_blocks() -> (i32, i32, i32)",
        (0,),
        _block_ids,
        functions=("get_num_tile_blocks",),
    ),
    Intrinsic(
        "load_tile_like",
        "fn load_tile_like<E, F, S>(x: &Tensor<E, _>, like: &mut Tensor<F, S>) -> Tile<E, S>",
        (2,),
        _load_tile_like,
        functions=("load_tile_like", "load_tile_like_1d", "load_tile_like_2d", "load_tile_like_3d"),
        methods=("load_like", "load_tile_like"),
        receiver=Receiver.TENSOR,
    ),
    Intrinsic(
        "store",
        "fn store<E, S>(z: &mut Tensor<E, S>, tile: Tile<E, S>)",
        (2,),
        _store,
        functions=("store_tile",),
        methods=("store",),
        receiver=Receiver.TENSOR,
    ),
    Intrinsic(
        "load_output",
        "fn load<E, S>(z: &mut Tensor<E, S>) -> Tile<E, S>",
        (1,),
        _load_output,
        functions=("load_tile_mut",),
        methods=("load",),
        receiver=Receiver.TENSOR,
    ),
    Intrinsic(
        "shape",
        "fn shape<E, S>(t: &Tensor<E, S>) -> Shape<S>",
        (1,),
        _tensor_shape,
        methods=("shape",),
        receiver=Receiver.TENSOR,
    ),
    Intrinsic(
        "tile_shape",
        "fn shape<E, S>(t: Tile<E, S>) -> Shape<S>",
        (1,),
        _tensor_shape,
        methods=("shape",),
        receiver=Receiver.TILE,
    ),
    Intrinsic(
        "broadcast",
        "fn broadcast<E, S>(x: E, shape: Shape<S>) -> Tile<E, S>",
        (2,),
        _broadcast,
        functions=("broadcast_scalar",),
        methods=("broadcast",),
        receiver=Receiver.SCALAR,
    ),
    Intrinsic(
        "broadcast_tile",
        "fn broadcast<E, R, S>(t: Tile<E, R>, shape: Shape<S>) -> Tile<E, S>",
        (2,),
        _broadcast,
        functions=("broadcast",),
        methods=("broadcast",),
        receiver=Receiver.TILE,
    ),
    Intrinsic(
        "partition_mut",
        "fn partition_mut<E, S, R>(t: &mut Tensor<E, S>, shape: Shape<R>) -> PartitionMut<E, R>",
        (2,),
        _mutable_partition,
        methods=("partition_mut",),
        receiver=Receiver.TENSOR,
    ),
    Intrinsic(
        "partition",
        "fn partition<E, S, R>(t: &Tensor<E, S>, shape: Shape<R>) -> Partition<E, R>",
        (2,),
        None,
        methods=("partition",),
        receiver=Receiver.TENSOR,
    ),
)
