"""Bounds-check placement for checked tile accesses (`Partition::load`, `PartitionMut` stores).

Each access on axis `a` of a view with tile `t` must satisfy 0 <= i < tiles(a). The proof
ladder, first rung that decides wins:

  1. provenance   -- i < Q with Q exactly tiles(a): `for i in 0..num_tiles(&p, a)`, a block id
                     of the output that defines the grid, a constant under a static extent,
                     or a Q made equal by a declared `preconditions = (dim(a, i) == ..)`
                     -> discharged (no code; the host checks the precondition itself)
  2. launch hoist -- i < Q for another launch-known Q (a grid axis, another tensor's tile
                     count, a constant): the check Q <= tiles(a) goes into the launch
                     contract and the host evaluates it before every launch
  3. preheader    -- an index that is loop-invariant or affine in unit-step `for` induction
                     variables: one guarded assert before the outermost such loop
                     (`lowering.preheader`)
  4. in place     -- anything else: an `assert` at the access

Rungs 3 and 4 leave a check in the kernel: under `deny_in_kernel_checks = true` both are
compile errors (CT0209), as in the reference, where the preheader is part of its rung 5.

Facts come from the IR itself: the op that defines an index says what bounds it (block ids
by the grid, loop counters by their upper bound, `min` and division by their operands,
`+` and `*` of non-negative values whose static largest values cannot wrap i32).
With `unchecked_accesses = true` nothing is checked.
"""

from __future__ import annotations

from collections.abc import Callable

from lowering.contract import Quantity
from lowering.ir.attributes import ComparisonPredicate
from lowering.ir.core import Value
from lowering.ir.ops_bits import AndI
from lowering.ir.ops_compare import CmpI
from lowering.ir.ops_debug import Assert
from lowering.ir.types import I1
from lowering.lowering_context import LoweringContext
from lowering.preheader import try_hoist
from lowering.rejection import Rejected
from parser import ast_nodes as A
from parser import messages
from parser.types import Elem, ScalarTy

GE, LT = ComparisonPredicate.GE, ComparisonPredicate.LT


class InKernelCheckDenied(Exception):
    """`deny_in_kernel_checks = true` and a check could not leave the kernel."""

    def __init__(self, cause: str, span: object) -> None:
        super().__init__(cause)
        self.cause = cause
        self.span = span


def place_checks(
    ctx: LoweringContext,
    index: tuple[Value, ...],
    limits: tuple[Quantity, ...],
    counts: Callable[[int], Value],
    cause: str,
    span: A.Span,
    limit_source: Value | None = None,
) -> None:
    """Discharge, hoist or emit the check `0 <= index[a] < limits[a]` for every axis.
    `counts(a)` materializes limit a in the kernel when a check stays there; it reads
    `limit_source` (a view; None when the limits are constants)."""
    options = ctx.kernel.signature.options
    if options.unchecked_accesses:
        return
    ledger = ctx.bounds
    for axis, (value, limit) in enumerate(zip(index, limits, strict=True)):
        fact = ledger.fact(value, ctx.builder.definitions)
        what = f"{cause} index on axis {axis}"
        _reject_static_violation(ctx, value, limit, what, span)
        if fact.nonneg and fact.below is not None:
            same = ledger.canonical(fact.below) == ledger.canonical(limit)
            if same or _constant_within(fact.below, limit):
                ledger.discharged += 1
                continue
            if launch_known(fact.below) and launch_known(limit):
                ledger.hoist(fact.below, limit, what)
                continue
        if options.deny_in_kernel_checks:
            raise InKernelCheckDenied(what, span)
        if try_hoist(ctx, value, lambda a=axis: counts(a), limit_source, what, span):
            ledger.preheader += 1
            continue
        _assert_in_range(ctx, value, counts(axis), what, span)
        ledger.in_place += 1


