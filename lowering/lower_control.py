"""Lowering of control flow and mutation: `if`, `for`, `while`, assignment.

Mutable locals become SSA values: a loop threads every variable the type checker listed
as carried (plus each output's memory token) through its iteration values; a runtime
`if` yields them from both branches. A folded `if` lowers only its taken branch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lowering.ir.core import Region, Value
from lowering.ir.ops_control import Break, Continue, For, If, Loop, Yield
from lowering.ir.types import I32, TOKEN, IRType
from lowering.loop_frames import LoopFrame
from lowering.lower_ops import binary_op, convert
from lowering.lower_persistent import mint, plan_schedule
from lowering.lowered_expr import DimValue, Lowered, Origin, TensorHandle
from lowering.lowering_context import LoweringContext
from lowering.partition_choice import chosen, state_leaf
from lowering.preheader import emit_preheader_checks
from lowering.value_leaves import flatten, rebuild, value_ir_types
from parser import ast_nodes as A
from parser.typed_kernel import LocalVar
from parser.types import Elem, MappedTy, PartitionTy, ScalarTy, TileTy


def _state(
    ctx: LoweringContext, carried: tuple[LocalVar, ...], count: int | None = None
) -> list[Value]:
    """The flattened values of the carried variables, then every output's token (the
    first `count` outputs: those that existed when the construct began; a partition
    variable carries the tag of the one it holds: `lowering.partition_choice`)."""
    values = [
        leaf
        for v in carried
        for leaf in (
            [state_leaf(ctx, v, v.span)]
            if isinstance(v.type, PartitionTy)
            else flatten(ctx.values[v.id])
        )
    ]
    tokens = [h.token for h in ctx.outputs[:count]]
    assert all(isinstance(t, Value) for t in tokens)
    return values + tokens  # type: ignore[operator]


def _set_state(ctx: LoweringContext, carried: tuple[LocalVar, ...], values: list[Value]) -> None:
    rest = list(values)
    for var in carried:
        if isinstance(var.type, PartitionTy):
            ctx.values[var.id] = chosen(ctx, var, rest.pop(0))
            continue
        count = len(value_ir_types(var.type))
        ctx.values[var.id] = rebuild(var.type, rest[:count])
        rest = rest[count:]
    for handle, token in zip(ctx.outputs, rest, strict=True):
        handle.token = token


def _state_types(ctx: LoweringContext, carried: tuple[LocalVar, ...]) -> list[IRType]:
    types = [t for v in carried for t in _carried_types(v)]
    return types + [TOKEN] * len(ctx.outputs)


def _carried_types(var: LocalVar) -> list[IRType]:
    return [I32] if isinstance(var.type, PartitionTy) else value_ir_types(var.type)


def _for(ctx: LoweringContext, node: A.ForExpr) -> Lowered:
    if node in ctx.body.persistent_loops:
        return _persistent_loop(ctx, node)
    lower, upper, stride, step = _range(ctx, node)
    origin = _walked_origin(ctx, lower, upper)
    carried = ctx.body.carried[node]
    init = _state(ctx, carried)
    ctx.exit_counts[node] = len(ctx.outputs)
    loop_var = ctx.body.loop_vars[node]
    counter_bound = ctx.bounds.counter_bound(lower, upper, stride, ctx.builder.definitions)
    skips = any(loop is node for loop in ctx.body.exits.values())  # a `continue`
    frames: list[LoopFrame] = []

    def body(args: tuple[Value, ...]) -> None:
        if counter_bound is not None:  # 0 <= counter < upper, known before the body
            ctx.bounds.below[args[0].id] = counter_bound
        if origin is not None and step is None:  # walks exactly 0..n of a branded count
            ctx.index_origins[args[0].id] = origin
        if loop_var is not None:
            ctx.values[loop_var.id] = args[0]
        _set_state(ctx, carried, list(args[1:]))
        frame = LoopFrame(args[0], lower, upper, step is None and not skips, ctx.conditional_depth)
        frames.append(frame)
        ctx.loops.append(frame)
        try:
            with ctx.region_scope():
                ctx.block(node.body, trailing=A.ContinueExpr)
        finally:
            ctx.loops.pop()
        _terminate(
            ctx, Continue, tuple(_state(ctx, carried)) if not ctx.terminated else (), node.span
        )

    region = ctx.builder.region([I32, *(v.type for v in init)], body)
    emit_preheader_checks(ctx, frames[0])
    op = ctx.builder.emit(
        For,
        outputs=tuple(v.type for v in init),
        lower=lower,
        upper=upper,
        step=stride,
        init_values=tuple(init),
        body=region,
        span=node.span,
    )
    _set_state(ctx, carried, list(op.outputs))
    return None


def _range(ctx: LoweringContext, node: A.ForExpr) -> tuple[Value, Value, Value, A.Expr | None]:
    """Lower bound, upper bound and stride of a counted loop (`for j in d` over a `Dim`
    walks 0..d), and the written step (None: 1)."""
    i32 = ScalarTy(Elem.I32)
    if node in ctx.body.dim_loops:
        dim = ctx.expr(node.iterable)
        assert isinstance(dim, DimValue)
        ctx.dim_origins.setdefault(dim.value.id, dim.origin)
        zero = ctx.constant(0, i32, node.span)
        return zero, dim.value, ctx.constant(1, i32, node.span), None
    bounds = A.range_bounds(node.iterable)
    assert bounds is not None
    start, end, step = bounds
    lower, upper = ctx.expr(start), ctx.expr(end)
    assert isinstance(lower, Value) and isinstance(upper, Value)
    if step is None:
        return lower, upper, ctx.constant(1, i32, node.span), None
    raw = ctx.expr(step)
    assert isinstance(raw, Value)
    return lower, upper, convert(ctx, raw, ctx.type_of(step), ScalarTy(Elem.I32), step.span), step


def _walked_origin(ctx: LoweringContext, lower: Value, upper: Value) -> Origin | None:
    """A loop from exactly 0 up to a branded tile count walks that count's indices."""
    start = ctx.bounds.fact(lower, ctx.builder.definitions).exactly
    if start is None or start.constant != 0:
        return None
    return ctx.dim_origins.get(upper.id)


