"""Comparisons and selection: `eq_tile`..`ge_tile` (`Tile<bool, S>` results), `cmpi`/`cmpf`
with predicate markers, `select(cond, a, b)`, and the bitwise tile ops `andi`/`ori`/`xori`
(also on `Tile<bool, S>` masks), `shli`/`shri`."""

from __future__ import annotations

from collections.abc import Callable

from parser import messages
from parser.prelude.common import (
    elem_kind_ok,
    marker_arg,
    same_type_arg,
    shape_text,
    tile_arg,
)
from parser.prelude.math import OVERFLOW, Mode, elementwise
from parser.prelude.spec import CallTyper, Intrinsic
from parser.types import Elem, SemType, TileTy

_TILE_COMPARES = ("eq_tile", "ne_tile", "lt_tile", "le_tile", "gt_tile", "ge_tile")


def _compare(fn: str, elems: str, modes: tuple[str, ...]) -> Callable[[CallTyper], SemType | None]:
    def rule(call: CallTyper) -> SemType | None:
        lhs = tile_arg(call, 0, fn)
        if lhs is None or not elem_kind_ok(call, 0, lhs, fn, elems):
            return None
        if same_type_arg(call, 1, lhs, fn) is None:
            return None
        for offset, kind in enumerate(modes):
            if marker_arg(call, 2 + offset, kind, fn) is None:
                return None
        return TileTy(Elem.BOOL, lhs.shape)

    return rule


def _select(call: CallTyper) -> SemType | None:
    cond = tile_arg(call, 0, "select")
    if cond is None:
        return None
    if cond.elem is not Elem.BOOL:
        call.report(messages.SELECT_CONDITION_NOT_BOOL.at(call.args[0].span, found=cond))
        return None
    if_true = tile_arg(call, 1, "select")
    if if_true is None or same_type_arg(call, 2, if_true, "select", 1) is None:
        return None
    if if_true.shape != cond.shape:
        call.report(
            messages.SELECT_SHAPES_DIFFER.at(
                call.args[1].span,
                ((call.args[0].span, f"this is `{cond}`"),),
                condition=shape_text(cond.shape),
                values=shape_text(if_true.shape),
            )
        )
        return None
    return if_true


def _tile_sig(fn: str, params: str, result: str = "Tile<bool, S>", extra: str = "") -> str:
    return f"fn {fn}<E: ElementType, const S: [i32; N]{extra}>({params}) -> {result}"


def _bitwise(
    fn: str, elems: str = "bits", modes: tuple[Mode, ...] = (), params: str = ""
) -> Intrinsic:
    extra = ", O: overflow::Mode" if modes else ""
    sig = _tile_sig(fn, "lhs: Tile<E, S>, rhs: Tile<E, S>" + params, "Tile<E, S>", extra)
    rule = elementwise(fn, 2, elems, modes)
    return Intrinsic(fn, sig, (2 + len(modes),), rule, functions=(fn,))


COMPARE_INTRINSICS: tuple[Intrinsic, ...] = (
    *(
        Intrinsic(
            fn,
            _tile_sig(fn, "lhs: Tile<E, S>, rhs: Tile<E, S>"),
            (2,),
            _compare(fn, "number", ()),
            functions=(fn,),
        )
        for fn in _TILE_COMPARES
    ),
    Intrinsic(
        "cmpi",
        _tile_sig(
            "cmpi", "lhs: Tile<E, S>, rhs: Tile<E, S>, predicate: P", extra=", P: predicate::Mode"
        ),
        (3,),
        _compare("cmpi", "integer", ("predicate",)),
        functions=("cmpi",),
    ),
    Intrinsic(
        "cmpf",
        _tile_sig(
            "cmpf",
            "lhs: Tile<E, S>, rhs: Tile<E, S>, predicate: P, ordering: O",
            extra=", P: predicate::Mode, O: cmp_ordering::Mode",
        ),
        (4,),
        _compare("cmpf", "float", ("predicate", "cmp_ordering")),
        functions=("cmpf",),
    ),
    Intrinsic(
        "select",
        "fn select<E: ElementType, const S: [i32; N]>(cond: Tile<bool, S>, val_if_true: "
        "Tile<E, S>, val_if_false: Tile<E, S>) -> Tile<E, S>",
        (3,),
        _select,
        functions=("select",),
    ),
    _bitwise("andi"),
    _bitwise("ori"),
    _bitwise("xori"),
    _bitwise("shli", "integer", (OVERFLOW,), ", overflow: O"),
    _bitwise("shri", "integer"),
)
