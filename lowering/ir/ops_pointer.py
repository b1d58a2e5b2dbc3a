"""Pointer ops: integer <-> pointer conversions, pointer casts, module globals, and the
token-ordered atomics (through a tile of pointers, or into a partition view)."""

from __future__ import annotations

from dataclasses import dataclass

from lowering.ir.attributes import AtomicMode, MemoryOrdering, MemoryScope
from lowering.ir.core import Op, Value, attribute, operand, operands, optional_operand, result
from lowering.ir.types import ElementType, PartitionViewType, PointerType, TileType, TokenType


def pointee(value: Value) -> ElementType | None:
    """The element a tile of pointers points to (None: not a pointer tile)."""
    ty = value.type
    if isinstance(ty, TileType) and isinstance(ty.element, PointerType):
        return ty.element.pointee
    return None


def _same_shape(op: Op, source: Value, res: Value) -> list[str]:
    src, dst = source.type, res.type
    if not (isinstance(src, TileType) and isinstance(dst, TileType)):
        return [f"{op.NAME} works on tiles"]
    return [] if src.shape == dst.shape else [f"{op.NAME} keeps the shape: {src} -> {dst}"]


@dataclass(frozen=True, kw_only=True)
class IntToPtr(Op):
    """Each i64 element becomes a pointer (an address in bytes)."""

    NAME = "int_to_ptr"
    result: Value = result()
    source: Value = operand()

    def verify(self) -> list[str]:
        errors = _same_shape(self, self.source, self.result)
        if getattr(self.source.type, "element", None) is not ElementType.I64:
            errors.append("source must be an i64 tile")
        if pointee(self.result) is None:
            errors.append("result must be a tile of pointers")
        return errors


@dataclass(frozen=True, kw_only=True)
class PtrToInt(Op):
    """Each pointer becomes its address, an i64."""

    NAME = "ptr_to_int"
    result: Value = result()
    source: Value = operand()

    def verify(self) -> list[str]:
        errors = _same_shape(self, self.source, self.result)
        if pointee(self.source) is None:
            errors.append("source must be a tile of pointers")
        if getattr(self.result.type, "element", None) is not ElementType.I64:
            errors.append("result must be an i64 tile")
        return errors


@dataclass(frozen=True, kw_only=True)
class PtrToPtr(Op):
    """The same addresses, pointing to another element type."""

    NAME = "ptr_to_ptr"
    result: Value = result()
    source: Value = operand()

    def verify(self) -> list[str]:
        errors = _same_shape(self, self.source, self.result)
        if pointee(self.source) is None or pointee(self.result) is None:
            errors.append("source and result must be tiles of pointers")
        return errors


@dataclass(frozen=True)
class GlobalVar:
    """A module-level `global @name <value> : tile<1xE>` (one scalar in device memory)."""

    name: str
    element: ElementType
    value: int | float | bool
    alignment: int

    def __str__(self) -> str:
        return f"global @{self.name} <{self.element}: {self.value}> : tile<1x{self.element}>"


@dataclass(frozen=True, kw_only=True)
class GetGlobal(Op):
    """A pointer to the module global `name`."""

    NAME = "get_global"
    result: Value = result()
    name: str = attribute()

    def verify(self) -> list[str]:
        ty = self.result.type
        ok = isinstance(ty, TileType) and not ty.shape and pointee(self.result) is not None
        return [] if ok else ["result must be a rank-0 tile of pointers"]


_FLOAT_MODES = (AtomicMode.ADDF, AtomicMode.XCHG)


def _atomic_errors(
    op: Op, ptrs: Value, operands: tuple[Value, ...], ordering: MemoryOrdering
) -> list[str]:
    element = pointee(ptrs)
    if element is None:
        return ["pointers must be a tile of pointers"]
    expected = TileType(element, ptrs.type.shape)  # type: ignore[union-attr]
    errors = [f"operands must be {expected}" for v in operands if v.type != expected][:1]
    if ordering is MemoryOrdering.WEAK:
        errors.append("atomics need a non-weak ordering")
    return errors


