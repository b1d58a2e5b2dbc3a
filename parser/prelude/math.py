"""Element-wise arithmetic and math: `true_div`, `ceil_div`, `min`/`max` (scalars),
`min_tile`/`max_tile`, the explicit-mode ops (`addf(a, b, rounding::X, ftz::Y)`, `addi(a, b,
overflow::X)`, `fma`, `maxf`, ...) and the unary math functions (`exp`, `exp2(x, ftz::X)`,
`sqrt(x, rounding::X, ftz::Y)`, `rsqrt(x, ftz::X)`, `tanh`, `sin`, ...).

Operands must have one identical type: cuTile has no broadcasting and no scalar-tile
mixing. Math functions take tiles (`Tile<E, S>`), as in `cutile::core`; a scalar goes
through `scalar_to_tile` first. Mode markers become op attributes; the combinations Tile IR
rejects (flush-to-zero off f32, approximate rounding off f32, ...) are reported here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from parser import ast_nodes as A
from parser.prelude.common import (
    elem_kind_ok,
    ftz_arg,
    marker_arg,
    rounding_arg,
    same_type_arg,
    scalar_arg,
    tile_arg,
)
from parser.prelude.spec import CallTyper, Intrinsic
from parser.types import Elem, ScalarTy, SemType, TileTy


@dataclass(frozen=True)
class Mode:
    """One mode-marker parameter: its kind, and for rounding the f32-only extras."""

    kind: str  # "rounding", "ftz", "nan", "overflow"
    f32_extra: tuple[str, ...] = ()


ROUNDING = Mode("rounding")
FTZ = Mode("ftz")
NAN = Mode("nan")
OVERFLOW = Mode("overflow")


def _operand_order(args: Sequence[A.Expr], count: int) -> list[int]:
    """Type a non-literal operand first so that literals take its type (`max(x, 0)`)."""
    order = list(range(count))
    first = next((i for i in order if not _is_literal(args[i])), 0)
    return [first] + [i for i in order if i != first]


def _is_literal(expr: A.Expr) -> bool:
    if isinstance(expr, A.Unary):
        return _is_literal(expr.operand)
    return isinstance(expr, (A.IntLit, A.FloatLit))


def elementwise(
    fn: str,
    operands: int,
    elems: str,
    modes: tuple[Mode, ...] = (),
    scalar: bool = False,
    check: Callable[[CallTyper, SemType], bool] | None = None,
) -> Callable[[CallTyper], SemType | None]:
    """A rule for `fn(x0, .., x{operands-1}, mode markers..)`: all operands of one tile
    (or scalar) type with `elems` elements; the result has that type."""
    value = scalar_arg if scalar else tile_arg

    def rule(call: CallTyper) -> SemType | None:
        order = _operand_order(call.args, operands)
        first_index = order[0]
        first = value(call, first_index, fn)
        if first is None or not elem_kind_ok(call, first_index, first, fn, elems):
            return None
        for index in order[1:]:
            if same_type_arg(call, index, first, fn, first_index) is None:
                return None
        for offset, mode in enumerate(modes):
            if not _mode_ok(call, operands + offset, mode, first.elem, fn):
                return None
        if check is not None and not check(call, first):
            return None
        return first

    return rule


def _mode_ok(call: CallTyper, index: int, mode: Mode, elem: Elem, fn: str) -> bool:
    if mode.kind == "ftz":
        return ftz_arg(call, index, elem, fn) is not None
    if mode.kind == "rounding":
        return rounding_arg(call, index, elem, fn, mode.f32_extra) is not None
    return marker_arg(call, index, mode.kind, fn) is not None


def _divi_rounding(call: CallTyper, ty: SemType) -> bool:
    """`divi` rounds toward zero, +inf (ceiling) or -inf (floor; signed types only)."""
    assert isinstance(ty, (ScalarTy, TileTy))
    signed = ty.elem.is_signed
    allowed = ("Zero", "PositiveInf", "NegativeInf") if signed else ("Zero", "PositiveInf")
    why = "" if signed else f" on unsigned `{ty.elem}`"
    return marker_arg(call, 2, "rounding", "divi", allowed, why) is not None


_TILE_UNARY_FLOAT = (
    "exp",
    "log",
    "log2",
    "tanh",
    "sin",
    "cos",
    "tan",
    "sinh",
    "cosh",
    "negf",
    "absf",
    "ceil",
    "floor",
)
_TILE_BINARY_FLOAT = ("pow", "atan2", "remf")


def _tile_sig(fn: str, params: str, extra: str = "") -> str:
    return f"fn {fn}<E: ElementType, const S: [i32; N]{extra}>({params}) -> Tile<E, S>"


def _unary(fn: str) -> Intrinsic:
    return Intrinsic(
        fn, _tile_sig(fn, "x: Tile<E, S>"), (1,), elementwise(fn, 1, "float"), functions=(fn,)
    )


def _binary(fn: str, elems: str = "float", params: str = "lhs, rhs") -> Intrinsic:
    a, b = params.split(", ")
    sig = _tile_sig(fn, f"{a}: Tile<E, S>, {b}: Tile<E, S>")
    return Intrinsic(fn, sig, (2,), elementwise(fn, 2, elems), functions=(fn,))


def _float_mode_binary(fn: str, f32_extra: tuple[str, ...] = ()) -> Intrinsic:
    sig = _tile_sig(
        fn,
        "lhs: Tile<E, S>, rhs: Tile<E, S>, rounding: R, ftz: F",
        ", R: rounding::Mode, F: ftz::Mode",
    )
    rule = elementwise(fn, 2, "float", (Mode("rounding", f32_extra), FTZ))
    return Intrinsic(fn, sig, (4,), rule, functions=(fn,))


def _overflow_binary(fn: str) -> Intrinsic:
    sig = _tile_sig(fn, "lhs: Tile<E, S>, rhs: Tile<E, S>, overflow: O", ", O: overflow::Mode")
    return Intrinsic(fn, sig, (3,), elementwise(fn, 2, "integer", (OVERFLOW,)), functions=(fn,))


def _float_minmax(fn: str) -> Intrinsic:
    sig = _tile_sig(
        fn, "lhs: Tile<E, S>, rhs: Tile<E, S>, nan: P, ftz: F", ", P: nan::Mode, F: ftz::Mode"
    )
    return Intrinsic(fn, sig, (4,), elementwise(fn, 2, "float", (NAN, FTZ)), functions=(fn,))


def _scalar_helper(fn: str, elems: str) -> Intrinsic:
    sig = f"fn {fn}<E: ElementType>(a: E, b: E) -> E"
    return Intrinsic(fn, sig, (2,), elementwise(fn, 2, elems, scalar=True), functions=(fn,))


def _ceil_div() -> Intrinsic:
    sig = "fn ceil_div<E: ElementType>(a: E, b: E) -> E"
    rule = elementwise("ceil_div", 2, "integer", scalar=True)
    return Intrinsic("ceil_div", sig, (2,), rule, functions=("ceil_div",))


MATH_INTRINSICS: tuple[Intrinsic, ...] = (
    # helpers (compiler ops in cutile::core)
    Intrinsic(
        "true_div",
        _tile_sig("true_div", "a: Tile<E, S>, b: Tile<E, S>"),
        (2,),
        elementwise("true_div", 2, "float"),
        functions=("true_div",),
    ),
    _ceil_div(),
    _scalar_helper("min", "number"),
    _scalar_helper("max", "number"),
    Intrinsic(
        "min_tile",
        _tile_sig("min_tile", "a: Tile<E, S>, b: Tile<E, S>"),
        (2,),
        elementwise("min_tile", 2, "number"),
        functions=("min_tile",),
    ),
    Intrinsic(
        "max_tile",
        _tile_sig("max_tile", "a: Tile<E, S>, b: Tile<E, S>"),
        (2,),
        elementwise("max_tile", 2, "number"),
        functions=("max_tile",),
    ),
    # float arithmetic with explicit modes
    _float_mode_binary("addf"),
    _float_mode_binary("subf"),
    _float_mode_binary("mulf"),
    _float_mode_binary("divf", ("Approx", "Full")),
    Intrinsic(
        "fma",
        _tile_sig(
            "fma",
            "lhs: Tile<E, S>, rhs: Tile<E, S>, acc: Tile<E, S>, rounding: R, ftz: F",
            ", R: rounding::Mode, F: ftz::Mode",
        ),
        (5,),
        elementwise("fma", 3, "float", (ROUNDING, FTZ)),
        functions=("fma",),
    ),
    _float_minmax("maxf"),
    _float_minmax("minf"),
    # integer arithmetic with explicit modes
    _overflow_binary("addi"),
    _overflow_binary("subi"),
    _overflow_binary("muli"),
    Intrinsic(
        "divi",
        _tile_sig("divi", "lhs: Tile<E, S>, rhs: Tile<E, S>, rounding: R", ", R: rounding::Mode"),
        (3,),
        elementwise("divi", 2, "integer", check=_divi_rounding),
        functions=("divi",),
    ),
    _binary("remi", "integer"),
    _binary("maxi", "integer"),
    _binary("mini", "integer"),
    _binary("mulhii", "integer", "x, y"),
    Intrinsic(
        "negi",
        _tile_sig("negi", "x: Tile<E, S>, overflow: O", ", O: overflow::Mode"),
        (2,),
        elementwise("negi", 1, "integer", (OVERFLOW,)),
        functions=("negi",),
    ),
    Intrinsic(
        "absi",
        _tile_sig("absi", "x: Tile<E, S>"),
        (1,),
        elementwise("absi", 1, "integer"),
        functions=("absi",),
    ),
    # math functions
    *(_unary(fn) for fn in _TILE_UNARY_FLOAT),
    *(_binary(fn) for fn in _TILE_BINARY_FLOAT),
    Intrinsic(
        "exp2",
        _tile_sig("exp2", "x: Tile<E, S>, ftz: F", ", F: ftz::Mode"),
        (2,),
        elementwise("exp2", 1, "float", (FTZ,)),
        functions=("exp2",),
    ),
    Intrinsic(
        "rsqrt",
        _tile_sig("rsqrt", "x: Tile<E, S>, ftz: F", ", F: ftz::Mode"),
        (2,),
        elementwise("rsqrt", 1, "float", (FTZ,)),
        functions=("rsqrt",),
    ),
    Intrinsic(
        "sqrt",
        _tile_sig(
            "sqrt", "x: Tile<E, S>, rounding: R, ftz: F", ", R: rounding::Mode, F: ftz::Mode"
        ),
        (3,),
        elementwise("sqrt", 1, "float", (Mode("rounding", ("Approx",)), FTZ)),
        functions=("sqrt",),
    ),
)
