"""dtype names, numpy mapping and ABI scalar packing."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from client_stubs import dtypes


def test_all_names_and_sizes():
    sizes = {name: d.itemsize for name, d in dtypes.DTYPES.items()}
    assert sizes == {
        "bool": 1,
        "i8": 1,
        "i16": 2,
        "i32": 4,
        "i64": 8,
        "u8": 1,
        "u16": 2,
        "u32": 4,
        "u64": 8,
        "f16": 2,
        "bf16": 2,
        "f32": 4,
        "f64": 8,
    }


@pytest.mark.parametrize(
    ("name", "np_dtype"),
    [
        ("f32", np.float32),
        ("f16", np.float16),
        ("i64", np.int64),
        ("u8", np.uint8),
        ("bool", np.bool_),
        ("f64", np.float64),
    ],
)
def test_numpy_round_trip(name, np_dtype):
    assert dtypes.numpy_dtype(name) == np.dtype(np_dtype)
    assert dtypes.dtype_name(np_dtype) == name
    assert dtypes.dtype_name(np.dtype(np_dtype)) == name


def test_bf16_numpy_dtype_is_two_bytes():
    assert dtypes.numpy_dtype("bf16").itemsize == 2


def test_dtype_name_spellings():
    assert dtypes.dtype_name("f32") == "f32"
    assert dtypes.dtype_name("float16") == "f16"
    assert dtypes.dtype_name("bfloat16") == "bf16"

    class TorchDType:  # looks like torch.bfloat16 to dtype_name
        __module__ = "torch"

        def __str__(self) -> str:
            return "torch.bfloat16"

    assert dtypes.dtype_name(TorchDType()) == "bf16"
    with pytest.raises(KeyError):
        dtypes.dtype_name("complex64")
    with pytest.raises(KeyError):
        dtypes.dtype("f8")


def test_bf16_rounding():
    assert dtypes.float_to_bf16_bits(1.0) == 0x3F80
    assert dtypes.float_to_bf16_bits(-2.0) == 0xC000
    assert dtypes.float_to_bf16_bits(1.0 + 2**-8) == 0x3F80  # tie to even
    assert dtypes.float_to_bf16_bits(1.0 + 3 * 2**-8) == 0x3F82
    assert dtypes.float_to_bf16_bits(float("nan")) == 0x7FC0
    assert dtypes.bf16_bits_to_float(0x4049) == pytest.approx(3.140625)
    values = np.array([1.0, -2.0, 3.14159, 1e30], np.float32)
    bits = dtypes.f32_array_to_bf16_bits(values)
    assert list(bits) == [dtypes.float_to_bf16_bits(float(v)) for v in values]
    assert np.allclose(dtypes.bf16_bits_to_f32_array(bits), values, rtol=1e-2)


@pytest.mark.parametrize(
    ("ctype", "value", "expected"),
    [
        ("u64", 2**40 + 5, struct.pack("<Q", 2**40 + 5)),
        ("i32", -7, struct.pack("<i", -7)),
        ("i64", -(2**40), struct.pack("<q", -(2**40))),
        ("f32", 1.5, struct.pack("<f", 1.5)),
        ("f64", 0.1, struct.pack("<d", 0.1)),
        ("f16", 0.5, struct.pack("<e", 0.5)),
        ("bf16", 1.0, b"\x80\x3f"),
        ("i8", -1, b"\xff"),
        ("u8", 255, b"\xff"),
        ("i16", -2, struct.pack("<h", -2)),
        ("u16", 65535, b"\xff\xff"),
        ("u32", 2**32 - 1, b"\xff" * 4),
        ("bool", True, b"\x01"),
    ],
)
def test_pack_ctype(ctype, value, expected):
    buffer = bytearray(16)
    dtypes.pack_ctype(ctype, value, buffer, 8)
    assert bytes(buffer[8 : 8 + len(expected)]) == expected
    assert dtypes.ctype_size(ctype) == len(expected)


@pytest.mark.parametrize(
    ("ctype", "value"), [("i32", 2**31), ("u8", -1), ("u64", 2**64), ("f16", 1e6), ("i32", 1.5)]
)
def test_pack_ctype_rejects_unrepresentable(ctype, value):
    with pytest.raises((OverflowError, TypeError)):
        dtypes.pack_ctype(ctype, value, bytearray(8), 0)