def _mask_errors(mask: Value | None, ptrs: Value) -> list[str]:
    shape = ptrs.type.shape if isinstance(ptrs.type, TileType) else ()
    if mask is not None and mask.type != TileType(ElementType.I1, shape):
        return ["mask must be an i1 tile of the pointers' shape"]
    return []


@dataclass(frozen=True, kw_only=True)
class AtomicRmwTko(Op):
    """`old = *p; *p = mode(old, arg)` for each pointer, atomically; returns the old values."""

    NAME = "atomic_rmw_tko"
    old: Value = result()
    result_token: Value = result()
    ordering: MemoryOrdering = attribute()
    scope: MemoryScope = attribute()
    mode: AtomicMode = attribute()
    ptrs: Value = operand()
    arg: Value = operand()
    mask: Value | None = optional_operand()
    token: Value | None = optional_operand()

    def verify(self) -> list[str]:
        errors = _atomic_errors(self, self.ptrs, (self.arg, self.old), self.ordering)
        errors += _mask_errors(self.mask, self.ptrs)
        element = pointee(self.ptrs)
        if element is not None and element.is_float and self.mode not in _FLOAT_MODES:
            errors.append(f"{self.mode.name.lower()} is not defined on {element}")
        if element is not None and not element.is_float and self.mode is AtomicMode.ADDF:
            errors.append(f"addf is not defined on {element}")
        if not isinstance(self.result_token.type, TokenType):
            errors.append("result_token must be a token")
        return errors


@dataclass(frozen=True, kw_only=True)
class AtomicCasTko(Op):
    """`old = *p; if old == cmp { *p = val }` for each pointer, atomically (bitwise compare)."""

    NAME = "atomic_cas_tko"
    old: Value = result()
    result_token: Value = result()
    ordering: MemoryOrdering = attribute()
    scope: MemoryScope = attribute()
    ptrs: Value = operand()
    cmp: Value = operand()
    val: Value = operand()
    mask: Value | None = optional_operand()
    token: Value | None = optional_operand()

    def verify(self) -> list[str]:
        operands = (self.cmp, self.val, self.old)
        errors = _atomic_errors(self, self.ptrs, operands, self.ordering)
        errors += _mask_errors(self.mask, self.ptrs)
        if not isinstance(self.result_token.type, TokenType):
            errors.append("result_token must be a token")
        return errors


@dataclass(frozen=True, kw_only=True)
class AtomicRedViewTko(Op):
    """`view[index] = mode(view[index], value)` element-wise and atomically, for one tile of
    a partition view; no old values (bytecode 13.3+)."""

    NAME = "atomic_red_view_tko"
    result_token: Value = result()
    ordering: MemoryOrdering = attribute()
    scope: MemoryScope = attribute()
    mode: AtomicMode = attribute()
    view: Value = operand()
    index: tuple[Value, ...] = operands()
    value: Value = operand()
    token: Value | None = optional_operand()

    def verify(self) -> list[str]:
        part = self.view.type
        if not isinstance(part, PartitionViewType):
            return ["view operand must be a partition_view"]
        errors = []
        if len(self.index) != len(part.tile_shape):
            errors.append(f"expected {len(part.tile_shape)} indices, got {len(self.index)}")
        expected = TileType(part.tensor_view.element, part.tile_shape)
        if self.value.type != expected:
            errors.append(f"value must be {expected}")
        if self.ordering is not MemoryOrdering.RELAXED:
            errors.append("atomic_red_view_tko is relaxed")
        if self.scope is MemoryScope.SYSTEM:
            errors.append("atomic_red_view_tko is scoped to the tile block or the device")
        if part.tensor_view.element.is_float and self.mode is not AtomicMode.ADDF:
            errors.append(f"{self.mode.name.lower()} is not defined on floats")
        if not isinstance(self.result_token.type, TokenType):
            errors.append("result_token must be a token")
        return errors
