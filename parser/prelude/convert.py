"""Element-type conversions: `convert_tile`/`convert_scalar` (value-preserving, target from
the annotation or a turbofish), `bitcast`, `exti`/`trunci`, `ftof`/`ftoi`/`itof` with
rounding markers.

fp8 and fp4 convert like other floats (`ftof`, `ftoi`, `itof`); a conversion to the scale type
`f8e8m0fnu` needs `ftof` with `rounding::Zero` or `rounding::PositiveInf` (Tile IR has no
nearest rounding to it). Packed `f4e2m1fnx2` bytes and `i4` have no value conversions: `pack`
and `unpack` move between them and numbers.

Deliberate extension: cuTile's `convert_tile` rejects int <-> int conversions; here they
lower to `exti` (widening, by the source's signedness), `trunci` (narrowing) or nothing
(same width, e.g. `u32` <-> `i32`). Converting to `bool` is rejected (compare instead).
"""

from __future__ import annotations

from collections.abc import Callable

from parser import messages
from parser.prelude.common import (
    marker_arg,
    scalar_arg,
    target_elem,
    tile_arg,
)
from parser.prelude.spec import CallTyper, Intrinsic
from parser.types import Elem, ScalarTy, SemType, TileTy

Value = ScalarTy | TileTy


def _with_elem(ty: Value, elem: Elem) -> Value:
    return TileTy(elem, ty.shape) if isinstance(ty, TileTy) else ScalarTy(elem)


def _report(call: CallTyper, fn: str, source: Value, target: Elem, why: str, help_: str) -> None:
    converted = _with_elem(source, target)
    call.report(
        messages.CANNOT_CONVERT.at(
            call.span,
            suggestions=(help_,) if help_ else (),
            fn=fn,
            elem=source.elem,
            target=target,
            why=why,
            source=source,
            converted=converted,
        )
    )


def _value_convert(fn: str, scalar: bool) -> Callable[[CallTyper], SemType | None]:
    def rule(call: CallTyper) -> SemType | None:
        source = (scalar_arg if scalar else tile_arg)(call, 0, fn)
        if source is None:
            return None
        target = target_elem(call, fn, 0, "the element type to convert to")
        if target is None:
            return None
        if target is Elem.BOOL and source.elem is not Elem.BOOL:
            _report(call, fn, source, target, "there is no conversion to `bool`", "compare instead")
            return None
        if source.elem is not target and not _storage_ok(call, fn, source, target):
            return None
        return _with_elem(source, target)

    return rule


def _storage_ok(call: CallTyper, fn: str, source: Value, target: Elem) -> bool:
    """Packed bytes and `i4` have no value conversion; a power-of-two scale needs an explicit
    rounding direction."""
    for elem in (source.elem, target):
        if _kind(elem) in ("packed", "storage"):
            why = f"`{elem}` values are {'packed bytes' if _kind(elem) == 'packed' else 'storage'}"
            _report(call, fn, source, target, why, _UNPACK_HELP)
            return False
    if target is E8M0:
        why = "a conversion to the power-of-two scale type needs a rounding direction"
        _report(call, fn, source, target, why, _E8M0_HELP)
        return False
    return True


E8M0 = Elem.F8E8M0FNU
E8M0_ROUNDINGS = ("Zero", "PositiveInf")
_E8M0_HELP = "use `ftof(t, rounding::Zero)` or `ftof(t, rounding::PositiveInf)`"
_UNPACK_HELP = "`unpack` bytes into `f4e2m1fn` or `i4` values (and `pack` them back)"


def _kind(elem: Elem) -> str:
    """The conversion kind: `float` (fp8 and fp4 too: `ftof` converts them), `integer`,
    `bool`, `packed` (bytes of fp4 pairs) or `storage` (`i4`: only `pack` / `unpack`)."""
    if elem.is_float:
        return "float"
    if elem.is_integer:
        return "integer" if elem.computes else "storage"
    return "bool" if elem is Elem.BOOL else "packed"


