"""Lowering of `cuda_tile_print!` / `cuda_tile_assert!` and of struct literals: `Shape` /
`Array` (typed by `parser.typecheck_debug_and_literals`) and a module's own structs (the tuple of
their fields, in declaration order).

Prints are ordered by one kernel-wide token chain (`LoweringContext.print_chain`). A
`Shape` literal lowers like a tensor's extents (static entries as ints, runtime ones as
values), an `Array` literal like `const_array!` (a tuple of i32 values); fully static
literals never get here (the checker folded them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lowering.element_types import ir_tile_type
from lowering.intrinsics.common import value, value_type
from lowering.ir.attributes import Signedness
from lowering.ir.core import Value
from lowering.ir.ops_convert import ExtI
from lowering.ir.ops_debug import Assert, PrintTko
from lowering.ir.types import TOKEN
from lowering.lowered_expr import Lowered
from lowering.lowering_context import LoweringContext
from parser import ast_nodes as A
from parser.printf_format import format_pieces, printf_format, unescape, widened_for_print
from parser.types import DYNAMIC, ArrayTy, Elem, ScalarTy, ShapeTy, StructTy, TileTy

I32 = ScalarTy(Elem.I32)


def _macro(ctx: LoweringContext, macro: A.MacroCall) -> Lowered:
    if macro.name == "cuda_tile_print":
        return _print(ctx, macro)
    assert macro.name == "cuda_tile_assert", f"`{macro.name}!` is folded by the checker"
    message = unescape(_string(macro.args[1]))
    assert message is not None
    condition = value(ctx, macro.args[0])
    ctx.builder.emit(Assert, message=message, condition=condition, span=macro.span)
    return None


def _print(ctx: LoweringContext, macro: A.MacroCall) -> Lowered:
    pieces = format_pieces(_string(macro.args[0]))
    assert not isinstance(pieces, str)
    args = macro.args[1:]
    values = tuple(_printable(ctx, a) for a in args)
    elems = [value_type(ctx, a).elem for a in args]
    chain = ctx.print_chain
    assert chain is not None
    op = ctx.builder.emit(
        PrintTko,
        result_token=TOKEN,
        format=printf_format(pieces, elems),
        args=values,
        token=chain.token,
        span=macro.span,
    )
    chain.token = op.result_token
    return None


def _printable(ctx: LoweringContext, arg: A.Expr) -> Value:
    """A print argument; u8/u16 zero-extended to i32 (see `conversion`)."""
    lowered = value(ctx, arg)
    ty = value_type(ctx, arg)
    if not widened_for_print(ty.elem):
        return lowered
    wide = ir_tile_type(TileTy(Elem.I32, ty.shape) if isinstance(ty, TileTy) else I32)
    return ctx.builder.emit(
        ExtI, result=wide, signedness=Signedness.UNSIGNED, source=lowered, span=arg.span
    ).result


def _string(expr: A.Expr) -> str:
    assert isinstance(expr, A.StrLit)
    return expr.value


def _struct_literal(ctx: LoweringContext, lit: A.StructLit) -> Lowered:
    ty = ctx.type_of(lit)
    if isinstance(ty, StructTy):  # a module struct: its fields, in declaration order
        given = dict(lit.fields)
        return tuple(ctx.expr(given[name]) for name in ty.field_names)
    assert isinstance(ty, (ShapeTy, ArrayTy)) and ty.dims is not None
    pattern = ty.dims
    (dims,) = [v for name, v in lit.fields if name == "dims"]
    inner = dims.value if isinstance(dims, A.Reference) else dims
    given: list[A.Expr] | tuple[Lowered, ...]
    if isinstance(inner, A.ArrayExpr):
        given = list(inner.elements)
    else:
        lowered = ctx.expr(dims)
        assert isinstance(lowered, tuple)
        given = lowered
    if len(given) == pattern.count(DYNAMIC):  # `dims` lists only the `-1` entries
        runtime = iter(given)
        picked = [next(runtime) if entry == DYNAMIC else None for entry in pattern]
    else:  # every entry is listed; the static ones equal the pattern's
        picked = [given[axis] if entry == DYNAMIC else None for axis, entry in enumerate(pattern)]
    entries: list[Lowered] = []
    for entry, part in zip(pattern, picked, strict=True):
        if entry != DYNAMIC:
            entries.append(entry if isinstance(ty, ShapeTy) else ctx.constant(entry, I32, lit.span))
        else:
            lowered_part = ctx.expr(part) if isinstance(part, A.Node) else part
            entries.append(ctx.scalar(lowered_part, lit.span))
    return tuple(entries)


LOWERINGS: dict[type, Callable[[LoweringContext, Any], Lowered]] = {
    A.MacroCall: _macro,
    A.StructLit: _struct_literal,
    A.StrLit: lambda ctx, lit: None,  # a `&str` has no run-time value
}
