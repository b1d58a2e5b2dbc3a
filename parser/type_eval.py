"""Evaluate written types and const-generic expressions under bound generics.

`{ [BM, BN] }`, `S`, `{ [S[0], 1] }`, `-1` and `Tile<E, S>` become concrete values and
`SemType`s; anything that is not a compile-time constant is reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from parser import ast_nodes as A
from parser import messages
from parser.diagnostics import Diagnostic, DiagnosticSink
from parser.types import (
    ELEM_BY_NAME,
    MARKER_KINDS,
    SLICE,
    STR,
    TOKEN,
    ArrayTy,
    ConstValue,
    CoordTy,
    DimTy,
    Elem,
    GatherScatterViewTy,
    GenericValue,
    MappedTy,
    MarkerTy,
    OptionTy,
    PartitionIndexTy,
    PartitionTy,
    PointerTileTy,
    PointerTy,
    RefTy,
    ScalarTy,
    SemType,
    ShapeTy,
    StridedViewTy,
    StructTy,
    TensorTy,
    TileTy,
    TupleTy,
    associated_constant,
)

if TYPE_CHECKING:
    from parser.items import ItemIndex


I32_RANGE = range(-(2**31), 2**31)  # shapes and const arrays are `[i32; N]`


class NotConstant(Exception):
    def __init__(self, span: A.Span, what: str) -> None:
        super().__init__(what)
        self.span = span
        self.what = what


@dataclass(frozen=True)
class TypeEnv:
    """Bound generics plus module-level constants, as seen from one function."""

    generics: Mapping[str, GenericValue]
    consts: Mapping[str, ConstValue]
    # `/` in types and const items follows Rust (toward zero); in kernel expressions it
    # follows cuTile's `divi` (toward negative infinity), so folding matches run time.
    floor_division: bool = False
    items: ItemIndex | None = None  # the modules' structs and type aliases
    self_type: SemType | None = None  # what `Self` names inside an `impl`


def eval_const(expr: A.Expr, env: TypeEnv) -> ConstValue:
    """Fold a compile-time expression; raises NotConstant with the offending span."""
    if isinstance(expr, A.IntLit):
        return expr.value
    if isinstance(expr, A.BoolLit):
        return expr.value
    if isinstance(expr, A.FloatLit):
        return expr.value
    if isinstance(expr, A.PathExpr) and len(expr.segments) == 1:
        return _named_const(expr, env)
    if isinstance(expr, A.PathExpr) and len(expr.segments) >= 2:
        return _element_const(expr, env)
    if isinstance(expr, A.Unary):
        return _fold_unary(expr, env)
    if isinstance(expr, A.ArrayExpr):
        return tuple(_int(eval_const(e, env), e) for e in expr.elements)
    if isinstance(expr, A.Index):
        base = eval_const(expr.value, env)
        index = _int(eval_const(expr.index, env), expr.index)
        if isinstance(base, tuple) and 0 <= index < len(base):
            return base[index]
    if isinstance(expr, A.Binary):
        return _fold_binary(expr, env)
    if isinstance(expr, A.BlockExpr) and expr.block.tail is not None and not expr.block.statements:
        return eval_const(expr.block.tail, env)
    raise NotConstant(expr.span, "this expression is not a compile-time constant")


def _fold_unary(expr: A.Unary, env: TypeEnv) -> ConstValue:
    value = eval_const(expr.operand, env)
    if expr.op == "!" and isinstance(value, bool):
        return not value
    if expr.op == "-" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return -value
    raise NotConstant(expr.span, "this expression is not a compile-time constant")


def _named_const(expr: A.PathExpr, env: TypeEnv) -> ConstValue:
    name = expr.name
    if name in env.generics:
        value = env.generics[name]
        if isinstance(value, Elem):
            raise NotConstant(expr.span, f"`{name}` is a type, not a value")
        return value
    if name in env.consts:
        return env.consts[name]
    raise NotConstant(expr.span, f"cannot find constant `{name}`")


def _element_const(expr: A.PathExpr, env: TypeEnv) -> ConstValue:
    """`f32::MAX`, `T::ZERO` (T an element type generic), `<T as ElementType>::ONE`, or a
    module const named by its path (`inner::SIZE`, `self::SIZE`, `super::SIZE`)."""
    head, name = expr.segments[-2], expr.segments[-1]
    by_path = len(expr.segments) > 2 or (head not in ELEM_BY_NAME and head not in env.generics)
    if by_path and name in env.consts:
        return env.consts[name]
    bound = env.generics.get(head)
    elem = ELEM_BY_NAME.get(head) or (bound if isinstance(bound, Elem) else None)
    value = associated_constant(elem, name) if elem is not None else None
    if value is None:
        raise NotConstant(expr.span, f"cannot find constant `{expr.span.text}`")
    return value


def _int(value: ConstValue, expr: A.Expr) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise NotConstant(expr.span, "expected an integer")


def _fold_binary(expr: A.Binary, env: TypeEnv) -> ConstValue:
    lhs = eval_const(expr.lhs, env)
    if expr.op in ("&&", "||") and isinstance(lhs, bool):
        if lhs == (expr.op == "||"):  # short-circuit: the right side is not needed
            return lhs
        rhs = eval_const(expr.rhs, env)
        if isinstance(rhs, bool):
            return rhs
    rhs = eval_const(expr.rhs, env)
    if isinstance(lhs, bool) and isinstance(rhs, bool) and expr.op in ("==", "!="):
        return (lhs == rhs) == (expr.op == "==")
    if isinstance(lhs, int) and isinstance(rhs, int) and not isinstance(lhs, bool):
        folded = _INT_FOLDS.get(expr.op)
        if expr.op == "/" and env.floor_division and rhs != 0:
            return lhs // rhs
        if folded is not None and not (expr.op in ("/", "%") and rhs == 0):
            return folded(lhs, rhs)
    raise NotConstant(expr.span, f"cannot evaluate `{expr.op}` at compile time")


def _trunc_div(a: int, b: int) -> int:
    """Rust's integer division in const expressions (toward zero)."""
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


