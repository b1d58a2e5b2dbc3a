"""Tensor access: block ids, implicit per-block loads and stores, shapes, broadcast,
partitions."""

from __future__ import annotations

from parser import ast_nodes as A
from parser import messages
from parser.diagnostics import Diagnostic
from parser.prelude.common import check_tile_dims, mutable_binding, shape_arg
from parser.prelude.spec import CallTyper, Intrinsic, Receiver
from parser.types import (
    DYNAMIC,
    UNIT,
    ArrayTy,
    CoordTy,
    Elem,
    MappedTy,
    PartitionIndexTy,
    PartitionTy,
    RefTy,
    ScalarTy,
    SemType,
    ShapeTy,
    TensorTy,
    TileTy,
    TupleTy,
)

# ----------------------------------------------------------------------------- helpers


def _tensor_arg(call: CallTyper, index: int, what: str) -> RefTy | None:
    ty = call.arg(index)
    if ty is None:
        return None
    if isinstance(ty, RefTy) and isinstance(ty.inner, TensorTy):
        return ty
    if isinstance(ty, TensorTy):  # made in the kernel (`make_tensor_view`), used by `&self`
        return RefTy(ty, mutable=False)
    call.report(messages.NOT_A_TENSOR_FOR.at(call.args[index].span, what=what, found=ty))
    return None


def mutable_tensor_arg(call: CallTyper, index: int, action: str) -> TensorTy | None:
    ref = _tensor_arg(call, index, "the output")
    if ref is None:
        return None
    assert isinstance(ref.inner, TensorTy)
    if not ref.mutable:
        name = call.args[index].span.text
        call.report(
            messages.WRITE_THROUGH_SHARED_TENSOR.at(
                call.args[index].span, action=action, name=name, elem=ref.inner.elem
            )
        )
        return None
    return ref.inner


# ----------------------------------------------------------------------------- rules


def _load_tile_like(call: CallTyper) -> SemType | None:
    source = _tensor_arg(call, 0, "the tensor to load from")
    like = _tensor_arg(call, 1, "the output whose tile shape is used")
    if source is None or like is None:
        return None
    assert isinstance(source.inner, TensorTy) and isinstance(like.inner, TensorTy)
    if source.inner.rank != like.inner.rank:
        call.report(
            messages.LOAD_LIKE_RANKS_DIFFER.at(
                call.span,
                ((call.args[0].span, f"`{source.inner}`"), (call.args[1].span, f"`{like.inner}`")),
                source=source.inner.rank,
                like=like.inner.rank,
            )
        )
        return None
    if not like.mutable or any(d == DYNAMIC for d in like.inner.shape):
        call.report(messages.LOAD_LIKE_NOT_OUTPUT.at(call.args[1].span, found=like))
        return None
    if _whole_tile(call, 1, like.inner) is None:
        return None
    return TileTy(source.inner.elem, like.inner.shape)


def _whole_tile(call: CallTyper, index: int, out: TensorTy | None) -> TensorTy | None:
    """An output whose whole tile S is loaded or stored: S is a Tile IR tile, so its
    dimensions are powers of two (any S can be cut with `partition_mut`)."""
    if out is None:
        return None
    name = call.args[index].span.text
    if DYNAMIC in out.shape:
        shape = ", ".join(map(str, out.shape))
        call.report(messages.OUTPUT_TILE_DYNAMIC.at(call.args[index].span, name=name, shape=shape))
        return None
    if check_tile_dims(call, out.shape, call.args[index].span, f"output `{name}`"):
        return out
    return None


def _store(call: CallTyper) -> SemType | None:
    out = _whole_tile(call, 0, mutable_tensor_arg(call, 0, "store through"))
    tile_ty = call.arg(1, TileTy(out.elem, out.shape) if out else None)
    if out is None or tile_ty is None:
        return None
    expected = TileTy(out.elem, out.shape)
    if tile_ty != expected:
        span = call.args[1].span
        call.report(messages.OUTPUT_TILE_MISMATCH.at(span, expected=expected, found=tile_ty))
        return None
    return UNIT


