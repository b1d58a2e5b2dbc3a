"""Matrix multiply-accumulate: `mmaf` (float) and `mmai` (8-bit integer).

Shapes: `[M,K] x [K,N] + [M,N]`, or batched `[B,M,K] x [B,K,N] + [B,M,N]`; the result
has the accumulator's type. lhs and rhs share one element type.

Float element rules (Tile IR 13.3, `MmaFOp::verify`): operand -> allowed accumulator
    f16 -> f16 | f32;  bf16 -> f32;  tf32 -> f32;  f32 -> f32;  f64 -> f64;
    f8E4M3FN, f8E5M2, f4E2M1FN -> f16 | f32.
Integer: i8 x i8 -> i32 (operand signedness given per side; the accumulator is signed).
"""

from __future__ import annotations

from dataclasses import dataclass

from lowering.ir.attributes import Signedness
from lowering.ir.core import Op, Value, attribute, operand, result
from lowering.ir.types import ElementType, TileType

# Keyed by spelling so that element types added later (fp8, fp4) are covered as well.
MMAF_ACCUMULATORS: dict[str, frozenset[str]] = {
    "f16": frozenset({"f16", "f32"}),
    "bf16": frozenset({"f32"}),
    "tf32": frozenset({"f32"}),
    "f32": frozenset({"f32"}),
    "f64": frozenset({"f64"}),
    "f8E4M3FN": frozenset({"f16", "f32"}),
    "f8E5M2": frozenset({"f16", "f32"}),
    "f4E2M1FN": frozenset({"f16", "f32"}),
}


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


def _tiles(op: MmaF | MmaI) -> tuple[TileType, TileType, TileType] | str:
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
        allowed = MMAF_ACCUMULATORS.get(str(lhs.element))
        if allowed is None:
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
        if lhs.element is not ElementType.I8:
            errors.append(f"operands must be i8, got {lhs.element}")
        if acc.element is not ElementType.I32:
            errors.append(f"accumulator must be i32, got {acc.element}")
        return errors
