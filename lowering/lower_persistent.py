"""The schedule of a persistent loop over a `MappedPartitionMut` `z`
(`for idx in z.iter_indices*()`; the loop itself is `lower_control`'s).

Block b takes work items b, b + grid, b + 2*grid, ... of `z`'s streamed axes (map entry
n > 0); an OWNED axis (entry 0) is not walked: each item spans all of it and its
coordinate is 0 (the kernel walks it with a `Dim`). A flat item id becomes per-axis tile
coordinates row-major over the leading streamed axes and, on the trailing two, in the
grouped (swizzled) order of their map entries (`swizzle`).

`iter_indices_within([(start, len), ..])` walks a sub-range per axis (`len` -1: the rest
of the axis); each range is checked against the grid (`require_at_most`: folded,
checked at launch, or asserted in the kernel; a provably bad one is rejected).
`iter_indices_with(&w)` mints indices `w.store` accepts too, which needs `w`'s tile grid
to equal `z`'s (discharged by declared preconditions, else checked at launch).

Every minted coordinate is inside `z`'s tiles: streamed coordinates by construction of
the schedule (and the range checks), owned ones because they are 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from lowering.bounds import require_at_most
from lowering.contract import Quantity
from lowering.ir.attributes import RoundingMode
from lowering.ir.core import Value
from lowering.ir.ops_arith import AddI, DivI, MulI, RemI, SubI
from lowering.ir.ops_core import GetNumTileBlocks
from lowering.ir.ops_math import MinI
from lowering.ir.ops_memory import GetIndexSpaceShape
from lowering.ir.types import I32
from lowering.lowered_expr import AxisOrigin, TensorHandle
from lowering.lowering_context import LoweringContext
from lowering.rejection import Rejected
from parser import ast_nodes as A
from parser import messages
from parser.types import Elem, MappedTy, ScalarTy

OWNED = 0


@dataclass(frozen=True)
class Schedule:
    """What the loop needs: the work-item count, and per axis of `z` the first tile and
    the number of tiles walked (None for an owned axis)."""

    handle: TensorHandle
    mapped: MappedTy
    total: Value
    step: Value  # the grid's x: how many blocks share the work
    starts: tuple[Value | None, ...]  # None: from tile 0
    lengths: tuple[Value | None, ...]  # None: an owned axis
    whole: tuple[bool, ...]  # the axis is walked from its first tile to its last
    partners: frozenset[int]  # the params whose stores accept the minted indices

    @property
    def streamed(self) -> tuple[int, ...]:
        return tuple(a for a, g in enumerate(self.mapped.map_shape) if g != OWNED)


def plan_schedule(
    ctx: LoweringContext, node: A.ForExpr, handle: TensorHandle, mapped: MappedTy, view: Value
) -> Schedule:
    """Count `z`'s tiles, check the shared grid and the sub-ranges, and count the work."""
    span = node.span
    counts = ctx.builder.emit(
        GetIndexSpaceShape, counts=(I32,) * mapped.rank, view=view, span=span
    ).counts
    step = ctx.builder.emit(GetNumTileBlocks, x=I32, y=I32, z=I32, span=span).x
    partners = frozenset({handle.index})
    partner = ctx.body.persistent_partners.get(node)
    if partner is not None:
        other = ctx.values[partner.id]
        assert isinstance(other, TensorHandle)
        _same_grid(ctx, handle, other, mapped, span)
        partners |= {other.index}
    starts: list[Value | None] = [None] * mapped.rank
    lengths: list[Value | None] = [
        None if g == OWNED else c for g, c in zip(mapped.map_shape, counts, strict=True)
    ]
    whole = [True] * mapped.rank
    iterable = node.iterable
    assert isinstance(iterable, A.MethodCall)
    if iterable.method.startswith("iter_indices_within"):
        if OWNED in mapped.map_shape:
            raise Rejected(
                messages.SUB_RANGE_OVER_OWNED_AXES.at(
                    iterable.args[0].span, map_shape=list(mapped.map_shape)
                )
            )
        ranges = ctx.expr(iterable.args[0])
        assert isinstance(ranges, tuple)
        for axis, pair in enumerate(ranges):
            assert isinstance(pair, tuple)
            start, length = (ctx.scalar(v, iterable.args[0].span) for v in pair)
            starts[axis], lengths[axis], whole[axis] = _sub_range(
                ctx, axis, start, length, counts[axis], iterable.args[0].span
            )
    total: Value | None = None
    for axis in (a for a, g in enumerate(mapped.map_shape) if g != OWNED):
        length = lengths[axis]
        assert length is not None
        total = length if total is None else _op(ctx, MulI, total, length, span)
    assert total is not None
    return Schedule(
        handle, mapped, total, step, tuple(starts), tuple(lengths), tuple(whole), partners
    )