def _trunc_rem(a: int, b: int) -> int:
    return a - b * _trunc_div(a, b)


_INT_FOLDS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": _trunc_div,
    "%": _trunc_rem,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


_POINTER_SIZED = {"usize": Elem.U64, "isize": Elem.I64}


class TypeResolver:
    """Turns written types into `SemType`s, reporting what it cannot resolve."""

    def __init__(self, env: TypeEnv, sink: DiagnosticSink) -> None:
        self.env = env
        self.sink = sink
        self._expanding: set[str] = set()  # type aliases being expanded (cycle guard)

    def resolve(self, ty: A.TypeExpr, is_reference: bool = False) -> SemType | None:
        if isinstance(ty, A.RefType) and isinstance(ty.inner, A.ArrayType):
            # `&[i32; 2]`, `&[i32]`: an array is passed as itself (a slice: any length)
            return self.resolve(ty.inner, is_reference=True)
        if isinstance(ty, A.RefType):
            inner = self.resolve(ty.inner)
            return None if inner is None else RefTy(inner, ty.mutable)
        if isinstance(ty, A.TupleType):
            parts = [self.resolve(t) for t in ty.elements]
            return None if any(p is None for p in parts) else TupleTy(tuple(parts))  # type: ignore[arg-type]
        if isinstance(ty, A.PathType):
            return self._path_type(ty)
        if isinstance(ty, A.PointerType):
            elem = self.element(ty.inner)
            return None if elem is None else PointerTy(elem, ty.mutable)
        if isinstance(ty, A.ArrayType) and ty.length is not None:
            return self._array_type(ty, ty.length)
        if isinstance(ty, A.ArrayType) and is_reference:
            element = self.resolve(ty.element)
            return None if element is None else ArrayTy(element, SLICE)
        self._unsupported(ty)
        return None

    def _array_type(self, ty: A.ArrayType, length: A.Expr) -> SemType | None:
        """`[T; N]` with N a compile-time integer (a tile index `[i32; 2]`, `[Token; 2]`)."""
        try:
            count = eval_const(length, self.env)
        except NotConstant as exc:
            self._bad_shape(exc.span, exc.what)
            return None
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            self._bad_shape(length.span, "the length of an array must be a non-negative integer")
            return None
        element = self.resolve(ty.element)
        return None if element is None else ArrayTy(element, count)

    def element(self, ty: A.TypeExpr) -> Elem | None:
        if isinstance(ty, A.PathType) and not ty.args and len(ty.segments) == 1:
            name = ty.name
            if name in ELEM_BY_NAME:
                return ELEM_BY_NAME[name]
            bound = self.env.generics.get(name)
            if isinstance(bound, Elem):
                return bound
            alias = self._alias(name)
            if alias is not None and name not in self._expanding:
                self._expanding.add(name)
                try:
                    return self.element(alias.type)
                finally:
                    self._expanding.discard(name)
        self.sink.add(
            messages.NOT_AN_ELEMENT_TYPE.at(
                ty.span, found=ty.span.text, elements=", ".join(ELEM_BY_NAME)
            )
        )
        return None

    def shape(self, arg: A.GenericArg) -> tuple[int, ...] | None:
        """A shape argument: `{ [B, 64] }`, `S` (a const generic array) or `{ [] }`."""
        expr: A.Expr
        if isinstance(arg, A.ConstArg):
            expr = arg.value
        elif isinstance(arg.type, A.PathType) and len(arg.type.segments) == 1 and not arg.type.args:
            expr = A.PathExpr(arg.span, arg.type.segments)
        else:
            self._bad_shape(arg.span, "expected a shape such as `{ [128, 64] }`")
            return None
        try:
            value = eval_const(expr, self.env)
        except NotConstant as exc:
            self._bad_shape(exc.span, exc.what)
            return None
        if not isinstance(value, tuple):
            self._bad_shape(arg.span, "expected an array of dimensions")
            return None
        wide = next((i for i, dim in enumerate(value) if dim not in I32_RANGE), None)
        if wide is not None:
            self.sink.add(dimension_out_of_range(value[wide], _element_span(expr, wide)))
            return None
        return value

    def _alias(self, name: str) -> A.TypeAlias | None:
        items = self.env.items
        return items.aliases.get(name) if items is not None else None

    def _named_type(self, ty: A.PathType) -> SemType | bool | None:
        """`Self`, a type alias or a module struct; False when `ty` names none of them."""
        name = ty.name
        if name == "Self" and self.env.self_type is not None and not ty.args:
            return self.env.self_type
        alias = self._alias(name)
        if alias is not None and not ty.args:
            if name in self._expanding:
                self.sink.add(messages.ALIAS_REFERS_TO_ITSELF.at(alias.span, name=name))
                return None
            self._expanding.add(name)
            try:
                return self.resolve(alias.type)
            finally:
                self._expanding.discard(name)
        items = self.env.items
        struct = items.structs.get(name) if items is not None else None
        if struct is None or name in _GENERIC_TYPES:
            return False
        return self.struct_type(struct, ty)

    def struct_type(self, struct: A.StructDef, ty: A.PathType | None = None) -> SemType | None:
        """The value type of a module struct (its fields, resolved)."""
        if struct.generics or (ty is not None and ty.args):
            self.sink.add(
                messages.GENERIC_STRUCT.at(
                    ty.span if ty is not None else struct.span, name=struct.name
                )
            )
            return None
        if struct.name in self._expanding:
            self.sink.add(messages.RECURSIVE_STRUCT.at(struct.span, name=struct.name))
            return None
        self._expanding.add(struct.name)
        try:
            fields = [self.resolve(f.type) for f in struct.fields]
        finally:
            self._expanding.discard(struct.name)
        if any(f is None for f in fields):
            return None
        return StructTy(
            tuple(f for f in fields if f is not None),
            struct.name,
            tuple(f.name for f in struct.fields),
            copy="Copy" in struct.derives,
        )

    def _path_type(self, ty: A.PathType) -> SemType | None:
        name = ty.name
        if not ty.args and name in _POINTER_SIZED:
            return ScalarTy(_POINTER_SIZED[name])
        named = self._named_type(ty)
        if named is not False:
            return named  # type: ignore[return-value]
        if not ty.args and name == "Token":
            return TOKEN
        if not ty.args and ty.segments == ("str",):
            return STR  # `&str`, `&'static str`
        if len(ty.segments) >= 2 and name in MARKER_KINDS.get(ty.segments[-2], ()):
            return MarkerTy(ty.segments[-2], name)  # `scope::Device` as a type
        if name == "Option":
            return self._option(ty)
        is_element = name in ELEM_BY_NAME or isinstance(self.env.generics.get(name), Elem)
        if not ty.args and is_element:
            elem = self.element(ty)
            return None if elem is None else ScalarTy(elem)
        if not ty.args and name in _NAMED_TYPES:
            return _NAMED_TYPES[name]
        builder = _GENERIC_TYPES.get(name)
        if builder is None:
            self._unsupported(ty)
            return None
        if len(ty.args) != 2 and name not in _OWN_ARITY:
            self.sink.add(
                messages.TAKES_TWO_GENERIC_ARGUMENTS.at(ty.span, name=name, count=len(ty.args))
            )
            return None
        return builder(self, ty)

    def _option(self, ty: A.PathType) -> SemType | None:
        """`Option<T>`."""
        first = ty.args[0] if len(ty.args) == 1 else None
        if not isinstance(first, A.TypeArg):
            self.sink.add(messages.OPTION_TYPE_ARG_COUNT.at(ty.span, count=len(ty.args)))
            return None
        inner = self.resolve(first.type)
        return None if inner is None else OptionTy(inner)

    def _element_and_shape(self, ty: A.PathType) -> tuple[Elem, tuple[int, ...]] | None:
        first = ty.args[0]
        elem = self.element(first.type) if isinstance(first, A.TypeArg) else None
        if elem is None:
            if isinstance(first, A.ConstArg):
                self.element(A.InferType(first.span))
            return None
        shape = self.shape(ty.args[1])
        return None if shape is None else (elem, shape)

    def _unsupported(self, ty: A.TypeExpr) -> None:
        self.sink.add(messages.UNSUPPORTED_KERNEL_TYPE.at(ty.span, ty=ty.span.text))

    def _bad_shape(self, span: A.Span, what: str) -> None:
        self.sink.add(messages.INVALID_SHAPE.at(span, what=what))


