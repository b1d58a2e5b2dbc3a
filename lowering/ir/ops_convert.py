"""Element-type conversions: float<->float, int<->float, int widening/narrowing, bitcast,
and the byte (re)packing of rank-1 tiles (`pack` / `unpack`).

Every conversion but `pack` / `unpack` keeps the tile shape; only the element type changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from lowering.ir.attributes import IntegerOverflow, RoundingMode, Signedness
from lowering.ir.core import Op, Value, attribute, operand, result
from lowering.ir.types import ElementType, TileType


def _elements(name: str, source: Value, res: Value) -> tuple[ElementType, ElementType] | str:
    src, dst = source.type, res.type
    if not (isinstance(src, TileType) and isinstance(dst, TileType)):
        return f"{name} works on tiles"
    if src.shape != dst.shape:
        return f"{name} keeps the shape: {src} -> {dst}"
    if not (isinstance(src.element, ElementType) and isinstance(dst.element, ElementType)):
        return f"{name} converts numbers, not pointers"
    return src.element, dst.element


def _kind_errors(op: Op, source: Value, res: Value, src_float: bool, dst_float: bool) -> list[str]:
    pair = _elements(op.NAME, source, res)
    if isinstance(pair, str):
        return [pair]
    src, dst = pair
    if src.is_float != src_float or dst.is_float != dst_float:
        return [f"{op.NAME}: unsupported conversion {src} -> {dst}"]
    return []


def _width_errors(op: Op, source: Value, res: Value, widen: bool) -> list[str]:
    pair = _elements(op.NAME, source, res)
    if isinstance(pair, str):
        return [pair]
    src, dst = pair
    if src.is_float or dst.is_float:
        return [f"{op.NAME}: needs integer elements, got {src} -> {dst}"]
    if (dst.bits > src.bits) != widen:
        verb = "widen" if widen else "narrow"
        return [f"{op.NAME} must {verb}: {src} -> {dst}"]
    return []


@dataclass(frozen=True, kw_only=True)
class FToF(Op):
    NAME = "ftof"
    result: Value = result()
    rounding: RoundingMode = attribute(RoundingMode.NEAREST_EVEN)
    source: Value = operand()

    def verify(self) -> list[str]:
        errors = _kind_errors(self, self.source, self.result, src_float=True, dst_float=True)
        if errors:
            return errors
        if self.source.type == self.result.type:
            return ["ftof: converting to the same type is a no-op"]
        to = self.result.type.element  # type: ignore[union-attr]
        allowed = E8M0_ROUNDINGS if to is ElementType.F8E8M0FNU else (RoundingMode.NEAREST_EVEN,)
        if self.rounding not in allowed:
            want = " or ".join(r.name.lower() for r in allowed)
            return [f"ftof to {to} rounds {want}, not {self.rounding.name.lower()}"]
        return []


# Tile IR: conversions to the power-of-two scale type round toward zero or up, never nearest.
E8M0_ROUNDINGS = (RoundingMode.ZERO, RoundingMode.POSITIVE_INF)


@dataclass(frozen=True, kw_only=True)
class IToF(Op):
    NAME = "itof"
    result: Value = result()
    signedness: Signedness = attribute(Signedness.SIGNED)
    rounding: RoundingMode = attribute(RoundingMode.NEAREST_EVEN)
    source: Value = operand()

    def verify(self) -> list[str]:
        return _kind_errors(self, self.source, self.result, src_float=False, dst_float=True)


@dataclass(frozen=True, kw_only=True)
class FToI(Op):
    """Float to integer; `saturating` (bytecode 13.4+) clamps instead of being undefined."""

    NAME = "ftoi"
    result: Value = result()
    saturating: bool = attribute(False)
    signedness: Signedness = attribute(Signedness.SIGNED)
    rounding: RoundingMode = attribute(RoundingMode.NEAREST_INT_TO_ZERO)
    source: Value = operand()

    def verify(self) -> list[str]:
        return _kind_errors(self, self.source, self.result, src_float=True, dst_float=False)


@dataclass(frozen=True, kw_only=True)
class ExtI(Op):
    NAME = "exti"
    result: Value = result()
    signedness: Signedness = attribute(Signedness.SIGNED)
    source: Value = operand()

    def verify(self) -> list[str]:
        return _width_errors(self, self.source, self.result, widen=True)


@dataclass(frozen=True, kw_only=True)
class TruncI(Op):
    NAME = "trunci"
    result: Value = result()
    overflow: IntegerOverflow = attribute(IntegerOverflow.NONE)
    source: Value = operand()

    def verify(self) -> list[str]:
        return _width_errors(self, self.source, self.result, widen=False)


@dataclass(frozen=True, kw_only=True)
class Bitcast(Op):
    """Reinterpret the bits of each element as another type of the same width."""

    NAME = "bitcast"
    result: Value = result()
    source: Value = operand()

    def verify(self) -> list[str]:
        pair = _elements(self.NAME, self.source, self.result)
        if isinstance(pair, str):
            return [pair]
        src, dst = pair
        return [] if src.bits == dst.bits else [f"bitcast needs equal widths: {src} -> {dst}"]


def _pack_errors(op: Op, source: Value, res: Value, byte_side: str) -> list[str]:
    """`pack` / `unpack` (bytecode 13.3): rank-1 tiles of the same number of bits, one side
    `i8` bytes, the other of another width (`bitcast` covers 8-bit elements)."""
    src, dst = source.type, res.type
    if not (isinstance(src, TileType) and isinstance(dst, TileType)):
        return [f"{op.NAME} works on tiles"]
    if not (isinstance(src.element, ElementType) and isinstance(dst.element, ElementType)):
        return [f"{op.NAME} reinterprets numbers, not pointers"]
    if src.rank != 1 or dst.rank != 1:
        return [f"{op.NAME} needs rank-1 tiles: {src} -> {dst}"]
    bytes_, other = (dst, src) if byte_side == "result" else (src, dst)
    if bytes_.element is not ElementType.I8:
        return [f"the {byte_side} of {op.NAME} must be i8 bytes, got {bytes_}"]
    if other.element.bits == 8:
        return [f"{op.NAME} of 8-bit {other.element} is a bitcast"]
    if src.element.bits * src.shape[0] != dst.element.bits * dst.shape[0]:
        return [f"{op.NAME} keeps the number of bits: {src} -> {dst}"]
    return []


@dataclass(frozen=True, kw_only=True)
class Pack(Op):
    """A rank-1 tile's bits as a rank-1 `i8` tile (two fp4/i4 values per byte, four bytes per
    i32, ...)."""

    NAME = "pack"
    result: Value = result()
    source: Value = operand()

    def verify(self) -> list[str]:
        return _pack_errors(self, self.source, self.result, "result")


@dataclass(frozen=True, kw_only=True)
class Unpack(Op):
    """A rank-1 `i8` tile's bits as a rank-1 tile of another element type."""

    NAME = "unpack"
    result: Value = result()
    source: Value = operand()

    def verify(self) -> list[str]:
        return _pack_errors(self, self.source, self.result, "source")
