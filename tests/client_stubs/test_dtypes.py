"""dtype names, numpy mapping and ABI scalar packing."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from client_stubs import dtypes
from client_stubs.element_table import ELEMENT_BY_NAME


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
        "tf32": 4,
        "f64": 8,
        "f8e4m3fn": 1,
        "f8e5m2": 1,
        "f8e8m0fnu": 1,
        "f4e2m1fnx2": 1,
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


def test_remembered_names_keep_specs_of_other_kinds_apart():
    """dtype_name remembers its answers per (type, spec): numpy's dtype("f16") (a 16-byte
    float, which compares equal to the string "f16") never takes the name of cuTile's "f16",
    in either order, and a failed spec is not remembered as anything."""
    for _ in range(2):
        assert dtypes.dtype_name("f16") == "f16"
        with pytest.raises(KeyError):
            dtypes.dtype_name(np.dtype("f16"))
        assert dtypes.dtype_name(np.dtype("<f2")) == "f16"
        assert dtypes.dtype_name(np.float32) == "f32"
    with pytest.raises(KeyError):  # an unhashable spec is answered, not remembered
        dtypes.dtype_name([])


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
        ("f8e4m3fn", 1.0, b"\x38"),
        ("f8e5m2", -2.0, b"\xc0"),
        ("f8e8m0fnu", 1.0, b"\x7f"),
        ("f4e2m1fnx2", 0x22, b"\x22"),
    ],
)
def test_pack_ctype(ctype, value, expected):
    buffer = bytearray(16)
    dtypes.pack_ctype(ctype, value, buffer, 8)
    assert bytes(buffer[8 : 8 + len(expected)]) == expected
    assert dtypes.ctype_size(ctype) == len(expected)


@pytest.mark.parametrize(
    ("ctype", "value"),
    [
        ("i32", 2**31),
        ("u8", -1),
        ("u64", 2**64),
        ("f16", 1e6),
        ("i32", 1.5),
        ("f8e4m3fn", 1000.0),
        ("f8e8m0fnu", -1.0),
    ],
)
def test_pack_ctype_rejects_unrepresentable(ctype, value):
    with pytest.raises((OverflowError, TypeError)):
        dtypes.pack_ctype(ctype, value, bytearray(8), 0)


def test_fp8_without_ml_dtypes_is_raw_bytes():
    """numpy has no fp8: raw `uint8` patterns pass as they are, float arrays are rounded."""
    assert dtypes.numpy_dtype("f8e4m3fn") == np.dtype(np.uint8)  # ml_dtypes is not installed
    raw = np.array([0x38, 0xC0], np.uint8)
    assert dtypes.as_element_array(raw, "f8e4m3fn") is raw
    bits = dtypes.as_element_array(np.array([1.0, -2.0, 0.3, 1000.0, np.nan]), "f8e4m3fn")
    assert list(bits) == [0x38, 0xC0, 0x2A, 0x7F, 0x7F]  # 1000 and NaN: NaN (no infinity)
    e5m2 = dtypes.as_element_array(np.array([1.0, 1e6]), "f8e5m2")
    assert list(e5m2) == [0x3C, 0x7C]  # past the largest value: infinity
    assert dtypes.dtype_name("float8_e4m3fn") == "f8e4m3fn"
    assert dtypes.dtype_name("torch.float4_e2m1fn_x2") == "f4e2m1fnx2"
    with pytest.raises(TypeError, match="raw uint8"):
        dtypes.as_element_array(np.array([1.0]), "f4e2m1fnx2")


@pytest.mark.parametrize("name", ["f8e4m3fn", "f8e5m2", "f8e8m0fnu"])
def test_fp8_bits_round_trip(name):
    fmt = ELEMENT_BY_NAME[name].float_format
    codes = np.arange(256)
    values = dtypes.bits_to_float_array(codes, fmt)
    finite = np.isfinite(values)
    assert list(dtypes.float_array_to_bits(values[finite], fmt)) == list(codes[finite])
    assert values[finite].max() == ELEMENT_BY_NAME[name].float_max
    singles = [fmt.encode(float(v)) for v in values[finite]]
    assert singles == list(codes[finite])


def test_fp8_rounds_to_nearest_even():
    fmt = ELEMENT_BY_NAME["f8e4m3fn"].float_format
    assert fmt.encode(1.0 + 2**-4) == 0x38  # halfway between 1 and 1.125: even code
    assert fmt.encode(1.0 + 3 * 2**-4) == 0x3A  # halfway between 1.125 and 1.25: even code
    assert fmt.encode(2**-9) == 0x01  # smallest subnormal
    assert fmt.encode(-0.0) == 0x80
    values = np.array([1.0 + 2**-4, 1.0 + 3 * 2**-4, 2**-10, 2**-10 + 2**-12])
    assert list(dtypes.float_array_to_bits(values, fmt)) == [0x38, 0x3A, 0x00, 0x01]


def test_tf32_is_an_f32_bit_pattern_rounded_to_ten_fraction_bits():
    values = np.array([1.0, 1.0 + 2**-11, 1.0 + 3 * 2**-11, np.inf, -2.5], np.float32)
    bits = dtypes.as_element_array(values, "tf32")
    assert bits.dtype == np.uint32
    # halfway cases round to the even tf32 value: 1 + 2^-11 -> 1.0, 1 + 3 * 2^-11 -> 1 + 2^-9
    assert [hex(b) for b in bits] == [
        "0x3f800000",
        "0x3f800000",
        "0x3f804000",
        "0x7f800000",
        "0xc0200000",
    ]
    packed = bytearray(4)
    dtypes.pack_ctype("tf32", 1.5, packed, 0)  # a scalar travels in its f32 container
    assert packed == struct.pack("<f", 1.5)
