"""What the lowering knows about i32 indices, and the ledger of launch-known quantities.

`BoundsLedger` names values whose launch-time quantity is known (tile counts, extents, grid
axes) and counts how each access was checked; `Fact` is what the IR itself says about an
index (the op that defines it: block ids by the grid, loop counters by their bound, `min`,
division and non-wrapping `+`/`*`). `lowering.bounds` places the checks from these facts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from lowering.contract import LaunchCheck, Quantity
from lowering.ir.attributes import Bounded, RoundingMode
from lowering.ir.core import Op, Value
from lowering.ir.ops_arith import AddI, DivI, MulI, SubI
from lowering.ir.ops_core import Assume, Constant, GetTileBlockId
from lowering.ir.ops_math import MinI
from lowering.ir.ops_memory import GetIndexSpaceShape
from lowering.ir.types import I32, I32_MAX

# CUDA's grid limits: a launch with more blocks on an axis fails before the kernel runs
GRID_LIMITS = (I32_MAX, 65535, 65535)


def grid_limits(output_tiles: Sequence[tuple[int, ...]]) -> tuple[int, int, int]:
    """The most blocks each grid axis can have when outputs with these tile shapes define
    the grid: axis a is the tile count of every output's axis a, at most ceil(I32_MAX /
    tile) since extents fit i32, and within CUDA's limit."""
    limits = list(GRID_LIMITS)
    for tile in output_tiles:
        for axis, size in enumerate(tile[:3]):
            limits[axis] = min(limits[axis], -(-I32_MAX // size))
    return (limits[0], limits[1], limits[2])


@dataclass(frozen=True)
class Fact:
    """What is known about an i32 index: `0 <= value`, `value < below`, `value <= at_most`,
    `value == exactly` (each optional), and `value <= most`, a number (every i32 is at
    most I32_MAX; tighter for constants, block ids, tile counts and arithmetic on them)."""

    nonneg: bool = False
    below: Quantity | None = None
    at_most: Quantity | None = None
    exactly: Quantity | None = None
    most: int = I32_MAX


def static_most(quantity: Quantity) -> int:
    """The largest value a launch-known quantity can take (extents fit i32)."""
    if quantity.constant is not None:
        return quantity.constant
    if quantity.tile_count is not None:
        return -(-I32_MAX // quantity.tile_count[2])
    if quantity.slab_tiles is not None:
        return I32_MAX // quantity.slab_tiles[2]
    if quantity.grid_axis is not None:
        return GRID_LIMITS[quantity.grid_axis]
    return I32_MAX


@dataclass
class BoundsLedger:
    """Launch-known names of values, and what the kernel's accesses cost."""

    known: dict[int, Quantity] = field(default_factory=dict)  # value id -> exact quantity
    below: dict[int, Quantity] = field(default_factory=dict)  # value id -> exclusive bound
    views: dict[int, int] = field(default_factory=dict)  # partition view id -> param index
    launch_checks: list[LaunchCheck] = field(default_factory=list)
    # declared `dim(a, i) == dim(b, j)` preconditions: (param, axis) -> its class's first member
    same_extent: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    grid: tuple[int, int, int] = GRID_LIMITS  # the most blocks per grid axis (grid_limits)
    discharged: int = 0
    hoisted: int = 0  # to the host
    preheader: int = 0
    in_place: int = 0

    def fact(self, value: Value, definitions: dict[int, Op]) -> Fact:
        return _fact(value, self, definitions, depth=0)

    def counter_bound(
        self, lower: Value, upper: Value, step: Value, definitions: dict[int, Op]
    ) -> Quantity | None:
        """The bound `counter < Q` of a loop over [lower, upper) with a positive constant
        step and a non-negative start, or None."""
        start, end, stride = (self.fact(v, definitions) for v in (lower, upper, step))
        positive = stride.exactly is not None and (stride.exactly.constant or 0) > 0
        if not (start.nonneg and positive):
            return None
        return end.exactly or end.at_most

    def unite(self, first: tuple[int, int], second: tuple[int, int]) -> None:
        """Record a declared equal extent (the host checks it before launch)."""
        root, other = self._root(first), self._root(second)
        if root != other:
            self.same_extent[other] = root

    def _root(self, extent: tuple[int, int]) -> tuple[int, int]:
        while extent in self.same_extent:
            extent = self.same_extent[extent]
        return extent

    def canonical(self, quantity: Quantity) -> Quantity:
        """`quantity` with every extent replaced by its declared-equal representative."""
        if quantity.dim is not None:
            return Quantity(dim=self._root(quantity.dim))
        if quantity.tile_count is not None:
            param, axis, tile = quantity.tile_count
            return Quantity(tile_count=(*self._root((param, axis)), tile))
        return quantity

    def hoist(self, bound: Quantity, limit: Quantity, cause: str) -> None:
        check = LaunchCheck(bound, limit, cause)
        if check not in self.launch_checks:
            self.launch_checks.append(check)
        self.hoisted += 1


def _fact(value: Value, ledger: BoundsLedger, defs: dict[int, Op], depth: int) -> Fact:
    if value.id in ledger.known:
        quantity = ledger.known[value.id]
        return Fact(nonneg=True, exactly=quantity, at_most=quantity, most=static_most(quantity))
    if value.id in ledger.below:
        bound = ledger.below[value.id]
        return Fact(nonneg=True, below=bound, most=static_most(bound) - 1)
    op = defs.get(value.id)
    if op is None or depth > 16:
        return Fact()
    rule = _RULES.get(type(op))
    return rule(op, value, ledger, defs, depth + 1) if rule else Fact()


def _constant(op: Constant, value: Value, *_: object) -> Fact:
    number = op.values[0]
    if isinstance(number, bool) or not isinstance(number, int):
        return Fact()
    quantity = Quantity(constant=number)
    return Fact(
        nonneg=number >= 0,
        exactly=quantity,
        at_most=quantity,
        below=Quantity(constant=number + 1),
        most=number,
    )


def _block_id(op: GetTileBlockId, value: Value, ledger: BoundsLedger, *_: object) -> Fact:
    axis = (op.x, op.y, op.z).index(value)
    return Fact(nonneg=True, below=Quantity(grid_axis=axis), most=ledger.grid[axis] - 1)


def _assume(
    op: Assume, value: Value, ledger: BoundsLedger, defs: dict[int, Op], depth: int
) -> Fact:
    inner = _fact(op.value, ledger, defs, depth)
    bounded = isinstance(op.predicate, Bounded)
    nonneg = bounded and (op.predicate.lower or -1) >= 0  # type: ignore[union-attr]
    upper = op.predicate.upper if bounded else None  # type: ignore[union-attr]
    most = inner.most if upper is None else min(inner.most, upper)
    return Fact(nonneg or inner.nonneg, inner.below, inner.at_most, inner.exactly, most)


def _index_space(op: GetIndexSpaceShape, value: Value, ledger: BoundsLedger, *_: object) -> Fact:
    view = ledger.views.get(op.view.id)
    if view is None:
        return Fact(nonneg=True)
    param = view
    axis = op.counts.index(value)
    view_type = op.view.type
    tile = view_type.tile_shape[axis]  # type: ignore[union-attr]
    tensor_axis = view_type.dim_map[axis]  # type: ignore[union-attr]
    quantity = Quantity(tile_count=(param, tensor_axis, tile))
    return Fact(nonneg=True, exactly=quantity, at_most=quantity, most=static_most(quantity))


def _minimum(op: MinI, value: Value, ledger: BoundsLedger, defs: dict[int, Op], depth: int) -> Fact:
    lhs, rhs = (_fact(v, ledger, defs, depth) for v in (op.lhs, op.rhs))
    at_most = lhs.exactly or lhs.at_most or rhs.exactly or rhs.at_most
    return Fact(nonneg=lhs.nonneg and rhs.nonneg, at_most=at_most, most=min(lhs.most, rhs.most))


def _divide(op: DivI, value: Value, ledger: BoundsLedger, defs: dict[int, Op], depth: int) -> Fact:
    """dim / t <= ceil(dim / t) = tile_count; ceil_div(dim, t) is exactly the tile count."""
    lhs, rhs = (_fact(v, ledger, defs, depth) for v in (op.lhs, op.rhs))
    divisor = rhs.exactly.constant if rhs.exactly is not None else None
    if divisor is None or divisor <= 0:
        return Fact()
    # a non-negative quotient is at most ceil(most / divisor) under either rounding
    most = -(-lhs.most // divisor) if lhs.nonneg else I32_MAX
    source = lhs.exactly or lhs.at_most
    if source is None or source.dim is None:
        return Fact(nonneg=lhs.nonneg, most=most)
    count = Quantity(tile_count=(*source.dim, divisor))
    exact = op.rounding is RoundingMode.POSITIVE_INF and lhs.exactly is not None
    return Fact(nonneg=lhs.nonneg, at_most=count, exactly=count if exact else None, most=most)


def _no_wrap(
    op: AddI | MulI, value: Value, ledger: BoundsLedger, defs: dict[int, Op], depth: int
) -> Fact:
    """The sum or product of two non-negative i32 scalars whose largest values cannot
    overflow is non-negative, with a known largest value. Anything that may wrap knows
    nothing (wrapping forfeits every interval fact)."""
    if value.type != I32:
        return Fact()
    lhs, rhs = (_fact(v, ledger, defs, depth) for v in (op.lhs, op.rhs))
    if not (lhs.nonneg and rhs.nonneg):
        return Fact()
    most = lhs.most + rhs.most if isinstance(op, AddI) else lhs.most * rhs.most
    return Fact(nonneg=True, most=most) if most <= I32_MAX else Fact()


def _cancelled(
    op: SubI, value: Value, ledger: BoundsLedger, defs: dict[int, Op], depth: int
) -> Fact:
    """`(v + c) - c` is exactly `v` in wrapping i32 arithmetic (a ring), so it knows what
    `v` knows; any other difference knows nothing."""
    sum_op = defs.get(op.lhs.id)
    subtracted = _fact(op.rhs, ledger, defs, depth).exactly
    if not isinstance(sum_op, AddI) or subtracted is None or subtracted.constant is None:
        return Fact()
    for kept, added in ((sum_op.lhs, sum_op.rhs), (sum_op.rhs, sum_op.lhs)):
        exact = _fact(added, ledger, defs, depth).exactly
        if exact is not None and exact.constant == subtracted.constant:
            return _fact(kept, ledger, defs, depth)
    return Fact()


_RULES = {
    Constant: _constant,
    GetTileBlockId: _block_id,
    Assume: _assume,
    GetIndexSpaceShape: _index_space,
    MinI: _minimum,
    DivI: _divide,
    AddI: _no_wrap,
    MulI: _no_wrap,
    SubI: _cancelled,
}
