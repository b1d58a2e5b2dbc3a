"""Raw pointers: `pointer_to_tile(p)`, pointer-tile arithmetic and shape (`pt.offset_tile(idx)`,
`pt.offset(n)`, `pt.broadcast(shape)`, `pt.reshape(shape)`), conversions (`int_to_ptr`,
`ptr_to_int`, `ptr_to_ptr`) and the raw loads and stores `load_ptr_tko` / `store_ptr_tko`,
with cuTile Rust's names, arguments and token results.

Safety, decided per function (cuTile Rust declares all of these safe):
* pointer arithmetic, shapes and conversions touch no memory: safe;
* `load_ptr_tko` / `store_ptr_tko` read and write memory no bounds check covers. cuTile
  Rust calls them outside `unsafe` (in safe entries, through pointers made by the safe
  `int_to_ptr`), so they are accepted anywhere (`raw_access`): outside `unsafe` with a
  warning at the call, and always with the kernel's contract marked unchecked, so the host
  launches it only with `allow_unchecked=True`.
Every raw access is ordered after the previous one (one token chain, in program order:
pointers may alias); a token the kernel passes (`Some(tok)`) orders it after that too.
"""

from __future__ import annotations

from parser import messages
from parser.prelude.common import (
    I32,
    element_count,
    marker_arg,
    resolve_elem,
    shape_arg,
    shape_text,
    tile_arg,
    turbofish_type,
)
from parser.prelude.spec import CallTyper, Intrinsic, Receiver
from parser.prelude.tokens import option_arg, option_of
from parser.types import (
    TOKEN,
    Elem,
    LatencyTy,
    MarkerTy,
    PointerTileTy,
    PointerTy,
    ScalarTy,
    SemType,
    TileTy,
    TupleTy,
)

LOAD_ORDERINGS = ("Weak", "Relaxed", "Acquire")  # `ordering::LoadMode`
STORE_ORDERINGS = ("Weak", "Relaxed", "Release")  # `ordering::StoreMode`
_LOAD_WHY = " (loads take `ordering::Weak`, `Relaxed` or `Acquire`)"
_STORE_WHY = " (stores take `ordering::Weak`, `Relaxed` or `Release`)"


def _pointer_tile_arg(call: CallTyper, index: int, fn: str) -> PointerTileTy | None:
    ty = call.arg(index)
    if ty is None or isinstance(ty, PointerTileTy):
        return ty
    raw = isinstance(ty, PointerTy)
    entry = messages.RAW_POINTER_NOT_A_POINTER_TILE if raw else messages.NOT_A_POINTER_TILE
    call.report(entry.at(call.args[index].span, fn=fn, found=ty))
    return None


def _pointer_to_tile(call: CallTyper) -> SemType | None:
    ty = call.arg(0)
    if ty is None:
        return None
    if not isinstance(ty, PointerTy):
        call.report(messages.NOT_A_RAW_POINTER.at(call.args[0].span, found=ty))
        return None
    return PointerTileTy(ty.elem, (), ty.mutable)


def _tile_to_pointer(call: CallTyper) -> SemType | None:
    tile = _pointer_tile_arg(call, 0, "tile_to_pointer")
    if tile is None:
        return None
    if tile.shape:
        call.report(messages.POINTER_TILE_NOT_RANK_ZERO.at(call.args[0].span, found=tile))
        return None
    return PointerTy(tile.elem, tile.mutable)


def _shape_fits(call: CallTyper, ptrs: PointerTileTy, shape: tuple[int, ...], fn: str) -> bool:
    """A pointer tile of rank 0 broadcasts to any shape; otherwise shapes must agree."""
    if not ptrs.shape or ptrs.shape == shape:
        return True
    call.report(
        messages.POINTER_OFFSET_SHAPES_DIFFER.at(
            call.span, fn=fn, pointers=shape_text(ptrs.shape), offsets=shape_text(shape)
        )
    )
    return False


def _offset_tile(call: CallTyper) -> SemType | None:
    ptrs = _pointer_tile_arg(call, 0, "offset_tile")
    offsets = call.arg(1)
    if ptrs is None or offsets is None:
        return None
    if not (isinstance(offsets, TileTy) and offsets.elem is Elem.I32):
        call.report(messages.OFFSETS_NOT_I32_TILE.at(call.args[1].span, found=offsets))
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
        call.report(messages.OFFSET_NOT_I32.at(call.args[1].span, found=offset))
        return None
    return ptrs


