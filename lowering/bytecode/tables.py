"""The interned module tables of Tile IR bytecode: strings, types and constants.

Each table hands out dense 0-based indices in first-use order, so one module always
produces the same tables. Types are encoded per bytecode version (tileir-facts §2.5);
constants hold raw little-endian element data, one element meaning a splat (§2.4).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lowering.bytecode.encoding import DYNAMIC_EXTENT, fixed_array, pad_to, uvarint
from lowering.ir.types import (
    ElementType,
    GatherScatterViewType,
    PartitionViewType,
    PointerType,
    StridedViewType,
    TensorViewType,
    TileType,
    TokenType,
)

Version = tuple[int, int]

SCALAR_TAGS: dict[ElementType, int] = {e: e.spec.tag for e in ElementType}
TAG_PTR, TAG_TILE, TAG_TENSOR_VIEW, TAG_PARTITION_VIEW, TAG_FUNCTION, TAG_TOKEN = (
    12,
    13,
    14,
    15,
    16,
    17,
)
TAG_GATHER_SCATTER_VIEW, TAG_STRIDED_VIEW = 20, 21  # bytecode 13.3+


class BytecodeError(ValueError):
    """The module cannot be expressed in the requested bytecode version."""


@dataclass(frozen=True)
class FunctionSignature:
    """A function type: parameter and result types."""

    params: tuple[Any, ...]
    results: tuple[Any, ...] = ()


class Interner:
    """key bytes -> dense index, in first-use order."""

    def __init__(self) -> None:
        self._index: dict[bytes, int] = {}

    def intern(self, key: bytes) -> int:
        return self._index.setdefault(key, len(self._index))

    def __len__(self) -> int:
        return len(self._index)

    def keys(self) -> tuple[bytes, ...]:
        """The interned items in index order."""
        return tuple(self._index)

    def encode(self, offset_width: int) -> bytes:
        """count varint, padding to `offset_width`, offsets, then the items."""
        buf = bytearray(uvarint(len(self._index)))
        pad_to(buf, offset_width)
        offset = 0
        for key in self._index:
            buf += offset.to_bytes(offset_width, "little")
            offset += len(key)
        for key in self._index:
            buf += key
        return bytes(buf)


class ModuleTables:
    """The string, type and constant tables of one bytecode module."""

    def __init__(self, version: Version) -> None:
        self.version = version
        self.strings = Interner()
        self.types = Interner()
        self.constants = Interner()

    def at_least(self, major: int, minor: int) -> bool:
        return self.version >= (major, minor)

    def string(self, text: str) -> int:
        return self.strings.intern(text.encode("utf-8"))

    def type(self, ty: Any) -> int:
        """Intern a type (registering the types it refers to first)."""
        encoder = _TYPE_ENCODERS.get(type(ty))
        if encoder is None:
            raise BytecodeError(f"no bytecode encoding for type {ty!r}")
        return self.types.intern(encoder(self, ty))

    def constant(self, tile: TileType, values: Sequence[int | float | bool]) -> int:
        if not isinstance(tile.element, ElementType):
            raise BytecodeError(f"constants of {tile} are not supported")
        data = encode_constant_data(tile.element, values, math.prod(tile.shape))
        return self.constants.intern(uvarint(len(data)) + data)


def _scalar(tables: ModuleTables, ty: ElementType) -> bytes:
    if not tables.at_least(*ty.spec.since):
        since = "{}.{}".format(*ty.spec.since)
        raise BytecodeError(f"element type {ty} needs bytecode {since} or newer")
    return uvarint(SCALAR_TAGS[ty])


def _token(tables: ModuleTables, ty: TokenType) -> bytes:
    return uvarint(TAG_TOKEN)


def _pointer(tables: ModuleTables, ty: PointerType) -> bytes:
    pointee = tables.type(ty.pointee)
    flags = uvarint(0) if tables.at_least(13, 4) else b""  # 13.4: no ptr attribute
    return uvarint(TAG_PTR) + flags + uvarint(pointee)


def _tile(tables: ModuleTables, ty: TileType) -> bytes:
    element = tables.type(ty.element)
    return uvarint(TAG_TILE) + uvarint(element) + fixed_array(ty.shape, 8)


def _extents(values: tuple[int | None, ...]) -> bytes:
    return fixed_array((DYNAMIC_EXTENT if v is None else v for v in values), 8)


def _tensor_view(tables: ModuleTables, ty: TensorViewType) -> bytes:
    element = tables.type(ty.element)
    flags = uvarint(0) if tables.at_least(13, 4) else b""  # 13.4: no ptr attribute
    body = uvarint(element) + _extents(ty.shape) + _extents(ty.strides)
    return uvarint(TAG_TENSOR_VIEW) + flags + body


def _partition_view(tables: ModuleTables, ty: PartitionViewType) -> bytes:
    view = tables.type(ty.tensor_view)
    core = fixed_array(ty.tile_shape, 4) + uvarint(view) + fixed_array(ty.dim_map, 4)
    padding = b"" if ty.padding is None else uvarint(ty.padding.value)
    present = uvarint(0 if ty.padding is None else 1)
    if tables.at_least(13, 3):  # unified leading flags varint
        return uvarint(TAG_PARTITION_VIEW) + present + core + padding
    return uvarint(TAG_PARTITION_VIEW) + core + present + padding


def _gather_scatter_view(tables: ModuleTables, ty: GatherScatterViewType) -> bytes:
    """13.3+: flags (b0 padding); tile shape; tensor view; sparse dim; [padding]."""
    _require_views(tables)
    view = tables.type(ty.tensor_view)
    out = uvarint(TAG_GATHER_SCATTER_VIEW) + uvarint(0 if ty.padding is None else 1)
    out += fixed_array(ty.tile_shape, 4) + uvarint(view) + uvarint(ty.sparse_dim)
    return out + (b"" if ty.padding is None else uvarint(ty.padding.value))


def _strided_view(tables: ModuleTables, ty: StridedViewType) -> bytes:
    """13.3+: flags (b0 padding); tile shape; traversal strides; tensor view; dim map;
    [padding]."""
    _require_views(tables)
    view = tables.type(ty.tensor_view)
    out = uvarint(TAG_STRIDED_VIEW) + uvarint(0 if ty.padding is None else 1)
    out += fixed_array(ty.tile_shape, 4) + fixed_array(ty.traversal_strides, 4)
    out += uvarint(view) + fixed_array(ty.dim_map, 4)
    return out + (b"" if ty.padding is None else uvarint(ty.padding.value))


def _require_views(tables: ModuleTables) -> None:
    if not tables.at_least(13, 3):
        raise BytecodeError("gather/scatter and strided views need bytecode 13.3 or later")


def _function(tables: ModuleTables, ty: FunctionSignature) -> bytes:
    params = [tables.type(p) for p in ty.params]
    results = [tables.type(r) for r in ty.results]
    out = uvarint(TAG_FUNCTION) + uvarint(len(params)) + b"".join(map(uvarint, params))
    return out + uvarint(len(results)) + b"".join(map(uvarint, results))


_TYPE_ENCODERS: dict[type, Callable[[ModuleTables, Any], bytes]] = {
    ElementType: _scalar,
    TokenType: _token,
    PointerType: _pointer,
    TileType: _tile,
    TensorViewType: _tensor_view,
    PartitionViewType: _partition_view,
    GatherScatterViewType: _gather_scatter_view,
    StridedViewType: _strided_view,
    FunctionSignature: _function,
}


def encode_constant_data(
    element: ElementType, values: Sequence[int | float | bool], count: int
) -> bytes:
    """Raw dense-elements data: one value is a splat, otherwise `count` values."""
    if len(values) not in (1, count):
        raise BytecodeError(f"constant has {len(values)} values for {count} elements")
    if element is ElementType.I1:
        return _bool_data(values)
    return b"".join(_element_bytes(element, v) for v in values)


def float_bits(element: ElementType, value: float) -> int:
    """The raw bit pattern of `value` rounded to the float type `element`."""
    return int.from_bytes(_element_bytes(element, value), "little")


def _bool_data(values: Sequence[int | float | bool]) -> bytes:
    if len(values) == 1:  # splat: one byte, all ones or zero
        return b"\xff" if values[0] else b"\x00"
    packed = bytearray((len(values) + 7) // 8)
    for i, v in enumerate(values):
        if v:
            packed[i // 8] |= 1 << (i % 8)
    return bytes(packed)


def _element_bytes(element: ElementType, value: int | float | bool) -> bytes:
    if element.is_float:
        try:
            return _float_bytes(element, float(value))
        except (OverflowError, ValueError, struct.error) as exc:
            raise BytecodeError(f"constant {value} does not fit {element}") from exc
    if isinstance(value, float):
        raise BytecodeError(f"integer constant of {element} got float {value}")
    bits = element.bits
    if not -(1 << (bits - 1)) <= value < (1 << bits):
        raise BytecodeError(f"constant {value} does not fit {element}")
    return (int(value) & ((1 << bits) - 1)).to_bytes(element.bytes, "little")


def _f32_bits(value: float) -> int:
    return int.from_bytes(struct.pack("<f", value), "little")


def _round_f32_bits(value: float, drop: int, nan: int) -> int:
    """Round an f32 to its top (32 - drop) bits, nearest-even; `nan` for NaN inputs."""
    if math.isnan(value):
        return nan
    bits = _f32_bits(value)
    return (bits + ((bits >> drop) & 1) + (1 << (drop - 1)) - 1) >> drop


def _bf16(value: float) -> bytes:
    return _round_f32_bits(value, 16, 0x7FC0).to_bytes(2, "little")


def _tf32(value: float) -> bytes:
    return _round_f32_bits(value, 13, 0x3FE00).to_bytes(3, "little")


def _float_bytes(element: ElementType, value: float) -> bytes:
    """One float constant; fp8/fp4 take a byte each (MLIR's dense layout rounds sub-byte
    elements up to a byte)."""
    fmt = element.spec.float_format
    if fmt is not None:
        return fmt.encode(value).to_bytes(1, "little")
    return _FLOAT_PACKERS[element](value)


_FLOAT_PACKERS: dict[ElementType, Callable[[float], bytes]] = {
    ElementType.F16: lambda v: struct.pack("<e", v),
    ElementType.BF16: _bf16,
    ElementType.F32: lambda v: struct.pack("<f", v),
    ElementType.TF32: _tf32,
    ElementType.F64: lambda v: struct.pack("<d", v),
}
