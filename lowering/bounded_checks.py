"""The checks of `with_bounds` partitions (cuTile Rust's deprecated bounded family).

`p.with_bounds((a, b))` claims that each bound is exactly the tile count of its axis of
`p`; the claim is verified here (the binding check), on the cheapest rung that decides
it, like any access check:

  discharged  -- the bound provably is the count: `num_tiles(&p, axis)` itself, an equal
                 constant, a count made equal by declared preconditions, or
                 `dim / tile` over the axis's own extent when a declared
                 `dim(x, k) % tile == 0` makes floor and ceiling agree
  host        -- both sides launch-known: two launch checks (`a <= b`, `b <= a`); a
                 `dim / tile` bound becomes the host-verified `dim % tile == 0` (not for
                 a tensor made in the kernel, whose extents the host does not know)
  in place    -- an in-kernel `assert` (a `deny_in_kernel_checks` error)

A constant bound that differs from a static count is rejected. An access through the
bounded partition (`bp.load(coord((i, j)))`) is then proved per axis by its index's brand:
an index walked over the axis's own `Dim` (or minted for it) is inside by the binding;
one walked over another dimension is rejected; a constant is folded against a static
count (rejected outside it) or checked at launch (rejected where the host cannot: a tensor
made in the kernel); anything else is rejected, as in cuTile
Rust, where bounded accesses never leave a check in the kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lowering.bounds import InKernelCheckDenied, launch_known
from lowering.contract import Assumption, AssumptionKind, Quantity
from lowering.ir.attributes import ComparisonPredicate, RoundingMode
from lowering.ir.core import Value
from lowering.ir.ops_arith import DivI
from lowering.ir.ops_compare import CmpI
from lowering.ir.ops_debug import Assert
from lowering.ir.types import I1
from lowering.lowered_expr import AxisOrigin, Origin
from lowering.lowering_context import LoweringContext
from lowering.rejection import Rejected
from parser import ast_nodes as A
from parser import messages
from parser.preconditions import ExtentDivisible
from parser.types import MappedTy


def place_binding_check(
    ctx: LoweringContext,
    bound: Value,
    count: Quantity,
    materialize: Callable[[], Value],
    axis: int,
    span: A.Span,
) -> None:
    """Verify `bound == count` (the tile count of the bounded axis)."""
    if ctx.kernel.signature.options.unchecked_accesses:
        return
    ledger = ctx.bounds
    what = f"`with_bounds` bound on axis {axis}"
    fact = ledger.fact(bound, ctx.builder.definitions)
    limit = ledger.canonical(count)
    if fact.exactly is not None:
        exact = ledger.canonical(fact.exactly)
        if exact == limit:
            ledger.discharged += 1
            return
        if exact.constant is not None and limit.constant is not None:
            raise Rejected(_mismatch(exact.constant, limit.constant, axis, span))
        if launch_known(exact) and launch_known(limit):
            ledger.hoist(exact, limit, what)
            ledger.hoist(limit, exact, what)
            ledger.hoisted -= 1  # one binding, two launch checks
            return
    # a tensor made in the kernel has extents the host does not know: checked in place
    floor = _floor_count(ctx, bound)
    if (
        floor is not None
        and floor[0] >= 0
        and ledger.canonical(Quantity(tile_count=floor)) == limit
    ):
        _require_divisible(ctx, floor)
        return
    if ctx.kernel.signature.options.deny_in_kernel_checks:
        raise InKernelCheckDenied(what, span)
    equal = ctx.builder.emit(
        CmpI,
        result=I1,
        predicate=ComparisonPredicate.EQ,
        lhs=bound,
        rhs=materialize(),
        span=span,
    ).result
    message = f"{what} does not equal this partition's tile count"
    ctx.builder.emit(Assert, message=message, condition=equal, span=span)
    ledger.in_place += 1


def _mismatch(bound: int, count: int, axis: int, span: A.Span):  # type: ignore[no-untyped-def]
    return messages.BOUND_NOT_TILE_COUNT.at(span, bound=bound, axis=axis, count=count)


def _floor_count(ctx: LoweringContext, bound: Value) -> tuple[int, int, int] | None:
    """(param, axis, tile) when `bound` is `dim(param, axis) / tile` rounded down."""
    op = ctx.builder.definitions.get(bound.id)
    if not isinstance(op, DivI) or op.rounding is RoundingMode.POSITIVE_INF:
        return None
    defs = ctx.builder.definitions
    numerator = ctx.bounds.fact(op.lhs, defs).exactly
    divisor = ctx.bounds.fact(op.rhs, defs).exactly
    if numerator is None or numerator.dim is None or divisor is None:
        return None
    if divisor.constant is None or divisor.constant <= 0:
        return None
    return (*numerator.dim, divisor.constant)


def _require_divisible(ctx: LoweringContext, floor: tuple[int, int, int]) -> None:
    """floor(dim / tile) is the tile count exactly when tile divides dim: discharged by a
    declared `dim(x, k) % d == 0` with tile | d, else the host verifies it."""
    param, axis, tile = floor
    root = ctx.bounds.canonical(Quantity(dim=(param, axis))).dim
    for condition in ctx.kernel.signature.options.preconditions:
        if not isinstance(condition, ExtentDivisible) or condition.divisor % tile:
            continue
        declared = ctx.bounds.canonical(Quantity(dim=(condition.param, condition.axis))).dim
        if declared == root:
            ctx.bounds.discharged += 1
            return
    assumption = Assumption(param, AssumptionKind.DIM_DIV, axis, tile)
    if assumption not in ctx.assumptions:
        ctx.assumptions.append(assumption)
    ctx.bounds.hoisted += 1


def place_bounded_checks(
    ctx: LoweringContext,
    index: Sequence[Value],
    bounds: Sequence[Origin],
    limits: Sequence[Quantity],
    spans: Sequence[A.Span],
) -> None:
    """Prove each coordinate of a bounded access by its brand (see the module doc)."""
    if ctx.kernel.signature.options.unchecked_accesses:
        return
    ledger = ctx.bounds
    together = zip(index, bounds, limits, spans, strict=True)
    for axis, (value, bound, limit, span) in enumerate(together):
        brand = ctx.index_origins.get(value.id)
        if brand is not None:
            if brand != bound:
                raise Rejected(_foreign(axis, span))
            ledger.discharged += 1
            continue
        exact = ledger.fact(value, ctx.builder.definitions).exactly
        constant = exact.constant if exact is not None else None
        if constant is None:
            raise Rejected(_unbranded(axis, span))
        if constant < 0 or (limit.constant is not None and constant >= limit.constant):
            raise Rejected(_outside(constant, axis, limit, span))
        if limit.constant is not None:
            ledger.discharged += 1
        elif launch_known(limit):
            ledger.hoist(Quantity(constant=constant + 1), limit, f"bounded coordinate {axis}")
        else:
            raise Rejected(_unknown_extent(constant, axis, span))


def _foreign(axis: int, span: A.Span):  # type: ignore[no-untyped-def]
    return messages.COORDINATE_OF_ANOTHER_DIM.at(span, axis=axis)


def _unbranded(axis: int, span: A.Span):  # type: ignore[no-untyped-def]
    return messages.COORDINATE_NOT_FROM_DIM.at(span, axis=axis)


def _unknown_extent(constant: int, axis: int, span: A.Span):  # type: ignore[no-untyped-def]
    return messages.COORDINATE_OF_MADE_TENSOR.at(span, constant=constant, axis=axis)


def _outside(constant: int, axis: int, limit: Quantity, span: A.Span):  # type: ignore[no-untyped-def]
    grid = f"the {limit.constant}-tile grid" if limit.constant is not None else "the grid"
    return messages.COORDINATE_OUTSIDE_GRID.at(span, constant=constant, axis=axis, grid=grid)


def check_composite_store(
    ctx: LoweringContext,
    index: Sequence[Value],
    param: int,
    mapped: MappedTy,
    spans: Sequence[A.Span],
) -> None:
    """`z.store(tile, coord((i, j)))` on a `MappedPartitionMut` with OWNED axes: each
    streamed coordinate must be the one this partition's schedule minted (so blocks stay
    disjoint), each owned one an index walked over that axis's `Dim` (of `z`, or of a
    partition sharing the stream), or a constant inside its tiles."""
    groups = mapped.map_shape
    if all(g != 0 for g in groups):
        raise Rejected(_not_minted(None, spans[0]))
    shared = {param}
    for axis, value in enumerate(index):
        if groups[axis] == 0:
            continue
        origin = ctx.index_origins.get(value.id)
        minted = ctx.minted.get(value.id, frozenset())
        if not (isinstance(origin, AxisOrigin) and origin.axis == axis and param in minted):
            raise Rejected(_not_minted(axis, spans[axis]))
        shared |= minted
        ctx.bounds.discharged += 1
    for axis, value in enumerate(index):
        if groups[axis] != 0:
            continue
        origin = ctx.index_origins.get(value.id)
        if isinstance(origin, AxisOrigin):
            if origin.axis != axis or origin.param not in shared or origin.slab:
                raise Rejected(_owned_foreign(axis, spans[axis]))
            ctx.bounds.discharged += 1
            continue
        limit = Quantity(tile_count=(param, axis, mapped.tile[axis]))
        place_bounded_checks(ctx, (value,), (None,), (limit,), (spans[axis],))  # type: ignore[arg-type]


def _not_minted(axis: int | None, span: A.Span):  # type: ignore[no-untyped-def]
    if axis is None:
        return messages.STORE_INDEX_NOT_MINTED.at(span)
    return messages.STREAMED_AXIS_NOT_MINTED.at(span, axis=axis)


def _owned_foreign(axis: int, span: A.Span):  # type: ignore[no-untyped-def]
    return messages.OWNED_AXIS_OF_ANOTHER_DIM.at(span, axis=axis)
