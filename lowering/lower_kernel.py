"""Typed kernel → tile IR: one entry function, straight from the typed AST.

The prologue turns ABI parameters into tensor views (with the assumptions the contract
records); each statement then lowers in program order. Every write through a `&mut`
output is ordered by that output's token chain; shared reads carry no token.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Union

from lowering.abi import SlotLayout
from lowering.contract import Assumption, AssumptionKind, SlotRole
from lowering.element_types import ir_element, ir_tile_type
from lowering.ir import ops_arith as arith
from lowering.ir.attributes import Bounded, DivBy, RoundingMode, Signedness
from lowering.ir.core import Builder, Function, Module, Value
from lowering.ir.ops_core import Assume, Constant, GetTileBlockId, MakeToken, Return
from lowering.ir.ops_math import NegF, NegI
from lowering.ir.ops_memory import MakePartitionView, MakeTensorView
from lowering.ir.types import I32, TOKEN, PaddingValue, PartitionViewType, TensorViewType
from parser import ast_nodes as A
from parser.entry_signature import EntryParam, ParamRole
from parser.typed_kernel import TypedKernel
from parser.types import DYNAMIC, ScalarTy, SemType, TileTy

BASE_ALIGN_BYTES = 16


@dataclass
class TensorHandle:
    """A tensor parameter inside the kernel: its view, and for outputs its token chain."""

    param: EntryParam
    view: Value
    token: Value | None  # outputs only: the last memory effect through this tensor
    partitions: dict[tuple[tuple[int, ...], PaddingValue | None], Value] = field(
        default_factory=dict
    )


Lowered = Union[Value, TensorHandle, tuple["Lowered", ...], None]


@dataclass(frozen=True)
class LoweredKernel:
    module: Module
    assumptions: tuple[Assumption, ...]


class KernelLowering:
    def __init__(self, kernel: TypedKernel, abi: tuple[SlotLayout, ...]) -> None:
        self.kernel = kernel
        self.abi = abi
        self.builder = Builder()
        self.values: dict[int, Lowered] = {}  # LocalVar.id -> lowered value
        self.assumptions: list[Assumption] = []
        self._block_ids: tuple[Value, Value, Value] | None = None

    # --- entry

    def lower(self, symbol: str) -> LoweredKernel:
        params = tuple(self.builder.value(layout.ir_type) for layout in self.abi)
        self._prologue(params)
        self.block(self.kernel.function.body)
        self.builder.emit(Return, span=self.kernel.function.body.span)
        function = Function(
            symbol, params, self.builder.finish(params), span=self.kernel.function.span
        )
        return LoweredKernel(Module((function,)), tuple(self.assumptions))

    def _prologue(self, params: tuple[Value, ...]) -> None:
        slots: dict[int, list[tuple[SlotLayout, Value]]] = {}
        for layout, value in zip(self.abi, params, strict=False):
            slots.setdefault(layout.slot.param, []).append((layout, value))
        for var in self.kernel.params:
            assert var.param_index is not None
            entry_param = self.kernel.signature.params[var.param_index]
            param_slots = slots[var.param_index]
            if entry_param.role is ParamRole.SCALAR:
                self.values[var.id] = param_slots[0][1]
            else:
                self.values[var.id] = self._tensor_view(entry_param, param_slots)

    def _tensor_view(
        self, param: EntryParam, slots: list[tuple[SlotLayout, Value]]
    ) -> TensorHandle:
        span = param.span
        by_role = {(layout.slot.role, layout.slot.axis): value for layout, value in slots}
        tensor = param.tensor
        rank = tensor.rank
        ptr = by_role[(SlotRole.PTR, 0)]
        aligned = self._assume(ptr, DivBy(BASE_ALIGN_BYTES), span)
        self._record(param, AssumptionKind.BASE_ALIGN, 0, BASE_ALIGN_BYTES)
        self._record(param, AssumptionKind.NONNEG, 0, 0)
        self._record(param, AssumptionKind.FITS_I32, 0, 0)
        is_output = param.role is ParamRole.OUTPUT
        shape = tuple(
            None if is_output or tensor.shape[a] == DYNAMIC else tensor.shape[a]
            for a in range(rank)
        )
        for axis, extent in enumerate(shape):
            if extent is not None:
                self._record(param, AssumptionKind.STATIC_DIM, axis, extent)
        strides = (*([None] * (rank - 1)), 1)
        self._record(param, AssumptionKind.STRIDE_ONE, rank - 1, 1)
        dyn_dims = tuple(
            self._assume(by_role[(SlotRole.DIM, a)], Bounded(0, None), span)
            for a in range(rank)
            if shape[a] is None
        )
        dyn_strides = tuple(
            self._assume(by_role[(SlotRole.STRIDE, a)], Bounded(0, None), span)
            for a in range(rank)
            if strides[a] is None
        )
        view_type = TensorViewType(ir_element(tensor.elem), shape, strides)
        view = self.builder.emit(
            MakeTensorView,
            result=view_type,
            base=aligned,
            dynamic_shape=dyn_dims,
            dynamic_strides=dyn_strides,
            span=span,
        ).result
        token = self.builder.emit(MakeToken, result=TOKEN, span=span).result if is_output else None
        return TensorHandle(param, view, token)

    def _assume(self, value: Value, predicate: DivBy | Bounded, span: A.Span) -> Value:
        return self.builder.emit(
            Assume, result=value.type, predicate=predicate, value=value, span=span
        ).result

    def _record(self, param: EntryParam, kind: AssumptionKind, axis: int, value: int) -> None:
        self.assumptions.append(Assumption(param.index, kind, axis, value))

    # --- helpers used by intrinsic lowerings

    def block_ids(self, span: A.Span) -> tuple[Value, Value, Value]:
        if self._block_ids is None:
            op = self.builder.emit(GetTileBlockId, x=I32, y=I32, z=I32, span=span)
            self._block_ids = (op.x, op.y, op.z)
        return self._block_ids

    def partition(
        self,
        handle: TensorHandle,
        tile: tuple[int, ...],
        padding: PaddingValue | None,
        span: A.Span,
    ) -> Value:
        key = (tile, padding)
        if key not in handle.partitions:
            view_type = handle.view.type
            assert isinstance(view_type, TensorViewType)
            part_type = PartitionViewType(tile, view_type, tuple(range(len(tile))), padding)
            handle.partitions[key] = self.builder.emit(
                MakePartitionView, result=part_type, tensor_view=handle.view, span=span
            ).result
        return handle.partitions[key]

    def type_of(self, expr: A.Expr) -> SemType:
        return self.kernel.expr_types[expr]

    # --- statements

    def block(self, block: A.Block) -> Lowered:
        for statement in block.statements:
            if isinstance(statement, A.Let):
                self._let(statement)
            elif isinstance(statement, A.ExprStmt):
                self.expr(statement.expr)
        return self.expr(block.tail) if block.tail is not None else None

    def _let(self, let: A.Let) -> None:
        assert let.value is not None
        value = self.expr(let.value)
        variables = self.kernel.lets[let]
        if len(variables) == 1 and isinstance(let.pattern, A.IdentPattern):
            self.values[variables[0].id] = value
            return
        flat = _flatten(value)
        for var, part in zip(variables, flat, strict=False):
            self.values[var.id] = part

    # --- expressions

    def expr(self, expr: A.Expr) -> Lowered:
        handler = _EXPR_LOWERINGS[type(expr)]
        return handler(self, expr)

    def constant(self, value: int | float | bool, ty: SemType, span: A.Span) -> Value:
        return self.builder.emit(
            Constant, result=ir_tile_type(ty), values=(value,), span=span
        ).result


def _flatten(value: Lowered) -> list[Lowered]:
    if isinstance(value, tuple):
        return [leaf for part in value for leaf in _flatten(part)]
    return [value]


# ----------------------------------------------------------------------------- expressions


def _literal(ctx: KernelLowering, lit: A.IntLit | A.FloatLit | A.BoolLit) -> Lowered:
    return ctx.constant(lit.value, ctx.type_of(lit), lit.span)


def _path(ctx: KernelLowering, path: A.PathExpr) -> Lowered:
    var = ctx.kernel.names.get(path)
    if var is not None:
        return ctx.values[var.id]
    value = ctx.kernel.generics.get(path.name, ctx.kernel.consts.get(path.name))
    assert isinstance(value, (int, bool)), f"unresolved name {path.name}"
    return ctx.constant(value, ctx.type_of(path), path.span)


def _call(ctx: KernelLowering, call: A.Call | A.MethodCall) -> Lowered:
    from lowering.intrinsics import INTRINSIC_LOWERINGS

    resolved = ctx.kernel.calls[call]
    return INTRINSIC_LOWERINGS[resolved.intrinsic](ctx, call, resolved.args)


def _tuple(ctx: KernelLowering, tup: A.TupleExpr) -> Lowered:
    return tuple(ctx.expr(e) for e in tup.elements)


def _field(ctx: KernelLowering, access: A.FieldAccess) -> Lowered:
    base = ctx.expr(access.value)
    assert isinstance(base, tuple)
    return base[int(access.name)]


def _block_expr(ctx: KernelLowering, expr: A.BlockExpr) -> Lowered:
    return ctx.block(expr.block)


def _compile_time_only(ctx: KernelLowering, macro: A.MacroCall) -> Lowered:
    return None  # `const_shape!`: the shape lives in the expression's type


_FLOAT_BINARY: dict[str, type[Any]] = {
    "+": arith.AddF,
    "-": arith.SubF,
    "*": arith.MulF,
    "/": arith.DivF,
}
_INT_BINARY: dict[str, type[Any]] = {"+": arith.AddI, "-": arith.SubI, "*": arith.MulI}


def _binary(ctx: KernelLowering, binary: A.Binary) -> Lowered:
    ty = ctx.type_of(binary.lhs)
    assert isinstance(ty, (ScalarTy, TileTy))
    lhs = ctx.expr(binary.lhs)
    rhs = ctx.expr(binary.rhs)
    result_type = ir_tile_type(ty)
    elem = ty.elem
    if elem.is_float and binary.op in _FLOAT_BINARY:
        return ctx.builder.emit(
            _FLOAT_BINARY[binary.op], result=result_type, lhs=lhs, rhs=rhs, span=binary.span
        ).result
    if binary.op in _INT_BINARY:
        return ctx.builder.emit(
            _INT_BINARY[binary.op], result=result_type, lhs=lhs, rhs=rhs, span=binary.span
        ).result
    signedness = Signedness.SIGNED if elem.is_signed else Signedness.UNSIGNED
    if binary.op == "/":
        rounding = RoundingMode.NEGATIVE_INF if elem.is_signed else RoundingMode.ZERO
        return ctx.builder.emit(
            arith.DivI,
            result=result_type,
            signedness=signedness,
            rounding=rounding,
            lhs=lhs,
            rhs=rhs,
            span=binary.span,
        ).result
    if binary.op == "%" and not elem.is_float:
        return ctx.builder.emit(
            arith.RemI,
            result=result_type,
            signedness=signedness,
            lhs=lhs,
            rhs=rhs,
            span=binary.span,
        ).result
    raise NotImplementedError(f"lowering of `{binary.op}` on {ty}")


def _unary(ctx: KernelLowering, unary: A.Unary) -> Lowered:
    ty = ctx.type_of(unary)
    if isinstance(unary.operand, (A.IntLit, A.FloatLit)):
        return ctx.constant(-unary.operand.value, ty, unary.span)
    assert isinstance(ty, (ScalarTy, TileTy))
    op = NegF if ty.elem.is_float else NegI
    source = ctx.expr(unary.operand)
    return ctx.builder.emit(op, result=ir_tile_type(ty), source=source, span=unary.span).result


_EXPR_LOWERINGS: dict[type, Callable[[KernelLowering, Any], Lowered]] = {
    A.IntLit: _literal,
    A.FloatLit: _literal,
    A.BoolLit: _literal,
    A.PathExpr: _path,
    A.Call: _call,
    A.MethodCall: _call,
    A.Binary: _binary,
    A.Unary: _unary,
    A.TupleExpr: _tuple,
    A.FieldAccess: _field,
    A.BlockExpr: _block_expr,
    A.MacroCall: _compile_time_only,
}
