"""Ownership, borrows and `unsafe`: the rules rustc enforces on cuTile kernels.

cuTile's model, as rustc sees it:

* `Tensor`, `Partition`, `PartitionMut` and `MappedPartitionMut` are not `Copy`, nor is a
  module struct without `#[derive(Copy)]`; tiles, scalars, shapes, arrays and partition
  indices are. A `&Tensor` is `Copy`; a `&mut Tensor` is not (passing it to a `&mut`
  parameter reborrows it, `let w = z;` moves it).
* `t.partition_mut(s)` takes `&mut self` and returns a `PartitionMut<'a, ..>`: the tensor
  stays mutably borrowed while the `PartitionMut` is live, that is (NLL) until the last
  use of the binding that holds it. Another `t.partition_mut(..)`, `t.store(..)`,
  `t.load()`, `load_tile_like(x, t)`, `t.shape()` or `t.partition(..)` in that window is
  E0499 (two mutable borrows) or E0502 (a shared and a mutable borrow).
* `t.partition(s)` returns a `Partition<'a, ..>` holding a shared borrow of `t`: mutable
  uses of `t` while it is live are E0502.
* A device function returning a borrow-holding value (a partition, a `&Tensor`) keeps its
  reference arguments borrowed as long as the result is live (lifetime elision).
* The arguments of one call are alive together: the same tensor passed as `&mut` twice
  is E0499, as `&mut` and `&` E0502. While later arguments are evaluated, a `&mut`
  argument already taken is reserved: `store_tile(z, load_tile_mut(z))` is E0499. A method
  receiver is a two-phase borrow: shared reads meanwhile are fine in rustc too
  (`z.store(load_tile_like(x, z))`); a mutable one, `z.store(z.load())`, is E0499 in rustc
  but accepted here on purpose (the read completes before the store, and kernels and
  tests of this repository use it).
* Passing a non-`Copy` value by value to a device function, or binding it with `let`,
  moves it: a later use is E0382 (in a loop, the next iteration's use counts). Moving a
  `&mut Tensor` while it is borrowed is E0505. A device function returning `&local` is
  E0515 (the only spelling our subset has: tensors are never locals, and `&` of a
  partition is typed as the partition itself, so the reference shows in the syntax only).
* Calls of `unsafe fn`s (user device functions declared `unsafe fn`, prelude intrinsics
  marked `unsafe`) need an enclosing `unsafe {}` block or `unsafe fn` (E0133); an
  `unsafe {}` block that contains no such call is a warning (rustc's `unused_unsafe`).

Already enforced by the type checker, not here: assigning an immutable binding (E0384),
storing or `partition_mut` through `&Tensor` and `store` on a non-`mut` partition binding
(E0596), passing `&Tensor` where `&mut` is declared (E0308).

NLL, simplified: program points are numbered in source order; a loan is live at a point
when some use of a binding holding it is reachable from there. Reachability is
"later in source order, and not in the other branch of the same `if`", plus loop back
edges: a use inside a loop is reachable from anywhere in that loop when the holder was
bound outside it. `return`/`break` do not cut paths, and assignments to a holder do not
end its earlier loans; both make the check stricter than rustc only in rare code.

Every body is checked on its own, as rustc checks every function on its own: the entry
body and each inlined device-function body (the facts in its `TypedBody`). A callee
checked once per call reports a problem once, at its first call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from parser import ast_nodes as A
from parser import messages
from parser.diagnostics import Diagnostic, DiagnosticSink, Label
from parser.prelude import PRELUDE
from parser.spans import Span
from parser.typed_kernel import InlinedCall, LocalVar, TypedBody, TypedKernel
from parser.types import MappedTy, PartitionTy, RefTy, SemType, StructTy, TensorTy

SHARED = "shared"
MUT = "mut"
MOVE = "move"
BY_CALL = "used by call"

# How each prelude intrinsic borrows its tensor arguments (receiver first); arguments not
# listed that are tensor references are borrowed shared.
TENSOR_ARG_BORROWS: dict[str, tuple[str | None, ...]] = {
    "load_tile_like": (SHARED, SHARED),
    "store": (MUT, None),
    "load_output": (MUT,),
    "shape": (SHARED,),
    "partition_mut": (MUT, None),
    "partition_full_mut": (MUT, None),
    "partition": (SHARED, None),
}
# Intrinsics whose result holds a borrow of their receiver.
BORROWING_RESULTS = {"partition_mut": MUT, "partition_full_mut": MUT, "partition": SHARED}
# Intrinsics that take their receiver by value (`self`): it is moved, and the result
# holds whatever borrows it held (`p.with_bounds(..)` is still a view of `p`'s tensor).
MOVING_RECEIVERS = frozenset({"with_bounds"})

UNSAFE_INTRINSICS: frozenset[str] = frozenset(i.id for i in PRELUDE if i.unsafe)
RAW_ACCESS_INTRINSICS: frozenset[str] = frozenset(i.id for i in PRELUDE if i.raw_access)


def check_ownership(kernel: TypedKernel, sink: DiagnosticSink) -> None:
    """Report borrow, move and `unsafe` errors of the entry and every inlined body."""
    seen: set[tuple[object, ...]] = set()
    found: list[Diagnostic] = []

    def emit(diagnostic: Diagnostic, key: tuple[object, ...]) -> None:
        if key not in seen:
            seen.add(key)
            found.append(diagnostic)

    _Body(kernel.function, kernel.body, kernel.params, lambda s: s, emit, inlined=False).run()
    for diagnostic in found:
        sink.add(diagnostic)


# ----------------------------------------------------------------------------- events

Frame = tuple[str, int, int]  # ("loop", id(node), 0) or ("if", id(node), branch)


@dataclass(frozen=True)
class Point:
    pos: int
    ctx: tuple[Frame, ...]
    span: Span


@dataclass(frozen=True)
class Use:
    point: Point
    var: LocalVar
    moves: bool  # the value is moved here (not only read or borrowed)


@dataclass
class Loan:
    place: int
    name: str  # how the borrowed place is shown: `*z`
    kind: str  # SHARED or MUT
    point: Point
    holders: list[LocalVar] = field(default_factory=list)


@dataclass(frozen=True)
class Access:
    place: int
    name: str
    kind: str  # SHARED, MUT or MOVE
    point: Point
    via: LocalVar | None  # the binding the place is reached through


@dataclass(frozen=True)
class Reservation:
    access: Access
    call_span: Span
    two_phase: bool  # a method receiver: shared reads are allowed meanwhile


def _is_tensor_ref(ty: SemType | None) -> bool:
    return isinstance(ty, RefTy) and isinstance(ty.inner, TensorTy)


def _is_copy(ty: SemType) -> bool:
    if isinstance(ty, (PartitionTy, MappedTy)):
        return False
    if isinstance(ty, StructTy) and not ty.copy:  # a module struct without `#[derive(Copy)]`
        return False
    return not (isinstance(ty, RefTy) and ty.mutable)


def _holds_borrow(ty: SemType | None) -> bool:
    return isinstance(ty, (PartitionTy, MappedTy)) or _is_tensor_ref(ty)


def _strip(expr: A.Expr) -> A.Expr:
    """`unsafe { e }` / `{ e }` read as `e` (a block with only a tail)."""
    while isinstance(expr, A.BlockExpr) and not expr.block.statements and expr.block.tail:
        expr = expr.block.tail
    return expr


# ----------------------------------------------------------------------------- one body


@dataclass
class _Body:
    function: A.Function
    facts: TypedBody
    params: tuple[LocalVar, ...]
    map_span: Callable[[Span], Span]
    emit: Callable[[Diagnostic, tuple[object, ...]], None]
    inlined: bool
    pos: int = 0
    ctx: list[Frame] = field(default_factory=list)
    defs: dict[int, Point] = field(default_factory=dict)
    uses: dict[int, list[Use]] = field(default_factory=dict)
    assigned: dict[int, list[Point]] = field(default_factory=dict)
    alias: dict[int, int] = field(default_factory=dict)  # var id -> place (root var id)
    loans: list[Loan] = field(default_factory=list)
    accesses: list[Access] = field(default_factory=list)
    reservations: list[Reservation] = field(default_factory=list)
    call_loans: dict[A.Expr, list[tuple[Access, str]]] = field(default_factory=dict)
    unsafe_blocks: list[list[object]] = field(default_factory=list)  # [block, used]

    def run(self) -> None:
        start = self._point(self.function.body.span)
        for param in self.params:
            self.defs[param.id] = start
        statements, tail = A.split_trailing(self.function.body, A.ReturnExpr)
        for statement in statements:
            self._statement(statement)
        if tail is not None:
            self._returned(tail)
            self._value(tail)
        self._check_borrows()
        self._check_moves()

    # --- reporting

    def _report(self, diagnostic: Diagnostic) -> None:
        primary = diagnostic.primary_span
        key = (
            diagnostic.code.id,
            diagnostic.message,
            primary.file_name if primary else None,
            primary.start if primary else None,
        )
        labels = tuple(
            Label(self.map_span(lb.span), lb.message, lb.primary) for lb in diagnostic.labels
        )
        self.emit(replace(diagnostic, labels=labels), key)

    # --- program points and reachability

    def _point(self, span: Span) -> Point:
        self.pos += 1
        return Point(self.pos, tuple(self.ctx), span)

    @staticmethod
    def _reaches(a: Point, b: Point, defined: Point) -> bool:
        """Whether control can go from `a` to `b` while a binding defined at `defined`
        stays the same binding (back edges only of loops that do not contain `defined`)."""
        for frame in a.ctx:
            if frame[0] == "loop" and frame in b.ctx and frame not in defined.ctx:
                return True
        if a.pos >= b.pos:
            return False
        for fa, fb in zip(a.ctx, b.ctx, strict=False):
            if fa != fb:
                return not (fa[0] == "if" and fb[0] == "if" and fa[1] == fb[1])
        return True

    # --- places

    def _var(self, expr: A.Expr) -> LocalVar | None:
        return self.facts.names.get(expr) if isinstance(expr, A.PathExpr) else None

    def _place(self, var: LocalVar) -> int:
        return self.alias.get(var.id, var.id)

    def _tensor_arg(self, expr: A.Expr) -> LocalVar | None:
        """The tensor-reference binding an argument names: `z`, `&z`, `&mut z`."""
        if isinstance(expr, A.Reference):
            expr = expr.value
        var = self._var(expr)
        return var if var is not None and _is_tensor_ref(var.type) else None

    # --- statements and expressions

    def _statement(self, statement: A.Stmt) -> None:
        if isinstance(statement, A.Let):
            self._let(statement)
        elif isinstance(statement, A.ExprStmt):
            self._expr(statement.expr)

    def _block(self, block: A.Block, value: bool = False) -> None:
        for statement in block.statements:
            self._statement(statement)
        if block.tail is not None:
            (self._value if value else self._expr)(block.tail)

    def _let(self, let: A.Let) -> None:
        bound = self.facts.lets.get(let, ())
        if let.value is not None:
            copies = all(_is_copy(var.type) for var in bound)
            if not isinstance(let.pattern, A.IdentPattern) and copies:
                self._expr(let.value)  # a pattern that copies fields out moves nothing
            else:
                self._value(let.value)
        point = self._point(let.span)
        for var in bound:
            self.defs[var.id] = point
        if len(bound) != 1 or let.value is None:
            return
        self._bind(bound[0], _strip(let.value), point)

    def _bind(self, var: LocalVar, value: A.Expr, point: Point) -> None:
        """What a binding takes over from its value: an alias of a tensor, the loans a
        moved holder held, or new loans from a borrowing call or `&t`."""
        source = self._var(value)
        if source is not None:
            if _is_tensor_ref(source.type):
                self.alias[var.id] = self._place(source)
            for loan in self.loans:
                if source in loan.holders:
                    loan.holders.append(var)
            return
        if isinstance(value, A.Reference):
            target = self._tensor_arg(value)
            if target is not None:
                self.alias[var.id] = self._place(target)
                kind = MUT if value.mutable else SHARED
                self.loans.append(Loan(self._place(target), f"*{target.name}", kind, point, [var]))
            return
        for access, kind in self.call_loans.get(value, ()):
            loan = Loan(access.place, access.name, kind, access.point, [var])
            self.loans.append(loan)
            if _is_tensor_ref(var.type) and len(self.call_loans[value]) == 1:
                self.alias[var.id] = access.place

    def _value(self, expr: A.Expr) -> None:
        """An expression whose value is moved (a `let` value, an argument by value, ...)."""
        var = self._var(expr)
        if var is not None:
            self._use(expr, var, moves=not _is_copy(var.type))
        elif isinstance(expr, (A.TupleExpr, A.ArrayExpr)):
            for element in expr.elements:
                self._value(element)
        elif isinstance(expr, A.BlockExpr):
            self._block_expr(expr, value=True)
        else:
            self._expr(expr)

    def _use(self, path: A.PathExpr, var: LocalVar, moves: bool = False) -> None:
        point = self._point(path.span)
        self.uses.setdefault(var.id, []).append(Use(point, var, moves))
        if moves and _is_tensor_ref(var.type):
            access = Access(self._place(var), var.name, MOVE, point, var)
            self.accesses.append(access)

    def _expr(self, expr: A.Expr) -> None:
        handler = self.handlers.get(type(expr))
        if handler is not None:
            handler(expr)
        elif isinstance(expr, A.Node):
            for child in _children(expr):
                self._expr(child)

    def __post_init__(self) -> None:
        self.handlers: dict[type, Callable[[Any], None]] = {
            A.PathExpr: self._path,
            A.Call: self._call,
            A.MethodCall: self._call,
            A.BlockExpr: self._block_expr,
            A.IfExpr: self._if,
            A.ForExpr: lambda e: (self._expr(e.iterable), self._loop(e, e.body)),
            A.WhileExpr: lambda e: self._loop(e, e.body, e.condition),
            A.LoopExpr: lambda e: self._loop(e, e.body),
            A.Assign: self._assign,
            A.ReturnExpr: self._exit,
            A.BreakExpr: self._exit,
            A.Closure: lambda e: self._expr(e.body),
            A.StructLit: lambda e: [self._value(value) for _, value in e.fields],
        }

    def _path(self, path: A.PathExpr) -> None:
        var = self._var(path)
        if var is not None:
            self._use(path, var)

    def _exit(self, node: A.ReturnExpr | A.BreakExpr) -> None:
        if node.value is None:
            return
        if isinstance(node, A.ReturnExpr):
            self._returned(node.value)
        self._value(node.value)

    def _block_expr(self, node: A.BlockExpr, value: bool = False) -> None:
        if not node.unsafe:
            self._block(node.block, value)
            return
        entry: list[object] = [node, False]
        self.unsafe_blocks.append(entry)
        try:
            self._block(node.block, value)
        finally:
            self.unsafe_blocks.pop()
        if not entry[1]:
            self._report(messages.UNNECESSARY_UNSAFE.at(node.span.to(node.block.span)))

    def _if(self, node: A.IfExpr) -> None:
        taken = self.facts.folded_ifs.get(node)
        if taken is not None:
            branch = node.then_block if taken else node.else_branch
            if isinstance(branch, A.Block):
                self._block(branch)
            elif branch is not None:
                self._expr(branch)
            return
        self._expr(node.condition)
        for index, branch in enumerate((node.then_block, node.else_branch)):
            if branch is None:
                continue
            self.ctx.append(("if", id(node), index))
            try:
                if isinstance(branch, A.Block):
                    self._block(branch)
                else:
                    self._expr(branch)
            finally:
                self.ctx.pop()

    def _loop(self, node: A.Expr, body: A.Block, condition: A.Expr | None = None) -> None:
        self.ctx.append(("loop", id(node), 0))
        try:
            if isinstance(node, A.ForExpr):
                var = self.facts.loop_vars.get(node)
                if var is not None:
                    self.defs[var.id] = self._point(node.pattern.span)
            if condition is not None:
                self._expr(condition)
            self._block(body)
        finally:
            self.ctx.pop()

    def _assign(self, node: A.Assign) -> None:
        if node.op is None:
            self._value(node.value)
        else:
            self._expr(node.value)
        var = self.facts.assigns.get(node)
        if var is None:
            return
        point = self._point(node.target.span)
        if node.op is not None:
            self.uses.setdefault(var.id, []).append(Use(point, var, False))
            return
        self.assigned.setdefault(var.id, []).append(point)
        self._bind(var, _strip(node.value), point)

    def _returned(self, value: A.Expr) -> None:
        """E0515: `&local` as a device function's result."""
        value = _strip(value)
        if not (self.inlined and isinstance(value, A.Reference)):
            return
        var = self._var(value.value)
        if var is None or var in self.params:
            return
        self._report(messages.RETURN_REFERENCE_TO_LOCAL.at(value.span, name=var.name))

    # --- calls

    def _call(self, call: A.Call | A.MethodCall) -> None:
        resolved = self.facts.calls.get(call)
        inlined = self.facts.inlined.get(call)
        if resolved is not None:
            self._intrinsic_call(call, resolved.intrinsic, resolved.args)
        elif inlined is not None:
            self._device_call(call, inlined)
        else:
            args = (call.receiver, *call.args) if isinstance(call, A.MethodCall) else call.args
            for arg in args:
                self._expr(arg)

    def _intrinsic_call(
        self, call: A.Call | A.MethodCall, intrinsic: str, args: tuple[A.Expr, ...]
    ) -> None:
        kinds = TENSOR_ARG_BORROWS.get(intrinsic, ())
        plan: list[str | None] = []
        for index, arg in enumerate(args):
            tensor = self._tensor_arg(arg)
            kind = kinds[index] if index < len(kinds) else SHARED
            plan.append(kind if tensor is not None else None)
        moves = intrinsic in MOVING_RECEIVERS

        def walk(index: int, arg: A.Expr) -> None:
            (self._value if moves and index == 0 else self._expr)(arg)

        taken = self._arguments(call, args, plan, walk)
        if moves:
            self._pass_loans(call, _strip(args[0]))
        name = call.method if isinstance(call, A.MethodCall) else call.function.span.text
        if intrinsic in UNSAFE_INTRINSICS:
            self._unsafe_call(call, name)
        elif intrinsic in RAW_ACCESS_INTRINSICS:
            self._raw_access(call, name)
        borrow = BORROWING_RESULTS.get(intrinsic)
        if borrow is not None and taken and taken[0] is not None:
            self.call_loans[call] = [(taken[0], borrow)]

    def _pass_loans(self, call: A.Call | A.MethodCall, receiver: A.Expr) -> None:
        """The result of a call that consumed `receiver` holds the borrows it held."""
        source = self._var(receiver)
        if source is None:
            if receiver in self.call_loans:
                self.call_loans[call] = list(self.call_loans[receiver])
            return
        held = [loan for loan in self.loans if source in loan.holders]
        self.call_loans[call] = [
            (Access(loan.place, loan.name, loan.kind, loan.point, None), loan.kind) for loan in held
        ]

    def _device_call(self, call: A.Call | A.MethodCall, inlined: InlinedCall) -> None:
        function = inlined.function
        plan: list[str | None] = []
        for param, arg in zip(function.params, inlined.args, strict=True):
            declared = param.type
            if isinstance(declared, A.RefType) and self._tensor_arg(arg) is not None:
                plan.append(MUT if declared.mutable else SHARED)
            else:
                plan.append(None)

        def walk(index: int, arg: A.Expr) -> None:
            if plan[index] is None and not isinstance(function.params[index].type, A.RefType):
                self._value(arg)  # by value: a non-Copy argument is moved
            else:
                self._expr(arg)

        taken = self._arguments(call, inlined.args, plan, walk)
        if function.is_unsafe:
            self._unsafe_call(call, function.name)
        if _holds_borrow(self.facts.expr_types.get(call)):
            self.call_loans[call] = [(a, a.kind) for a in taken if a is not None]
        # the callee is its own body, checked on its own (as rustc checks each fn)
        call_span = call.span
        outer = self.map_span
        _Body(
            function,
            inlined.body,
            inlined.params,
            lambda s: outer(s.inlined_within(call_span)),
            self.emit,
            inlined=True,
        ).run()

    def _arguments(
        self,
        call: A.Call | A.MethodCall,
        args: tuple[A.Expr, ...],
        plan: list[str | None],
        walk: Callable[[int, A.Expr], None],
    ) -> list[Access | None]:
        """Walk the arguments in order, reserving each tensor borrowed so far, then take
        the borrows together (they are all alive during the call)."""
        reserved: list[Reservation] = []
        for index, arg in enumerate(args):
            self.reservations.extend(reserved)
            try:
                walk(index, arg)
            finally:
                del self.reservations[len(self.reservations) - len(reserved) :]
            var = self._tensor_arg(arg)
            kind = plan[index] if index < len(plan) else None
            if var is not None and kind is not None:
                held = Access(self._place(var), f"*{var.name}", kind, Point(0, (), arg.span), var)
                two_phase = isinstance(call, A.MethodCall) and index == 0
                reserved.append(Reservation(held, call.span, two_phase))
        taken: list[Access | None] = []
        for index, arg in enumerate(args):
            var = self._tensor_arg(arg)
            kind = plan[index] if index < len(plan) else None
            if var is None or kind is None:
                taken.append(None)
                continue
            access = Access(self._place(var), f"*{var.name}", kind, self._point(arg.span), var)
            if kind == MUT:
                self._check_declared_shared(var, arg.span)
            for earlier in taken:
                if (
                    earlier is not None
                    and earlier.place == access.place
                    and MUT in (earlier.kind, access.kind)
                ):
                    self._conflict(access, earlier.kind, earlier.point.span, call.span, BY_CALL)
                    break
            for reservation in self.reservations:  # an enclosing call's earlier arguments
                self._check_reserved(reservation, access)
            self.accesses.append(access)
            taken.append(access)
        return taken

    def _check_declared_shared(self, var: LocalVar, span: Span) -> None:
        """E0596 for a device-function parameter declared `&Tensor` that was handed a
        `&mut Tensor` (its type is the argument's; the declaration makes it shared)."""
        if not self.inlined or var not in self.params:
            return
        declared = self.function.params[self.params.index(var)].type
        if not isinstance(declared, A.RefType) or declared.mutable:
            return
        declared_here = ((declared.span, "declared `&` here"),)
        self._report(
            messages.MUTABLE_BORROW_BEHIND_SHARED_REFERENCE.at(span, declared_here, name=var.name)
        )

    def _check_reserved(self, reservation: Reservation, access: Access) -> None:
        held = reservation.access
        if held.place != access.place:
            return
        if reservation.two_phase:
            return  # deliberately lenient, see the module docstring
        if MUT in (held.kind, access.kind):
            self._conflict(access, held.kind, held.point.span, reservation.call_span, BY_CALL)

    def _unsafe_call(self, call: A.Call | A.MethodCall, function: str) -> None:
        if self.unsafe_blocks:
            self.unsafe_blocks[-1][1] = True
            return
        if self.function.is_unsafe:
            return
        self._report(messages.UNSAFE_CALL_OUTSIDE_UNSAFE.at(call.span, function=function))

    def _raw_access(self, call: A.Call | A.MethodCall, name: str) -> None:
        """A raw access is safe to call (as in cuTile Rust) but marked: an `unsafe` block
        around it counts as used, and outside one it is a warning."""
        if self.unsafe_blocks:
            self.unsafe_blocks[-1][1] = True
            return
        if self.function.is_unsafe:
            return
        self._report(messages.RAW_ACCESS_OUTSIDE_UNSAFE.at(call.span, function=name))

    # --- the checks that need every use: borrows and moves

    def _conflict(
        self,
        access: Access,
        held_kind: str,
        held_span: Span,
        later_span: Span,
        later: str,
    ) -> None:
        """Report `access` against a borrow of the same place held since `held_span` and
        used again at `later_span` ("used here", "used by call", ...)."""
        name = access.name
        if access.kind == MOVE:
            secondary = (
                (held_span, f"borrow of `*{name}` occurs here"),
                (later_span, f"borrow later {later}"),
            )
            self._report(
                messages.MOVE_OUT_WHILE_BORROWED.at(access.point.span, secondary, name=name)
            )
        elif access.kind == MUT and held_kind == MUT:
            secondary = (
                (held_span, "first mutable borrow occurs here"),
                (later_span, f"first borrow later {later}"),
            )
            self._report(messages.MUTABLE_BORROW_TWICE.at(access.point.span, secondary, name=name))
        else:
            now, then = ("mutable", "immutable") if access.kind == MUT else ("immutable", "mutable")
            secondary = (
                (held_span, f"{then} borrow occurs here"),
                (later_span, f"{then} borrow later {later}"),
            )
            self._report(
                messages.SHARED_AND_MUTABLE_BORROW.at(
                    access.point.span, secondary, name=name, now=now, then=then
                )
            )

    def _live_use(self, loan: Loan, at: Point) -> Use | None:
        """A use of a holder of `loan` reachable from `at` (the one reached first)."""
        best: tuple[int, Use] | None = None
        for holder in loan.holders:
            defined = self.defs.get(holder.id, loan.point)
            for use in self.uses.get(holder.id, ()):
                if self._reaches(at, use.point, defined):
                    rank = use.point.pos if use.point.pos > at.pos else use.point.pos + 10**9
                    if best is None or rank < best[0]:
                        best = (rank, use)
        return best[1] if best else None

    def _check_borrows(self) -> None:
        for access in self.accesses:
            for loan in self.loans:
                if loan.place != access.place or access.via in loan.holders:
                    continue
                if access.kind == SHARED and loan.kind == SHARED:
                    continue
                if not self._reaches(loan.point, access.point, loan.point):
                    continue
                use = self._live_use(loan, access.point)
                if use is None:
                    continue
                again = use.point.pos < access.point.pos
                later = "used here, in later iteration of loop" if again else "used here"
                self._conflict(access, loan.kind, loan.point.span, use.point.span, later)
                break

    def _check_moves(self) -> None:
        for uses in self.uses.values():
            for moved in (u for u in uses if u.moves):
                var = moved.var
                defined = self.defs.get(var.id)
                if defined is None:
                    continue
                for later in uses:
                    if later is moved and not any(
                        f[0] == "loop" and f not in defined.ctx for f in moved.point.ctx
                    ):
                        continue
                    if later is not moved and not self._reaches(moved.point, later.point, defined):
                        continue
                    if self._reinitialized(var, moved.point, later.point):
                        continue
                    self._use_after_move(moved, later)
                    break

    def _reinitialized(self, var: LocalVar, moved: Point, later: Point) -> bool:
        return any(
            moved.pos < a.pos < later.pos and self._reaches(moved, a, a)
            for a in self.assigned.get(var.id, ())
        )

    def _use_after_move(self, moved: Use, later: Use) -> None:
        """E0382 at the use after the move (rustc's primary span); a value moved by the
        same expression in an earlier iteration gets rustc's single label."""
        var = moved.var
        if later is moved:
            self._report(
                messages.MOVED_IN_PREVIOUS_ITERATION.at(
                    later.point.span, name=var.name, ty=var.type
                )
            )
            return
        again = later.point.pos <= moved.point.pos
        secondary = (
            (
                moved.point.span,
                "value moved here, in previous iteration of loop" if again else "value moved here",
            ),
        )
        self._report(
            messages.USE_AFTER_MOVE.at(
                later.point.span,
                secondary,
                use="use" if later.moves else "borrow",
                used="used" if later.moves else "borrowed",
                name=var.name,
                ty=var.type,
            )
        )


def _children(node: A.Node) -> list[A.Expr]:
    """The sub-expressions of an expression, in evaluation order."""
    out: list[A.Expr] = []
    for value in vars(node).values():
        if isinstance(value, A.Block):
            raise AssertionError("blocks are walked by their constructs")
        if isinstance(value, tuple):
            out.extend(v for v in value if _is_expr(v))
        elif _is_expr(value):
            out.append(value)
    return out


_EXPR_TYPES = tuple(t for t in A.Expr.__args__)  # type: ignore[attr-defined]


def _is_expr(value: object) -> bool:
    return isinstance(value, _EXPR_TYPES)