def dimension_out_of_range(value: int, span: A.Span) -> Diagnostic:
    return messages.DIMENSION_OUT_OF_RANGE.at(span, value=value)


def _element_span(expr: A.Expr, index: int) -> A.Span:
    """The span of element `index` of an array written in place (`{ [a, b] }`), else the
    whole expression's."""
    while isinstance(expr, A.BlockExpr) and expr.block.tail is not None:
        expr = expr.block.tail
    if isinstance(expr, A.ArrayExpr) and index < len(expr.elements):
        return expr.elements[index].span
    return expr.span


def _tile(resolver: TypeResolver, ty: A.PathType) -> SemType | None:
    parts = resolver._element_and_shape(ty)
    return None if parts is None else TileTy(*parts)


def _tensor(resolver: TypeResolver, ty: A.PathType) -> SemType | None:
    parts = resolver._element_and_shape(ty)
    return None if parts is None else TensorTy(*parts)


def _shape(resolver: TypeResolver, ty: A.PathType) -> SemType | None:
    dims = _single_shape(resolver, ty)
    return None if dims is None else ShapeTy(dims)


def _array(resolver: TypeResolver, ty: A.PathType) -> SemType | None:
    """`Array<{[1, 0]}>`: compile-time i32 entries (`-1` for a runtime one)."""
    dims = _single_shape(resolver, ty)
    return None if dims is None else ArrayTy(ScalarTy(Elem.I32), len(dims), dims)