def _reject_static_violation(
    ctx: LoweringContext, value: Value, limit: Quantity, what: str, span: A.Span
) -> None:
    """An index whose every value is known (a constant, or the counter of a non-empty
    loop over constant bounds that reaches the access on every iteration) and falls
    outside the tiles is rejected, as in cuTile Rust, instead of trapping at run time."""
    known = _static_range(ctx, value)
    if known is None:
        return
    least, most = known
    tiles = limit.constant
    if least >= 0 and (tiles is None or most < tiles):
        return
    shown = str(least) if least == most else f"{least}..={most}"
    bound = f" < {tiles}" if tiles is not None else " < tiles"
    raise Rejected(messages.PROVABLY_OUT_OF_BOUNDS.at(span, what=what, shown=shown, bound=bound))


def _static_range(ctx: LoweringContext, value: Value) -> tuple[int, int] | None:
    defs = ctx.builder.definitions
    exact = ctx.bounds.fact(value, defs).exactly
    if exact is not None and exact.constant is not None:
        return exact.constant, exact.constant
    frame = next((f for f in ctx.loops if f.iv is value), None)
    if frame is None or not frame.hoistable or ctx.conditional_depth != frame.depth:
        return None  # not a loop counter, or one whose access may be skipped
    lower, upper = (ctx.bounds.fact(v, defs).exactly for v in (frame.lower, frame.upper))
    if lower is None or upper is None or lower.constant is None or upper.constant is None:
        return None
    if lower.constant >= upper.constant:
        return None  # an empty loop never reaches the access
    return lower.constant, upper.constant - 1  # a unit step takes every value


def require_at_most(ctx: LoweringContext, lhs: Value, rhs: Value, what: str, span: A.Span) -> None:
    """The check `lhs <= rhs` (a sub-range of a persistent loop): discharged or rejected
    when both sides are known, checked at launch when both are launch-known, else asserted
    in the kernel (an error under `deny_in_kernel_checks`)."""
    options = ctx.kernel.signature.options
    if options.unchecked_accesses:
        return
    ledger, defs = ctx.bounds, ctx.builder.definitions
    left, right = (ledger.fact(v, defs).exactly for v in (lhs, rhs))
    if left is not None and right is not None:
        left, right = ledger.canonical(left), ledger.canonical(right)
        if left == right or _constant_within(left, right):
            ledger.discharged += 1
            return
        if left.constant is not None and right.constant is not None:
            raise Rejected(messages.CHECK_ALWAYS_FALSE.at(span, what=what))
        if launch_known(left) and launch_known(right):  # not a made tensor's extents
            ledger.hoist(left, right, what)
            return
    if options.deny_in_kernel_checks:
        raise InKernelCheckDenied(what, span)
    inside = ctx.builder.emit(
        CmpI, result=I1, predicate=ComparisonPredicate.LE, lhs=lhs, rhs=rhs, span=span
    ).result
    ctx.builder.emit(Assert, message=what, condition=inside, span=span)
    ledger.in_place += 1


def launch_known(quantity: Quantity) -> bool:
    """Whether the host can evaluate `quantity` (not an extent of a tensor the kernel made
    itself with `make_tensor_view`, which has a negative index)."""
    param = (quantity.dim or quantity.tile_count or (0,))[0]
    return param >= 0


def _constant_within(bound: Quantity, limit: Quantity) -> bool:
    return (
        bound.constant is not None
        and limit.constant is not None
        and bound.constant <= limit.constant
    )


def _assert_in_range(
    ctx: LoweringContext, value: Value, limit: Value, what: str, span: A.Span
) -> None:
    zero = ctx.constant(0, ScalarTy(Elem.I32), span)
    emit = ctx.builder.emit
    low = emit(CmpI, result=I1, predicate=GE, lhs=value, rhs=zero, span=span).result
    high = emit(CmpI, result=I1, predicate=LT, lhs=value, rhs=limit, span=span).result
    inside = emit(AndI, result=I1, lhs=low, rhs=high, span=span).result
    emit(Assert, message=f"{what} out of bounds", condition=inside, span=span)