def _broadcast(call: CallTyper) -> SemType | None:
    """A rank-0 pointer tile broadcasts to any shape; otherwise the rank stays and
    dimensions of size 1 expand."""
    ptrs = _pointer_tile_arg(call, 0, "broadcast")
    shape = shape_arg(call, 1, "broadcast")
    if ptrs is None or shape is None:
        return None
    same_rank = len(ptrs.shape) == len(shape)
    expands = same_rank and all(s in (1, d) for s, d in zip(ptrs.shape, shape, strict=False))
    if ptrs.shape and not expands:
        call.report(
            messages.POINTER_BROADCAST_MISMATCH.at(
                call.span, pointers=ptrs, shape=shape_text(shape)
            )
        )
        return None
    return PointerTileTy(ptrs.elem, shape, ptrs.mutable)


def _reshape(call: CallTyper) -> SemType | None:
    ptrs = _pointer_tile_arg(call, 0, "reshape")
    dims = shape_arg(call, 1, "reshape") if ptrs is not None else None
    if ptrs is None or dims is None:
        return None
    have, want = element_count(ptrs.shape), element_count(dims)
    if have != want:
        call.report(
            messages.POINTER_RESHAPE_COUNT_MISMATCH.at(
                call.args[1].span, pointers=ptrs, have=have, shape=shape_text(dims), want=want
            )
        )
        return None
    return PointerTileTy(ptrs.elem, dims, ptrs.mutable)


def _pointee(call: CallTyper, fn: str, position: int) -> Elem | None:
    """The pointee Rust infers for a cast's result: a turbofish argument, else the context
    (`let p: PointerTile<*mut f32, S> = ...`)."""
    written = turbofish_type(call, position)
    if written is not None:
        return resolve_elem(call, written)
    expected = getattr(call, "expected", None)
    if isinstance(expected, PointerTileTy):
        return expected.elem
    call.report(messages.POINTEE_NOT_ANNOTATED.at(call.span, fn=fn))
    return None


def _int_to_ptr(call: CallTyper) -> SemType | None:
    fn = "int_to_ptr"
    source = tile_arg(call, 0, fn)
    if source is None:
        return None
    if source.elem is not Elem.I64:
        call.report(messages.ADDRESSES_NOT_I64.at(call.args[0].span, fn=fn, found=source))
        return None
    elem = _pointee(call, fn, 1)
    return None if elem is None else PointerTileTy(elem, source.shape)


def _ptr_to_int(call: CallTyper) -> SemType | None:
    ptrs = _pointer_tile_arg(call, 0, "ptr_to_int")
    return None if ptrs is None else TileTy(Elem.I64, ptrs.shape)


def _ptr_to_ptr(call: CallTyper) -> SemType | None:
    fn = "ptr_to_ptr"
    ptrs = _pointer_tile_arg(call, 0, fn)
    if ptrs is None:
        return None
    elem = _pointee(call, fn, 1)
    return None if elem is None else PointerTileTy(elem, ptrs.shape, ptrs.mutable)


def scope_option(call: CallTyper, index: int, fn: str, ordering: str) -> bool:
    """`Option<scope::X>`: a weak access ignores it, any other one needs `Some(scope)`."""
    option = option_arg(call, index, fn, "scope")
    if option is None:
        return False
    inner = option.inner
    if inner is not None and not (isinstance(inner, MarkerTy) and inner.kind == "scope"):
        call.report(messages.SCOPE_NOT_AN_OPTION.at(call.args[index].span, fn=fn, found=option))
        return False
    if ordering != "Weak" and not option.some:
        call.report(
            messages.ORDERING_NEEDS_SCOPE.at(call.args[index].span, fn=fn, ordering=ordering)
        )
        return False
    return True


def latency_arg(call: CallTyper, index: int, fn: str) -> bool:
    ty = call.arg(index)
    if ty is None or isinstance(ty, LatencyTy):
        return ty is not None
    call.report(messages.NOT_A_LATENCY.at(call.args[index].span, fn=fn, found=ty))
    return False


def writable(call: CallTyper, ptrs: PointerTileTy, fn: str) -> bool:
    if ptrs.mutable:
        return True
    call.report(messages.WRITE_THROUGH_CONST.at(call.args[0].span, pointers=ptrs, fn=fn))
    return False