def _partition_index(resolver: TypeResolver, ty: A.PathType) -> SemType | None:
    """`PartitionIndex<R>` (R: the partition's tile shape); which partition minted the
    index is not written, so `annotation_fits` takes it from the value (brand -1 here)."""
    dims = _single_shape(resolver, ty)
    return None if dims is None else PartitionIndexTy(len(dims), brand=-1)


def _single_shape(resolver: TypeResolver, ty: A.PathType) -> tuple[int, ...] | None:
    if len(ty.args) != 1:
        resolver._bad_shape(ty.span, f"`{ty.name}` takes one argument")
        return None
    return resolver.shape(ty.args[0])


def _partition(resolver: TypeResolver, ty: A.PathType) -> SemType | None:
    """`Partition<E, R>` / `PartitionMut<E, R>` (and their `Bounded` forms); a
    `PartitionMut`'s slab is not written in its type, so `annotation_fits` compares only
    element, tile, mutability and boundedness."""
    parts = resolver._element_and_shape(ty)
    if parts is None:
        return None
    bounded = ty.name.startswith("Bounded")
    return PartitionTy(*parts, mutable=ty.name.endswith("Mut"), bounded=bounded)


def _mapped(resolver: TypeResolver, ty: A.PathType) -> SemType | None:
    if len(ty.args) != 3:
        resolver.sink.add(messages.MAPPED_PARTITION_ARG_COUNT.at(ty.span, count=len(ty.args)))
        return None
    parts = resolver._element_and_shape(A.PathType(ty.span, ty.segments, ty.args[:2]))
    map_shape = resolver.shape(ty.args[2])
    if parts is None or map_shape is None:
        return None
    return MappedTy(parts[0], parts[1], map_shape)


