"""The pointer ops of `lowering.ir.ops_pointer`: conversions check element types and
shapes, atomics their ordering and mode per element type, and the module verifier that
every `get_global` names a global of its element type."""

from __future__ import annotations

from lowering.ir.attributes import AtomicMode, MemoryOrdering, MemoryScope
from lowering.ir.core import Builder, Function, Module
from lowering.ir.ops_core import Return
from lowering.ir.ops_pointer import (
    AtomicCasTko,
    AtomicRedViewTko,
    AtomicRmwTko,
    GetGlobal,
    GlobalVar,
    IntToPtr,
    PtrToInt,
    PtrToPtr,
)
from lowering.ir.types import (
    TOKEN,
    ElementType,
    PartitionViewType,
    PointerType,
    TensorViewType,
    TileType,
)
from lowering.ir.verify import verify_module

I64S = TileType(ElementType.I64, (8,))
F32S = TileType(ElementType.F32, (8,))
F32_PTRS = TileType(PointerType(ElementType.F32), (8,))
I64_PTRS = TileType(PointerType(ElementType.I64), (8,))


def test_conversions_check_elements_and_shapes() -> None:
    b = Builder()
    addresses, ptrs = b.value(I64S), b.value(F32_PTRS)
    assert IntToPtr(result=b.value(F32_PTRS), source=addresses).verify() == []
    assert PtrToInt(result=b.value(I64S), source=ptrs).verify() == []
    assert PtrToPtr(result=b.value(I64_PTRS), source=ptrs).verify() == []
    assert IntToPtr(result=b.value(F32_PTRS), source=b.value(F32S)).verify() == [
        "source must be an i64 tile"
    ]
    short = b.value(TileType(PointerType(ElementType.F32), (4,)))
    assert PtrToPtr(result=short, source=ptrs).verify() == [
        "ptr_to_ptr keeps the shape: tile<8xptr<f32>> -> tile<4xptr<f32>>"
    ]


def _rmw(b: Builder, ptrs: TileType, value: TileType, mode: AtomicMode, ordering: MemoryOrdering):  # type: ignore[no-untyped-def]
    return AtomicRmwTko(
        old=b.value(value),
        result_token=b.value(TOKEN),
        ordering=ordering,
        scope=MemoryScope.DEVICE,
        mode=mode,
        ptrs=b.value(ptrs),
        arg=b.value(value),
    )


def test_atomics_check_orderings_and_modes() -> None:
    b = Builder()
    relaxed = MemoryOrdering.RELAXED
    assert _rmw(b, F32_PTRS, F32S, AtomicMode.ADDF, relaxed).verify() == []
    assert _rmw(b, I64_PTRS, I64S, AtomicMode.UMIN, relaxed).verify() == []
    assert _rmw(b, F32_PTRS, F32S, AtomicMode.MAX, relaxed).verify() == [
        "max is not defined on f32"
    ]
    assert _rmw(b, I64_PTRS, I64S, AtomicMode.ADDF, relaxed).verify() == [
        "addf is not defined on i64"
    ]
    assert _rmw(b, I64_PTRS, I64S, AtomicMode.ADD, MemoryOrdering.WEAK).verify() == [
        "atomics need a non-weak ordering"
    ]
    cas = AtomicCasTko(
        old=b.value(I64S),
        result_token=b.value(TOKEN),
        ordering=relaxed,
        scope=MemoryScope.SYSTEM,
        ptrs=b.value(I64_PTRS),
        cmp=b.value(F32S),
        val=b.value(I64S),
    )
    assert cas.verify() == ["operands must be tile<8xi64>"]


def _module_reading(name: str, element: ElementType, globals_: tuple[GlobalVar, ...]) -> Module:
    b = Builder()
    b.emit(GetGlobal, result=TileType(PointerType(element)), name=name)
    b.emit(Return)
    return Module((Function("k", (), b.finish(())),), globals_)


def test_get_global_must_name_a_global_of_its_element() -> None:
    counter = GlobalVar("m_COUNTER", ElementType.I32, 7, 4)
    assert verify_module(_module_reading("m_COUNTER", ElementType.I32, (counter,))) == []
    assert verify_module(_module_reading("m_OTHER", ElementType.I32, (counter,))) == [
        "@k: get_global: no global named @m_OTHER"
    ]
    assert verify_module(_module_reading("m_COUNTER", ElementType.F32, (counter,))) == [
        "@k: get_global: @m_COUNTER holds i32"
    ]
    assert verify_module(_module_reading("m_COUNTER", ElementType.I32, (counter, counter))) == [
        "duplicate global name"
    ]


def test_view_reductions_are_relaxed_and_typed_like_the_view() -> None:
    b = Builder()
    view_type = PartitionViewType((16,), TensorViewType(ElementType.F32, (None,), (1,)), (0,))
    view, index = b.value(view_type), (b.value(TileType(ElementType.I32)),)

    def reduce(value: TileType, mode: AtomicMode, scope: MemoryScope) -> list[str]:
        return AtomicRedViewTko(
            result_token=b.value(TOKEN),
            ordering=MemoryOrdering.RELAXED,
            scope=scope,
            mode=mode,
            view=view,
            index=index,
            value=b.value(value),
        ).verify()

    tile = TileType(ElementType.F32, (16,))
    assert reduce(tile, AtomicMode.ADDF, MemoryScope.DEVICE) == []
    assert reduce(tile, AtomicMode.MAX, MemoryScope.SYSTEM) == [
        "atomic_red_view_tko is scoped to the tile block or the device",
        "max is not defined on floats",
    ]
    assert reduce(F32S, AtomicMode.ADDF, MemoryScope.TILE_BLOCK) == ["value must be tile<16xf32>"]
