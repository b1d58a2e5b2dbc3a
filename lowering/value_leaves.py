"""How a lowered value flattens into SSA leaves and back: the state loops and `if`s carry,
and the results of a branch."""

from __future__ import annotations

from lowering.element_types import ir_tile_type
from lowering.ir.core import Value
from lowering.ir.types import TOKEN, IRType
from lowering.lowered_expr import Lowered
from parser.types import ArrayTy, SemType, TokenTy, TupleTy


def flatten(value: Lowered) -> list[Value]:
    if value is None:
        return []
    if isinstance(value, tuple):
        return [leaf for part in value for leaf in flatten(part)]
    assert isinstance(value, Value)
    return [value]


def _parts(ty: SemType) -> tuple[SemType, ...] | None:
    if isinstance(ty, TupleTy):
        return ty.elements
    if isinstance(ty, ArrayTy):
        return (ty.element,) * ty.length
    return None


def value_ir_types(ty: SemType) -> list[IRType]:
    parts = _parts(ty)
    if parts is not None:
        return [t for part in parts for t in value_ir_types(part)]
    if isinstance(ty, TokenTy):
        return [TOKEN]
    return [ir_tile_type(ty)]


def rebuild(ty: SemType, leaves: list[Value]) -> Lowered:
    """The value of type `ty` whose flattened leaves are `leaves`."""
    elements = _parts(ty)
    if elements is not None:
        if not elements:
            return None
        parts, rest = [], list(leaves)
        for part in elements:
            count = len(value_ir_types(part))
            parts.append(rebuild(part, rest[:count]))
            rest = rest[count:]
        return tuple(parts)
    return leaves[0]
