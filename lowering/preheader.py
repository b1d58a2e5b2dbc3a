"""Rung 5 of the bounds ladder: a residual check hoisted to a loop preheader.

A check that cannot leave the kernel (see `lowering.bounds`) still need not run on every
iteration. When its index is `c + sum(a_k * x_k)` with every `a_k >= 0` and every `x_k`
either defined before a unit-step `for` loop or the induction variable of that loop (or of
a unit-step loop nested in it), the index is monotone over the iterations: checking
`0 <= index(first iteration)` and `index(last iteration) < limit` once, before the loop,
covers every iteration. The check is placed before the outermost loop for which that
holds, guarded by `upper <= lower` of every loop it crosses, so an empty loop never traps.

It stays at the access when:
  * the loop steps by anything but 1 (`step_by`), or has a `continue` (an iteration may
    skip the access, so the endpoints may not be accessed at all);
  * the access sits under a runtime `if`, or in a `while`/`loop`/persistent loop inside
    the `for` (it may not run on every iteration);
  * the index depends on a value computed in the loop body other than by `+`, `-c` and
    `*c` from invariants and induction variables (a load, a loop-carried variable, ...);
  * the arithmetic may wrap i32: unless the index is a bare value, every term must be
    non-negative with a static largest value and the sum must fit i32 (wrapping would
    break monotonicity).
"""

from __future__ import annotations

from collections.abc import Callable

from lowering.ir.attributes import ComparisonPredicate
from lowering.ir.core import Op, Value
from lowering.ir.ops_arith import AddI, MulI, SubI
from lowering.ir.ops_bits import AndI, OrI
from lowering.ir.ops_compare import CmpI
from lowering.ir.ops_core import Constant
from lowering.ir.ops_debug import Assert
from lowering.ir.types import I1, I32, I32_MAX
from lowering.loop_frames import Affine, LoopFrame, PreheaderCheck
from lowering.lowering_context import LoweringContext
from parser import ast_nodes as A
from parser.types import Elem, ScalarTy

I32_SCALAR = ScalarTy(Elem.I32)


def affine_form(value: Value, definitions: dict[int, Op], depth: int = 0) -> Affine:
    """`value` as an affine form over the leaves `+`, `- constant` and `* constant` reach."""
    op = definitions.get(value.id)
    if depth > 16 or op is None or value.type != I32:
        return Affine(((1, value),), 0)
    if isinstance(op, Constant) and _int(op) is not None:
        return Affine((), _int(op))  # type: ignore[arg-type]
    if isinstance(op, AddI):
        lhs, rhs = (affine_form(v, definitions, depth + 1) for v in (op.lhs, op.rhs))
        return Affine(lhs.terms + rhs.terms, lhs.constant + rhs.constant)
    if isinstance(op, SubI):
        rhs = affine_form(op.rhs, definitions, depth + 1)
        if not rhs.terms:
            lhs = affine_form(op.lhs, definitions, depth + 1)
            return Affine(lhs.terms, lhs.constant - rhs.constant)
    if isinstance(op, MulI):
        lhs, rhs = (affine_form(v, definitions, depth + 1) for v in (op.lhs, op.rhs))
        form, factor = (lhs, rhs.constant) if not rhs.terms else (rhs, lhs.constant)
        if not (lhs.terms and rhs.terms) and factor > 0:
            scaled = tuple((factor * a, x) for a, x in form.terms)
            return Affine(scaled, factor * form.constant)
    return Affine(((1, value),), 0)


def _int(op: Constant) -> int | None:
    number = op.values[0]
    return number if isinstance(number, int) and not isinstance(number, bool) else None


def try_hoist(
    ctx: LoweringContext,
    index: Value,
    limit: Callable[[], Value],
    limit_source: Value | None,
    what: str,
    span: A.Span,
) -> bool:
    """Queue the check `0 <= index < limit` before the outermost loop it may precede;
    False when it must stay at the access. `limit_source` is the value `limit()` reads."""
    frames = ctx.loops
    if not frames or ctx.conditional_depth != frames[-1].depth:
        return False
    definitions = ctx.builder.definitions
    form = affine_form(index, definitions)
    if not _cannot_wrap(ctx, form):
        return False
    chosen = None
    for position in range(len(frames) - 1, -1, -1):
        frame = frames[position]
        inner = frames[position:]
        nested_plainly = position == len(frames) - 1 or frames[position + 1].depth == frame.depth
        if not (
            frame.hoistable
            and nested_plainly
            and _available(form, inner, limit_source, definitions)
        ):
            break
        chosen = position
    if chosen is None:
        return False
    check = PreheaderCheck(form, tuple(frames[chosen:]), limit, what, span)
    frames[chosen].pending.append(check)
    return True


