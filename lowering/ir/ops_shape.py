"""Tile shape ops: permute, cat, extract, iota, and the tensor-view extent query.

`broadcast` and `reshape` live in `ops_core`; `get_index_space_shape` in `ops_memory`.
"""

from __future__ import annotations

from dataclasses import dataclass

from lowering.ir.core import Op, Value, attribute, operand, operands, result
from lowering.ir.types import I32, ElementType, TensorViewType, TileType


def _tile_pair(source: Value, res: Value) -> tuple[TileType, TileType] | str:
    src, dst = source.type, res.type
    if not (isinstance(src, TileType) and isinstance(dst, TileType)):
        return "works on tiles"
    if src.element != dst.element:
        return f"source and result element types differ: {src} -> {dst}"
    if src.rank != dst.rank:
        return f"source and result ranks differ: {src} -> {dst}"
    return src, dst


@dataclass(frozen=True, kw_only=True)
class Permute(Op):
    """Reorder dimensions: result dim i is source dim `permutation[i]` (transpose = [1, 0])."""

    NAME = "permute"
    result: Value = result()
    permutation: tuple[int, ...] = attribute()
    source: Value = operand()

    def verify(self) -> list[str]:
        pair = _tile_pair(self.source, self.result)
        if isinstance(pair, str):
            return [pair]
        src, dst = pair
        if src.rank < 2:
            return [f"needs rank 2 or more, got {src}"]
        if sorted(self.permutation) != list(range(src.rank)):
            return [
                f"permutation {list(self.permutation)} is not a permutation of 0..{src.rank - 1}"
            ]
        want = tuple(src.shape[p] for p in self.permutation)
        if dst.shape != want:
            return [f"result must be {TileType(src.element, want)}, got {dst}"]
        return []


@dataclass(frozen=True, kw_only=True)
class Cat(Op):
    """Concatenate two tiles along `dim`; the other dimensions must match."""

    NAME = "cat"
    result: Value = result()
    dim: int = attribute()
    lhs: Value = operand()
    rhs: Value = operand()

    def verify(self) -> list[str]:
        first = _tile_pair(self.lhs, self.result)
        second = _tile_pair(self.rhs, self.result)
        for pair in (first, second):
            if isinstance(pair, str):
                return [pair]
        assert not isinstance(first, str) and not isinstance(second, str)
        (lhs, dst), (rhs, _) = first, second
        if not 0 <= self.dim < lhs.rank:
            return [f"dim {self.dim} is out of range for rank {lhs.rank}"]
        want = tuple(
            a + b if i == self.dim else a
            for i, (a, b) in enumerate(zip(lhs.shape, rhs.shape, strict=True))
        )
        others = [i for i in range(lhs.rank) if i != self.dim]
        if any(lhs.shape[i] != rhs.shape[i] for i in others):
            return [f"shapes differ outside dim {self.dim}: {lhs}, {rhs}"]
        if dst.shape != want:
            return [f"result must be {TileType(lhs.element, want)}, got {dst}"]
        return []


@dataclass(frozen=True, kw_only=True)
class Extract(Op):
    """The `indices`-th block of `source` cut into blocks of the result's shape.

    Indices are slice numbers (not element offsets), one `tile<i32>` per dimension;
    every result dimension must divide the source dimension.
    """

    NAME = "extract"
    result: Value = result()
    source: Value = operand()
    indices: tuple[Value, ...] = operands()

    def verify(self) -> list[str]:
        pair = _tile_pair(self.source, self.result)
        if isinstance(pair, str):
            return [pair]
        src, dst = pair
        errors = []
        if any(s % d for s, d in zip(src.shape, dst.shape, strict=True)):
            errors.append(f"result shape must divide the source shape: {src} -> {dst}")
        if len(self.indices) != src.rank:
            errors.append(f"expected {src.rank} indices, got {len(self.indices)}")
        elif any(i.type != I32 for i in self.indices):
            errors.append("indices must be tile<i32>")
        return errors


@dataclass(frozen=True, kw_only=True)
class Iota(Op):
    """A rank-1 integer tile holding 0, 1, ..., n-1."""

    NAME = "iota"
    result: Value = result()

    def verify(self) -> list[str]:
        ty = self.result.type
        if not (
            isinstance(ty, TileType)
            and isinstance(ty.element, ElementType)
            and not ty.element.is_float
            and ty.rank == 1
        ):
            return [f"result must be a rank-1 integer tile, got {ty}"]
        if ty.element.bits < 64 and ty.shape[0] > 1 << ty.element.bits:
            return [f"{ty.shape[0]} elements do not fit {ty.element}"]
        return []


@dataclass(frozen=True, kw_only=True)
class GetTensorShape(Op):
    """The extents of a tensor view, one rank-0 integer tile per dimension (all one type)."""

    NAME = "get_tensor_shape"
    extents: tuple[Value, ...] = result()
    view: Value = operand()

    def verify(self) -> list[str]:
        view = self.view.type
        if not isinstance(view, TensorViewType):
            return ["operand must be a tensor_view"]
        if len(self.extents) != view.rank:
            return [f"expected {view.rank} results, got {len(self.extents)}"]
        types = {v.type for v in self.extents}
        first = self.extents[0].type if self.extents else I32
        ok = (
            isinstance(first, TileType)
            and first.rank == 0
            and isinstance(first.element, ElementType)
            and not first.element.is_float
        )
        if len(types) > 1 or not ok:
            return ["results must be rank-0 integer tiles of one type"]
        return []
