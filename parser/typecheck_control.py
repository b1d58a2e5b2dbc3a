"""Type rules for control flow and mutation: `if`, `for`, `while`, assignment.

A mutable local assigned inside a loop or a runtime `if` becomes a loop-carried or
branch-yielded value; this module records which ones (`TypedBody.carried`), in order.
An `if` whose condition is a compile-time constant (e.g. `if CAUSAL == 1i32` with a
const generic) is folded: only the taken branch is checked and lowered.
"""

from __future__ import annotations

from parser import ast_nodes as A
from parser import messages
from parser.check_messages import mismatch, unresolved, unsupported
from parser.checker_state import Frame
from parser.checker_surface import CheckerSurface
from parser.persistent_iterables import PERSISTENT_ITERABLES, check_iterable_args
from parser.typed_kernel import Construct, LocalVar
from parser.types import (
    ERROR,
    UNIT,
    ArrayTy,
    DimTy,
    Elem,
    MappedTy,
    PartitionIndexTy,
    PartitionTy,
    PointerTileTy,
    PointerTy,
    ScalarTy,
    SemType,
    TileTy,
    TokenTy,
    TupleTy,
)

BOOL = ScalarTy(Elem.BOOL)
I32 = ScalarTy(Elem.I32)


def is_carried_type(ty: SemType, in_loop: bool) -> bool:
    """Types a variable assigned in a loop or runtime `if` may have: values, and (in an
    `if`) read-only partitions: which one it holds afterwards is known only at run time
    (`lowering.partition_choice`)."""
    if isinstance(ty, PartitionTy):
        return not (in_loop or ty.mutable or ty.bounded)
    return is_value_type(ty)


def _else_value(node: A.IfExpr) -> A.Expr | None:
    branch = node.else_branch
    return branch.tail if isinstance(branch, A.Block) else branch


def is_value_type(ty: SemType) -> bool:
    """Types that can flow out of a branch or around a loop (SSA values)."""
    if isinstance(ty, TupleTy):
        return all(is_value_type(t) for t in ty.elements)
    if isinstance(ty, ArrayTy):
        return is_value_type(ty.element)
    return isinstance(ty, (ScalarTy, TileTy, TokenTy, PointerTy, PointerTileTy))


