"""Matrix multiply-accumulate: `mmaf` (float), `mmai` (8-bit integer) and `mmaf_scaled`
(block-scaled fp8/fp4).

Shapes: `[M,K] x [K,N] + [M,N]`, or batched `[B,M,K] x [B,K,N] + [B,M,N]`; the result
has the accumulator's type. lhs and rhs share one element type.

Element rules (Tile IR 13.3, `MmaFOp::verify`, `MmaIOp::verify`, `MmaFScaledOp::verify`)
are read from the element table, which the front end's `parser.prelude.mma` reads too:
`IRElement.mma_accumulators` (operand -> allowed accumulators: f16 -> f16 | f32, bf16, tf32,
f32 -> f32, f64 -> f64, fp8 and fp4 -> f16 | f32, i8 -> i32) and `MMA_SCALE_BLOCKS`. Integer
operand signedness is given per side; the accumulator is signed.
"""

from __future__ import annotations

from dataclasses import dataclass

from client_stubs.element_table import IR_ELEMENT_BY_NAME, MMA_SCALE_BLOCKS
from lowering.ir.attributes import Signedness
from lowering.ir.core import Op, Value, attribute, operand, result
from lowering.ir.types import ElementType, TileType


def mma_shape_errors(lhs: TileType, rhs: TileType, acc: TileType) -> list[str]:
    """The shape rules shared by mmaf and mmai."""
    if not lhs.rank == rhs.rank == acc.rank:
        return ["lhs, rhs and acc must have the same rank"]
    if lhs.rank not in (2, 3):
        return ["operands must be rank 2 ([M,K]) or rank 3 (batched [B,M,K])"]
    batched = lhs.rank == 3
    if batched and not lhs.shape[0] == rhs.shape[0] == acc.shape[0]:
        return [f"batch sizes differ: {lhs}, {rhs}, {acc}"]
    m, k = lhs.shape[-2:]
    k2, n = rhs.shape[-2:]
    if k != k2:
        return [f"K of lhs ({k}) differs from K of rhs ({k2})"]
    if acc.shape[-2:] != (m, n):
        return [f"acc must be [{m},{n}] ([M,N]), got {acc}"]
    return []


def _tiles(op: MmaF | MmaI | MmaFScaled) -> tuple[TileType, TileType, TileType] | str:
    types = (op.lhs.type, op.rhs.type, op.acc.type)
    if not all(isinstance(t, TileType) and isinstance(t.element, ElementType) for t in types):
        return "lhs, rhs and acc must be tiles of numbers"
    if op.result.type != op.acc.type:
        return f"result must have the accumulator's type {op.acc.type}"
    if op.lhs.type.element != op.rhs.type.element:  # type: ignore[union-attr]
        return "lhs and rhs must share one element type"
    return types  # type: ignore[return-value]


@dataclass(frozen=True, kw_only=True)
class MmaF(Op):
    """`result = lhs @ rhs + acc` on floats; `fast_acc` (bytecode 13.3+) trades accuracy
    of the fp8 accumulation for speed."""

    NAME = "mmaf"
    result: Value = result()
    fast_acc: bool = attribute(False)
    lhs: Value = operand()
    rhs: Value = operand()
    acc: Value = operand()

    def verify(self) -> list[str]:
        tiles = _tiles(self)
        if isinstance(tiles, str):
            return [tiles]
        lhs, rhs, acc = tiles
        errors = mma_shape_errors(lhs, rhs, acc)
        allowed = IR_ELEMENT_BY_NAME[str(lhs.element)].mma_accumulators
        if not lhs.element.is_float or not allowed:
            errors.append(f"unsupported operand element type {lhs.element}")
        elif str(acc.element) not in allowed:
            want = " or ".join(sorted(allowed))
            errors.append(f"{lhs.element} operands need a {want} accumulator, got {acc.element}")
        return errors


@dataclass(frozen=True, kw_only=True)
class MmaI(Op):
    """`result = lhs @ rhs + acc` on i8 operands with an i32 accumulator."""

    NAME = "mmai"
    result: Value = result()
    signedness_lhs: Signedness = attribute(Signedness.SIGNED)
    signedness_rhs: Signedness = attribute(Signedness.SIGNED)
    lhs: Value = operand()
    rhs: Value = operand()
    acc: Value = operand()

    def verify(self) -> list[str]:
        tiles = _tiles(self)
        if isinstance(tiles, str):
            return [tiles]
        lhs, rhs, acc = tiles
        errors = mma_shape_errors(lhs, rhs, acc)
        allowed = IR_ELEMENT_BY_NAME[str(lhs.element)].mma_accumulators
        if lhs.element.is_float or not allowed:
            errors.append(f"operands must be i8, got {lhs.element}")
        elif str(acc.element) not in allowed:
            errors.append(f"accumulator must be i32, got {acc.element}")
        return errors


def mmaf_scaled_errors(
    lhs: TileType, rhs: TileType, lhs_scale: TileType, rhs_scale: TileType
) -> list[str]:
    """The element and scale-shape rules of `mmaf_scaled` (after `mma_shape_errors`)."""
    if lhs_scale.element != rhs_scale.element:
        return ["lhs_scale and rhs_scale must share one element type"]
    if not lhs.rank == lhs_scale.rank == rhs_scale.rank:
        return ["scales must have the operands' rank"]
    blocks = MMA_SCALE_BLOCKS.get(str(lhs_scale.element), {}).get(str(lhs.element))
    if blocks is None:
        return [f"{lhs_scale.element} scales do not scale {lhs.element} operands"]
    batch = lhs.shape[:-2]
    (m, k), (n,) = lhs.shape[-2:], rhs.shape[-1:]
    groups = lhs_scale.shape[-1]
    if lhs_scale.shape != (*batch, m, groups) or rhs_scale.shape != (*batch, groups, n):
        want = f"{[*batch, m, groups]} and {[*batch, groups, n]}"
        return [f"scales must be {want}, got {lhs_scale} and {rhs_scale}"]
    if groups < 1 or k % groups or k // groups not in blocks:
        sizes = " or ".join(map(str, blocks))
        return [f"one {lhs_scale.element} scale covers {sizes} K elements of {lhs.element}"]
    return []


@dataclass(frozen=True, kw_only=True)
class MmaFScaled(Op):
    """`result = (lhs * lhs_scale) @ (rhs * rhs_scale) + acc` (bytecode 13.3): fp8/fp4
    operands, each scale element covering a block of consecutive K elements, f32 accumulator."""

    NAME = "mmaf_scaled"
    result: Value = result()
    lhs: Value = operand()
    rhs: Value = operand()
    acc: Value = operand()
    lhs_scale: Value = operand()
    rhs_scale: Value = operand()

    def verify(self) -> list[str]:
        tiles = _tiles(self)
        if isinstance(tiles, str):
            return [tiles]
        lhs, rhs, acc = tiles
        scales = (self.lhs_scale.type, self.rhs_scale.type)
        if not all(isinstance(t, TileType) and isinstance(t.element, ElementType) for t in scales):
            return ["lhs_scale and rhs_scale must be tiles of numbers"]
        errors = mma_shape_errors(lhs, rhs, acc)
        if acc.element is not ElementType.F32:
            errors.append(f"the accumulator must be f32, got {acc.element}")
        return errors or mmaf_scaled_errors(lhs, rhs, *scales)  # type: ignore[arg-type]
