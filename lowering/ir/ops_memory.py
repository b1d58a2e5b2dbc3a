"""Memory ops: tensor and partition views, and token-ordered view loads and stores."""

from __future__ import annotations

from dataclasses import dataclass

from lowering.ir.attributes import LoadStoreHints, MemoryOrdering, MemoryScope
from lowering.ir.core import Op, Value, attribute, operand, operands, optional_operand, result
from lowering.ir.types import (
    I32,
    ElementType,
    GatherScatterViewType,
    PartitionViewType,
    PointerType,
    StridedViewType,
    TensorViewType,
    TileType,
    TokenType,
)


@dataclass(frozen=True, kw_only=True)
class MakeTensorView(Op):
    """View global memory at `base`; dynamic extents/strides come as operands, in order."""

    NAME = "make_tensor_view"
    result: Value = result()
    base: Value = operand()
    dynamic_shape: tuple[Value, ...] = operands()
    dynamic_strides: tuple[Value, ...] = operands()

    def verify(self) -> list[str]:
        view = self.result.type
        if not isinstance(view, TensorViewType):
            return ["result must be a tensor_view"]
        errors = []
        base = self.base.type
        if not (isinstance(base, TileType) and base.element == PointerType(view.element)):
            errors.append(f"base must be tile<ptr<{view.element}>>")
        if len(self.dynamic_shape) != sum(d is None for d in view.shape):
            errors.append("one operand per dynamic extent")
        if len(self.dynamic_strides) != sum(s is None for s in view.strides):
            errors.append("one operand per dynamic stride")
        if len(view.shape) != len(view.strides):
            errors.append("shape and strides differ in rank")
        return errors


@dataclass(frozen=True, kw_only=True)
class MakePartitionView(Op):
    NAME = "make_partition_view"
    result: Value = result()
    tensor_view: Value = operand()

    def verify(self) -> list[str]:
        part = self.result.type
        if not isinstance(part, PartitionViewType):
            return ["result must be a partition_view"]
        if part.tensor_view != self.tensor_view.type:
            return ["partition's tensor_view type differs from the operand's"]
        if len(part.tile_shape) != part.tensor_view.rank:
            return ["tile rank must equal the tensor rank"]
        if sorted(part.dim_map) != list(range(part.tensor_view.rank)):
            return ["dim_map must be a permutation"]
        return []


@dataclass(frozen=True, kw_only=True)
class MakeGatherScatterView(Op):
    """A gather/scatter view of a tensor view (its layout is in the result type)."""

    NAME = "make_gather_scatter_view"
    result: Value = result()
    tensor_view: Value = operand()

    def verify(self) -> list[str]:
        view = self.result.type
        if not isinstance(view, GatherScatterViewType):
            return ["result must be a gather_scatter_view"]
        if view.tensor_view != self.tensor_view.type:
            return ["the view's tensor_view type differs from the operand's"]
        if not 0 <= view.sparse_dim < len(view.tile_shape) == view.tensor_view.rank:
            return ["sparse_dim must be a dimension of the tile, of the tensor's rank"]
        return []


@dataclass(frozen=True, kw_only=True)
class MakeStridedView(Op):
    """A strided view of a tensor view (tile, traversal strides, dim map in its type)."""

    NAME = "make_strided_view"
    result: Value = result()
    tensor_view: Value = operand()

    def verify(self) -> list[str]:
        view = self.result.type
        if not isinstance(view, StridedViewType):
            return ["result must be a strided_view"]
        if view.tensor_view != self.tensor_view.type:
            return ["the view's tensor_view type differs from the operand's"]
        rank = view.tensor_view.rank
        if not len(view.tile_shape) == len(view.traversal_strides) == rank:
            return ["tile and traversal strides must have the tensor's rank"]
        if sorted(view.dim_map) != list(range(rank)):
            return ["dim_map must be a permutation"]
        return []