def _same_grid(
    ctx: LoweringContext, first: TensorHandle, second: TensorHandle, mapped: MappedTy, span: A.Span
) -> None:
    """`z.iter_indices_with(&w)`: w's tiles per axis equal z's (same tile shape)."""
    for axis, tile in enumerate(mapped.tile):
        ours = Quantity(tile_count=(first.index, axis, tile))
        theirs = Quantity(tile_count=(second.index, axis, tile))
        if ctx.bounds.canonical(ours) == ctx.bounds.canonical(theirs):
            ctx.bounds.discharged += 1
            continue
        cause = f"`iter_indices_with`: equal tile grids on axis {axis}"
        ctx.bounds.hoist(ours, theirs, cause)
        ctx.bounds.hoist(theirs, ours, cause)
        ctx.bounds.hoisted -= 1  # one equality, two launch checks


def _sub_range(
    ctx: LoweringContext, axis: int, start: Value, length: Value, count: Value, span: A.Span
) -> tuple[Value | None, Value, bool]:
    """The checks of one `(start, len)` pair: start >= 0, and start + len <= count (a
    literal len -1: start <= count, the rest of the axis); the first tile (None: 0), the
    length, and whether that is the whole axis."""
    facts = ctx.builder.definitions
    start_at = ctx.bounds.fact(start, facts).exactly
    len_at = ctx.bounds.fact(length, facts).exactly
    first = start_at.constant if start_at is not None else None
    given = len_at.constant if len_at is not None else None
    what = f"sub-range axis {axis}"
    if first is not None and first < 0:
        raise Rejected(_bad_range(f"{what} start {first} is negative", span))
    if given is not None and given < -1:
        message = f"{what} length {given} is negative (-1 means the rest of the axis)"
        raise Rejected(_bad_range(message, span))
    if first == 0 and given == -1:
        return None, count, True  # `(0, -1)`: the whole axis
    zero = ctx.constant(0, ScalarTy(Elem.I32), span)
    if first is None:
        require_at_most(ctx, zero, start, f"{what}: start is negative", span)
    if given == -1:
        require_at_most(ctx, start, count, f"{what}: start exceeds the tile grid", span)
        length = _op(ctx, SubI, count, start, span)
    else:
        if given is None:
            require_at_most(ctx, zero, length, f"{what}: length is negative", span)
        room = _op(ctx, SubI, count, length, span)  # no wrap: both are non-negative
        require_at_most(ctx, start, room, f"{what}: range end exceeds the tile grid", span)
    return (None if first == 0 else start), length, False


def _bad_range(message: str, span: A.Span):  # type: ignore[no-untyped-def]
    return messages.SUB_RANGE_OUTSIDE_GRID.at(span, what=message)


def mint(ctx: LoweringContext, schedule: Schedule, item: Value, span: A.Span) -> tuple[Value, ...]:
    """The tile index of work item `item`, its coordinates branded as minted."""
    mapped, handle = schedule.mapped, schedule.handle
    streamed = schedule.streamed
    lengths = tuple(schedule.lengths[a] for a in streamed)
    groups = tuple(mapped.map_shape[a] for a in streamed)
    walked = iter(_schedule(ctx, item, lengths, groups, span))  # type: ignore[arg-type]
    index: list[Value] = []
    for axis, tile in enumerate(mapped.tile):
        if axis not in streamed:
            index.append(ctx.constant(0, ScalarTy(Elem.I32), span))
            continue
        coordinate = next(walked)
        start = schedule.starts[axis]
        if schedule.whole[axis]:
            # the whole axis: below z's tile count (a fact cross-tensor checks may use)
            ctx.bounds.below[coordinate.id] = Quantity(tile_count=(handle.index, axis, tile))
        if start is not None:
            coordinate = _op(ctx, AddI, start, coordinate, span)
        ctx.index_origins[coordinate.id] = AxisOrigin(handle.index, axis, tile)
        ctx.minted[coordinate.id] = schedule.partners
        index.append(coordinate)
    return tuple(index)