def _pointer_tile(resolver: TypeResolver, ty: A.PathType) -> SemType | None:
    """`PointerTile<*mut E, S>`."""
    first = ty.args[0]
    pointee = first.type if isinstance(first, A.TypeArg) else None
    if not isinstance(pointee, A.PointerType):
        resolver.sink.add(messages.POINTER_TILE_NEEDS_POINTER.at(first.span))
        return None
    elem = resolver.element(pointee.inner)
    shape = resolver.shape(ty.args[1])
    if elem is None or shape is None:
        return None
    return PointerTileTy(elem, shape, pointee.mutable)


def _gather_scatter_view(resolver: TypeResolver, ty: A.PathType) -> SemType | None:
    """`GatherScatterView<E, TILE, SPARSE_DIM>`."""
    parts = _view_parts(resolver, ty, 3)
    if parts is None:
        return None
    elem, tile, sparse = parts
    if not isinstance(sparse, int) or not 0 <= sparse < len(tile):
        resolver._bad_shape(ty.args[2].span, f"the sparse dimension must be in 0..{len(tile)}")
        return None
    return GatherScatterViewTy(elem, tile, sparse)


def _strided_view(resolver: TypeResolver, ty: A.PathType) -> SemType | None:
    """`StridedView<E, TILE, TRAVERSAL_STRIDES, DIM_MAP>`."""
    parts = _view_parts(resolver, ty, 4)
    if parts is None:
        return None
    elem, tile, strides, dim_map = parts
    if not (isinstance(strides, tuple) and isinstance(dim_map, tuple)):
        resolver._bad_shape(ty.span, "expected arrays of traversal strides and a dim map")
        return None
    if len(strides) != len(tile) or sorted(dim_map) != list(range(len(tile))):
        resolver._bad_shape(ty.span, "one stride per tile dimension and a permutation dim map")
        return None
    return StridedViewTy(elem, tile, strides, dim_map)


def _view_parts(resolver: TypeResolver, ty: A.PathType, count: int) -> list | None:  # type: ignore[type-arg]
    """The element, the tile shape and the const arguments after them."""
    if len(ty.args) != count:
        resolver._bad_shape(ty.span, f"`{ty.name}` takes {count} generic arguments")
        return None
    parts = resolver._element_and_shape(A.PathType(ty.span, ty.segments, ty.args[:2]))
    if parts is None:
        return None
    rest: list[object] = []
    for arg in ty.args[2:]:
        expr = arg.value if isinstance(arg, A.ConstArg) else A.PathExpr(arg.span, arg.type.segments)  # type: ignore[union-attr]
        try:
            rest.append(eval_const(expr, resolver.env))
        except NotConstant as exc:
            resolver._bad_shape(exc.span, exc.what)
            return None
    return [*parts, *rest]


_GENERIC_TYPES = {
    "PointerTile": _pointer_tile,
    "Tile": _tile,
    "Tensor": _tensor,
    "Shape": _shape,
    "Array": _array,
    "Partition": _partition,
    "PartitionMut": _partition,
    "BoundedPartition": _partition,
    "BoundedPartitionMut": _partition,
    "PartitionIndex": _partition_index,
    "MappedPartitionMut": _mapped,
    "GatherScatterView": _gather_scatter_view,
    "StridedView": _strided_view,
}
_OWN_ARITY = (
    "Shape",
    "Array",
    "PartitionIndex",
    "MappedPartitionMut",
    "GatherScatterView",
    "StridedView",
)  # not 2 arguments
_NAMED_TYPES: dict[str, SemType] = {"Dim": DimTy(), "Coord2": CoordTy(2), "Coord3": CoordTy(3)}