def _load_output(call: CallTyper) -> SemType | None:
    out = _whole_tile(call, 0, mutable_tensor_arg(call, 0, "load this block's output tile from"))
    return None if out is None else TileTy(out.elem, out.shape)


def _tensor_shape(call: CallTyper) -> SemType | None:
    ty = call.arg(0)
    if isinstance(ty, RefTy) and isinstance(ty.inner, TensorTy):
        return ShapeTy(ty.inner.shape)
    if isinstance(ty, TensorTy):
        return ShapeTy(ty.shape)
    if isinstance(ty, TileTy):
        return ShapeTy(ty.shape)
    return None


def _broadcast(call: CallTyper) -> SemType | None:
    source = call.arg(0)
    dims = shape_arg(call, 1, "broadcast")
    if source is None or dims is None:
        return None
    if isinstance(source, ScalarTy):
        return TileTy(source.elem, dims)
    if isinstance(source, TileTy):
        if len(source.shape) == len(dims) and all(
            s in (1, d) for s, d in zip(source.shape, dims, strict=False)
        ):
            return TileTy(source.elem, dims)
        call.report(messages.TILE_BROADCAST_MISMATCH.at(call.span, source=source, shape=list(dims)))
        return None
    call.report(messages.CANNOT_BROADCAST_VALUE.at(call.args[0].span, found=source))
    return None


def _partition(call: CallTyper) -> SemType | None:
    """`x.partition(shape)`: a read-only tiled view of an input, zero-padded at the edges."""
    source = _tensor_arg(call, 0, "the tensor to partition")
    tile = shape_arg(call, 1, "partition")
    if source is None or tile is None:
        return None
    tensor = source.inner
    assert isinstance(tensor, TensorTy)
    if source.mutable:
        call.report(messages.PARTITION_OF_OUTPUT.at(call.args[0].span))
        return None
    if len(tile) != tensor.rank:
        call.report(rank_mismatch(call, tensor.rank, len(tile)))
        return None
    return PartitionTy(tensor.elem, tile, mutable=False)


def _partition_permuted(call: CallTyper) -> SemType | None:
    """`x.partition_permuted(shape, const_array![..])`: a read-only tiled view whose
    logical axis a walks the tensor's axis `dim_map[a]` (shape and index are logical)."""
    part = _partition(call)
    if not isinstance(part, PartitionTy):
        return None
    dim_map = permutation_arg(call, 2, part.rank)
    return None if dim_map is None else part


def permutation_arg(call: CallTyper, index: int, rank: int) -> tuple[int, ...] | None:
    """A compile-time `Array` (`const_array![..]`) holding a permutation of 0..rank."""
    ty = call.arg(index)
    if ty is None:
        return None
    dims = ty.dims if isinstance(ty, ArrayTy) else None
    if dims is not None and sorted(dims) == list(range(rank)):
        return dims
    call.report(messages.DIM_MAP_NOT_PERMUTATION.at(call.args[index].span, rank=rank, found=ty))
    return None


def _load_tile(call: CallTyper) -> SemType | None:
    """`load_tile(x, shape, idx)` / `x.load_tile(shape, idx)`: `x.partition(shape).load(idx)`
    in one call (zero-padded at the edges, the index bounds-checked like the load's)."""
    part = _partition(call)
    if not isinstance(part, PartitionTy) or not index_arg(call, 2, part.rank):
        return None
    return TileTy(part.elem, part.tile)


def _mutable_partition(call: CallTyper) -> SemType | None:
    """`z.partition_mut(shape)`: this block's output tile S, cut into tiles R (R divides S).
    Of a tensor made in the kernel (a `mut` binding), as cuTile Rust: a dynamic shape gives
    a view of the whole tensor, a static one this block's slab of it."""
    made = call.arg(0)
    out = made if isinstance(made, TensorTy) else mutable_tensor_arg(call, 0, "mutably partition")
    tile = shape_arg(call, 1, "partition_mut")
    if out is None or tile is None:
        return None
    if isinstance(made, TensorTy):
        if not mutable_binding(call):
            return None
        if DYNAMIC in made.shape and len(tile) == made.rank:
            return PartitionTy(made.elem, tile, mutable=True, full=True)
    if len(tile) != out.rank:
        call.report(rank_mismatch(call, out.rank, len(tile)))
        return None
    return PartitionTy(out.elem, tile, mutable=True, slab=out.shape)


