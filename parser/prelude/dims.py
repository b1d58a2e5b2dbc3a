"""The `Dim` API (deprecated in cuTile Rust, still compiled): `Dim::new(n)`,
`n.into_dim()`, `d.value()`, `for j in d` (walks 0..n), `p.with_bounds((a, b[, c]))`
(a `BoundedPartition{,Mut}` whose axes are tied to those tile counts), `coord((i, j[, k]))`
and the bounded partition's `load`, `load_pipelined::<L>` and `store`.

Typing only: which `Dim` an index came from, and whether a bound really is the axis's
tile count, are facts about values that lowering tracks and checks
(`lowering.intrinsics.dims`).
"""

from __future__ import annotations

from parser import messages
from parser.prelude.common import I32, mutable_binding
from parser.prelude.spec import CallTyper, Intrinsic, Receiver
from parser.prelude.views import pipelined_latency
from parser.types import UNIT, CoordTy, DimTy, PartitionTy, SemType, TileTy, TupleTy

DIM = DimTy()
BOUNDED_RANKS = (2, 3)  # cuTile Rust implements `with_bounds` and `coord` for these


def _i32_arg(call: CallTyper, index: int, fn: str) -> bool:
    ty = call.arg(index, I32)
    if ty is None:
        return False
    if ty != I32:
        call.report(messages.DIM_SIZE_NOT_I32.at(call.args[index].span, fn=fn, found=ty))
        return False
    return True


def _dim_new(call: CallTyper) -> SemType | None:
    return DIM if _i32_arg(call, 0, "Dim::new") else None


def _into_dim(call: CallTyper) -> SemType | None:
    ty = call.arg(0)
    if ty is None:
        return None
    if ty not in (I32, DIM):
        call.report(messages.NO_INTO_DIM.at(call.span, found=ty))
        return None
    return DIM


def _dim_value(call: CallTyper) -> SemType | None:
    return I32 if call.arg(0) == DIM else None


def _coord(call: CallTyper) -> SemType | None:
    ty = call.arg(0)
    if ty is None:
        return None
    if (
        isinstance(ty, TupleTy)
        and len(ty.elements) in BOUNDED_RANKS
        and all(e == I32 for e in ty.elements)
    ):
        return CoordTy(len(ty.elements))
    call.report(messages.COORD_NOT_I32_TUPLE.at(call.args[0].span, found=ty))
    return None


def _with_bounds(call: CallTyper) -> SemType | None:
    """`p.with_bounds((a, b))`: consumes `p`; each bound is an `i32` or a `Dim`."""
    part = call.arg(0)
    if not isinstance(part, PartitionTy):
        return None
    if part.full or part.rank not in BOUNDED_RANKS:
        call.report(messages.NO_WITH_BOUNDS.at(call.span, found=part))
        return None
    bounds = call.arg(1, TupleTy((DIM,) * part.rank))
    if bounds is None:
        return None
    if not (
        isinstance(bounds, TupleTy)
        and len(bounds.elements) == part.rank
        and all(b in (I32, DIM) for b in bounds.elements)
    ):
        call.report(
            messages.BOUNDS_NOT_TILE_COUNTS.at(call.args[1].span, rank=part.rank, found=bounds)
        )
        return None
    return PartitionTy(part.elem, part.tile, part.mutable, part.slab, bounded=True)


def _coord_arg(call: CallTyper, index: int, part: PartitionTy) -> bool:
    expected = CoordTy(part.rank)
    ty = call.arg(index, expected)
    if ty is None:
        return False
    if ty != expected:
        placeholders = ", ".join("_" * part.rank)
        call.report(
            messages.BOUNDED_INDEX_NOT_COORD.at(
                call.args[index].span, expected=expected, found=ty, placeholders=placeholders
            )
        )
        return False
    return True


def _bounded_load(call: CallTyper) -> SemType | None:
    part = call.arg(0)
    assert isinstance(part, PartitionTy)
    return TileTy(part.elem, part.tile) if _coord_arg(call, 1, part) else None


def _bounded_load_pipelined(call: CallTyper) -> SemType | None:
    part = call.arg(0)
    assert isinstance(part, PartitionTy)
    if not _coord_arg(call, 1, part) or not pipelined_latency(call, "load_pipelined"):
        return None
    return TileTy(part.elem, part.tile)


def _bounded_store(call: CallTyper) -> SemType | None:
    part = call.arg(0)
    assert isinstance(part, PartitionTy)
    expected = TileTy(part.elem, part.tile)
    tile = call.arg(1, expected)
    if not mutable_binding(call):
        return None
    if tile is None or not _coord_arg(call, 2, part):
        return None
    if tile != expected:
        call.report(
            messages.PARTITION_TILE_MISMATCH.at(call.args[1].span, expected=expected, found=tile)
        )
        return None
    return UNIT


DIM_INTRINSICS: tuple[Intrinsic, ...] = (
    Intrinsic(
        "dim_new",
        "fn Dim::new(size: i32) -> Dim",
        (1,),
        _dim_new,
        functions=("Dim::new", "dim_new", "dim_from_i32", "Dim::from"),
    ),
    Intrinsic(
        "into_dim",
        "fn into_dim(self) -> Dim",
        (1,),
        _into_dim,
        methods=("into_dim",),
        receiver=Receiver.SCALAR,
    ),
    Intrinsic(
        "dim_into_dim",
        "fn into_dim(self: Dim) -> Dim",
        (1,),
        _into_dim,
        methods=("into_dim",),
        receiver=Receiver.DIM,
    ),
    Intrinsic(
        "dim_value",
        "fn value(self: Dim) -> i32",
        (1,),
        _dim_value,
        functions=("dim_value",),
        methods=("value",),
        receiver=Receiver.DIM,
    ),
    Intrinsic(
        "coord",
        "fn coord<C: CoordTuple>(index: C) -> C::Coord",
        (1,),
        _coord,
        functions=("coord",),
    ),
    Intrinsic(
        "with_bounds",
        "fn with_bounds<A: IntoDim, B: IntoDim>(self, bounds: (A, B)) -> BoundedPartition<E, D>",
        (2,),
        _with_bounds,
        methods=("with_bounds",),
        receiver=Receiver.PARTITION,
    ),
    Intrinsic(
        "bounded_load",
        "fn load(&self: BoundedPartition<E, D>, index: Coord2) -> Tile<E, D>",
        (2,),
        _bounded_load,
        methods=("load",),
        receiver=Receiver.BOUNDED_PARTITION,
    ),
    Intrinsic(
        "bounded_load_pipelined",
        "fn load_pipelined<const L: i32>(&self: BoundedPartition<E, D>, index: Coord2) "
        "-> Tile<E, D>",
        (2,),
        _bounded_load_pipelined,
        methods=("load_pipelined",),
        receiver=Receiver.BOUNDED_PARTITION,
    ),
    Intrinsic(
        "bounded_store",
        "fn store(&mut self: BoundedPartitionMut<E, D>, tile: Tile<E, D>, index: Coord2)",
        (3,),
        _bounded_store,
        methods=("store",),
        receiver=Receiver.BOUNDED_PARTITION_MUT,
    ),
)
