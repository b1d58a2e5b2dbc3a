"""Unsafe views of outputs: the escape hatches that let a kernel write (or read back)
tiles other blocks may also touch. Each is an `unsafe fn` (E0133 outside `unsafe {}` or
an `unsafe fn`), because the compiler no longer proves the kernel race-free:

* `t.partition_full_mut(shape)`: a `PartitionMut` over the whole output, indexed by the
  tensor's tile indices (no per-block offset). Stores through it are bounds-checked, but
  nothing stops two blocks from writing the same tile (the head-permutation bug: an
  index that omits the head coordinate).
* `pm.store_unchecked(tile, idx)`: a store with no bounds check.
* `pm.load(idx)`: a read of an output tile, unordered against other blocks' stores
  (ordered after this block's own earlier stores by the output's token).
"""

from __future__ import annotations

from parser.prelude.common import shape_arg
from parser.prelude.spec import CallTyper, Intrinsic, Receiver
from parser.prelude.tensors import (
    _tensor_arg,
    index_arg,
    partition_arg,
    partition_store_type,
    rank_mismatch,
)
from parser.types import PartitionTy, SemType, TensorTy, TileTy


def _partition_full_mut(call: CallTyper) -> SemType | None:
    """`t.partition_full_mut(shape)` takes `&self` in cuTile Rust: an output, or (unsafe
    as it is) an input or a tensor made with `make_tensor_view`."""
    ref = _tensor_arg(call, 0, "the tensor to partition")
    tile = shape_arg(call, 1, "partition_full_mut")
    if ref is None or tile is None:
        return None
    out = ref.inner
    assert isinstance(out, TensorTy)
    if len(tile) != out.rank:
        call.report(rank_mismatch(call, out.rank, len(tile)))
        return None
    return PartitionTy(out.elem, tile, mutable=True, full=True)


def _load_from_output(call: CallTyper) -> SemType | None:
    part = partition_arg(call, 0)
    if part is None or not index_arg(call, 1, part.rank):
        return None
    return TileTy(part.elem, part.tile)


def _store_unchecked(call: CallTyper) -> SemType | None:
    return partition_store_type(call, checked=False)


UNSAFE_VIEW_INTRINSICS: tuple[Intrinsic, ...] = (
    Intrinsic(
        "partition_full_mut",
        "unsafe fn partition_full_mut<E, S, R>(t: &Tensor<E, S>, shape: Shape<R>) "
        "-> PartitionMut<E, R>",
        (2,),
        _partition_full_mut,
        methods=("partition_full_mut",),
        receiver=Receiver.TENSOR,
        unsafe=True,
    ),
    Intrinsic(
        "partition_mut_load",
        "unsafe fn load<E, R>(p: &PartitionMut<E, R>, index: [i32; N]) -> Tile<E, R>",
        (2,),
        _load_from_output,
        methods=("load",),
        receiver=Receiver.PARTITION_MUT,
        unsafe=True,
    ),
    Intrinsic(
        "store_unchecked",
        "unsafe fn store_unchecked<E, R>(p: &mut PartitionMut<E, R>, tile: Tile<E, R>, "
        "index: [i32; N])",
        (3,),
        _store_unchecked,
        methods=("store_unchecked",),
        receiver=Receiver.PARTITION_MUT,
        unsafe=True,
    ),
)
