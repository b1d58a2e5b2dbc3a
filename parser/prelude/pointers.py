"""Raw pointers: `pointer_to_tile(p)`, pointer-tile arithmetic (`pt.offset_tile(idx)`,
`pt.offset(n)`, `pt.broadcast(shape)`) and the raw loads and stores `load_ptr_tko` /
`store_ptr_tko` (cuTile Rust's names and argument order, without the user-visible tokens:
the compiler orders every raw access after the previous one in program order).

Safety rule of this dialect: a pointer value only exists inside an `unsafe fn` entry (its
parameters are the only source), and the two functions that touch memory through one,
`load_ptr_tko` and `store_ptr_tko`, are `unsafe fn`s (E0133 outside `unsafe {}` / an `unsafe
fn`). cuTile Rust declares them safe, relying on the pointer being unsafe to obtain; here
every raw memory access is also marked at the call, so safe code never reads or writes
memory that no bounds check covers. Pointer arithmetic itself is safe (it touches nothing).
"""

from __future__ import annotations

from parser import ast_nodes as A
from parser import codes
from parser.diagnostics import error
from parser.prelude.common import I32, marker_arg, shape_arg, shape_text
from parser.prelude.spec import CallTyper, Intrinsic, Receiver
from parser.types import (
    UNIT,
    Elem,
    PointerTileTy,
    PointerTy,
    ScalarTy,
    SemType,
    TileTy,
)

RAW_ORDERINGS = ("Weak",)
_ORDERING_WHY = " (raw-pointer accesses are `ordering::Weak`: ordered within this tile block)"


def _pointer_tile_arg(call: CallTyper, index: int, fn: str) -> PointerTileTy | None:
    ty = call.arg(index)
    if ty is None or isinstance(ty, PointerTileTy):
        return ty
    help_ = ("make one with `pointer_to_tile(p)`",) if isinstance(ty, PointerTy) else ()
    call.report(
        error(
            codes.MISMATCHED_TYPES,
            f"mismatched types: `{fn}` expects a `PointerTile<*mut E, S>`, found `{ty}`",
            call.args[index].span,
            "expected a pointer tile",
            help=help_,
        )
    )
    return None


def _pointer_to_tile(call: CallTyper) -> SemType | None:
    ty = call.arg(0)
    if ty is None:
        return None
    if not isinstance(ty, PointerTy):
        call.report(
            error(
                codes.MISMATCHED_TYPES,
                f"mismatched types: `pointer_to_tile` expects a raw pointer, found `{ty}`",
                call.args[0].span,
                "expected `*mut E`",
            )
        )
        return None
    return PointerTileTy(ty.elem, (), ty.mutable)


def _tile_to_pointer(call: CallTyper) -> SemType | None:
    tile = _pointer_tile_arg(call, 0, "tile_to_pointer")
    if tile is None:
        return None
    if tile.shape:
        call.report(
            error(
                codes.MISMATCHED_TYPES,
                f"`tile_to_pointer` needs a rank-0 pointer tile, found `{tile}`",
                call.args[0].span,
                "not rank 0",
            )
        )
        return None
    return PointerTy(tile.elem, tile.mutable)


def _shape_fits(call: CallTyper, ptrs: PointerTileTy, shape: tuple[int, ...], fn: str) -> bool:
    """A pointer tile of rank 0 broadcasts to any shape; otherwise shapes must agree."""
    if not ptrs.shape or ptrs.shape == shape:
        return True
    call.report(
        error(
            codes.MISMATCHED_TYPES,
            f"`{fn}`: the pointer tile has shape {shape_text(ptrs.shape)}, "
            f"the offsets {shape_text(shape)}",
            call.span,
            "shapes differ",
            notes=("a rank-0 pointer tile is broadcast to the offsets' shape",),
        )
    )
    return False


def _offset_tile(call: CallTyper) -> SemType | None:
    ptrs = _pointer_tile_arg(call, 0, "offset_tile")
    offsets = call.arg(1)
    if ptrs is None or offsets is None:
        return None
    if not (isinstance(offsets, TileTy) and offsets.elem is Elem.I32):
        call.report(
            error(
                codes.MISMATCHED_TYPES,
                f"mismatched types: `offset_tile` expects a `Tile<i32, S>`, found `{offsets}`",
                call.args[1].span,
                "expected i32 element offsets",
            )
        )
        return None
    if not _shape_fits(call, ptrs, offsets.shape, "offset_tile"):
        return None
    return PointerTileTy(ptrs.elem, offsets.shape, ptrs.mutable)


def _offset(call: CallTyper) -> SemType | None:
    ptrs = _pointer_tile_arg(call, 0, "offset")
    offset = call.arg(1, I32)
    if ptrs is None or offset is None:
        return None
    if offset != I32:
        call.report(
            error(
                codes.MISMATCHED_TYPES,
                f"mismatched types: `offset` expects an `i32` element offset, found `{offset}`",
                call.args[1].span,
                "expected `i32`",
                help=("offset by a tile with `offset_tile`",),
            )
        )
        return None
    return ptrs


def _broadcast(call: CallTyper) -> SemType | None:
    ptrs = _pointer_tile_arg(call, 0, "broadcast")
    shape = shape_arg(call, 1, "broadcast")
    if ptrs is None or shape is None or not _shape_fits(call, ptrs, shape, "broadcast"):
        return None
    return PointerTileTy(ptrs.elem, shape, ptrs.mutable)


def option_inner(expr: A.Expr) -> A.Expr | None:
    """`Some(x)` -> `x`; anything else -> None."""
    if (
        isinstance(expr, A.Call)
        and isinstance(expr.function, A.PathExpr)
        and expr.function.segments == ("Some",)
        and len(expr.args) == 1
    ):
        return expr.args[0]
    return None