def rank_mismatch(call: CallTyper, rank: int, got: int) -> Diagnostic:
    return messages.TILE_SHAPE_RANK_MISMATCH.at(call.args[1].span, rank=rank, got=got)


def partition_arg(call: CallTyper, index: int) -> PartitionTy | None:
    ty = call.arg(index)
    if isinstance(ty, PartitionTy):
        return ty
    if ty is not None:
        call.report(messages.EXPECTED_PARTITION.at(call.args[index].span, found=ty))
    return None


def index_arg(call: CallTyper, index: int, rank: int) -> bool:
    expected = ArrayTy(ScalarTy(Elem.I32), rank)
    ty = call.arg(index, expected)
    if ty == expected:
        return True
    if ty is not None:
        call.report(
            messages.TILE_INDEX_MISMATCH.at(
                call.args[index].span, expected=expected, found=ty, rank=rank
            )
        )
    return False


def _partition_load(call: CallTyper) -> SemType | None:
    part = partition_arg(call, 0)
    if part is None or not index_arg(call, 1, part.rank):
        return None
    return TileTy(part.elem, part.tile)


def _partition_store(call: CallTyper) -> SemType | None:
    return partition_store_type(call, checked=True)


def partition_store_type(call: CallTyper, checked: bool) -> SemType | None:
    """`pm.store(tile, idx)` / `pm.store_unchecked(tile, idx)`: a tile of the view's shape
    through a `mut` binding; a `checked` constant index must lie in the block's slab."""
    part = partition_arg(call, 0)
    if part is None:
        return None
    expected = TileTy(part.elem, part.tile)
    tile = call.arg(1, expected)
    if not part.mutable:
        call.report(messages.STORE_THROUGH_READ_ONLY.at(call.args[0].span))
        return None
    if not mutable_binding(call):
        return None
    if tile is None or not index_arg(call, 2, part.rank):
        return None
    if tile != expected:
        span = call.args[1].span
        call.report(messages.PARTITION_TILE_MISMATCH.at(span, expected=expected, found=tile))
        return None
    if checked and not part.full:
        _check_constant_index(call, 2, part)
    return UNIT


def _check_constant_index(call: CallTyper, index: int, part: PartitionTy) -> None:
    """A constant index outside this block's slab would write another block's tiles."""
    value = call.constant(index)
    if not isinstance(value, tuple):
        return
    for axis, (i, limit) in enumerate(zip(value, part.grid, strict=True)):
        if i >= 0 and (limit == DYNAMIC or i < limit):
            continue  # a slab tile count known only at launch is checked there
        entry = messages.SLAB_INDEX_NEGATIVE if limit == DYNAMIC else messages.SLAB_INDEX_OUTSIDE
        call.report(entry.at(call.args[index].span, index=i, axis=axis, limit=limit))
        return


def _mapped_store(call: CallTyper) -> SemType | None:
    """`z.store(tile, idx)`: only an index minted by `z.iter_indices()` is accepted."""
    mapped = call.arg(0)
    assert isinstance(mapped, MappedTy)
    expected = TileTy(mapped.elem, mapped.tile)
    tile = call.arg(1, expected)
    index = call.arg(2)
    if not mutable_binding(call, "MappedPartitionMut<..>"):
        return None
    if tile is None or index is None:
        return None
    if tile != expected:
        span = call.args[1].span
        call.report(messages.PARTITION_TILE_MISMATCH.at(span, expected=expected, found=tile))
        return None
    if index == CoordTy(mapped.rank):
        return UNIT  # a composite index: its components' provenance is checked in lowering
    owner = getattr(call.binding(0), "id", None)
    if isinstance(index, PartitionIndexTy) and owner in (index.brand, *index.shared):
        return UNIT
    foreign = isinstance(index, PartitionIndexTy) and index.brand >= 0
    entry = (
        messages.MAPPED_STORE_INDEX_FOREIGN if foreign else messages.MAPPED_STORE_INDEX_NOT_MINTED
    )
    call.report(entry.at(call.args[2].span))
    return None


