"""Raw tensor and partition views with cuTile Rust's explicit tokens:
`make_tensor_view(base, shape, strides, token)` (a `Tensor` over raw memory),
`make_partition_view(&t, tile, padding, dim_map, token)` (a read-only `Partition`),
`make_partition_view_mut(&t, tile, padding, token)` (a `PartitionMut` over the whole
tensor), and the view accesses `store_view_tko_mut` / `load_view_tko_mut` on it; and from
`cutile::tileir`, gather/scatter and strided views with their loads (bytecode 13.3).

Safety, per function, as cuTile Rust declares them:
* `make_tensor_view` builds a tensor over memory nobody vouches for: `unsafe fn`.
* `make_partition_view` is safe: a read-only view of a tensor the kernel can already
  read, loaded like `partition` (of an output it would read other blocks' tiles: an error).
* `make_partition_view_mut`, `store_view_tko_mut`, `load_view_tko_mut` are `unsafe fn`s:
  nothing keeps blocks apart or checks the index; so is everything of `cutile::tileir`.
The token orders the view's first access after whatever produced it; later accesses
through a written tensor stay on that tensor's own token chain.
"""

from __future__ import annotations

from parser import messages
from parser.diagnostics import Diagnostic
from parser.prelude.common import marker_arg, shape_arg
from parser.prelude.pointers import STORE_ORDERINGS
from parser.prelude.shape import _permutation
from parser.prelude.spec import CallTyper, Intrinsic
from parser.prelude.tensors import index_arg, partition_arg, rank_mismatch
from parser.prelude.tokens import token_arg
from parser.prelude.views import LOAD_ORDERINGS, latency_option
from parser.types import (
    TOKEN,
    ArrayTy,
    Elem,
    GatherScatterViewTy,
    MarkerTy,
    PartitionTy,
    PointerTileTy,
    RefTy,
    ScalarTy,
    SemType,
    ShapeTy,
    StridedViewTy,
    TensorTy,
    TileTy,
    TupleTy,
)


def tensor_like(call: CallTyper, index: int, fn: str) -> tuple[TensorTy, str] | None:
    """A tensor argument and what it is: "input" (`&Tensor` parameter), "output" (`&mut`)
    or "local" (made by `make_tensor_view`)."""
    ty = call.arg(index)
    if ty is None:
        return None
    if isinstance(ty, TensorTy):
        return ty, "local"
    if isinstance(ty, RefTy) and isinstance(ty.inner, TensorTy):
        return ty.inner, "output" if ty.mutable else "input"
    call.report(messages.NOT_A_TENSOR_REFERENCE.at(call.args[index].span, fn=fn, found=ty))
    return None


def _make_tensor_view(call: CallTyper) -> SemType | None:
    fn = "make_tensor_view"
    base = call.arg(0)
    shape = call.arg(1)
    strides = call.arg(2)
    if base is None or shape is None or strides is None or not token_arg(call, 3, fn):
        return None
    if not isinstance(base, PointerTileTy) or base.shape:
        call.report(messages.VIEW_BASE_NOT_ONE_POINTER.at(call.args[0].span, fn=fn, found=base))
        return None
    if not isinstance(shape, ShapeTy):
        call.report(_expected(call, 1, fn, "a `Shape<{[..]}>`", shape))
        return None
    if not (isinstance(strides, ArrayTy) and strides.dims is not None):
        call.report(_expected(call, 2, fn, "an `Array<{[..]}>` of strides", strides))
        return None
    if len(strides.dims) != len(shape.dims):
        call.report(
            messages.STRIDES_RANK_MISMATCH.at(
                call.args[2].span, fn=fn, shape_rank=len(shape.dims), strides=len(strides.dims)
            )
        )
        return None
    return TensorTy(base.elem, shape.dims)


def _expected(call: CallTyper, index: int, fn: str, what: str, found: SemType) -> Diagnostic:
    return messages.VIEW_ARGUMENT_MISMATCH.at(call.args[index].span, fn=fn, what=what, found=found)


def _view_of(call: CallTyper, fn: str) -> tuple[TensorTy, str, tuple[int, ...]] | None:
    """The tensor, its kind and the tile shape of a `make_partition_view*` call."""
    found = tensor_like(call, 0, fn)
    tile = shape_arg(call, 1, fn)
    if found is None or tile is None:
        return None
    tensor, kind = found
    if len(tile) != tensor.rank:
        call.report(rank_mismatch(call, tensor.rank, len(tile)))
        return None
    if marker_arg(call, 2, "padding", fn) is None:
        return None
    return tensor, kind, tile