def values_arg(call: CallTyper, index: int, ptrs: PointerTileTy, fn: str) -> bool:
    """A `Tile<E, S>` of the pointers' element and shape."""
    expected = TileTy(ptrs.elem, ptrs.shape)
    values = call.arg(index, expected)
    if values is None or values == expected:
        return values is not None
    call.report(
        messages.STORED_VALUES_MISMATCH.at(
            call.args[index].span, fn=fn, expected=expected, pointers=ptrs, found=values
        )
    )
    return False


def _load_ptr_tko(call: CallTyper) -> SemType | None:
    fn = "load_ptr_tko"
    ptrs = _pointer_tile_arg(call, 0, fn)
    ordering = marker_arg(call, 1, "ordering", fn, LOAD_ORDERINGS, _LOAD_WHY)
    if ptrs is None or ordering is None or not scope_option(call, 2, fn, ordering):
        return None
    mask = option_of(call, 3, fn, "mask", TileTy(Elem.BOOL, ptrs.shape))
    padding = option_of(call, 4, fn, "padding", ScalarTy(ptrs.elem))
    token = option_of(call, 5, fn, "token", TOKEN)
    if mask is None or padding is None or token is None or not latency_arg(call, 6, fn):
        return None
    if padding.some and not mask.some:
        call.report(messages.PADDING_WITHOUT_MASK.at(call.args[4].span, fn=fn))
        return None
    return TupleTy((TileTy(ptrs.elem, ptrs.shape), TOKEN))


def _store_ptr_tko(call: CallTyper) -> SemType | None:
    fn = "store_ptr_tko"
    ptrs = _pointer_tile_arg(call, 0, fn)
    if ptrs is None or not values_arg(call, 1, ptrs, fn):
        return None
    ordering = marker_arg(call, 2, "ordering", fn, STORE_ORDERINGS, _STORE_WHY)
    if ordering is None or not scope_option(call, 3, fn, ordering):
        return None
    mask = option_of(call, 4, fn, "mask", TileTy(Elem.BOOL, ptrs.shape))
    token = option_of(call, 5, fn, "token", TOKEN)
    if mask is None or token is None or not latency_arg(call, 6, fn):
        return None
    return TOKEN if writable(call, ptrs, fn) else None


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
        "pointer_reshape",
        "fn reshape<E, S, R>(self: PointerTile<*mut E, S>, shape: Shape<R>) "
        "-> PointerTile<*mut E, R>",
        (2,),
        _reshape,
        methods=("reshape",),
        receiver=Receiver.POINTER_TILE,
    ),
    Intrinsic(
        "int_to_ptr",
        "fn int_to_ptr<I, E, S>(source: Tile<i64, S>) -> PointerTile<*mut E, S>",
        (1,),
        _int_to_ptr,
        functions=("int_to_ptr",),
    ),
    Intrinsic(
        "ptr_to_int",
        "fn ptr_to_int<E, S>(source: PointerTile<*mut E, S>) -> Tile<i64, S>",
        (1,),
        _ptr_to_int,
        functions=("ptr_to_int",),
    ),
    Intrinsic(
        "ptr_to_ptr",
        "fn ptr_to_ptr<E, F, S>(source: PointerTile<*mut E, S>) -> PointerTile<*mut F, S>",
        (1,),
        _ptr_to_ptr,
        functions=("ptr_to_ptr",),
    ),
    Intrinsic(
        "load_ptr_tko",
        "fn load_ptr_tko<E, S>(source: PointerTile<*mut E, S>, ordering: O, "
        "scope: Option<Sc>, mask: Option<Tile<bool, S>>, padding: Option<E>, "
        "token: Option<Token>, latency: Latency<N>) -> (Tile<E, S>, Token)",
        (7,),
        _load_ptr_tko,
        functions=("load_ptr_tko",),
        raw_access=True,
    ),
    Intrinsic(
        "store_ptr_tko",
        "fn store_ptr_tko<E, S>(destination: PointerTile<*mut E, S>, value: Tile<E, S>, "
        "ordering: O, scope: Option<Sc>, mask: Option<Tile<bool, S>>, token: Option<Token>, "
        "latency: Latency<N>) -> Token",
        (7,),
        _store_ptr_tko,
        functions=("store_ptr_tko",),
        raw_access=True,
    ),
)
