"""A read-only partition assigned in a runtime `if` (`if c { p = b.partition(..); }`).

Tile IR cannot yield a view from an `if`, so after it the variable holds a
`PartitionChoice`: the partitions it may hold and an i32 tag, carried by the `if` like
any value, saying which one. Every call that takes the variable is lowered once per
candidate, under a chain of `if`s on the tag, with that candidate's own view (made again
where the call is: views are pure) and so its own bounds checks, which know the tensor it
really views; the results are yielded. Nothing about one candidate bounds an access
through another.

Candidates are numbered per variable for the whole kernel (`LoweringContext.choices`), so
a tag stays meaningful as later `if`s add candidates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from lowering.ir.attributes import ComparisonPredicate
from lowering.ir.core import Value
from lowering.ir.ops_compare import CmpI
from lowering.ir.ops_control import If, Yield
from lowering.ir.types import I1, TOKEN, PaddingValue, PartitionViewType
from lowering.lowered_expr import Lowered, PartitionValue
from lowering.lowering_context import LoweringContext
from lowering.rejection import Rejected
from lowering.value_leaves import flatten, rebuild, value_ir_types
from parser import ast_nodes as A
from parser import messages
from parser.typed_kernel import LocalVar
from parser.types import UNIT, ArrayTy, Elem, ScalarTy, TileTy, TupleTy

I32 = ScalarTy(Elem.I32)


@dataclass(frozen=True)
class PartitionChoice:
    """The partition a variable holds after a runtime `if`: `candidates[tag]`."""

    candidates: tuple[PartitionValue, ...]
    tag: Value


def state_leaf(ctx: LoweringContext, var: LocalVar, span: A.Span) -> Value:
    """The tag a partition variable carries out of (or into) an `if`."""
    value = ctx.values[var.id]
    if isinstance(value, PartitionChoice):
        return value.tag
    assert isinstance(value, PartitionValue)
    known = ctx.choices.setdefault(var.id, [])
    key = _key(value)
    number = next((i for i, c in enumerate(known) if _key(c) == key), None)
    if number is None:
        number = len(known)
        known.append(value)
    return ctx.constant(number, I32, span)


def chosen(ctx: LoweringContext, var: LocalVar, tag: Value) -> PartitionChoice:
    """The variable's value after an `if` yielded `tag` for it."""
    return PartitionChoice(tuple(ctx.choices[var.id]), tag)


def _key(part: PartitionValue) -> tuple[object, ...]:
    token = part.token.id if part.token is not None else None
    return (id(part.handle), part.tile, part.dim_map, _padding(part), token)


def _padding(part: PartitionValue) -> PaddingValue | None:
    """The padding its view reads past the end (`partition`: zero; a raw
    `make_partition_view`: the one it names)."""
    view_type = part.view.type
    assert isinstance(view_type, PartitionViewType)
    return view_type.padding


def choice_argument(
    ctx: LoweringContext, args: tuple[A.Expr, ...]
) -> tuple[LocalVar, PartitionChoice] | None:
    """The first argument naming a variable that holds a `PartitionChoice`."""
    for arg in args:
        target = arg.value if isinstance(arg, A.Reference) else arg
        var = ctx.body.names.get(target) if isinstance(target, A.PathExpr) else None
        if var is not None and isinstance(ctx.values.get(var.id), PartitionChoice):
            return var, ctx.values[var.id]  # type: ignore[return-value]
    return None


def per_candidate(
    ctx: LoweringContext,
    call: A.Call | A.MethodCall,
    var: LocalVar,
    choice: PartitionChoice,
    lower: Callable[[], Lowered],
) -> Lowered:
    """`lower()` once per candidate of `var`, dispatched on its tag."""
    result = ctx.type_of(call)
    if not _yieldable(result):
        raise Rejected(
            messages.CALL_ON_CHOSEN_PARTITION.at(call.span, call=call.span.text, var=var.name)
        )
    types = value_ir_types(result) if result != UNIT else []
    # a read through a written tensor (made in the kernel, or an input written through an
    # unsafe view) moves its token on: each branch starts from the same tokens and the
    # dispatch yields where they end
    carried = list(ctx.outputs)
    before = [h.token for h in carried]

    def run(number: int) -> list[Value]:
        for handle, token in zip(carried, before, strict=True):
            handle.token = token
        candidate = choice.candidates[number]
        view = ctx.partition(
            candidate.handle, candidate.tile, _padding(candidate), call.span, candidate.dim_map
        )
        ctx.values[var.id] = replace(candidate, view=view)
        try:
            value = lower()
        finally:
            ctx.values[var.id] = choice
        return flatten(value) + [h.token for h in carried]  # type: ignore[misc]

    def chain(number: int) -> list[Value]:
        if number == len(choice.candidates) - 1:
            return run(number)
        wanted = ctx.constant(number, I32, call.span)
        condition = ctx.builder.emit(
            CmpI,
            result=I1,
            predicate=ComparisonPredicate.EQ,
            lhs=choice.tag,
            rhs=wanted,
            span=call.span,
        ).result
        then_region = _branch(ctx, lambda: run(number), call.span)
        else_region = _branch(ctx, lambda: chain(number + 1), call.span)
        op = ctx.builder.emit(
            If,
            outputs=(*types, *[TOKEN] * len(carried)),
            condition=condition,
            then_region=then_region,
            else_region=else_region,
            span=call.span,
        )
        return list(op.outputs)

    leaves = chain(0)
    for handle, token in zip(carried, leaves[len(types) :], strict=True):
        handle.token = token
    return rebuild(result, leaves[: len(types)]) if types else None


def _branch(ctx: LoweringContext, body: Callable[[], list[Value]], span: A.Span):  # type: ignore[no-untyped-def]
    def fill(_: tuple[Value, ...]) -> None:
        with ctx.region_scope(), ctx.conditional():
            leaves = body()
        ctx.builder.emit(Yield, values=tuple(leaves), span=span)

    return ctx.builder.region([], fill)


def _yieldable(ty: object) -> bool:
    if ty == UNIT:
        return True
    if isinstance(ty, (TupleTy, ArrayTy)):
        parts = ty.elements if isinstance(ty, TupleTy) else (ty.element,)
        return all(_yieldable(p) for p in parts)
    return isinstance(ty, (ScalarTy, TileTy))