def _swizzled_index(call: CallTyper) -> SemType | None:
    """`unsafe swizzle_partition_index_2d::<D, M>(tile_id, m, n)` / `unsafe z.index(tile_id,
    m, n)`: the schedule's index of a flat tile id, computed by hand; the caller promises
    the range, and no partition minted it, so no store accepts it."""
    receiver = call.arg(0)
    first = 1 if isinstance(receiver, MappedTy) else 0
    if isinstance(receiver, MappedTy) and receiver.rank != 2:
        call.report(messages.NO_INDEX_METHOD.at(call.span, found=receiver))
        return None
    if first == 0 and _turbofish_map(call) is None:
        return None
    for index in range(first, first + 3):
        ty = call.arg(index, ScalarTy(Elem.I32))
        if ty is None:
            return None
        if ty != ScalarTy(Elem.I32):
            span = call.args[index].span
            call.report(messages.TILE_ID_NOT_I32.at(span, expected=ScalarTy(Elem.I32), found=ty))
            return None
    return PartitionIndexTy(2, brand=-1)


def _turbofish_map(call: CallTyper) -> tuple[int, ...] | None:
    """The map shape `M` of `swizzle_partition_index_2d::<D, M>`, recorded for lowering."""
    written = tuple(getattr(call, "generic_args", ()))
    checker = getattr(call, "checker", None)
    value = None
    if len(written) == 2 and checker is not None:
        arg = written[1]
        expr = arg.value if hasattr(arg, "value") else A.PathExpr(arg.span, arg.type.segments)
        value = checker.fold(expr)
    if not (isinstance(value, tuple) and len(value) == 2 and all(g >= 1 for g in value)):
        call.report(messages.SWIZZLE_GENERICS.at(call.span))
        return None
    checker.facts.consts[written[1]] = value  # type: ignore[union-attr]
    return value


def _index_components(call: CallTyper) -> SemType | None:
    index = call.arg(0)
    assert isinstance(index, PartitionIndexTy)
    return TupleTy((ScalarTy(Elem.I32),) * index.rank)


def _index_coords(call: CallTyper) -> SemType | None:
    index = call.arg(0)
    assert isinstance(index, PartitionIndexTy)
    return ArrayTy(ScalarTy(Elem.I32), index.rank)


def _iter_indices(call: CallTyper) -> SemType | None:
    name = call.span.text.split("(")[0].rsplit(".", 1)[-1]
    call.report(messages.ITER_INDICES_OUTSIDE_FOR.at(call.span, name=name))
    return None


def _num_tiles(call: CallTyper) -> SemType | None:
    view = call.arg(0)
    if isinstance(view, MappedTy):
        part = PartitionTy(view.elem, view.tile, mutable=True)
    else:
        part = partition_arg(call, 0)
    axis = call.constant(1)
    if part is None:
        return None
    if not isinstance(axis, int) or isinstance(axis, bool) or not 0 <= axis < part.rank:
        call.report(messages.AXIS_NOT_CONSTANT.at(call.args[1].span, rank=part.rank))
        return None
    return ScalarTy(Elem.I32)


def _tensor_extents(call: CallTyper) -> SemType | None:
    """`get_tensor_shape(&t)`: the tensor's extents as an `[i32; N]`."""
    ref = _tensor_arg(call, 0, "the tensor whose shape is read")
    if ref is None:
        return None
    assert isinstance(ref.inner, TensorTy)
    return ArrayTy(ScalarTy(Elem.I32), ref.inner.rank)