def _persistent_loop(ctx: LoweringContext, node: A.ForExpr) -> Lowered:
    """Block b takes work items b, b + grid, b + 2*grid, ... of the mapped output, each
    turned into a tile index by its schedule (`lowering.lower_persistent`)."""
    mapped_var = ctx.body.persistent_loops[node]
    handle = ctx.values[mapped_var.id]
    assert isinstance(handle, TensorHandle) and isinstance(mapped_var.type, MappedTy)
    mapped = mapped_var.type
    view = ctx.partition(handle, mapped.tile, None, node.span)
    schedule = plan_schedule(ctx, node, handle, mapped, view)
    carried = ctx.body.carried[node]
    init = _state(ctx, carried)
    ctx.exit_counts[node] = len(ctx.outputs)
    loop_var = ctx.body.loop_vars[node]
    assert loop_var is not None

    def body(args: tuple[Value, ...]) -> None:
        _set_state(ctx, carried, list(args[1:]))
        with ctx.region_scope(), ctx.conditional():
            ctx.values[loop_var.id] = mint(ctx, schedule, args[0], node.span)
            ctx.block(node.body, trailing=A.ContinueExpr)
        _terminate(
            ctx, Continue, tuple(_state(ctx, carried)) if not ctx.terminated else (), node.span
        )

    region = ctx.builder.region([I32, *(v.type for v in init)], body)
    op = ctx.builder.emit(
        For,
        outputs=tuple(v.type for v in init),
        lower=ctx.block_ids[0],
        upper=schedule.total,
        step=schedule.step,
        init_values=tuple(init),
        body=region,
        span=node.span,
    )
    _set_state(ctx, carried, list(op.outputs))
    return None


def _terminate(
    ctx: LoweringContext, terminator: type, values: tuple[Value, ...], span: A.Span
) -> None:
    """Close the current region with `terminator` unless a `break`/`continue` already did."""
    if ctx.terminated:
        ctx.terminated = False
        return
    ctx.builder.emit(terminator, values=values, span=span)


def _loop(ctx: LoweringContext, node: A.LoopExpr) -> Lowered:
    """`loop { .. }`: a Tile IR `loop` left only through `break`."""
    return _loop_op(ctx, node, lambda: None)