def _make_partition_view(call: CallTyper) -> SemType | None:
    fn = "make_partition_view"
    found = _view_of(call, fn)
    if found is None:
        return None
    tensor, kind, tile = found
    dim_map = call.arg(3)
    if dim_map is None:
        return None
    identity = isinstance(dim_map, MarkerTy) and dim_map.kind == "dim_map"
    if not identity and _permutation(call, 3, tensor.rank, fn) is None:
        return None
    if not token_arg(call, 4, fn):
        return None
    if kind == "output":
        call.report(messages.VIEW_OF_OUTPUT_UNORDERED.at(call.args[0].span, fn=fn))
        return None
    return PartitionTy(tensor.elem, tile, mutable=False)


def _make_partition_view_mut(call: CallTyper) -> SemType | None:
    fn = "make_partition_view_mut"
    found = _view_of(call, fn)
    if found is None or not token_arg(call, 3, fn):
        return None
    tensor, _, tile = found
    return PartitionTy(tensor.elem, tile, mutable=True, full=True)


def _mutable_view(call: CallTyper, fn: str) -> PartitionTy | None:
    part = partition_arg(call, 0)
    if part is None or part.mutable:
        return part
    call.report(messages.NOT_A_PARTITION_MUT.at(call.args[0].span, fn=fn, found=part))
    return None


def _access_modes(call: CallTyper, index: int, fn: str, orderings: tuple[str, ...]) -> bool:
    """ordering, scope, latency (`Option<i32>`) and `tma::X` from argument `index` on."""
    why = f" (use one of {', '.join(f'`ordering::{o}`' for o in orderings)})"
    if marker_arg(call, index, "ordering", fn, orderings, why) is None:
        return False
    if marker_arg(call, index + 1, "scope", fn) is None:
        return False
    if not latency_option(call, index + 2, fn):
        return False
    return marker_arg(call, index + 3, "tma", fn) is not None


def _store_view_tko_mut(call: CallTyper) -> SemType | None:
    fn = "store_view_tko_mut"
    part = _mutable_view(call, fn)
    if part is None:
        return None
    expected = TileTy(part.elem, part.tile)
    tile = call.arg(1, expected)
    if tile is None:
        return None
    if tile != expected:
        call.report(_expected(call, 1, fn, f"a `{expected}`", tile))
        return None
    if not index_arg(call, 2, part.rank) or not _access_modes(call, 3, fn, STORE_ORDERINGS):
        return None
    return TOKEN


def _load_view_tko_mut(call: CallTyper) -> SemType | None:
    fn = "load_view_tko_mut"
    part = _mutable_view(call, fn)
    if part is None or not index_arg(call, 1, part.rank):
        return None
    if not _access_modes(call, 2, fn, LOAD_ORDERINGS):
        return None
    return TileTy(part.elem, part.tile)


def _annotated_view(call: CallTyper, fn: str, kind: type) -> SemType | None:
    """`make_gather_scatter_view` / `make_strided_view`: the view's layout comes from the
    annotated result type (its sparse dimension, traversal strides, dim map)."""
    found = tensor_like(call, 0, fn)
    tile = shape_arg(call, 1, fn)
    if found is None or tile is None or marker_arg(call, 2, "padding", fn) is None:
        return None
    tensor = found[0]
    expected = getattr(call, "expected", None)
    if not isinstance(expected, kind):
        view = kind.__name__[:-2]
        call.report(messages.VIEW_TYPE_NOT_ANNOTATED.at(call.span, fn=fn, view=view))
        return None
    if (expected.elem, expected.tile) != (tensor.elem, tile) or len(tile) != tensor.rank:  # type: ignore[attr-defined]
        call.report(_expected(call, 1, fn, f"a view of `{tensor}` in tiles {list(tile)}", expected))
        return None
    return expected


def _make_gather_scatter_view(call: CallTyper) -> SemType | None:
    return _annotated_view(call, "make_gather_scatter_view", GatherScatterViewTy)


def _make_strided_view(call: CallTyper) -> SemType | None:
    return _annotated_view(call, "make_strided_view", StridedViewTy)


def _view_load_modes(call: CallTyper, index: int, fn: str) -> bool:
    """`token: Token, ordering, scope` from argument `index` on."""
    if not token_arg(call, index, fn):
        return False
    why = " (loads take `ordering::Weak`, `Relaxed` or `Acquire`)"
    if marker_arg(call, index + 1, "ordering", fn, LOAD_ORDERINGS, why) is None:
        return False
    return marker_arg(call, index + 2, "scope", fn) is not None