def _induction_loop(
    value: Value, loops: tuple[LoopFrame, ...] | list[LoopFrame]
) -> LoopFrame | None:
    return next((frame for frame in loops if frame.iv.id == value.id), None)


def _available(
    form: Affine, loops: list[LoopFrame], limit_source: Value | None, definitions: dict[int, Op]
) -> bool:
    """Everything the check reads exists before `loops[0]` (IVs of `loops` aside), or is a
    constant (emitted again there)."""
    target = loops[0]
    leaves = [x for _, x in form.terms if _induction_loop(x, loops) is None]
    bounds = [v for frame in loops[1:] for v in (frame.lower, frame.upper)]
    sources = [limit_source] if limit_source is not None else []
    return all(
        target.invariant(v) or isinstance(definitions.get(v.id), Constant)
        for v in (*leaves, *bounds, *sources)
    )


def _cannot_wrap(ctx: LoweringContext, form: Affine) -> bool:
    """A bare value needs no arithmetic; otherwise every term is non-negative with a
    static largest value and the largest sum fits i32."""
    if form.constant == 0 and len(form.terms) == 1 and form.terms[0][0] == 1:
        return True
    if not form.terms or form.constant < -I32_MAX:
        return False
    largest = max(form.constant, 0)
    for coefficient, leaf in form.terms:
        loop = _induction_loop(leaf, ctx.loops)
        if loop is not None:
            definitions = ctx.builder.definitions
            start, end = (ctx.bounds.fact(v, definitions) for v in (loop.lower, loop.upper))
            nonneg, most = start.nonneg, end.most - 1
        else:
            fact = ctx.bounds.fact(leaf, ctx.builder.definitions)
            nonneg, most = fact.nonneg, fact.most
        if not nonneg:
            return False
        largest += coefficient * most
    return largest <= I32_MAX


def emit_preheader_checks(ctx: LoweringContext, frame: LoopFrame) -> None:
    """Emit `frame`'s queued checks at the current insertion point (before its loop)."""
    for check in frame.pending:
        _emit(ctx, check)


def _emit(ctx: LoweringContext, check: PreheaderCheck) -> None:
    span = check.span
    emit = ctx.builder.emit

    def const(number: int) -> Value:
        return ctx.constant(number, I32_SCALAR, span)

    def binary(kind: type, lhs: Value, rhs: Value, **attrs: object) -> Value:
        return emit(kind, lhs=lhs, rhs=rhs, span=span, **attrs).result

    def here(value: Value) -> Value:
        """`value`, or a copy of it when it is a constant defined inside the loops."""
        op = ctx.builder.definitions.get(value.id)
        if isinstance(op, Constant) and not check.loops[0].invariant(value):
            return emit(Constant, result=value.type, values=op.values, span=span).result
        return value

    one = const(1)
    lowers = {id(frame): here(frame.lower) for frame in check.loops}
    uppers = {id(frame): here(frame.upper) for frame in check.loops}
    lasts = {key: binary(SubI, upper, one, result=I32) for key, upper in uppers.items()}

    def at(endpoint: Callable[[LoopFrame], Value]) -> Value:
        total: Value | None = const(check.index.constant) if check.index.constant else None
        for coefficient, leaf in check.index.terms:
            loop = _induction_loop(leaf, check.loops)
            term = endpoint(loop) if loop is not None else here(leaf)
            if coefficient != 1:
                term = binary(MulI, term, const(coefficient), result=I32)
            total = term if total is None else binary(AddI, total, term, result=I32)
        return total if total is not None else const(0)

    first = at(lambda frame: lowers[id(frame)])
    last = at(lambda frame: lasts[id(frame)])
    cmp = ComparisonPredicate
    low = binary(CmpI, first, const(0), result=I1, predicate=cmp.GE)
    high = binary(CmpI, last, check.limit(), result=I1, predicate=cmp.LT)
    passes = binary(AndI, low, high, result=I1)
    for frame in check.loops:  # an empty loop runs no access
        upper, lower = uppers[id(frame)], lowers[id(frame)]
        empty = binary(CmpI, upper, lower, result=I1, predicate=cmp.LE)
        passes = binary(OrI, empty, passes, result=I1)
    message = f"{check.what} out of bounds (checked before the loop for every iteration)"
    emit(Assert, message=message, condition=passes, span=span)
