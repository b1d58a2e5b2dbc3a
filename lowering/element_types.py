"""Map cuTile element types (Rust spellings) to Tile IR element types and C types."""

from __future__ import annotations

from lowering.ir.types import ElementType, PointerType, TileType
from parser.types import Elem, PointerTileTy, PointerTy, ScalarTy, SemType, TileTy

_IR_ELEMENT = {
    Elem.BOOL: ElementType.I1,
    Elem.I8: ElementType.I8,
    Elem.U8: ElementType.I8,
    Elem.I16: ElementType.I16,
    Elem.U16: ElementType.I16,
    Elem.I32: ElementType.I32,
    Elem.U32: ElementType.I32,
    Elem.I64: ElementType.I64,
    Elem.U64: ElementType.I64,
    Elem.F16: ElementType.F16,
    Elem.BF16: ElementType.BF16,
    Elem.F32: ElementType.F32,
    Elem.TF32: ElementType.TF32,
    Elem.F64: ElementType.F64,
}


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
    return "bool" if elem is Elem.BOOL else elem.value