def hint_errors(hints: tuple[LoadStoreHints, ...]) -> list[str]:
    """Load/store hints: one entry per arch, latency in 1..10 (tileiras's range)."""
    errors = []
    archs = [h.arch for h in hints]
    if len(set(archs)) != len(archs):
        errors.append(f"hints name an arch more than once: {archs}")
    for h in hints:
        if h.latency is not None and not 1 <= h.latency <= 10:
            errors.append(f"{h.arch}: latency must be in 1..10, got {h.latency}")
    return errors


def _index_errors(view: Value, index: tuple[Value, ...]) -> list[str]:
    """One i32 index per tile dimension; a gather/scatter view's first is a rank-1 tile of
    the indices along its sparse dimension."""
    part = view.type
    if not isinstance(part, (PartitionViewType, GatherScatterViewType, StridedViewType)):
        return ["view operand must be a view"]
    if len(index) != len(part.tile_shape):
        return [f"expected {len(part.tile_shape)} indices, got {len(index)}"]
    scalars = index[1:] if isinstance(part, GatherScatterViewType) else index
    if any(i.type != I32 for i in scalars):
        return ["indices must be tile<i32>"]
    if isinstance(part, GatherScatterViewType):
        sparse = index[0].type
        size = part.tile_shape[part.sparse_dim]
        if sparse != TileType(ElementType.I32, (size,)):
            return [f"the sparse index must be tile<{size}xi32>"]
    return []


@dataclass(frozen=True, kw_only=True)
class LoadViewTko(Op):
    NAME = "load_view_tko"
    tile: Value = result()
    result_token: Value = result()
    ordering: MemoryOrdering = attribute(MemoryOrdering.WEAK)
    scope: MemoryScope | None = attribute(None)
    hints: tuple[LoadStoreHints, ...] = attribute(())
    view: Value = operand()
    index: tuple[Value, ...] = operands()
    token: Value | None = optional_operand()

    def verify(self) -> list[str]:
        errors = _index_errors(self.view, self.index) + hint_errors(self.hints)
        part = self.view.type
        if not errors and isinstance(
            part, (PartitionViewType, GatherScatterViewType, StridedViewType)
        ):
            expected = TileType(part.tensor_view.element, part.tile_shape)
            if self.tile.type != expected:
                errors.append(f"loaded tile must be {expected}")
        return errors


@dataclass(frozen=True, kw_only=True)
class StoreViewTko(Op):
    NAME = "store_view_tko"
    result_token: Value = result()
    ordering: MemoryOrdering = attribute(MemoryOrdering.WEAK)
    scope: MemoryScope | None = attribute(None)
    hints: tuple[LoadStoreHints, ...] = attribute(())
    tile: Value = operand()
    view: Value = operand()
    index: tuple[Value, ...] = operands()
    token: Value | None = optional_operand()

    def verify(self) -> list[str]:
        errors = _index_errors(self.view, self.index) + hint_errors(self.hints)
        part = self.view.type
        if not errors and isinstance(part, PartitionViewType):
            expected = TileType(part.tensor_view.element, part.tile_shape)
            if self.tile.type != expected:
                errors.append(f"stored tile must be {expected}, got {self.tile.type}")
        if not isinstance(self.result_token.type, TokenType):
            errors.append("result must be a token")
        return errors


@dataclass(frozen=True, kw_only=True)
class GetIndexSpaceShape(Op):
    """Number of tiles along each axis of a partition view (one i32 result per axis)."""

    NAME = "get_index_space_shape"
    counts: tuple[Value, ...] = result()
    view: Value = operand()


def _pointee(ptrs: Value) -> PointerType | None:
    ty = ptrs.type
    if isinstance(ty, TileType) and isinstance(ty.element, PointerType):
        return ty.element
    return None


