"""Semantic types of the kernel language, after generics are bound (shapes are concrete).

Rust-level distinctions are kept: a scalar `f32` is not a `Tile<f32, {[]}>`, and a
`&Tensor` is not a `&mut Tensor`, because the rules are stated in those terms.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Union

from client_stubs.element_table import ELEMENT_BY_NAME, ELEMENTS, Element

DYNAMIC = -1  # a dynamic tensor extent


class _ElemBase(enum.Enum):
    """cuTile element types, by their Rust spelling; the members are the rows of
    `client_stubs.element_table.ELEMENTS` (`Elem.F32`, `Elem.BF16`, ...)."""

    @property
    def spec(self) -> Element:
        return ELEMENT_BY_NAME[self.value]

    @property
    def is_float(self) -> bool:
        return self.spec.is_float

    @property
    def is_integer(self) -> bool:
        return self.spec.is_integer

    @property
    def is_signed(self) -> bool:
        return self.spec.is_signed

    @property
    def bits(self) -> int:
        return self.spec.bits

    @property
    def size_bytes(self) -> int:
        return self.spec.storage_bytes

    @property
    def computes(self) -> bool:
        """Arithmetic, comparisons and math apply (tf32, fp8, fp4, i4 and packed bytes are
        storage: load, store, reshape, convert and mma them)."""
        return self.spec.computes

    @property
    def addressable(self) -> bool:
        """Whole bytes per element: a tensor element or a scalar parameter may have it."""
        return self.spec.addressable

    def __str__(self) -> str:
        return self.value


Elem = _ElemBase(
    "Elem", [(e.name.upper(), e.name) for e in ELEMENTS], module=__name__, qualname="Elem"
)
ELEM_BY_NAME = {e.value: e for e in Elem}

# A const generic's value (an element type, an integer, a bool, a shape) and a compile-time
# constant's.
GenericValue = Elem | int | bool | tuple[int, ...]
ConstValue = int | bool | float | tuple[int, ...]


@dataclass(frozen=True)
class ScalarTy:
    elem: Elem

    def __str__(self) -> str:
        return str(self.elem)


@dataclass(frozen=True)
class TileTy:
    elem: Elem
    shape: tuple[int, ...]

    def __str__(self) -> str:
        return f"Tile<{self.elem}, {{[{', '.join(map(str, self.shape))}]}}>"


@dataclass(frozen=True)
class TensorTy:
    """`Tensor<E, S>`; for a partitioned output S is the tile shape."""

    elem: Elem
    shape: tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.shape)

    def __str__(self) -> str:
        return f"Tensor<{self.elem}, {{[{', '.join(map(str, self.shape))}]}}>"


@dataclass(frozen=True)
class RefTy:
    inner: SemType
    mutable: bool

    def __str__(self) -> str:
        return f"&{'mut ' if self.mutable else ''}{self.inner}"


@dataclass(frozen=True)
class PartitionTy:
    """`Partition<E, R>` (read-only tiled view of an input) or `PartitionMut<E, R>` (this
    block's slab of an output, cut into tiles R; indices are local to the slab). A `full`
    `PartitionMut` (`unsafe partition_full_mut`) covers the whole output instead: its
    indices are the tensor's tile indices, and nothing keeps blocks apart."""

    elem: Elem
    tile: tuple[int, ...]
    mutable: bool
    slab: tuple[int, ...] = ()  # PartitionMut: the output's tile S that R subdivides
    full: bool = False
    bounded: bool = False  # `with_bounds((..))`: a `BoundedPartition{,Mut}`, indexed by `coord`

    @property
    def rank(self) -> int:
        return len(self.tile)

    @property
    def grid(self) -> tuple[int, ...]:
        """A slab PartitionMut: tiles per axis inside the slab (ceil(S / R); where R does
        not divide S the last one overhangs the slab, which lowering makes safe; DYNAMIC
        where S is the host partition's)."""
        assert not self.full, "a full view has no slab"
        return tuple(
            DYNAMIC if s == DYNAMIC else -(-s // r)
            for s, r in zip(self.slab, self.tile, strict=True)
        )

    def __str__(self) -> str:
        name = ("Bounded" if self.bounded else "") + (
            "PartitionMut" if self.mutable else "Partition"
        )
        return f"{name}<{self.elem}, {{[{', '.join(map(str, self.tile))}]}}>"


@dataclass(frozen=True)
class MappedTy:
    """`MappedPartitionMut<E, R, MAP>`: an output cut into tiles R whose store indices come
    from a persistent schedule (`iter_indices`), swizzled in groups of MAP tiles."""

    elem: Elem
    tile: tuple[int, ...]
    map_shape: tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.tile)

    def __str__(self) -> str:
        tile = ", ".join(map(str, self.tile))
        return f"MappedPartitionMut<{self.elem}, {{[{tile}]}}, {list(self.map_shape)}>"


@dataclass(frozen=True)
class PartitionIndexTy:
    """A tile index minted by `z.iter_indices()`; only `z` accepts it (`brand`), and the
    partitions it was minted `with`."""

    rank: int
    brand: int  # the id of the mapped partition's binding
    shared: tuple[int, ...] = ()  # `iter_indices_with(&w)`: bindings whose stores accept it too

    def __str__(self) -> str:
        return f"PartitionIndex<{self.rank}>"


@dataclass(frozen=True)
class DimTy:
    """`Dim`: a tile count (`Dim::new(n)`, `n.into_dim()`) whose value is an i32; iterating
    it walks 0..n, and `with_bounds` ties a partition axis to it (deprecated in cuTile
    Rust, still compiled)."""

    def __str__(self) -> str:
        return "Dim"


@dataclass(frozen=True)
class CoordTy:
    """`Coord2` / `Coord3`: `coord((i, j[, k]))`, the index of a `with_bounds` partition
    (or a composite `MappedPartitionMut` store index)."""

    rank: int

    def __str__(self) -> str:
        return f"Coord{self.rank}"


@dataclass(frozen=True)
class ShapeTy:
    """A compile-time shape value (`Shape<{[..]}>`, `z.shape()`, `const_shape![..]`)."""

    dims: tuple[int, ...]

    def __str__(self) -> str:
        return f"Shape<{{[{', '.join(map(str, self.dims))}]}}>"


@dataclass(frozen=True)
class TupleTy:
    elements: tuple[SemType, ...]

    def __str__(self) -> str:
        if len(self.elements) == 1:
            return f"({self.elements[0]},)"
        return f"({', '.join(map(str, self.elements))})"


UNIT = TupleTy(())


@dataclass(frozen=True)
class StructTy(TupleTy):
    """A value of a kernel module's `struct`: its fields' values in declaration order
    (a tuple with names, so it flows wherever a tuple does); `field_names` are "0", "1",
    ... for a tuple struct."""

    name: str = ""
    field_names: tuple[str, ...] = ()
    copy: bool = field(default=False, compare=False)  # `#[derive(Copy)]`: not moved by use

    def field_index(self, name: str) -> int | None:
        return self.field_names.index(name) if name in self.field_names else None

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class ArrayTy:
    """`[T; N]`: an array literal such as the tile index `[i, j]`; with `dims`, cuTile's
    `Array<{[..]}>` of i32 (`const_array![..]`, `Array::<{[..]}> {..}`), whose const
    generic `dims` lists the entries (`-1` for one known only at run time). `dims` is
    left out of `==`: an `Array` is accepted wherever an `[i32; N]` is."""

    element: SemType
    length: int  # SLICE for a written `&[T]`: any length fits
    dims: tuple[int, ...] | None = field(default=None, compare=False)

    def __str__(self) -> str:
        if self.dims is not None:
            return f"Array<{{[{', '.join(map(str, self.dims))}]}}>"
        if self.length == SLICE:
            return f"[{self.element}]"
        return f"[{self.element}; {self.length}]"


SLICE = -1  # the length of a slice type `&[T]` (a parameter or annotation takes any array)


MARKER_KINDS = {
    "ordering": ("Weak", "Relaxed", "Acquire", "Release", "AcqRel"),
    "scope": ("TileBlock", "Device", "System"),
    "tma": ("Enabled", "Disabled"),
    "ftz": ("Enabled", "Disabled"),
    "rounding": ("NearestEven", "PositiveInf", "NegativeInf", "Zero", "Approx", "Full"),
    "nan": ("Enabled", "Disabled"),
    "overflow": ("None", "NoSignedWrap", "NoUnsignedWrap", "NoWrap"),
    "predicate": (
        "Equal",
        "NotEqual",
        "LessThan",
        "LessThanOrEqual",
        "GreaterThan",
        "GreaterThanOrEqual",
    ),
    "cmp_ordering": ("Ordered", "Unordered"),
    "padding": ("None", "Zero", "NegZero", "Nan", "PosInf", "NegInf"),
    "dim_map": ("Identity",),
    "reverse": ("Forward", "Reverse"),
    "signedness": ("Signed", "Unsigned"),
    "atomic": ("And", "Or", "Xor", "Add", "AddF", "Max", "Min", "Umax", "Umin", "Xchg"),
}


@dataclass(frozen=True)
class MarkerTy:
    """A mode marker such as `ftz::Enabled` or `rounding::NearestEven` (an op attribute)."""

    kind: str
    variant: str

    def __str__(self) -> str:
        return f"{self.kind}::{self.variant}"


@dataclass(frozen=True)
class PointerTy:
    """A raw device pointer `*mut E` (or `*const E`, which may only be read through).
    Only an `unsafe fn` entry takes one; in Tile IR it is a `tile<ptr<E>>`."""

    elem: Elem
    mutable: bool = True

    def __str__(self) -> str:
        return f"*{'mut' if self.mutable else 'const'} {self.elem}"


@dataclass(frozen=True)
class PointerTileTy:
    """`PointerTile<*mut E, S>`: a tile of raw pointers (`tile<S x ptr<E>>`), made with
    `pointer_to_tile(p)` and moved with `offset_tile` / `offset` / `broadcast`."""

    elem: Elem
    shape: tuple[int, ...]
    mutable: bool = True

    def __str__(self) -> str:
        kind = "mut" if self.mutable else "const"
        return f"PointerTile<*{kind} {self.elem}, {{[{', '.join(map(str, self.shape))}]}}>"


@dataclass(frozen=True)
class TokenTy:
    """`Token`: a memory-ordering token (Tile IR `token`); memory ops consume and produce
    them, and an op is ordered after the ops whose tokens it consumes."""

    def __str__(self) -> str:
        return "Token"


TOKEN = TokenTy()


@dataclass(frozen=True)
class OptionTy:
    """`Option<T>` of an optional op operand (a mask, a padding value, a token, a scope);
    whether it is `Some` must be known at compile time. `inner` is None for a `None`
    whose type the context does not give."""

    inner: SemType | None
    some: bool | None = field(default=None, compare=False)  # known `Some` / `None`

    def __str__(self) -> str:
        return f"Option<{'_' if self.inner is None else self.inner}>"


@dataclass(frozen=True)
class LatencyTy:
    """`Latency::<N>`: the latency hint of a raw pointer access (0: none)."""

    cycles: int

    def __str__(self) -> str:
        return f"Latency<{self.cycles}>"


@dataclass(frozen=True)
class GatherScatterViewTy:
    """`GatherScatterView<E, TILE, SPARSE_DIM>` (`cutile::tileir`): tiles whose coordinates
    along `sparse_dim` come from an index tile."""

    elem: Elem
    tile: tuple[int, ...]
    sparse_dim: int

    def __str__(self) -> str:
        tile = ", ".join(map(str, self.tile))
        return f"GatherScatterView<{self.elem}, {{[{tile}]}}, {self.sparse_dim}>"


@dataclass(frozen=True)
class StridedViewTy:
    """`StridedView<E, TILE, TRAVERSAL_STRIDES, DIM_MAP>` (`cutile::tileir`)."""

    elem: Elem
    tile: tuple[int, ...]
    strides: tuple[int, ...]
    dim_map: tuple[int, ...]

    def __str__(self) -> str:
        parts = (self.tile, self.strides, self.dim_map)
        written = ", ".join("{[" + ", ".join(map(str, p)) + "]}" for p in parts)
        return f"StridedView<{self.elem}, {written}>"


@dataclass(frozen=True)
class GlobalTy:
    """`Global<E, {[]}>`: a module `static` in device global memory, one scalar."""

    elem: Elem
    symbol: str  # the Tile IR global's symbol (module path and name)
    value: int | float | bool  # the initial value

    def __str__(self) -> str:
        return f"Global<{self.elem}, {{[]}}>"


@dataclass(frozen=True)
class StrTy:
    """`str`, seen as `&str`: a string literal's text, known at compile time, with no
    run-time value (only `cuda_tile_print!` / `cuda_tile_assert!` read strings)."""

    def __str__(self) -> str:
        return "str"


STR = StrTy()


@dataclass(frozen=True, eq=False)
class ClosureTy:
    """A closure passed to a device function whose parameter is bounded by `Fn`; it
    has no run-time value of its own: each call of it inlines its body. `site` holds
    what that needs (`parser.typecheck_calls.ClosureSite`)."""

    arity: int
    site: object = field(default=None, repr=False)

    def __str__(self) -> str:
        return "{closure}"


@dataclass(frozen=True)
class ErrorTy:
    """The type of a binding whose definition already failed (suppresses follow-on errors)."""

    def __str__(self) -> str:
        return "{unknown}"


ERROR = ErrorTy()

SemType = Union[
    ScalarTy,
    TileTy,
    TensorTy,
    RefTy,
    PartitionTy,
    MappedTy,
    PartitionIndexTy,
    DimTy,
    CoordTy,
    ShapeTy,
    TupleTy,
    StructTy,
    ArrayTy,
    MarkerTy,
    PointerTy,
    PointerTileTy,
    TokenTy,
    OptionTy,
    LatencyTy,
    GlobalTy,
    GatherScatterViewTy,
    StridedViewTy,
    StrTy,
    ClosureTy,
    ErrorTy,
]


def annotation_fits(annotated: SemType, value: SemType) -> SemType | None:
    """The type a binding annotated `annotated` gets from a value of type `value`, or
    None when they differ. A `PartitionMut<E, R>` annotation cannot name the output slab
    it subdivides, and a `PartitionIndex<R>` annotation not the partition that minted it:
    both take those from the value. An `Array<{[..]}>` annotation needs an `Array` value
    with the same const generic (a plain `[i32; N]` is not one)."""
    if isinstance(annotated, PartitionTy) and isinstance(value, PartitionTy):
        same = (annotated.elem, annotated.tile, annotated.mutable, annotated.bounded) == (
            value.elem,
            value.tile,
            value.mutable,
            value.bounded,
        )
        return value if same else None
    if isinstance(annotated, PartitionIndexTy) and isinstance(value, PartitionIndexTy):
        return value if annotated.rank == value.rank else None
    if isinstance(annotated, OptionTy) and isinstance(value, OptionTy):
        if value.inner is None or value.inner == annotated.inner:  # `None` takes it from here
            return OptionTy(annotated.inner, some=value.some)
        return None
    slice_of = isinstance(annotated, ArrayTy) and annotated.length == SLICE
    if slice_of and isinstance(value, ArrayTy) and annotated.element == value.element:  # type: ignore[union-attr]
        return value  # `let s: &[i32] = &[a, b];` keeps the array's length
    if annotated != value:
        return None
    if isinstance(annotated, ArrayTy) and isinstance(value, ArrayTy):
        return annotated if annotated.dims in (None, value.dims) else None
    return annotated


def element_of(ty: SemType) -> Elem | None:
    if isinstance(ty, (ScalarTy, TileTy, TensorTy, PartitionTy)):
        return ty.elem
    if isinstance(ty, RefTy):
        return element_of(ty.inner)
    return None


def is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def associated_constant(elem: Elem, name: str) -> int | float | None:
    """`f32::NEG_INFINITY`, `T::ZERO`, `i32::MAX`, ... for an element type."""
    if name == "ZERO":
        return 0.0 if elem.is_float else 0
    if name == "ONE":
        return 1.0 if elem.is_float else 1
    if elem.is_float:
        floats = {
            "INFINITY": float("inf"),
            "NEG_INFINITY": float("-inf"),
            "NAN": float("nan"),
            "MAX": elem.spec.float_max,
            "MIN": -elem.spec.float_max,
            "E": 2.718281828459045,
        }
        return floats.get(name)
    if elem is Elem.BOOL or not elem.is_integer:
        return None
    low = -(2 ** (elem.bits - 1)) if elem.is_signed else 0
    high = 2 ** (elem.bits - 1) - 1 if elem.is_signed else 2**elem.bits - 1
    return {"MAX": high, "MIN": low}.get(name)
