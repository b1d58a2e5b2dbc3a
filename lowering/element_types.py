"""Map cuTile element types (Rust spellings) to Tile IR element types and C types, as the
element table (`client_stubs.element_table`) says."""

from __future__ import annotations

from lowering.ir.types import ElementType, PointerType, TileType
from parser.types import Elem, PointerTileTy, PointerTy, ScalarTy, SemType, TileTy

_IR_ELEMENT = {elem: ElementType(elem.spec.ir) for elem in Elem}


def ir_element(elem: Elem) -> ElementType:
    return _IR_ELEMENT[elem]


def ir_tile_type(ty: SemType) -> TileType:
    """The IR type of a value-like type: scalars are rank-0 tiles."""
    if isinstance(ty, ScalarTy):
        return TileType(ir_element(ty.elem))
    if isinstance(ty, TileTy):
        return TileType(ir_element(ty.elem), ty.shape)
    if isinstance(ty, PointerTy):
        return TileType(PointerType(ir_element(ty.elem)))
    if isinstance(ty, PointerTileTy):
        return TileType(PointerType(ir_element(ty.elem)), ty.shape)
    raise TypeError(f"{ty} has no tile representation")


def ctype(elem: Elem) -> str:
    """The C type name of a scalar parameter slot (as written in the launch contract)."""
    return elem.value