def _loop_op(
    ctx: LoweringContext, node: A.LoopExpr | A.WhileExpr, prologue: Callable[[], None]
) -> Lowered:
    """A Tile IR `loop` threading the construct's carried state: each iteration runs
    `prologue` (a `while` condition check), then the body, then `continue`s."""
    carried = ctx.body.carried[node]
    init = _state(ctx, carried)
    ctx.exit_counts[node] = len(ctx.outputs)

    def body(args: tuple[Value, ...]) -> None:
        _set_state(ctx, carried, list(args))
        with ctx.region_scope(), ctx.conditional():
            prologue()
            ctx.block(node.body, trailing=A.ContinueExpr)
        state = tuple(_state(ctx, carried)) if not ctx.terminated else ()
        _terminate(ctx, Continue, state, node.span)

    region = ctx.builder.region([v.type for v in init], body)
    op = ctx.builder.emit(
        Loop,
        outputs=tuple(v.type for v in init),
        init_values=tuple(init),
        body=region,
        span=node.span,
    )
    _set_state(ctx, carried, list(op.outputs))
    return None


def _break_or_continue(ctx: LoweringContext, node: A.BreakExpr | A.ContinueExpr) -> Lowered:
    loop = ctx.body.exits[node]
    values = tuple(_state(ctx, ctx.body.carried[loop], ctx.exit_counts[loop]))
    terminator = Break if isinstance(node, A.BreakExpr) else Continue
    ctx.builder.emit(terminator, values=values, span=node.span)
    ctx.terminated = True
    return None


def _while(ctx: LoweringContext, node: A.WhileExpr) -> Lowered:
    """`loop` whose body first breaks out unless the condition holds."""
    carried = ctx.body.carried[node]

    def check_condition() -> None:
        condition = ctx.expr(node.condition)
        state = tuple(_state(ctx, carried))
        stay = ctx.builder.region([], lambda _: ctx.builder.emit(Yield, span=node.span))
        leave = ctx.builder.region(
            [], lambda _: ctx.builder.emit(Break, values=state, span=node.span)
        )
        ctx.builder.emit(
            If, outputs=(), condition=condition, then_region=stay, else_region=leave, span=node.span
        )

    return _loop_op(ctx, node, check_condition)


def _if(ctx: LoweringContext, node: A.IfExpr) -> Lowered:
    folded = ctx.body.folded_ifs.get(node)
    if folded is not None:
        return _branch_value(ctx, node.then_block if folded else node.else_branch)
    condition = ctx.expr(node.condition)
    carried = ctx.body.carried[node]
    before = _state(ctx, carried)
    result_ty = ctx.type_of(node)

    def branch(code: A.Block | A.IfExpr | None) -> Region:
        def fill(_: tuple[Value, ...]) -> None:
            _set_state(ctx, carried, before)
            with ctx.region_scope(), ctx.conditional():
                value = _branch_value(ctx, code)
            if ctx.terminated:  # the branch left its loop with `break` / `continue`
                ctx.terminated = False
                return
            leaves = flatten(value)
            ctx.builder.emit(Yield, values=(*leaves, *_state(ctx, carried)), span=node.span)

        return ctx.builder.region([], fill)

    then_region, else_region = branch(node.then_block), branch(node.else_branch)
    value_types = value_ir_types(result_ty)
    op = ctx.builder.emit(
        If,
        outputs=(*value_types, *_state_types(ctx, carried)),
        condition=condition,
        then_region=then_region,
        else_region=else_region,
        span=node.span,
    )
    results = list(op.outputs)
    _set_state(ctx, carried, results[len(value_types) :])
    return rebuild(result_ty, results[: len(value_types)])


def _branch_value(ctx: LoweringContext, code: A.Block | A.IfExpr | None) -> Lowered:
    if code is None:
        return None
    if isinstance(code, A.IfExpr):
        return ctx.expr(code)
    return ctx.block(code)


def _assign(ctx: LoweringContext, node: A.Assign) -> Lowered:
    var = ctx.body.assigns[node]
    value = ctx.expr(node.value)
    if node.op is not None:
        current = ctx.values[var.id]
        assert isinstance(current, Value) and isinstance(value, Value)
        assert isinstance(var.type, (ScalarTy, TileTy))
        value = binary_op(ctx, node.op, var.type, current, value, node.span)
    ctx.values[var.id] = value
    return None


LOWERINGS: dict[type, Callable[[LoweringContext, Any], Lowered]] = {
    A.IfExpr: _if,
    A.ForExpr: _for,
    A.WhileExpr: _while,
    A.LoopExpr: _loop,
    A.BreakExpr: _break_or_continue,
    A.ContinueExpr: _break_or_continue,
    A.Assign: _assign,
}
