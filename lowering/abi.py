"""The kernel ABI: how entry parameters flatten into rank-0 tile parameters.

`&Tensor` (rank r): ptr, dim[r], stride[r]; `&mut Tensor` adds partition dim[r] and
partition stride[r]; scalars pass by value; a raw pointer `*mut E` is one address. Slots
are packed with natural alignment in declaration order (C struct rules), which is what
the cubin's parameter bank expects.
"""

from __future__ import annotations

from dataclasses import dataclass

from lowering.contract import AbiSlot, SlotRole
from lowering.element_types import ctype, ir_element
from lowering.ir.types import I32, PointerType, TileType
from parser.entry_signature import EntryParam, EntrySignature, ParamRole
from parser.types import PointerTy, ScalarTy

POINTER_BYTES = 8
INDEX_BYTES = 4  # dims and strides are i32


@dataclass(frozen=True)
class SlotLayout:
    slot: AbiSlot
    ir_type: TileType


def _tensor_slots(param: EntryParam) -> list[tuple[SlotRole, int, str, int, TileType]]:
    tensor = param.tensor
    rows: list[tuple[SlotRole, int, str, int, TileType]] = [
        (SlotRole.PTR, 0, "u64", POINTER_BYTES, TileType(PointerType(ir_element(tensor.elem))))
    ]
    roles = [SlotRole.DIM, SlotRole.STRIDE]
    if param.role.is_output:
        roles += [SlotRole.PART_DIM, SlotRole.PART_STRIDE]
    for role in roles:
        rows += [(role, axis, "i32", INDEX_BYTES, I32) for axis in range(tensor.rank)]
    return rows


def _param_slots(param: EntryParam) -> list[tuple[SlotRole, int, str, int, TileType]]:
    if param.role is ParamRole.SCALAR:
        assert isinstance(param.type, ScalarTy)
        elem = param.type.elem
        return [(SlotRole.VALUE, 0, ctype(elem), elem.size_bytes, TileType(ir_element(elem)))]
    if param.role is ParamRole.POINTER:
        assert isinstance(param.type, PointerTy)
        pointer = TileType(PointerType(ir_element(param.type.elem)))
        return [(SlotRole.PTR, 0, "u64", POINTER_BYTES, pointer)]
    return _tensor_slots(param)


def entry_abi(signature: EntrySignature) -> tuple[tuple[SlotLayout, ...], int]:
    """Every ABI slot in kernelParams order, and the packed parameter buffer size."""
    layouts: list[SlotLayout] = []
    offset = 0
    max_align = 1
    for param in signature.params:
        for role, axis, c_type, size, ir_type in _param_slots(param):
            offset = (offset + size - 1) // size * size
            layouts.append(
                SlotLayout(AbiSlot(param.index, role, axis, c_type, offset, size), ir_type)
            )
            offset += size
            max_align = max(max_align, size)
    total = (offset + max_align - 1) // max_align * max_align
    return tuple(layouts), total
