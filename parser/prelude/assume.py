"""Optimization assumptions: `assume_div_by::<_, D>(x)`, `assume_bounds_lower::<_, L>(x)`,
`assume_bounds_upper::<_, U>(x)`, `assume_bounds::<_, L, U>(x)` and
`assume_same_elements_{1..4}d::<_, G0, ..>(t)` (cuTile Rust's names). Each returns `x`
unchanged and tells the assembler a fact about it (Tile IR `assume` with a `div_by`,
`bounded` or `same_elements` predicate: every element of each G0 x G1 x .. block of a
tile is equal). Nothing checks the fact: if it is false the kernel's behaviour is
undefined, so all are `unsafe fn`s (E0133 outside `unsafe`).

`x` may be an integer scalar or tile, a raw pointer or a pointer tile (`div_by` only: the
address in bytes is a multiple of D); `same_elements` takes a tile of any element type
whose rank is its N, each group size dividing its dimension. The bounds are compile-time
integers; the checker records them (and D) in the facts, keyed by the generic argument,
for lowering.
"""

from __future__ import annotations

from parser import ast_nodes as A
from parser import messages
from parser.prelude.common import generic_args
from parser.prelude.spec import CallTyper, Intrinsic, TypingRule
from parser.types import PointerTileTy, PointerTy, ScalarTy, SemType, TileTy

# id -> the names of its const generic arguments after the value's type `_`
ASSUME_GENERICS: dict[str, tuple[str, ...]] = {
    "assume_div_by": ("D",),
    "assume_bounds_lower": ("L",),
    "assume_bounds_upper": ("U",),
    "assume_bounds": ("L", "U"),
    **{
        f"assume_same_elements_{rank}d": tuple(f"GROUP{axis}" for axis in range(rank))
        for rank in range(1, 5)
    },
}


def _generic_value(call: CallTyper, arg: A.GenericArg, fn: str) -> int | None:
    checker = getattr(call, "checker", None)
    assert checker is not None
    expr = (
        arg.value
        if isinstance(arg, A.ConstArg)
        else A.PathExpr(arg.span, getattr(arg.type, "segments", ("_",)))
    )
    value = checker.fold(expr)
    if isinstance(value, int) and not isinstance(value, bool):
        checker.facts.consts[arg] = value  # keyed by the generic argument
        return value
    call.report(messages.ASSUMED_VALUE_NOT_CONSTANT.at(arg.span, fn=fn))
    return None


def _assume_rule(fn: str) -> TypingRule:
    names = ASSUME_GENERICS[fn]
    spelled = ", ".join(("_", *names))

    def rule(call: CallTyper) -> SemType | None:
        written = generic_args(call)
        if len(written) != len(names) + 1:
            call.report(
                messages.ASSUME_GENERIC_COUNT.at(
                    call.span,
                    fn=fn,
                    count=len(names) + 1,
                    spelled=spelled,
                    found=len(written),
                )
            )
            return None
        values = [_generic_value(call, arg, fn) for arg in written[1:]]
        ty = call.arg(0)
        if ty is None or None in values:
            return None
        if fn.startswith("assume_same_elements_"):
            return _same_elements(call, fn, ty, values)  # type: ignore[arg-type]
        pointer = isinstance(ty, (PointerTy, PointerTileTy))
        integer = isinstance(ty, (ScalarTy, TileTy)) and ty.elem.is_integer
        if not (integer or (pointer and fn == "assume_div_by")):
            what = "an integer or a pointer" if fn == "assume_div_by" else "an integer"
            call.report(
                messages.ASSUMED_ON_WRONG_TYPE.at(call.args[0].span, fn=fn, what=what, found=ty)
            )
            return None
        if fn == "assume_div_by" and values[0] is not None and values[0] <= 0:
            call.report(messages.DIVISOR_NOT_POSITIVE.at(written[1].span, fn=fn, found=values[0]))
            return None
        if fn == "assume_bounds" and values[0] > values[1]:  # type: ignore[operator]
            call.report(
                messages.EMPTY_ASSUMED_RANGE.at(call.span, fn=fn, lower=values[0], upper=values[1])
            )
            return None
        return ty

    return rule


def _same_elements(call: CallTyper, fn: str, ty: SemType, groups: list[int]) -> SemType | None:
    """`assume_same_elements_Nd::<_, G0, ..>(t)`: `t` is a rank-N tile and each group
    size is positive and divides its dimension (Tile IR's `same_elements` predicate)."""
    shape = ty.shape if isinstance(ty, (TileTy, PointerTileTy)) else None
    if shape is None or len(shape) != len(groups):
        call.report(
            messages.SAME_ELEMENTS_RANK_MISMATCH.at(
                call.args[0].span, fn=fn, rank=len(groups), found=ty
            )
        )
        return None
    for axis, (group, extent) in enumerate(zip(groups, shape, strict=True)):
        if group <= 0 or extent % group:
            call.report(
                messages.GROUP_NOT_DIVISOR.at(
                    generic_args(call)[axis + 1].span,
                    fn=fn,
                    group=group,
                    axis=axis,
                    extent=extent,
                )
            )
            return None
    return ty


ASSUME_INTRINSICS: tuple[Intrinsic, ...] = tuple(
    Intrinsic(
        fn,
        f"unsafe fn {fn}<T, {', '.join(f'const {n}: i32' for n in names)}>(x: T) -> T",
        (1,),
        _assume_rule(fn),
        functions=(fn,),
        unsafe=True,
    )
    for fn, names in ASSUME_GENERICS.items()
)
