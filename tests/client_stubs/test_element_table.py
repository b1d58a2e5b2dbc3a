"""The element table is the one list of element types: its rows are consistent, and every layer
(front end, IR, bytecode, contract ctypes, client dtypes, DLPack) reads its types from it."""

from __future__ import annotations

import math

import pytest

from client_stubs import dtypes, interop
from client_stubs.element_table import (
    ELEMENT_BY_NAME,
    ELEMENTS,
    HOST_ELEMENTS,
    IR_ELEMENT_BY_NAME,
    IR_ELEMENTS,
)
from lowering.bytecode.tables import SCALAR_TAGS
from lowering.element_types import ctype, ir_element
from lowering.ir.types import ElementType
from parser.types import ELEM_BY_NAME, Elem


def test_spellings_are_unique():
    spellings = [e.name for e in ELEMENTS] + [a for e in ELEMENTS for a in e.aliases]
    assert len(spellings) == len(set(spellings))
    assert len({e.name for e in IR_ELEMENTS}) == len(IR_ELEMENTS)
    assert len({e.tag for e in IR_ELEMENTS}) == len(IR_ELEMENTS)


def test_rows_are_consistent():
    for e in ELEMENTS:
        ir = IR_ELEMENT_BY_NAME[e.ir]
        assert ir.is_float == e.is_float, e.name
        assert ir.bits == e.bits, e.name
        if e.is_float:
            assert e.float_max is not None and e.float_max > 0, e.name
        if e.host:
            assert e.numpy or e.raw, f"{e.name}: a host type needs a numpy or raw dtype"


def test_front_end_elements_are_the_rows():
    assert [e.value for e in Elem] == [e.name for e in ELEMENTS]
    for e in ELEMENTS:
        elem = ELEM_BY_NAME[e.name]
        assert (elem.bits, elem.is_float, elem.is_signed) == (e.bits, e.is_float, e.is_signed)
        assert ir_element(elem).value == e.ir
        assert ctype(elem) == e.name


def test_ir_elements_and_bytecode_tags_are_the_rows():
    assert [t.value for t in ElementType] == [e.name for e in IR_ELEMENTS]
    assert {t.value: tag for t, tag in SCALAR_TAGS.items()} == {e.name: e.tag for e in IR_ELEMENTS}
    assert ElementType("tf32").bits == 32
    assert ElementType("i1").bytes == 1


def test_client_dtypes_are_the_host_rows():
    assert list(dtypes.DTYPES) == [e.name for e in HOST_ELEMENTS]
    assert "f4e2m1fn" not in dtypes.DTYPES  # exists only packed, two to a byte
    assert dtypes.numpy_dtype("tf32").name == "uint32"  # cuTile Rust's tf32(u32): f32 bits
    for e in HOST_ELEMENTS:
        assert dtypes.dtype(e.name).itemsize == e.storage_bytes
        assert dtypes.numpy_dtype(e.name).itemsize == e.storage_bytes
        if e.dlpack is not None:
            assert interop._DL_DTYPES[e.dlpack] == e.name


@pytest.mark.parametrize(
    ("name", "exponent_bits", "fraction_bits"),
    [("f16", 5, 10), ("bf16", 8, 7), ("tf32", 8, 10), ("f32", 8, 23)],
)
def test_the_overflow_threshold_is_half_an_ulp_past_the_largest_float(
    name: str, exponent_bits: int, fraction_bits: int
) -> None:
    """Where a literal starts rounding to infinity (the front end's `overflowing_literals`)."""
    largest_exponent = 2 ** (exponent_bits - 1) - 1
    expected = (2 - 2.0 ** -(fraction_bits + 1)) * 2.0**largest_exponent
    element = ELEMENT_BY_NAME[name]
    assert element.overflow_threshold == expected
    assert element.float_max == (2 - 2.0**-fraction_bits) * 2.0**largest_exponent


def test_f64_holds_every_finite_python_float_and_integers_have_no_threshold() -> None:
    assert ELEMENT_BY_NAME["f64"].overflow_threshold == math.inf
    assert ELEMENT_BY_NAME["i32"].overflow_threshold is None
