"""Byte packing: `pack(t)` / `unpack(bytes)` reinterpret a rank-1 tile's bits as bytes and
back (Tile IR 13.3 `pack` / `unpack`); the shaped methods `bytes.unpack(shape)` and
`values.pack(shape)` do the same for packed storage of any rank (`Tile<f4e2m1fnx2, S>` <->
`Tile<f4e2m1fn, R>`, two values a byte), flattening around the rank-1 op.

The byte side is a byte element (cuTile's `ByteElement`: `i8`, `u8`, `f4e2m1fnx2`); the other
side is any other width (8-bit elements are `bitcast`). The element the free functions produce
comes from the annotation or the turbofish; the extent keeps the number of bits.
"""

from __future__ import annotations

from collections.abc import Callable

from client_stubs.element_table import ELEMENTS
from parser import messages
from parser.prelude.common import (
    check_tile_dims,
    element_count,
    shape_arg,
    shape_text,
    target_elem,
    tile_arg,
)
from parser.prelude.spec import CallTyper, Intrinsic, Receiver
from parser.types import Elem, SemType, TileTy

# packed storage element -> (the element it holds, how many per byte), from the table
PACKED: dict[Elem, tuple[Elem, int]] = {
    Elem(e.name): (Elem(e.packs[0]), e.packs[1]) for e in ELEMENTS if e.packs is not None
}
PACKED_AS: dict[Elem, Elem] = {inner: packed for packed, (inner, _) in PACKED.items()}
_BYTE_ELEMENTS = ", ".join(f"`{e.name}`" for e in ELEMENTS if e.is_byte)


def _rank_one(call: CallTyper, fn: str, source: TileTy) -> bool:
    if len(source.shape) == 1:
        return True
    call.report(
        messages.PACKING_NEEDS_RANK_ONE.at(
            call.args[0].span, fn=fn, source=source, rank=len(source.shape)
        )
    )
    return False


def _sized(call: CallTyper, fn: str, bits: int, elem: Elem) -> int | None:
    """The extent of `bits` bits as `elem` elements (whole elements, a tile extent)."""
    if bits % elem.bits:
        call.report(messages.PACKING_SIZE_MISMATCH.at(call.span, fn=fn, bits=bits, elem=elem))
        return None
    extent = bits // elem.bits
    if not check_tile_dims(call, (extent,), call.span, f"the result of `{fn}`"):
        return None
    return extent


def _pack(call: CallTyper) -> SemType | None:
    source = tile_arg(call, 0, "pack")
    if source is None or not _rank_one(call, "pack", source):
        return None
    if source.elem.bits == 8 or source.elem in PACKED:
        call.report(messages.PACK_IS_BITCAST.at(call.span, elem=source.elem))
        return None
    target = target_elem(call, "pack", 1, "the byte element type")
    if target is None:
        return None
    if not target.spec.is_byte:
        call.report(
            messages.PACK_NOT_TO_BYTES.at(call.span, target=target, byte_elements=_BYTE_ELEMENTS)
        )
        return None
    extent = _sized(call, "pack", source.elem.bits * source.shape[0], target)
    return None if extent is None else TileTy(target, (extent,))


def _unpack(call: CallTyper) -> SemType | None:
    source = tile_arg(call, 0, "unpack")
    if source is None or not _rank_one(call, "unpack", source):
        return None
    if not source.elem.spec.is_byte:
        call.report(
            messages.UNPACK_NOT_FROM_BYTES.at(
                call.span, byte_elements=_BYTE_ELEMENTS, source=source
            )
        )
        return None
    target = target_elem(call, "unpack", 0, "the element type to unpack into")
    if target is None:
        return None
    if target.bits == 8 or target in PACKED:
        call.report(messages.UNPACK_IS_BITCAST.at(call.span, elem=target))
        return None
    extent = _sized(call, "unpack", 8 * source.shape[0], target)
    return None if extent is None else TileTy(target, (extent,))


def _packed_pair(call: CallTyper, fn: str, source: TileTy) -> tuple[Elem, Elem, int] | None:
    """(result element, packed storage element, values per byte) of a shaped (un)pack."""
    if fn == "unpack" and source.elem in PACKED:
        inner, per_byte = PACKED[source.elem]
        return inner, source.elem, per_byte
    if fn == "pack" and source.elem in PACKED_AS:
        storage = PACKED_AS[source.elem]
        return storage, storage, PACKED[storage][1]
    unpack = fn == "unpack"
    owners = " or ".join(f"`Tile<{e}, _>`" for e in (PACKED if unpack else PACKED_AS))
    entry = messages.NOT_PACKED_STORAGE if unpack else messages.NOT_PACKABLE
    call.report(entry.at(call.args[0].span, fn=fn, owners=owners, source=source, elem=source.elem))
    return None


def _shaped(fn: str) -> Callable[[CallTyper], SemType | None]:
    """`storage.unpack(shape)` / `values.pack(shape)`: packed storage of any rank."""

    def rule(call: CallTyper) -> SemType | None:
        source = tile_arg(call, 0, fn)
        pair = None if source is None else _packed_pair(call, fn, source)
        dims = None if pair is None else shape_arg(call, 1, fn)
        if source is None or pair is None or dims is None:
            return None
        result, storage, per_byte = pair
        values_in = element_count(source.shape) * (per_byte if source.elem is storage else 1)
        values_out = element_count(dims) * (per_byte if result is storage else 1)
        if values_in == values_out:
            return TileTy(result, dims)
        call.report(
            messages.PACKED_VALUE_COUNTS_DIFFER.at(
                call.args[1].span,
                source=source,
                values_in=values_in,
                result=result,
                shape=shape_text(dims),
                values_out=values_out,
                storage=storage,
                per_byte=per_byte,
            )
        )
        return None

    return rule


PACKING_INTRINSICS: tuple[Intrinsic, ...] = (
    Intrinsic(
        "pack",
        "fn pack<EIn: ElementType, EByte: ByteElement, const S: [i32; 1], const R: [i32; 1]>("
        "source: Tile<EIn, S>) -> Tile<EByte, R>",
        (1,),
        _pack,
        functions=("pack",),
    ),
    Intrinsic(
        "unpack",
        "fn unpack<EOut: ElementType, EByte: ByteElement, const S: [i32; 1], const R: [i32; 1]>("
        "source: Tile<EByte, S>) -> Tile<EOut, R>",
        (1,),
        _unpack,
        functions=("unpack",),
    ),
    Intrinsic(
        "pack_shaped",
        "fn pack<const R: [i32; M]>(self: Tile<f4e2m1fn, S>, shape: Shape<R>) -> "
        "Tile<f4e2m1fnx2, R>",
        (2,),
        _shaped("pack"),
        methods=("pack",),
        receiver=Receiver.TILE,
    ),
    Intrinsic(
        "unpack_shaped",
        "fn unpack<const R: [i32; M]>(self: Tile<f4e2m1fnx2, S>, shape: Shape<R>) -> "
        "Tile<f4e2m1fn, R>",
        (2,),
        _shaped("unpack"),
        methods=("unpack",),
        receiver=Receiver.TILE,
    ),
)
