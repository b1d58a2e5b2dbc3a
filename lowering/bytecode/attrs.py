"""Self-contained attributes (tag varint + payload) and the hint dictionaries of ops
(tileir-facts §2.7, BytecodeWriter.cpp `writeSingleAttribute`).

An op attribute is written without a tag; the elements of arrays and dictionaries are
self-contained. An op's `optimization_hints` is an untagged dictionary keyed by arch
whose values are self-contained dictionaries; keys are sorted, as MLIR dictionaries are.
"""

from __future__ import annotations

from collections.abc import Sequence

from lowering.bytecode.encoding import svarint, uvarint
from lowering.bytecode.tables import BytecodeError, ModuleTables, float_bits
from lowering.ir.attributes import FloatAttr, IntegerAttr, LoadStoreHints, TypedAttr
from lowering.ir.types import ElementType

TAG_INTEGER, TAG_FLOAT, TAG_BOOL, TAG_ARRAY, TAG_DICT = 1, 2, 3, 6, 10


def integer(tables: ModuleTables, element: ElementType, value: int) -> bytes:
    """Integer: type idx, then the value zero-extended from its width as a varint."""
    if element.is_float:
        raise BytecodeError(f"integer attribute of float type {element}")
    if not -(1 << (element.bits - 1)) <= value < (1 << element.bits):
        raise BytecodeError(f"{value} does not fit {element}")
    masked = value & ((1 << element.bits) - 1)
    return uvarint(TAG_INTEGER) + uvarint(tables.type(element)) + uvarint(masked)


def floating(tables: ModuleTables, element: ElementType, value: float) -> bytes:
    """Float: type idx, then the raw bits as an APInt (<= 8 bits: one byte; else zigzag)."""
    if not element.is_float:
        raise BytecodeError(f"float attribute of integer type {element}")
    bits = float_bits(element, value)
    if element.bits <= 8:
        payload = bytes([bits])
    else:  # the writer zigzags the raw bits read as a signed 64-bit number
        payload = svarint(bits - (1 << 64) if bits >= 1 << 63 else bits)
    return uvarint(TAG_FLOAT) + uvarint(tables.type(element)) + payload


def boolean(value: bool) -> bytes:
    return uvarint(TAG_BOOL) + bytes([bool(value)])


def typed(tables: ModuleTables, attr: TypedAttr) -> bytes:
    if isinstance(attr, IntegerAttr):
        return integer(tables, attr.type, attr.value)
    if isinstance(attr, FloatAttr):
        return floating(tables, attr.type, attr.value)
    raise BytecodeError(f"not a typed attribute: {attr!r}")


def typed_array(tables: ModuleTables, attrs: Sequence[TypedAttr]) -> bytes:
    """An Array op attribute (untagged): count, then self-contained elements."""
    return uvarint(len(attrs)) + b"".join(typed(tables, a) for a in attrs)


def dictionary(tables: ModuleTables, items: Sequence[tuple[str, bytes]]) -> bytes:
    """A self-contained dictionary of already-encoded self-contained values (keys sorted)."""
    body = b"".join(uvarint(tables.string(k)) + v for k, v in sorted(items))
    return uvarint(TAG_DICT) + uvarint(len(items)) + body


def load_store_hints(tables: ModuleTables, hints: Sequence[LoadStoreHints]) -> bytes:
    """The `optimization_hints` op attribute of a view load/store (untagged, by arch).

    The caller checks versions: the "default" arch key exists from bytecode 13.3.
    """
    out = uvarint(len(hints))
    for hint in sorted(hints, key=lambda h: h.arch):
        items: list[tuple[str, bytes]] = []
        if hint.allow_tma is not None:
            items.append(("allow_tma", boolean(hint.allow_tma)))
        if hint.latency is not None:
            items.append(("latency", integer(tables, ElementType.I32, hint.latency)))
        out += uvarint(tables.string(hint.arch)) + dictionary(tables, items)
    return out