@dataclass(frozen=True, kw_only=True)
class Offset(Op):
    """Advance each pointer of a pointer tile by an element count (same shape)."""

    NAME = "offset"
    result: Value = result()
    ptrs: Value = operand()
    offsets: Value = operand()

    def verify(self) -> list[str]:
        if _pointee(self.ptrs) is None:
            return ["ptrs must be a tile of pointers"]
        offsets = self.offsets.type
        if not (isinstance(offsets, TileType) and offsets.element == I32.element):
            return ["offsets must be an i32 tile"]
        if self.result.type != self.ptrs.type:
            return ["result type must equal the pointer tile's"]
        if offsets.shape != self.ptrs.type.shape:  # type: ignore[union-attr]
            return ["offsets and pointers differ in shape"]
        return []


def _mask_errors(mask: Value | None, shape: tuple[int, ...]) -> list[str]:
    if mask is None:
        return []
    if mask.type != TileType(ElementType.I1, shape):
        return [f"mask must be tile<{''.join(f'{d}x' for d in shape)}i1>"]
    return []


@dataclass(frozen=True, kw_only=True)
class LoadPtrTko(Op):
    """Load through a tile of pointers; masked-off lanes read `padding` (or are undefined)."""

    NAME = "load_ptr_tko"
    tile: Value = result()
    result_token: Value = result()
    ordering: MemoryOrdering = attribute(MemoryOrdering.WEAK)
    scope: MemoryScope | None = attribute(None)
    hints: tuple[LoadStoreHints, ...] = attribute(())
    ptrs: Value = operand()
    mask: Value | None = optional_operand()
    padding: Value | None = optional_operand()
    token: Value | None = optional_operand()

    def verify(self) -> list[str]:
        pointee = _pointee(self.ptrs)
        if pointee is None:
            return ["ptrs must be a tile of pointers"]
        shape = self.ptrs.type.shape  # type: ignore[union-attr]
        expected = TileType(pointee.pointee, shape)
        errors = [] if self.tile.type == expected else [f"loaded tile must be {expected}"]
        errors += _mask_errors(self.mask, shape)
        if self.padding is not None and self.padding.type != expected:
            errors.append(f"padding must be {expected}")
        if self.padding is not None and self.mask is None:
            errors.append("padding needs a mask")
        return errors + _ordering_errors(self.ordering, self.scope, self.hints, store=False)


@dataclass(frozen=True, kw_only=True)
class StorePtrTko(Op):
    """Store a tile through a tile of pointers; masked-off lanes are not written."""

    NAME = "store_ptr_tko"
    result_token: Value = result()
    ordering: MemoryOrdering = attribute(MemoryOrdering.WEAK)
    scope: MemoryScope | None = attribute(None)
    hints: tuple[LoadStoreHints, ...] = attribute(())
    ptrs: Value = operand()
    value: Value = operand()
    mask: Value | None = optional_operand()
    token: Value | None = optional_operand()

    def verify(self) -> list[str]:
        pointee = _pointee(self.ptrs)
        if pointee is None:
            return ["ptrs must be a tile of pointers"]
        shape = self.ptrs.type.shape  # type: ignore[union-attr]
        expected = TileType(pointee.pointee, shape)
        errors = [] if self.value.type == expected else [f"stored tile must be {expected}"]
        errors += _mask_errors(self.mask, shape)
        if not isinstance(self.result_token.type, TokenType):
            errors.append("result must be a token")
        return errors + _ordering_errors(self.ordering, self.scope, self.hints, store=True)


def _ordering_errors(
    ordering: MemoryOrdering,
    scope: MemoryScope | None,
    hints: tuple[LoadStoreHints, ...],
    store: bool,
) -> list[str]:
    """A pointer load is weak, relaxed or acquire, a store weak, relaxed or release; a weak
    access has no scope, any other one needs it."""
    excluded = MemoryOrdering.ACQUIRE if store else MemoryOrdering.RELEASE
    errors = hint_errors(hints)
    if ordering in (excluded, MemoryOrdering.ACQ_REL):
        errors.append(f"ordering {ordering.name.lower()} is not allowed here")
    if (ordering is MemoryOrdering.WEAK) != (scope is None):
        errors.append("a weak access has no scope; any other needs one")
    return errors