def _op_convert(
    fn: str,
    source_kind: str,
    target_kind: str,
    width: Callable[[Elem, Elem], bool] | None = None,
    width_rule: str = "",
    mode: str | None = None,
) -> Callable[[CallTyper], SemType | None]:
    """`fn(t[, mode marker])`: `source_kind` elements to `target_kind` elements (kinds are
    "float", "integer" or "any"), and when given, `width(src, dst)` must hold."""

    def rule(call: CallTyper) -> SemType | None:
        source = tile_arg(call, 0, fn)
        if source is None:
            return None
        target = target_elem(call, fn, 1, "the target element type")
        if target is None:
            return None
        storage = next((e for e in (source.elem, target) if _kind(e) == "storage"), None)
        if storage is not None:  # `i4`: no Tile IR op but pack / unpack takes it
            _report(call, fn, source, target, f"`{storage}` values are storage", _UNPACK_HELP)
            return None
        kinds_ok = source_kind in ("any", _kind(source.elem)) and target_kind in (
            "any",
            _kind(target),
        )
        if not kinds_ok:
            why = f"it converts {source_kind} to {target_kind} elements"
            _report(call, fn, source, target, why, _suggest(source.elem, target))
            return None
        if width is not None and not width(source.elem, target):
            _report(call, fn, source, target, width_rule, _suggest(source.elem, target))
            return None
        if mode is not None and not _mode_ok(call, fn, mode, target):
            return None
        return TileTy(target, source.shape)

    return rule


def _mode_ok(call: CallTyper, fn: str, mode: str, target: Elem) -> bool:
    if mode == "overflow":
        return marker_arg(call, 1, "overflow", fn) is not None
    if fn == "ftoi":
        why = " (Tile IR converts floats to integers rounding toward zero)"
        return marker_arg(call, 1, "rounding", fn, ("Zero",), why) is not None
    if target is E8M0:
        why = " (Tile IR converts to `f8e8m0fnu` rounding toward zero or up)"
        return marker_arg(call, 1, "rounding", fn, E8M0_ROUNDINGS, why) is not None
    why = " (Tile IR converts to floats with nearest-even rounding)"
    return marker_arg(call, 1, "rounding", fn, ("NearestEven",), why) is not None


def _suggest(source: Elem, target: Elem) -> str:
    if source.is_float and target.is_float:
        return "use `ftof` or `convert_tile`"
    if source.is_float:
        return "use `ftoi` or `convert_tile`"
    if target.is_float:
        return "use `itof` or `convert_tile`"
    if target.bits > source.bits:
        return "use `exti` or `convert_tile`"
    if target.bits < source.bits:
        return "use `trunci` or `convert_tile`"
    return "use `bitcast` or `convert_tile`"


def _same_bits(source: Elem, target: Elem) -> bool:
    return source.bits == target.bits and Elem.BOOL not in (source, target)


def _wider(source: Elem, target: Elem) -> bool:
    return target.bits > source.bits


def _narrower(source: Elem, target: Elem) -> bool:
    return target.bits < source.bits


def _sig(fn: str, extra_param: str = "", extra_generic: str = "") -> str:
    return (
        f"fn {fn}<EIn: ElementType, EOut: ElementType, const S: [i32; N]{extra_generic}>"
        f"(x: Tile<EIn, S>{extra_param}) -> Tile<EOut, S>"
    )


CONVERT_INTRINSICS: tuple[Intrinsic, ...] = (
    Intrinsic(
        "convert_tile",
        "fn convert_tile<TO: ElementType, FROM: ElementType, const S: [i32; N]>(x: "
        "Tile<FROM, S>) -> Tile<TO, S>",
        (1,),
        _value_convert("convert_tile", scalar=False),
        functions=("convert_tile",),
    ),
    Intrinsic(
        "convert_scalar",
        "fn convert_scalar<S: Scalar>(x: impl Scalar) -> S",
        (1,),
        _value_convert("convert_scalar", scalar=True),
        functions=("convert_scalar",),
    ),
    Intrinsic(
        "bitcast",
        _sig("bitcast"),
        (1,),
        _op_convert("bitcast", "any", "any", _same_bits, "their bit widths differ"),
        functions=("bitcast",),
    ),
    Intrinsic(
        "exti",
        _sig("exti"),
        (1,),
        _op_convert("exti", "integer", "integer", _wider, "`exti` widens"),
        functions=("exti",),
    ),
    Intrinsic(
        "trunci",
        _sig("trunci", ", overflow: O", ", O: overflow::Mode"),
        (2,),
        _op_convert("trunci", "integer", "integer", _narrower, "`trunci` narrows", "overflow"),
        functions=("trunci",),
    ),
    Intrinsic(
        "ftof",
        _sig("ftof", ", rounding: R", ", R: rounding::Mode"),
        (2,),
        _op_convert("ftof", "float", "float", mode="rounding"),
        functions=("ftof",),
    ),
    Intrinsic(
        "ftoi",
        _sig("ftoi", ", rounding: R", ", R: rounding::Mode"),
        (2,),
        _op_convert("ftoi", "float", "integer", mode="rounding"),
        functions=("ftoi",),
    ),
    Intrinsic(
        "itof",
        _sig("itof", ", rounding: R", ", R: rounding::Mode"),
        (2,),
        _op_convert("itof", "integer", "float", mode="rounding"),
        functions=("itof",),
    ),
)