def _load_gather_scatter_view_tko(call: CallTyper) -> SemType | None:
    fn = "load_gather_scatter_view_tko"
    view = call.arg(0)
    if not isinstance(view, GatherScatterViewTy) or len(view.tile) != 2:
        if view is not None:
            call.report(_expected(call, 0, fn, "a rank-2 `&GatherScatterView<..>`", view))
        return None
    sparse = TileTy(Elem.I32, (view.tile[view.sparse_dim],))
    found = call.arg(1, sparse)
    if found is not None and found != sparse:
        call.report(_expected(call, 1, fn, f"the sparse indices `{sparse}`", found))
        return None
    dense = call.arg(2, ScalarTy(Elem.I32))
    if dense is not None and dense != ScalarTy(Elem.I32):
        call.report(_expected(call, 2, fn, "an `i32` dense index", dense))
        return None
    if found is None or dense is None or not _view_load_modes(call, 3, fn):
        return None
    return TupleTy((TileTy(view.elem, view.tile), TOKEN))


def _load_strided_view_tko(call: CallTyper) -> SemType | None:
    fn = "load_strided_view_tko"
    view = call.arg(0)
    if not isinstance(view, StridedViewTy):
        if view is not None:
            call.report(_expected(call, 0, fn, "a `&StridedView<..>`", view))
        return None
    if not index_arg(call, 1, len(view.tile)) or not _view_load_modes(call, 2, fn):
        return None
    return TupleTy((TileTy(view.elem, view.tile), TOKEN))


RAW_VIEW_INTRINSICS: tuple[Intrinsic, ...] = (
    Intrinsic(
        "make_tensor_view",
        "unsafe fn make_tensor_view<E, D, C>(base: PointerTile<*mut E, {[]}>, shape: Shape<D>, "
        "strides: Array<C>, token: Token) -> Tensor<E, D>",
        (4,),
        _make_tensor_view,
        functions=("make_tensor_view",),
        unsafe=True,
    ),
    Intrinsic(
        "make_partition_view",
        "fn make_partition_view<E, S, R, P, M>(tensor: &Tensor<E, S>, tile: Shape<R>, "
        "padding: P, dim_map: M, token: Token) -> Partition<E, R>",
        (5,),
        _make_partition_view,
        functions=("make_partition_view",),
    ),
    Intrinsic(
        "make_partition_view_mut",
        "unsafe fn make_partition_view_mut<E, S, R, P>(tensor: &Tensor<E, S>, shape: Shape<R>, "
        "padding: P, token: Token) -> PartitionMut<E, R>",
        (4,),
        _make_partition_view_mut,
        functions=("make_partition_view_mut",),
        unsafe=True,
    ),
    Intrinsic(
        "store_view_tko_mut",
        "unsafe fn store_view_tko_mut<E, R>(view: &mut PartitionMut<E, R>, tile: Tile<E, R>, "
        "index: [i32; N], ordering: O, scope: Sc, latency: Option<i32>, tma: T) -> Token",
        (7,),
        _store_view_tko_mut,
        functions=("store_view_tko_mut",),
        unsafe=True,
    ),
    Intrinsic(
        "load_view_tko_mut",
        "unsafe fn load_view_tko_mut<E, R>(view: &PartitionMut<E, R>, index: [i32; N], "
        "ordering: O, scope: Sc, latency: Option<i32>, tma: T) -> Tile<E, R>",
        (6,),
        _load_view_tko_mut,
        functions=("load_view_tko_mut",),
        unsafe=True,
    ),
    Intrinsic(
        "make_gather_scatter_view",
        "unsafe fn make_gather_scatter_view<E, S, T, const D: i32, P>(tensor: &Tensor<E, S>, "
        "tile: Shape<T>, padding: P) -> GatherScatterView<E, T, D>",
        (3,),
        _make_gather_scatter_view,
        functions=("make_gather_scatter_view",),
        unsafe=True,
    ),
    Intrinsic(
        "load_gather_scatter_view_tko",
        "unsafe fn load_gather_scatter_view_tko<E, T, const D: i32, const K: i32, O, Sc>("
        "view: &GatherScatterView<E, T, D>, sparse_index: Tile<i32, {[K]}>, dense_index: i32, "
        "token: Token, ordering: O, scope: Sc) -> (Tile<E, T>, Token)",
        (6,),
        _load_gather_scatter_view_tko,
        functions=("load_gather_scatter_view_tko",),
        unsafe=True,
    ),
    Intrinsic(
        "make_strided_view",
        "unsafe fn make_strided_view<E, S, T, ST, M, P>(tensor: &Tensor<E, S>, tile: Shape<T>, "
        "padding: P) -> StridedView<E, T, ST, M>",
        (3,),
        _make_strided_view,
        functions=("make_strided_view",),
        unsafe=True,
    ),
    Intrinsic(
        "load_strided_view_tko",
        "unsafe fn load_strided_view_tko<E, T, ST, M, O, Sc>(view: &StridedView<E, T, ST, M>, "
        "index: [i32; N], token: Token, ordering: O, scope: Sc) -> (Tile<E, T>, Token)",
        (5,),
        _load_strided_view_tko,
        functions=("load_strided_view_tko",),
        unsafe=True,
    ),
)