def _index_space(call: CallTyper) -> SemType | None:
    """`get_index_space_shape(&p)`: the partition's tiles per axis as an `[i32; N]`."""
    part = partition_arg(call, 0)
    return None if part is None else ArrayTy(ScalarTy(Elem.I32), part.rank)


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
        "load_tile",
        "fn load_tile<E, S, R>(x: &Tensor<E, S>, shape: Shape<R>, idx: [i32; N]) -> Tile<E, R>",
        (3,),
        _load_tile,
        functions=("load_tile",),
        methods=("load_tile",),
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
        "partition_load",
        "fn load<E, R>(p: &Partition<E, R>, index: [i32; N]) -> Tile<E, R>",
        (2,),
        _partition_load,
        methods=("load",),
        receiver=Receiver.PARTITION,
    ),
    Intrinsic(
        "partition_store",
        "fn store<E, R>(p: &mut PartitionMut<E, R>, tile: Tile<E, R>, index: [i32; N])",
        (3,),
        _partition_store,
        methods=("store",),
        receiver=Receiver.PARTITION,
    ),
    Intrinsic(
        "mapped_store",
        "fn store<E, R, M>(z: &mut MappedPartitionMut<E, R, M>, tile: Tile<E, R>, "
        "index: PartitionIndex<R>)",
        (3,),
        _mapped_store,
        methods=("store",),
        receiver=Receiver.MAPPED,
    ),
    Intrinsic(
        "iter_indices",
        "fn iter_indices<E, R, M>(z: &MappedPartitionMut<E, R, M>) -> PartitionIndices<R, M>",
        (1, 2, 3),
        _iter_indices,
        methods=(
            "iter_indices",
            "iter_indices_with",
            "iter_indices_within",
            "iter_indices_within_with",
        ),
        receiver=Receiver.MAPPED,
    ),
    Intrinsic(
        "swizzle_partition_index_2d",
        "unsafe fn swizzle_partition_index_2d<const D: [i32; 2], const M: [i32; 2]>("
        "tile_id: i32, num_bid_m: i32, num_bid_n: i32) -> PartitionIndex<D>",
        (3,),
        _swizzled_index,
        functions=("swizzle_partition_index_2d",),
        unsafe=True,
    ),
    Intrinsic(
        "mapped_index",
        "unsafe fn index(&self: MappedPartitionMut<E, D, M>, tile_id: i32, num_bid_m: i32, "
        "num_bid_n: i32) -> PartitionIndex<D>",
        (4,),
        _swizzled_index,
        methods=("index",),
        receiver=Receiver.MAPPED,
        unsafe=True,
    ),
    Intrinsic(
        "index_components",
        "fn components(index: PartitionIndex<R>) -> (i32, i32)",
        (1,),
        _index_components,
        methods=("components",),
        receiver=Receiver.INDEX,
    ),
    Intrinsic(
        "index_coords",
        "fn coords(index: PartitionIndex<R>) -> [i32; N]",
        (1,),
        _index_coords,
        methods=("coords",),
        receiver=Receiver.INDEX,
    ),
    Intrinsic(
        "get_tensor_shape",
        "fn get_tensor_shape<E, S>(t: &Tensor<E, S>) -> [i32; N]",
        (1,),
        _tensor_extents,
        functions=("get_tensor_shape",),
    ),
    Intrinsic(
        "get_index_space_shape",
        "fn get_index_space_shape<E, R>(p: &Partition<E, R>) -> [i32; N]",
        (1,),
        _index_space,
        functions=("get_index_space_shape",),
    ),
    Intrinsic(
        "num_tiles",
        "fn num_tiles<V>(view: &V, axis: i32) -> i32",
        (2,),
        _num_tiles,
        functions=("num_tiles",),
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
        "partition_permuted",
        "fn partition_permuted<E, S, R, I>(t: &Tensor<E, S>, shape: Shape<R>, dim_map: Array<I>) "
        "-> Partition<E, R>",
        (3,),
        _partition_permuted,
        methods=("partition_permuted",),
        receiver=Receiver.TENSOR,
    ),
    Intrinsic(
        "partition",
        "fn partition<E, S, R>(t: &Tensor<E, S>, shape: Shape<R>) -> Partition<E, R>",
        (2,),
        _partition,
        methods=("partition",),
        receiver=Receiver.TENSOR,
    ),
)
