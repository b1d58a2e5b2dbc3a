"""Typed kernel → tile IR: one entry function, straight from the typed AST.

The prologue turns ABI parameters into tensor views (with the assumptions the contract
records); each statement then lowers in program order. Every write through a `&mut`
output is ordered by that output's token chain; shared reads carry no token. Control
flow lives in `lower_control`, operators in `lower_ops`, prelude calls in `intrinsics`.
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from lowering import lower_control, lower_debug_and_literals, lower_ops
from lowering.abi import SlotLayout
from lowering.bounds_ledger import BoundsLedger, grid_limits
from lowering.contract import Assumption, AssumptionKind, Quantity, SlotRole
from lowering.element_types import ir_element, ir_tile_type
from lowering.intrinsics import INTRINSIC_LOWERINGS
from lowering.ir.attributes import Bounded, DivBy, EntryHints
from lowering.ir.core import Builder, Function, Module, Value
from lowering.ir.ops_control import If, Yield
from lowering.ir.ops_core import Assume, Constant, GetTileBlockId, MakeToken, Return
from lowering.ir.ops_memory import MakePartitionView, MakeTensorView
from lowering.ir.ops_pointer import GlobalVar
from lowering.ir.types import I32, TOKEN, PaddingValue, PartitionViewType, TensorViewType
from lowering.loop_frames import LoopFrame
from lowering.lowered_expr import Lowered, Origin, PartitionValue, TensorHandle, TokenChain
from lowering.partition_choice import choice_argument, per_candidate
from parser import ast_nodes as A
from parser.entry_signature import EntryParam, ParamRole
from parser.optimization_hints import ArchHints
from parser.preconditions import ExtentDivisible, SameExtent
from parser.specialization import ViewLayout
from parser.typed_kernel import TypedBody, TypedKernel
from parser.types import (
    DYNAMIC,
    ArrayTy,
    Elem,
    GlobalTy,
    LatencyTy,
    MarkerTy,
    OptionTy,
    RefTy,
    ScalarTy,
    SemType,
    ShapeTy,
    StructTy,
    TupleTy,
)

I32_SCALAR = ScalarTy(Elem.I32)


@dataclass(frozen=True)
class LoweredKernel:
    module: Module
    assumptions: tuple[Assumption, ...]
    bounds: BoundsLedger
    raw_memory: bool = False  # accesses memory no bounds check covers (raw pointers)


class KernelLowering:
    def __init__(
        self,
        kernel: TypedKernel,
        abi: tuple[SlotLayout, ...],
        layouts: dict[int, ViewLayout] | None = None,
    ) -> None:
        self.kernel = kernel
        self.abi = abi
        self.layouts = layouts or {}  # param index -> relaxed view layout (request facts)
        self.body: TypedBody = kernel.body  # switched while lowering inlined calls
        self.builder = Builder()
        self.values: dict[int, Lowered] = {}  # LocalVar.id -> current value
        self.outputs: list[TensorHandle | TokenChain] = []  # the tokens control flow carries
        # how many `outputs` a loop carries (a `break`/`continue` leaves with those)
        self.exit_counts: dict[A.Expr, int] = {}
        self._local_ids = itertools.count(-1, -1)  # ids of tensors made in the kernel
        self.print_chain: TokenChain | None = None
        # raw-pointer loads and stores, in program order (one chain: pointers may alias)
        self.pointer_chain: TokenChain | None = None
        self.raw_memory = False  # set by an access no bounds check covers
        self.globals: dict[str, GlobalVar] = {}  # module globals the kernel uses, by symbol
        # set by `break` / `continue`: the rest of the current region is unreachable, and
        # the region already has its terminator
        self.terminated = False
        self.assumptions: list[Assumption] = []
        signature = kernel.signature
        self.bounds = BoundsLedger(
            grid=grid_limits(
                [
                    tuple(max(d, 1) for d in p.tensor.shape)  # a `-1` tile may be 1
                    for p in signature.params
                    if p.role is ParamRole.OUTPUT
                ]
            )
        )
        for condition in kernel.signature.options.preconditions:
            if isinstance(condition, SameExtent):
                self.bounds.unite(condition.first, condition.second)
        # brands (`lowering.lowered_expr.Origin`) by value id: of tile counts that are
        # exactly a partition axis's (`num_tiles`), and of indices walked over a `Dim` or
        # minted by a persistent loop
        self.dim_origins: dict[int, Origin] = {}
        self.index_origins: dict[int, Origin] = {}
        # minted coordinates -> the mapped outputs (params) whose stores accept them
        self.minted: dict[int, frozenset[int]] = {}
        # the partitions a variable assigned in a runtime `if` may hold, by variable id
        self.choices: dict[int, list[PartitionValue]] = {}
        self.block_ids: tuple[Value, Value, Value] = ()  # type: ignore[assignment]
        self.loops: list[LoopFrame] = []  # the `for` loops around the current point
        # how many regions that may not run on every iteration (runtime `if`, `while`,
        # `loop`, persistent loops) surround the current point
        self.conditional_depth = 0

    # --- entry

    def lower(self, symbol: str) -> LoweredKernel:
        params = tuple(self.builder.value(layout.ir_type) for layout in self.abi)
        self._prologue(params)
        self.block(self.kernel.function.body, trailing=A.ReturnExpr)
        self.builder.emit(Return, span=self.kernel.function.body.span)
        function = Function(
            symbol,
            params,
            self.builder.finish(params),
            span=self.kernel.function.span,
            hints=entry_hints(self.kernel.signature.options.optimization_hints),
        )
        module = Module((function,), tuple(self.globals.values()))
        return LoweredKernel(module, tuple(self.assumptions), self.bounds, self.raw_memory)

    def _prologue(self, params: tuple[Value, ...]) -> None:
        slots: dict[int, list[tuple[SlotLayout, Value]]] = {}
        for layout, value in zip(self.abi, params, strict=True):
            slots.setdefault(layout.slot.param, []).append((layout, value))
        for var in self.kernel.params:
            assert var.param_index is not None
            entry_param = self.kernel.signature.params[var.param_index]
            param_slots = slots[var.param_index]
            if entry_param.role in (ParamRole.SCALAR, ParamRole.POINTER):
                self.values[var.id] = param_slots[0][1]
            else:
                self.values[var.id] = self._tensor_view(entry_param, param_slots)
        span = self.kernel.function.span
        op = self.builder.emit(GetTileBlockId, x=I32, y=I32, z=I32, span=span)
        self.block_ids = (op.x, op.y, op.z)
        if _prints(self.kernel.body):
            token = self.builder.emit(MakeToken, result=TOKEN, span=span).result
            self.print_chain = TokenChain(token)
            self.outputs.append(self.print_chain)
        pointers = any(p.role is ParamRole.POINTER for p in self.kernel.signature.params)
        if pointers or _calls_any(self.kernel.body, RAW_CHAIN_INTRINSICS):
            token = self.builder.emit(MakeToken, result=TOKEN, span=span).result
            self.pointer_chain = TokenChain(token)
            self.outputs.append(self.pointer_chain)

    def _tensor_view(
        self, param: EntryParam, slots: list[tuple[SlotLayout, Value]]
    ) -> TensorHandle:
        span = param.span
        by_role = {(layout.slot.role, layout.slot.axis): value for layout, value in slots}
        tensor = param.tensor
        rank = tensor.rank
        layout = self.layouts.get(param.index, ViewLayout())
        base = by_role[(SlotRole.PTR, 0)]
        if layout.base_align > 1:
            base = self._assume(base, DivBy(layout.base_align), span)
            self._record(param, AssumptionKind.BASE_ALIGN, 0, layout.base_align)
        self._record(param, AssumptionKind.NONNEG, 0, 0)
        self._record(param, AssumptionKind.FITS_I32, 0, 0)
        is_output = param.role.is_output
        shape = tuple(
            None if is_output or tensor.shape[a] == DYNAMIC else tensor.shape[a]
            for a in range(rank)
        )
        for axis, extent in enumerate(shape):
            if extent is not None:
                self._record(param, AssumptionKind.STATIC_DIM, axis, extent)
        strides: tuple[int | None, ...] = (None,) * rank
        if layout.unit_last_stride:
            strides = (*strides[:-1], 1)
            self._record(param, AssumptionKind.STRIDE_ONE, rank - 1, 1)
        dims: list[int | Value] = []
        dim_divisors, stride_divisors = self._declared_divisors(param)
        for axis in range(rank):
            if shape[axis] is None:
                extent = self._assume(by_role[(SlotRole.DIM, axis)], Bounded(0, None), span)
                if axis in dim_divisors:
                    extent = self._assume(extent, DivBy(dim_divisors[axis]), span)
                self.bounds.known[extent.id] = Quantity(dim=(param.index, axis))
                dims.append(extent)
            else:
                dims.append(shape[axis])  # type: ignore[arg-type]
        dyn_strides = []
        for axis in range(rank):
            if strides[axis] is None:
                stride = self._assume(by_role[(SlotRole.STRIDE, axis)], Bounded(0, None), span)
                if axis in stride_divisors:
                    stride = self._assume(stride, DivBy(stride_divisors[axis]), span)
                dyn_strides.append(stride)
        view_type = TensorViewType(ir_element(tensor.elem), shape, strides)
        dyn_dims = tuple(d for d in dims if isinstance(d, Value))
        view = self.builder.emit(
            MakeTensorView,
            result=view_type,
            base=base,
            dynamic_shape=dyn_dims,
            dynamic_strides=tuple(dyn_strides),
            span=span,
        ).result
        written = is_output or _writes_inputs(self.kernel.body)
        token = self.builder.emit(MakeToken, result=TOKEN, span=span).result if written else None
        slab = self._slab(param, by_role) if param.role is ParamRole.OUTPUT else ()
        handle = TensorHandle(param, view, tuple(dims), token, slab=slab)
        if written:
            self.outputs.append(handle)
        return handle

    def _slab(
        self, param: EntryParam, by_role: dict[tuple[SlotRole, int], Value]
    ) -> tuple[int | Value, ...]:
        """An output's tile per block: static extents, or the partition tile the host
        passes (positive: the host refuses anything else) where the type says `-1`."""
        return tuple(
            self._assume(by_role[(SlotRole.PART_DIM, axis)], Bounded(1, None), param.span)
            if extent == DYNAMIC
            else extent
            for axis, extent in enumerate(param.tensor.shape)
        )

    def _declared_divisors(self, param: EntryParam) -> tuple[dict[int, int], dict[int, int]]:
        """Axis -> divisor from the entry's `dim(..) % d == 0` / `stride(..) % d == 0`
        preconditions on `param` (the host verifies them before launch)."""
        dims: dict[int, int] = {}
        strides: dict[int, int] = {}
        for condition in self.kernel.signature.options.preconditions:
            if isinstance(condition, SameExtent) or condition.param != param.index:
                continue
            into = dims if isinstance(condition, ExtentDivisible) else strides
            into[condition.axis] = math.lcm(into.get(condition.axis, 1), condition.divisor)
        return dims, strides

    def _assume(self, value: Value, predicate: DivBy | Bounded, span: A.Span) -> Value:
        return self.builder.emit(
            Assume, result=value.type, predicate=predicate, value=value, span=span
        ).result

    def _record(self, param: EntryParam, kind: AssumptionKind, axis: int, value: int) -> None:
        self.assumptions.append(Assumption(param.index, kind, axis, value))

    # --- helpers for the lowering modules

    def partition(
        self,
        handle: TensorHandle,
        tile: tuple[int, ...],
        padding: PaddingValue | None,
        span: A.Span,
        dim_map: tuple[int, ...] | None = None,
    ) -> Value:
        dim_map = dim_map or tuple(range(len(tile)))
        key = (tile, padding, dim_map)
        if key not in handle.partitions:
            view_type = handle.view.type
            assert isinstance(view_type, TensorViewType)
            part_type = PartitionViewType(tile, view_type, dim_map, padding)
            handle.partitions[key] = self.builder.emit(  # type: ignore[index]
                MakePartitionView, result=part_type, tensor_view=handle.view, span=span
            ).result
            self.bounds.views[handle.partitions[key].id] = handle.index  # type: ignore[index]
        return handle.partitions[key]  # type: ignore[index]

    @contextlib.contextmanager
    def region_scope(self) -> Iterator[None]:
        """Values cached while lowering a region (partition views) stay inside it, and so do
        the handles first bound inside it (a helper's tensor parameters) and the tensors
        made inside it (their tokens are not carried out)."""
        saved = {id(h): dict(h.partitions) for h in self._handles()}
        carried = len(self.outputs)
        try:
            yield
        finally:
            for handle in self._handles():
                handle.partitions = saved.get(id(handle), {})
            del self.outputs[carried:]

    def local_tensor(self, handle: TensorHandle) -> TensorHandle:
        """Register a tensor made in the kernel: its token is carried like an output's."""
        handle.local_id = next(self._local_ids)
        self.outputs.append(handle)
        return handle

    @contextlib.contextmanager
    def conditional(self) -> Iterator[None]:
        """Lowering a region that may be skipped on some iterations of the loops around."""
        self.conditional_depth += 1
        try:
            yield
        finally:
            self.conditional_depth -= 1

    def _handles(self) -> list[TensorHandle]:
        return [v for v in self.values.values() if isinstance(v, TensorHandle)]

    def type_of(self, expr: A.Expr) -> SemType:
        return self.body.expr_types[expr]

    def constant(self, value: int | float | bool, ty: SemType, span: A.Span) -> Value:
        return self.builder.emit(
            Constant, result=ir_tile_type(ty), values=(value,), span=span
        ).result

    def scalar(self, value: Lowered, span: A.Span) -> Value:
        """A shape entry as an i32 value (static dims become constants)."""
        if isinstance(value, int):
            return self.constant(value, I32_SCALAR, span)
        assert isinstance(value, Value)
        return value

    # --- statements

    def block(self, block: A.Block, trailing: type | None = None) -> Lowered:
        statements, tail = (
            A.split_trailing(block, trailing) if trailing else (block.statements, block.tail)
        )
        for position, statement in enumerate(statements):
            if self.terminated:
                return None
            if isinstance(statement, A.ExprStmt) and statement.expr in self.body.guards:
                assert isinstance(statement.expr, A.IfExpr)
                return self._guarded(statement.expr, statements[position + 1 :], tail)
            if isinstance(statement, A.Let):
                self._let(statement)
            elif isinstance(statement, A.ExprStmt):
                self.expr(statement.expr)
        if tail is None or self.terminated:
            return None
        return self.expr(tail)

    def _guarded(self, guard: A.IfExpr, rest: tuple[A.Stmt, ...], tail: A.Expr | None) -> Lowered:
        """`if c { ..; return; } rest` lowers to `if c { .. } else { rest }`."""
        condition = self.expr(guard.condition)
        remainder = A.Block(guard.span, rest, tail)

        tokens = [h.token for h in self.outputs]

        def fill(code: A.Block, trailing: type | None) -> Callable[[tuple[Value, ...]], None]:
            def body(_: tuple[Value, ...]) -> None:
                for handle, token in zip(self.outputs, tokens, strict=True):
                    handle.token = token  # each branch starts from the state before the `if`
                with self.region_scope(), self.conditional():
                    self.block(code, trailing=trailing)
                self.builder.emit(Yield, span=guard.span)

            return body

        then_region = self.builder.region([], fill(guard.then_block, A.ReturnExpr))
        else_region = self.builder.region([], fill(remainder, None))
        self.builder.emit(
            If,
            outputs=(),
            condition=condition,
            then_region=then_region,
            else_region=else_region,
            span=guard.span,
        )
        return None

    def _let(self, let: A.Let) -> None:
        assert let.value is not None
        value = self.expr(let.value)
        variables = self.body.lets[let]
        if isinstance(let.pattern, A.IdentPattern):
            self.values[variables[0].id] = value
            return
        value_type = self.body.expr_types.get(let.value)
        leaves = _leaves_for(let.pattern, value, value_type)
        for var, part in zip(variables, leaves, strict=True):
            self.values[var.id] = part

    # --- expressions

    def expr(self, expr: A.Expr) -> Lowered:
        if expr in self.body.consts:
            return self._constant_value(self.body.consts[expr], self.type_of(expr), expr.span)
        return _EXPR_LOWERINGS[type(expr)](self, expr)

    def _constant_value(self, value: object, ty: SemType, span: A.Span) -> Lowered:
        if isinstance(ty, ShapeTy):
            return tuple(ty.dims)
        if isinstance(ty, TupleTy) and not ty.elements:  # a unit struct
            return ()
        if isinstance(ty, ArrayTy):
            assert isinstance(value, tuple)
            return tuple(self.constant(v, ty.element, span) for v in value)
        assert isinstance(value, (int, float, bool))
        return self.constant(value, ty, span)

    def inline(self, call: A.Call | A.MethodCall) -> Lowered:
        inlined = self.body.inlined[call]
        args = [self.expr(a) for a in inlined.args]
        saved = self.body
        self.body = inlined.body
        try:
            for param, value in zip(inlined.params, args, strict=True):
                self.values[param.id] = value
            return self.block(inlined.function.body, trailing=A.ReturnExpr)
        finally:
            self.body = saved


def entry_hints(hints: tuple[ArchHints, ...]) -> tuple[EntryHints, ...]:
    """The entry option `optimization_hints`, one IR attribute entry per architecture."""
    return tuple(
        EntryHints(h.arch, h.num_cta_in_cga, h.occupancy, h.num_worker_warps_per_cta) for h in hints
    )


def _prints(body: TypedBody) -> bool:
    """Whether the body, or a device function it inlines, prints (`cuda_tile_print!`,
    `print_tko`)."""
    return (
        any(isinstance(e, A.MacroCall) and e.name == "cuda_tile_print" for e in body.expr_types)
        or _calls_any(body, frozenset({"print_tko"}))
        or any(_prints(call.body) for call in body.inlined.values())
    )


# the intrinsics on the raw-memory token chain (besides the accesses of pointer parameters)
RAW_CHAIN_INTRINSICS = frozenset(
    {
        "load_ptr_tko",
        "store_ptr_tko",
        "atomic_rmw_tko",
        "atomic_cas_tko",
        "global_load",
        "global_store",
        "global_atomic_add",
    }
)


_WRITE_VIEWS = frozenset({"partition_full_mut", "make_partition_view_mut"})


def _writes_inputs(body: TypedBody) -> bool:
    """Whether the body, or a device function it inlines, makes a mutable view of a
    tensor passed as `&Tensor` (unsafe: then every input gets a token chain)."""
    for resolved in body.calls.values():
        receiver = body.expr_types.get(resolved.args[0]) if resolved.args else None
        shared = isinstance(receiver, RefTy) and not receiver.mutable
        if resolved.intrinsic in _WRITE_VIEWS and shared:
            return True
    return any(_writes_inputs(call.body) for call in body.inlined.values())


def _calls_any(body: TypedBody, intrinsics: frozenset[str]) -> bool:
    """Whether the body, or a device function it inlines, calls one of `intrinsics`."""
    return any(c.intrinsic in intrinsics for c in body.calls.values()) or any(
        _calls_any(call.body, intrinsics) for call in body.inlined.values()
    )


def _leaves_for(pattern: A.Pattern, value: Lowered, ty: SemType | None) -> list[Lowered]:
    """The values a pattern binds, in the order `TypedBody.lets` lists them (`ty`, the
    value's type, places a struct pattern's fields)."""
    if isinstance(pattern, A.IdentPattern):
        return [value]
    if isinstance(pattern, (A.TuplePattern, A.ArrayPattern)):
        assert isinstance(value, tuple)
        parts = _parts_of(ty, len(value))
        return [
            leaf
            for sub, part, part_ty in zip(pattern.elements, value, parts, strict=True)
            for leaf in _leaves_for(sub, part, part_ty)
        ]
    if isinstance(pattern, A.StructPattern):
        assert isinstance(value, tuple) and isinstance(ty, StructTy)
        out: list[Lowered] = []
        for name, sub in pattern.fields:
            index = ty.field_index(name)
            assert index is not None
            out += _leaves_for(sub, value[index], ty.elements[index])
        return out
    return []


def _parts_of(ty: SemType | None, count: int) -> tuple[SemType | None, ...]:
    if isinstance(ty, TupleTy):
        return ty.elements
    if isinstance(ty, ArrayTy):
        return (ty.element,) * ty.length
    return (None,) * count


def _path(ctx: KernelLowering, path: A.PathExpr) -> Lowered:
    ty = ctx.type_of(path)
    if isinstance(ty, (MarkerTy, LatencyTy, GlobalTy)):
        return ty  # a compile-time attribute value (a global's lowering reads its type)
    if path not in ctx.body.names and isinstance(ty, OptionTy):
        return None  # `None`
    return ctx.values[ctx.body.names[path].id]


def _call(ctx: KernelLowering, call: A.Call | A.MethodCall) -> Lowered:
    if call in ctx.body.inlined:
        return ctx.inline(call)
    if isinstance(call, A.Call) and call not in ctx.body.calls:  # `Pair(a, b)`
        assert isinstance(ctx.type_of(call), StructTy)
        return tuple(ctx.expr(arg) for arg in call.args)
    resolved = ctx.body.calls[call]
    lowering = INTRINSIC_LOWERINGS[resolved.intrinsic]
    choice = choice_argument(ctx, resolved.args)
    if choice is not None:  # a partition chosen at run time: once per candidate
        var, chosen = choice
        return per_candidate(ctx, call, var, chosen, lambda: lowering(ctx, call, resolved.args))
    return lowering(ctx, call, resolved.args)


def _tuple(ctx: KernelLowering, tup: A.TupleExpr | A.ArrayExpr) -> Lowered:
    return tuple(ctx.expr(e) for e in tup.elements)


def _field(ctx: KernelLowering, access: A.FieldAccess) -> Lowered:
    base = ctx.expr(access.value)
    assert isinstance(base, tuple)
    ty = ctx.type_of(access.value)
    ty = ty.inner if isinstance(ty, RefTy) else ty
    if isinstance(ty, StructTy):
        index = ty.field_index(access.name)
        assert index is not None
        return base[index]
    return base[int(access.name)]


def _array_repeat(ctx: KernelLowering, array: A.ArrayRepeat) -> Lowered:
    count = ctx.body.consts[array.count]
    assert isinstance(count, int)
    return (ctx.expr(array.value),) * count


def _index(ctx: KernelLowering, index: A.Index) -> Lowered:
    base = ctx.expr(index.value)
    position = ctx.body.consts[index.index]
    assert isinstance(base, tuple) and isinstance(position, int)
    element = base[position]
    return ctx.scalar(element, index.span) if isinstance(element, int) else element


def _block_expr(ctx: KernelLowering, expr: A.BlockExpr) -> Lowered:
    return ctx.block(expr.block)


def _reference(ctx: KernelLowering, expr: A.Reference) -> Lowered:
    return ctx.expr(expr.value)  # views and arrays are passed as they are


_EXPR_LOWERINGS: dict[type, Callable[[KernelLowering, Any], Lowered]] = {
    A.PathExpr: _path,
    A.Call: _call,
    A.MethodCall: _call,
    A.TupleExpr: _tuple,
    A.ArrayExpr: _tuple,
    A.FieldAccess: _field,
    A.ArrayRepeat: _array_repeat,
    A.Closure: lambda ctx, closure: None,  # a closure argument has no value of its own
    A.Index: _index,
    A.BlockExpr: _block_expr,
    A.Reference: _reference,
    **lower_ops.LOWERINGS,
    **lower_debug_and_literals.LOWERINGS,
    **lower_control.LOWERINGS,
}