def _schedule(
    ctx: LoweringContext,
    item: Value,
    lengths: tuple[Value, ...],
    groups: tuple[int, ...],
    span: A.Span,
) -> tuple[Value, ...]:
    """Item id -> coordinates: leading axes row-major, the trailing two swizzled."""
    if len(lengths) == 1:
        return (item,)
    if len(lengths) == 2:
        return swizzle(ctx, item, lengths, groups, span)
    inner = _op(ctx, MulI, lengths[1], lengths[2], span)
    lead = _op(ctx, DivI, item, inner, span, rounding=RoundingMode.ZERO)
    rest = _op(ctx, RemI, item, inner, span)
    return (lead, *swizzle(ctx, rest, lengths[1:], groups[1:], span))


def _op(ctx: LoweringContext, kind: type, lhs: Value, rhs: Value, span: A.Span, **attrs: object):  # type: ignore[no-untyped-def]
    return ctx.builder.emit(kind, result=I32, lhs=lhs, rhs=rhs, span=span, **attrs).result


def swizzle(
    ctx: LoweringContext,
    tile_id: Value,
    counts: tuple[Value, ...],
    groups: tuple[int, ...],
    span: A.Span,
) -> tuple[Value, ...]:
    """Flat tile id -> tile index over two axes. Groups [G, 1]: walk G rows of tiles column
    by column before moving on (better reuse of the shared operand in L2); [1, G]: the
    same with columns; [1, 1]: row-major; [GM, GN]: bands of GM rows, each walked in
    blocks of GN columns, column by column within a block."""

    def op(kind: type, lhs: Value, rhs: Value, **attrs: object) -> Value:
        return _op(ctx, kind, lhs, rhs, span, **attrs)  # type: ignore[no-any-return]

    def const(value: int) -> Value:
        return ctx.constant(value, ScalarTy(Elem.I32), span)

    def div(a: Value, b: Value) -> Value:
        return op(DivI, a, b, rounding=RoundingMode.ZERO)

    rows, cols = counts
    if groups[0] > 1 and groups[1] > 1:
        return _blocked(op, const, div, tile_id, rows, cols, groups)
    major = 0 if groups[1] == 1 else 1  # the grouped axis
    group = groups[major]
    if group == 1:
        return div(tile_id, cols), op(RemI, tile_id, cols)
    along, across = (rows, cols) if major == 0 else (cols, rows)
    band = op(MulI, const(group), across)
    first = op(MulI, div(tile_id, band), const(group))
    size = op(MinI, op(SubI, along, first), const(group))
    within = op(RemI, tile_id, band)
    grouped = op(AddI, first, op(RemI, within, size))
    other = div(within, size)
    return (grouped, other) if major == 0 else (other, grouped)


def _blocked(op, const, div, tile_id, rows, cols, groups):  # type: ignore[no-untyped-def]
    """[GM, GN]: a band of GM rows (fewer at the end) is cut into blocks of GN columns;
    each block is walked column by column."""
    gm, gn = groups
    band = op(MulI, const(gm), cols)
    first_row = op(MulI, div(tile_id, band), const(gm))
    height = op(MinI, op(SubI, rows, first_row), const(gm))
    within = op(RemI, tile_id, band)
    block = op(MulI, height, const(gn))
    first_col = op(MulI, div(within, block), const(gn))
    inside = op(RemI, within, block)
    row = op(AddI, first_row, op(RemI, inside, height))
    col = op(AddI, first_col, div(inside, height))
    return row, col
