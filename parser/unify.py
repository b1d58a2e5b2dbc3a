"""Infer a device function's generics from its parameters' written types and the
argument types at a call (`fn f<E, const N: i32>(t: Tile<E, {[N]}>)` with a
`Tile<f16, {[64]}>` binds E = f16, N = 64)."""

from __future__ import annotations

from parser import ast_nodes as A
from parser.types import (
    DYNAMIC,
    Elem,
    GenericValue,
    PointerTileTy,
    PointerTy,
    RefTy,
    ScalarTy,
    SemType,
    ShapeTy,
    TensorTy,
    TileTy,
    TupleTy,
)


class Conflict(Exception):
    """A generic would need two different values."""


def unify(
    written: A.TypeExpr, actual: SemType, generics: set[str], bound: dict[str, GenericValue]
) -> None:
    """Bind the names in `generics` that `written` uses so that it matches `actual`."""
    if isinstance(written, A.RefType) and isinstance(actual, RefTy):
        unify(written.inner, actual.inner, generics, bound)
    elif isinstance(written, A.TupleType) and isinstance(actual, TupleTy):
        for part, part_ty in zip(written.elements, actual.elements, strict=False):
            unify(part, part_ty, generics, bound)
    elif isinstance(written, A.PointerType) and isinstance(actual, PointerTy):
        unify(written.inner, ScalarTy(actual.elem), generics, bound)
    elif isinstance(written, A.PathType):
        _unify_path(written, actual, generics, bound)


def _unify_path(
    written: A.PathType, actual: SemType, generics: set[str], bound: dict[str, GenericValue]
) -> None:
    if not written.args and written.name in generics and isinstance(actual, ScalarTy):
        _bind(written.name, actual.elem, bound)
        return
    if written.name == "Shape" and len(written.args) == 1 and isinstance(actual, ShapeTy):
        _unify_shape(written.args[0], actual.dims, generics, bound)
        return
    is_shaped = written.name in ("Tile", "Tensor") and len(written.args) == 2
    if is_shaped and isinstance(actual, (TileTy, TensorTy)):
        element, shape = written.args
        if isinstance(element, A.TypeArg):
            unify(element.type, ScalarTy(actual.elem), generics, bound)
        _unify_shape(shape, actual.shape, generics, bound)
    pointers = written.name == "PointerTile" and len(written.args) == 2
    if pointers and isinstance(actual, PointerTileTy):  # `PointerTile<*mut E, S>`
        pointee, shape = written.args
        if isinstance(pointee, A.TypeArg) and isinstance(pointee.type, A.PointerType):
            unify(pointee.type.inner, ScalarTy(actual.elem), generics, bound)
        _unify_shape(shape, actual.shape, generics, bound)


def _unify_shape(
    arg: A.GenericArg, shape: tuple[int, ...], generics: set[str], bound: dict[str, GenericValue]
) -> None:
    if isinstance(arg, A.TypeArg):  # a whole const generic array: `Tile<E, S>`
        if isinstance(arg.type, A.PathType) and arg.type.name in generics:
            _bind(arg.type.name, shape, bound)
        return
    value = arg.value
    if isinstance(value, A.BlockExpr) and value.block.tail is not None:
        value = value.block.tail
    if isinstance(value, A.PathExpr) and value.name in generics:
        _bind(value.name, shape, bound)
    elif isinstance(value, A.ArrayExpr) and len(value.elements) == len(shape):
        for element, dim in zip(value.elements, shape, strict=True):
            if isinstance(element, A.PathExpr) and element.name in generics and dim != DYNAMIC:
                _bind(element.name, dim, bound)


def _bind(name: str, value: Elem | int | tuple[int, ...], bound: dict[str, GenericValue]) -> None:
    if name in bound and bound[name] != value:
        raise Conflict(name)
    bound[name] = value
