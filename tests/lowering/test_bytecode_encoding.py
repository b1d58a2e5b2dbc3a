"""Byte-level primitives and the interned tables of the bytecode writer."""

from __future__ import annotations

import pytest

from lowering.bytecode.encoding import PAD_BYTE, fixed_array, pad_to, svarint, uvarint, uvarints
from lowering.bytecode.tables import (
    BytecodeError,
    FunctionSignature,
    Interner,
    ModuleTables,
    encode_constant_data,
)
from lowering.ir.types import (
    I32,
    TOKEN,
    ElementType,
    PaddingValue,
    PartitionViewType,
    PointerType,
    TensorViewType,
    TileType,
)


@pytest.mark.parametrize(
    ("value", "encoded"),
    [(0, b"\x00"), (1, b"\x01"), (127, b"\x7f"), (128, b"\x80\x01"), (300, b"\xac\x02")],
)
def test_uvarint(value: int, encoded: bytes) -> None:
    assert uvarint(value) == encoded


@pytest.mark.parametrize(
    ("value", "zigzag"), [(0, 0), (-1, 1), (1, 2), (-2, 3), (-(1 << 63), (1 << 64) - 1)]
)
def test_svarint_is_zigzag(value: int, zigzag: int) -> None:
    assert svarint(value) == uvarint(zigzag)


def test_out_of_range_varints_raise() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        uvarint(-1)
    with pytest.raises(ValueError, match="64-bit"):
        svarint(1 << 63)


def test_arrays_and_padding() -> None:
    assert uvarints([1, 200]) == b"\x02\x01\xc8\x01"
    assert fixed_array([-1, 2], 4) == b"\x02\xff\xff\xff\xff\x02\x00\x00\x00"
    buf = bytearray(b"abc")
    pad_to(buf, 4)
    assert buf == b"abc" + bytes([PAD_BYTE])
    pad_to(buf, 4)
    assert len(buf) == 4


def test_interner_layout() -> None:
    table = Interner()
    assert [table.intern(k) for k in (b"ab", b"c", b"ab")] == [0, 1, 0]
    assert table.encode(4) == b"\x02\xcb\xcb\xcb" + b"\x00\x00\x00\x00\x02\x00\x00\x00abc"


def test_types_register_dependencies_first() -> None:
    tables = ModuleTables((13, 3))
    index = tables.type(TileType(PointerType(ElementType.F32)))
    assert index == 2  # f32, ptr<f32>, then the tile
    assert tables.type(ElementType.F32) == 0
    assert tables.type(TOKEN) == 3


def test_version_dependent_type_layouts() -> None:
    view = TensorViewType(ElementType.F32, (None,), (1,))
    part = PartitionViewType((16,), view, (0,), PaddingValue.NAN)
    old, new, newest = ModuleTables((13, 2)), ModuleTables((13, 3)), ModuleTables((13, 4))
    for tables in (old, new, newest):
        tables.type(part)
    keys = [t.types.keys() for t in (old, new, newest)]
    dyn = (-(1 << 63)).to_bytes(8, "little", signed=True)
    one = (1).to_bytes(8, "little")
    assert keys[0][1] == b"\x0e\x00\x01" + dyn + b"\x01" + one  # no flags before 13.4
    assert keys[2][1] == b"\x0e\x00\x00\x01" + dyn + b"\x01" + one
    core = b"\x01\x10\x00\x00\x00\x01\x01\x00\x00\x00\x00"
    assert keys[0][2] == b"\x0f" + core + b"\x01\x02"  # inline presence flag, then padding
    assert keys[1][2] == b"\x0f\x01" + core + b"\x02"  # 13.3: leading flags varint


def test_function_signature_type() -> None:
    tables = ModuleTables((13, 3))
    index = tables.type(FunctionSignature((I32, I32)))
    assert tables.types.keys()[index] == b"\x10\x02\x01\x01\x00"


def test_constant_data_layouts() -> None:
    assert encode_constant_data(ElementType.I32, (-2,), 8) == b"\xfe\xff\xff\xff"
    assert encode_constant_data(ElementType.I1, (True,), 4) == b"\xff"
    assert encode_constant_data(ElementType.I1, (1, 0, 1, 1, 0, 0, 0, 0, 1), 9) == b"\x0d\x01"
    assert encode_constant_data(ElementType.F16, (1.0,), 1) == b"\x00\x3c"
    assert encode_constant_data(ElementType.BF16, (1.0,), 1) == b"\x80\x3f"
    assert encode_constant_data(ElementType.TF32, (1.0,), 1) == b"\x00\xfc\x01"
    assert encode_constant_data(ElementType.F64, (0.5,), 1) == b"\x00" * 6 + b"\xe0\x3f"


def test_bad_constants_raise() -> None:
    with pytest.raises(BytecodeError, match="3 values for 4 elements"):
        encode_constant_data(ElementType.I8, (1, 2, 3), 4)
    with pytest.raises(BytecodeError, match="does not fit"):
        encode_constant_data(ElementType.I8, (256,), 1)
    with pytest.raises(BytecodeError, match="does not fit"):
        encode_constant_data(ElementType.F16, (1e10,), 1)
    with pytest.raises(BytecodeError, match="float"):
        encode_constant_data(ElementType.I32, (1.5,), 1)


@pytest.mark.parametrize(
    ("element", "tag", "since"),
    [
        (ElementType.F8E4M3FN, 10, (13, 1)),
        (ElementType.F8E5M2, 11, (13, 1)),
        (ElementType.F8E8M0FNU, 18, (13, 2)),
        (ElementType.F4E2M1FN, 19, (13, 3)),
        (ElementType.I4, 22, (13, 3)),
    ],
)
def test_low_precision_type_tags(element: ElementType, tag: int, since: tuple[int, int]) -> None:
    tables = ModuleTables(since)
    tables.type(TileType(element, (16,)))
    assert tables.types.keys()[0] == bytes([tag])
    if since > (13, 1):
        older = ModuleTables((since[0], since[1] - 1))
        with pytest.raises(BytecodeError, match=f"{element} needs bytecode"):
            older.type(element)


def test_low_precision_constants() -> None:
    """One byte per element (MLIR's dense layout rounds sub-byte elements up)."""
    assert encode_constant_data(ElementType.F8E4M3FN, (1.0, -2.0), 2) == b"\x38\xc0"
    assert encode_constant_data(ElementType.F8E5M2, (0.5,), 4) == b"\x38"
    assert encode_constant_data(ElementType.F8E8M0FNU, (1.0, 2.0**-3), 2) == b"\x7f\x7c"
    assert encode_constant_data(ElementType.F4E2M1FN, (1.5, -6.0), 2) == b"\x03\x0f"
    assert encode_constant_data(ElementType.I4, (-1, 7), 2) == b"\x0f\x07"
    with pytest.raises(BytecodeError, match="does not fit"):
        encode_constant_data(ElementType.F8E4M3FN, (1000.0,), 1)
    with pytest.raises(BytecodeError, match="does not fit"):
        encode_constant_data(ElementType.F4E2M1FN, (float("nan"),), 1)
