"""Byte-level primitives of Tile IR bytecode: varints, zigzag varints, fixed-width
little-endian arrays and alignment padding (tileir-facts §2.2).
"""

from __future__ import annotations

from collections.abc import Iterable

PAD_BYTE = 0xCB
DYNAMIC_EXTENT = -(1 << 63)  # INT64_MIN marks a `?` extent/stride in a tensor_view
_U64 = (1 << 64) - 1


def uvarint(value: int) -> bytes:
    """LEB128: 7 bits per byte, low group first, high bit = more bytes follow."""
    if value < 0:
        raise ValueError(f"uvarint needs a non-negative value, got {value}")
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if not value:
            out.append(low)
            return bytes(out)
        out.append(low | 0x80)


def svarint(value: int) -> bytes:
    """Zigzag-encode a signed 64-bit value, then write it as a uvarint."""
    if not -(1 << 63) <= value < (1 << 63):
        raise ValueError(f"svarint needs a signed 64-bit value, got {value}")
    return uvarint(((value << 1) ^ (value >> 63)) & _U64)


def uvarints(values: Iterable[int]) -> bytes:
    """A varint count followed by one varint per value."""
    items = list(values)
    return uvarint(len(items)) + b"".join(uvarint(v) for v in items)


def fixed_array(values: Iterable[int], width: int) -> bytes:
    """A varint count followed by signed little-endian integers of `width` bytes."""
    items = list(values)
    body = b"".join(v.to_bytes(width, "little", signed=True) for v in items)
    return uvarint(len(items)) + body


def pad_to(buf: bytearray, alignment: int) -> None:
    """Append PAD_BYTE until len(buf) is a multiple of `alignment`."""
    buf.extend(bytes([PAD_BYTE]) * (-len(buf) % alignment))