def _is_none(expr: A.Expr) -> bool:
    return isinstance(expr, A.PathExpr) and expr.segments == ("None",)


def _option_arg(call: CallTyper, index: int, expected: SemType, what: str, fn: str) -> bool:
    """`None` or `Some(value)` where value has type `expected`."""
    expr = call.args[index]
    if _is_none(expr):
        return True
    inner = option_inner(expr)
    if inner is None:
        call.report(
            error(
                codes.MISMATCHED_TYPES,
                f"mismatched types: the {what} of `{fn}` is an `Option<{expected}>`",
                expr.span,
                f"expected `None` or `Some({what})`",
            )
        )
        return False
    checker = getattr(call, "checker", None)
    assert checker is not None
    ty = checker.expr(inner, expected)
    if ty is None:
        return False
    if ty != expected:
        call.report(
            error(
                codes.MISMATCHED_TYPES,
                f"mismatched types: the {what} of `{fn}` must be `{expected}`, found `{ty}`",
                inner.span,
                f"expected `{expected}`",
            )
        )
        return False
    return True


def _load_ptr_tko(call: CallTyper) -> SemType | None:
    fn = "load_ptr_tko"
    ptrs = _pointer_tile_arg(call, 0, fn)
    ordering = marker_arg(call, 1, "ordering", fn, RAW_ORDERINGS, _ORDERING_WHY)
    if ptrs is None or ordering is None:
        return None
    mask_ok = _option_arg(call, 2, TileTy(Elem.BOOL, ptrs.shape), "mask", fn)
    padding_ok = _option_arg(call, 3, ScalarTy(ptrs.elem), "padding", fn)
    if not (mask_ok and padding_ok):
        return None
    if _is_none(call.args[2]) and not _is_none(call.args[3]):
        call.report(
            error(
                codes.MISMATCHED_TYPES,
                f"`{fn}`: a padding value needs a mask",
                call.args[3].span,
                "padding without a mask",
                notes=("the padding is what masked-off lanes read",),
                help=("pass `None` as the padding, or a mask with `Some(mask)`",),
            )
        )
        return None
    return TileTy(ptrs.elem, ptrs.shape)


def _store_ptr_tko(call: CallTyper) -> SemType | None:
    fn = "store_ptr_tko"
    ptrs = _pointer_tile_arg(call, 0, fn)
    if ptrs is None:
        return None
    values = call.arg(1, TileTy(ptrs.elem, ptrs.shape))
    ordering = marker_arg(call, 2, "ordering", fn, RAW_ORDERINGS, _ORDERING_WHY)
    if values is None or ordering is None:
        return None
    if not ptrs.mutable:
        call.report(
            error(
                codes.MUTATE_SHARED,
                f"cannot store through `{ptrs}`: it points to `const` data",
                call.args[0].span,
                "pointers to `const` data are read-only",
                help=("declare the entry parameter `*mut`",),
            )
        )
        return None
    expected = TileTy(ptrs.elem, ptrs.shape)
    if values != expected:
        call.report(
            error(
                codes.MISMATCHED_TYPES,
                f"mismatched types: `{fn}` stores a `{expected}` through `{ptrs}`, "
                f"found `{values}`",
                call.args[1].span,
                f"expected `{expected}`",
            )
        )
        return None
    if not _option_arg(call, 3, TileTy(Elem.BOOL, ptrs.shape), "mask", fn):
        return None
    return UNIT


POINTER_INTRINSICS: tuple[Intrinsic, ...] = (
    Intrinsic(
        "pointer_to_tile",
        "fn pointer_to_tile<E>(p: *mut E) -> PointerTile<*mut E, {[]}>",
        (1,),
        _pointer_to_tile,
        functions=("pointer_to_tile",),
    ),
    Intrinsic(
        "tile_to_pointer",
        "fn tile_to_pointer<E>(t: PointerTile<*mut E, {[]}>) -> *mut E",
        (1,),
        _tile_to_pointer,
        functions=("tile_to_pointer",),
    ),
    Intrinsic(
        "pointer_offset_tile",
        "fn offset_tile<E, S>(self: PointerTile<*mut E, S>, offsets: Tile<i32, S>) "
        "-> PointerTile<*mut E, S>",
        (2,),
        _offset_tile,
        methods=("offset_tile",),
        receiver=Receiver.POINTER_TILE,
    ),
    Intrinsic(
        "pointer_offset",
        "fn offset<E, S>(self: PointerTile<*mut E, S>, offset: i32) -> PointerTile<*mut E, S>",
        (2,),
        _offset,
        methods=("offset",),
        receiver=Receiver.POINTER_TILE,
    ),
    Intrinsic(
        "pointer_broadcast",
        "fn broadcast<E, S>(self: PointerTile<*mut E, {[]}>, shape: Shape<S>) "
        "-> PointerTile<*mut E, S>",
        (2,),
        _broadcast,
        methods=("broadcast",),
        receiver=Receiver.POINTER_TILE,
    ),
    Intrinsic(
        "load_ptr_tko",
        "unsafe fn load_ptr_tko<E, S>(ptrs: PointerTile<*mut E, S>, ordering: ordering::Weak, "
        "mask: Option<Tile<bool, S>>, padding: Option<E>) -> Tile<E, S>",
        (4,),
        _load_ptr_tko,
        functions=("load_ptr_tko",),
        unsafe=True,
    ),
    Intrinsic(
        "store_ptr_tko",
        "unsafe fn store_ptr_tko<E, S>(ptrs: PointerTile<*mut E, S>, values: Tile<E, S>, "
        "ordering: ordering::Weak, mask: Option<Tile<bool, S>>)",
        (4,),
        _store_ptr_tko,
        functions=("store_ptr_tko",),
        unsafe=True,
    ),
)
