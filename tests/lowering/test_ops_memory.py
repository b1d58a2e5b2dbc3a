"""The raw-pointer memory ops of `lowering.ir.ops_memory`: `offset`, `load_ptr_tko` and
`store_ptr_tko` check their operand types, orderings and scopes."""

from __future__ import annotations

from lowering.ir.attributes import LoadStoreHints, MemoryOrdering, MemoryScope
from lowering.ir.core import Builder
from lowering.ir.ops_memory import LoadPtrTko, Offset, StorePtrTko
from lowering.ir.types import TOKEN, ElementType, PointerType, TileType

F32 = ElementType.F32
PTRS = TileType(PointerType(F32), (8,))
DATA = TileType(F32, (8,))
MASK = TileType(ElementType.I1, (8,))
OFFSETS = TileType(ElementType.I32, (8,))


def test_well_typed_pointer_ops_verify() -> None:
    b = Builder()
    ptrs, offsets, mask, token = b.value(PTRS), b.value(OFFSETS), b.value(MASK), b.value(TOKEN)
    moved = b.emit(Offset, result=PTRS, ptrs=ptrs, offsets=offsets)
    padding = b.value(DATA)
    load = b.emit(
        LoadPtrTko,
        tile=DATA,
        result_token=TOKEN,
        ptrs=moved.result,
        mask=mask,
        padding=padding,
        token=token,
    )
    store = b.emit(
        StorePtrTko, result_token=TOKEN, ptrs=ptrs, value=load.tile, token=load.result_token
    )
    assert moved.verify() == [] and load.verify() == [] and store.verify() == []


def test_offset_needs_pointers_and_matching_i32_offsets() -> None:
    b = Builder()
    data, offsets = b.value(DATA), b.value(OFFSETS)
    assert Offset(result=b.value(PTRS), ptrs=data, offsets=offsets).verify() == [
        "ptrs must be a tile of pointers"
    ]
    wide = b.value(TileType(ElementType.I64, (8,)))
    assert Offset(result=b.value(PTRS), ptrs=b.value(PTRS), offsets=wide).verify() == [
        "offsets must be an i32 tile"
    ]
    short = b.value(TileType(ElementType.I32, (4,)))
    assert Offset(result=b.value(PTRS), ptrs=b.value(PTRS), offsets=short).verify() == [
        "offsets and pointers differ in shape"
    ]


def test_loads_check_tile_mask_and_padding() -> None:
    b = Builder()
    errors = LoadPtrTko(
        tile=b.value(TileType(ElementType.F16, (8,))),
        result_token=b.value(TOKEN),
        ptrs=b.value(PTRS),
        padding=b.value(DATA),
    ).verify()
    assert errors == ["loaded tile must be tile<8xf32>", "padding needs a mask"]
    bad_mask = LoadPtrTko(
        tile=b.value(DATA),
        result_token=b.value(TOKEN),
        ptrs=b.value(PTRS),
        mask=b.value(TileType(ElementType.I1, (4,))),
    ).verify()
    assert bad_mask == ["mask must be tile<8xi1>"]


def test_stores_check_the_value_and_their_token() -> None:
    b = Builder()
    errors = StorePtrTko(
        result_token=b.value(DATA), ptrs=b.value(PTRS), value=b.value(OFFSETS)
    ).verify()
    assert errors == ["stored tile must be tile<8xf32>", "result must be a token"]


def test_pointer_accesses_pair_orderings_with_scopes() -> None:
    b = Builder()
    ptrs, data = b.value(PTRS), b.value(DATA)
    relaxed_unscoped = LoadPtrTko(
        tile=b.value(DATA), result_token=b.value(TOKEN), ptrs=ptrs, ordering=MemoryOrdering.RELAXED
    )
    assert relaxed_unscoped.verify() == ["a weak access has no scope; any other needs one"]
    acquire_store = StorePtrTko(
        result_token=b.value(TOKEN),
        ptrs=ptrs,
        value=data,
        ordering=MemoryOrdering.ACQUIRE,
        scope=MemoryScope.DEVICE,
    )
    assert acquire_store.verify() == ["ordering acquire is not allowed here"]
    hinted = LoadPtrTko(
        tile=b.value(DATA),
        result_token=b.value(TOKEN),
        ptrs=ptrs,
        hints=(LoadStoreHints("default", latency=11),),
    )
    assert hinted.verify() == ["default: latency must be in 1..10, got 11"]