class ControlRules(CheckerSurface):
    def if_expr(self, node: A.IfExpr, expected: SemType | None) -> SemType | None:
        condition = self.fold(node.condition)
        if isinstance(condition, bool):
            self.expr(node.condition, BOOL)
            self.facts.folded_ifs[node] = condition
            return self._branch(node.then_block if condition else node.else_branch, expected)
        cond_ty = self.expr(node.condition, BOOL)
        if cond_ty is not None and cond_ty != BOOL:
            self.report(mismatch(BOOL, cond_ty, node.condition.span))
        frame = self._enter_frame()
        guard = A.ReturnExpr if node in self.facts.guards else None
        try:
            then_ty = self.block(node.then_block, expected, trailing=guard)
            else_ty = self._branch(node.else_branch, then_ty or expected)
        finally:
            self._leave_frame(node, frame)
        if then_ty is None or else_ty is None:
            return None
        then_value, else_value = node.then_block.tail, _else_value(node)
        if then_ty != else_ty and (
            (then_value is not None and self.try_flex(then_value, then_ty, else_ty))
            or (else_value is not None and self.try_flex(else_value, else_ty, then_ty))
        ):
            else_ty = then_ty  # left to the next round (a literal-fed binding changes type)
        if then_ty != else_ty:
            self.report(
                messages.IF_ELSE_TYPES_DIFFER.at(
                    node.span,
                    ((node.then_block.span, f"`{then_ty}`"),),
                    then_ty=then_ty,
                    else_ty=else_ty,
                )
            )
            return None
        if not is_value_type(then_ty) and then_ty != UNIT:
            self.report(unsupported(node.span, f"an `if` producing `{then_ty}` at run time"))
            return None
        return then_ty

    def _branch(
        self, branch: A.Block | A.IfExpr | None, expected: SemType | None
    ) -> SemType | None:
        if branch is None:
            return UNIT
        if isinstance(branch, A.IfExpr):
            return self.expr(branch, expected)
        return self.block(branch, expected)

    def for_loop(self, node: A.ForExpr, expected: SemType | None) -> SemType | None:
        iterable = node.iterable
        if isinstance(iterable, A.MethodCall) and iterable.method in PERSISTENT_ITERABLES:
            return self._persistent_loop(node, iterable)
        bounds = A.range_bounds(node.iterable)
        if bounds is None:
            iterable_expr = node.iterable
            ranged = isinstance(iterable_expr, A.RangeExpr) or (
                isinstance(iterable_expr, A.MethodCall) and iterable_expr.method == "step_by"
            )
            iterable = None if ranged else self.expr(node.iterable, None)
            if ranged or iterable != DimTy():
                if iterable is None and not ranged:
                    return None
                self.report(
                    unsupported(
                        node.iterable.span,
                        "iterating over anything but `a..b`, `(a..b).step_by(k)` or a `Dim`",
                    )
                )
                return None
            self.facts.dim_loops.add(node)
        else:
            start, end, step = bounds
            ok = all(self._integer(e, I32) for e in (start, end))
            if step is not None:
                ok = self._integer(step, None) and ok
            if not ok:
                return None
        frame = self._enter_frame(node)
        self.scopes.append({})
        try:
            pattern = node.pattern
            var = None
            if isinstance(pattern, A.IdentPattern):
                var = self.declare(LocalVar(pattern.name, I32, pattern.span))
            elif not isinstance(pattern, A.WildcardPattern):
                self.report(unsupported(pattern.span, "this loop pattern"))
            self.facts.loop_vars[node] = var
            self.block(node.body, UNIT, trailing=A.ContinueExpr)
        finally:
            self.scopes.pop()
            self._leave_frame(node, frame)
        return UNIT

    def _persistent_loop(self, node: A.ForExpr, iterable: A.MethodCall) -> SemType | None:
        """`for idx in z.iter_indices()`: each block walks its share of z's tiles."""
        receiver = iterable.receiver
        mapped = self.expr(receiver, None)
        var = self.facts.names.get(receiver) if isinstance(receiver, A.PathExpr) else None
        if mapped is None:
            return None
        if not isinstance(mapped, MappedTy) or var is None:
            self.report(
                unsupported(
                    iterable.span,
                    f"`{iterable.method}()` on anything but a `MappedPartitionMut` parameter",
                )
            )
            return None
        ok, partner = check_iterable_args(self, iterable, mapped)
        if not ok:
            return None
        if not isinstance(node.pattern, A.IdentPattern):
            self.report(messages.ITER_INDICES_NEEDS_NAME.at(node.pattern.span))
            return None
        frame = self._enter_frame(node)
        self.scopes.append({})
        try:
            shared = () if partner is None else (partner.id,)
            index_ty = PartitionIndexTy(mapped.rank, var.id, shared)
            loop_var = self.declare(LocalVar(node.pattern.name, index_ty, node.pattern.span))
            self.facts.loop_vars[node] = loop_var
            self.facts.persistent_loops[node] = var
            if partner is not None:
                self.facts.persistent_partners[node] = partner
            self.block(node.body, UNIT, trailing=A.ContinueExpr)
        finally:
            self.scopes.pop()
            self._leave_frame(node, frame)
        return UNIT

    def loop(self, node: A.LoopExpr, expected: SemType | None) -> SemType | None:
        """`loop { .. }`: runs until a `break`."""
        frame = self._enter_frame(node)
        try:
            self.block(node.body, UNIT, trailing=A.ContinueExpr)
        finally:
            self._leave_frame(node, frame)
        return UNIT

    def break_or_continue(
        self, node: A.BreakExpr | A.ContinueExpr, expected: SemType | None
    ) -> SemType | None:
        word = "break" if isinstance(node, A.BreakExpr) else "continue"
        loop = next((f.loop for f in reversed(self.frames) if f.loop is not None), None)
        if loop is None:
            self.report(messages.OUTSIDE_LOOP.at(node.span, word=word))
            return None
        if isinstance(node, A.BreakExpr) and node.value is not None:
            self.report(unsupported(node.value.span, "`break` with a value"))
            return None
        if isinstance(node, A.BreakExpr) and isinstance(loop, A.ForExpr):
            self.report(messages.BREAK_OUT_OF_FOR.at(node.span))
            return None
        self.facts.exits[node] = loop
        return UNIT

    def while_loop(self, node: A.WhileExpr, expected: SemType | None) -> SemType | None:
        frame = self._enter_frame(node)
        try:
            cond_ty = self.expr(node.condition, BOOL)
            if cond_ty is not None and cond_ty != BOOL:
                self.report(mismatch(BOOL, cond_ty, node.condition.span))
            self.block(node.body, UNIT, trailing=A.ContinueExpr)
        finally:
            self._leave_frame(node, frame)
        return UNIT

    def assign(self, node: A.Assign, expected: SemType | None) -> SemType | None:
        target = node.target
        if not (isinstance(target, A.PathExpr) and len(target.segments) == 1):
            self.report(unsupported(target.span, "assigning to anything but a local variable"))
            return None
        var = self.lookup(target.name)
        if var is None:
            self.report(unresolved(target.span, target.name, "value", []))
            return None
        if var.type is ERROR:
            return None
        self.facts.names[target] = var
        if not var.mutable:
            self.report(
                messages.ASSIGN_TWICE.at(
                    node.span, ((var.span, "first assignment"),), name=var.name
                )
            )
            return None
        value_ty = self.expr(node.value, var.type)
        if value_ty is None:
            return None
        result_ty = self.binary_result(node.op, var.type, node.span) if node.op else value_ty
        if result_ty is None:
            return None
        if (value_ty != var.type or result_ty != var.type) and (
            self.try_flex(node.value, value_ty, var.type)
            or self.try_flex(target, var.type, value_ty)
        ):
            value_ty = result_ty = var.type  # left to the next round
        if value_ty != var.type or result_ty != var.type:
            self.report(
                mismatch(
                    var.type,
                    value_ty,
                    node.value.span,
                    ((var.span, "expected due to the type of this variable"),),
                )
            )
            return None
        self.facts.names[target] = var
        self.facts.assigns[node] = var
        self._record_assignment(var, node)
        return UNIT

    # --- carried-variable bookkeeping

    def _enter_frame(self, loop: A.ForExpr | A.WhileExpr | A.LoopExpr | None = None) -> Frame:
        frame = Frame(len(self.scopes), loop=loop)
        self.frames.append(frame)
        return frame

    def _leave_frame(self, node: Construct, frame: Frame) -> None:
        popped = self.frames.pop()
        assert popped is frame
        self.facts.carried[node] = tuple(frame.assigned.values())

    def _record_assignment(self, var: LocalVar, node: A.Assign) -> None:
        for frame in self.frames:
            if self.var_depth[var.id] <= frame.depth and var.id not in frame.assigned:
                if not is_carried_type(var.type, in_loop=frame.loop is not None):
                    self.report(
                        unsupported(node.span, f"assigning a `{var.type}` inside a loop or `if`")
                    )
                    return
                frame.assigned[var.id] = var

    def _integer(self, expr: A.Expr, expected: SemType | None) -> bool:
        ty = self.expr(expr, expected)
        if ty is None:
            return False
        if not (isinstance(ty, ScalarTy) and ty.elem.is_integer):
            self.report(mismatch(expected or I32, ty, expr.span))
            return False
        if expected is not None and ty != expected:
            self.report(mismatch(expected, ty, expr.span))
            return False
        return True
