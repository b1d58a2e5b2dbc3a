"""Check an entry's parameters and options, and classify each parameter for the ABI.

Rules (cuTile Rust): `&mut Tensor<E, S>` is a partitioned output whose `S` is the tile
shape (rank 1 to 3; a `-1` extent is the host partition's; loading or storing the whole
tile needs a static power-of-two shape, a `partition_mut` of it does not); `&Tensor<E, S>`
is a shared input (`-1` is a dynamic extent); scalars pass by value. Entries return
nothing.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace

from parser import ast_nodes as A
from parser import codes
from parser.diagnostics import DiagnosticSink, error
from parser.optimization_hints import ArchHints, parse_optimization_hints
from parser.preconditions import Precondition, parse_preconditions
from parser.type_eval import TypeResolver, eval_const
from parser.types import (
    DYNAMIC,
    MappedTy,
    PointerTy,
    RefTy,
    ScalarTy,
    SemType,
    TensorTy,
    element_of,
    is_power_of_two,
)

MAX_OUTPUT_RANK = 3
_BOOL_OPTIONS = ("unchecked_accesses", "deny_in_kernel_checks", "print_ir")
_KNOWN_OPTIONS = (*_BOOL_OPTIONS, "dump_mlir_dir", "preconditions", "optimization_hints")


class ParamRole(enum.Enum):
    INPUT = "input"
    OUTPUT = "output"
    MAPPED_OUTPUT = "mapped_output"  # MappedPartitionMut: written through iter_indices
    SCALAR = "scalar"
    POINTER = "pointer"  # `*mut E` in an `unsafe fn` entry: one raw address

    @property
    def is_output(self) -> bool:
        return self in (ParamRole.OUTPUT, ParamRole.MAPPED_OUTPUT)

    @property
    def is_tensor(self) -> bool:
        return self not in (ParamRole.SCALAR, ParamRole.POINTER)


@dataclass(frozen=True)
class EntryParam:
    index: int
    name: str
    role: ParamRole
    type: SemType
    span: A.Span
    type_span: A.Span | None = None  # raw pointers: where the type is written

    @property
    def tensor(self) -> TensorTy:
        """The tensor type; for outputs its shape is the tile each block writes."""
        if isinstance(self.type, MappedTy):
            return TensorTy(self.type.elem, self.type.tile)
        assert isinstance(self.type, RefTy) and isinstance(self.type.inner, TensorTy)
        return self.type.inner


@dataclass(frozen=True)
class EntryOptions:
    unchecked_accesses: bool = False
    deny_in_kernel_checks: bool = False
    preconditions: tuple[Precondition, ...] = ()
    optimization_hints: tuple[ArchHints, ...] = ()


@dataclass(frozen=True)
class EntrySignature:
    params: tuple[EntryParam, ...]
    options: EntryOptions

    @property
    def outputs(self) -> tuple[EntryParam, ...]:
        return tuple(p for p in self.params if p.role.is_output)

    @property
    def host_grid(self) -> bool:
        """No output defines the grid (a raw-pointer kernel, or one that only reads, prints
        or writes through views it makes itself): the host passes the grid at launch."""
        return not self.outputs


def check_entry_signature(
    function: A.Function, resolver: TypeResolver, sink: DiagnosticSink
) -> EntrySignature | None:
    errors_before = len([d for d in sink if d.is_error])
    params = tuple(
        p
        for i, param in enumerate(function.params)
        if (p := _entry_param(i, param, resolver, sink)) is not None
    )
    _check_pointer_params(function, params, sink)
    if function.return_type is not None:
        sink.add(
            error(
                codes.INVALID_PARAMETER,
                "kernel entry functions cannot return a value",
                function.return_type.span,
                "remove the return type",
                help=("write results into a `&mut Tensor` output",),
            )
        )
    options = _entry_options(function, resolver, sink)
    options = _with_preconditions(function, params, options, sink)
    _check_single_grid(params, sink)
    errors_after = len([d for d in sink if d.is_error])
    if errors_after > errors_before:
        return None
    return EntrySignature(params, options)


def _check_pointer_params(
    function: A.Function, params: tuple[EntryParam, ...], sink: DiagnosticSink
) -> None:
    """A raw pointer reaches memory no bounds check covers: only an `unsafe fn` entry may
    take one (cuTile Rust: "Pointers can only be used in unsafe kernel entry points")."""
    if function.is_unsafe:
        return
    for param in params:
        if param.role is ParamRole.POINTER:
            sink.add(
                error(
                    codes.UNSAFE_REQUIRED,
                    f"raw pointer parameter `{param.name}` requires an `unsafe fn` entry",
                    param.type_span,
                    "raw pointer parameter",
                    secondary=((function.name_span, "this entry is not `unsafe`"),),
                    notes=(
                        "accesses through a raw pointer are not bounds-checked, so the caller "
                        "must promise they stay inside the memory it passes",
                    ),
                    help=(f"declare the entry `unsafe fn {function.name}`",),
                )
            )


def _check_single_grid(params: tuple[EntryParam, ...], sink: DiagnosticSink) -> None:
    """A persistent kernel's grid is the host's choice; it cannot also be derived from a
    partitioned output."""
    mapped = [p for p in params if p.role is ParamRole.MAPPED_OUTPUT]
    plain = [p for p in params if p.role is ParamRole.OUTPUT]
    if mapped and plain:
        sink.add(
            error(
                codes.INVALID_PARAMETER,
                f"`{plain[0].name}` cannot be a partitioned output of a persistent kernel",
                plain[0].span,
                "partitioned `&mut Tensor` output",
                secondary=((mapped[0].span, "this output makes the kernel persistent"),),
                notes=(
                    "a persistent kernel's grid is chosen by the host, so it cannot cover a "
                    "partitioned output's tiles one block each",
                ),
                help=("make it a `MappedPartitionMut` too and store with the same indices",),
            )
        )


def _entry_param(
    index: int, param: A.Param, resolver: TypeResolver, sink: DiagnosticSink
) -> EntryParam | None:
    ty = resolver.resolve(param.type)
    if ty is None or not _addressable(param, ty, sink):
        return None
    if isinstance(ty, ScalarTy):
        return EntryParam(index, param.name, ParamRole.SCALAR, ty, param.span)
    if isinstance(ty, PointerTy):
        return EntryParam(index, param.name, ParamRole.POINTER, ty, param.span, param.type.span)
    if isinstance(ty, MappedTy):
        if not _check_mapped(param, ty, sink):
            return None
        return EntryParam(index, param.name, ParamRole.MAPPED_OUTPUT, ty, param.span)
    if isinstance(ty, RefTy) and isinstance(ty.inner, TensorTy):
        if ty.mutable:
            ok = _check_output(param, ty.inner, sink)
            return EntryParam(index, param.name, ParamRole.OUTPUT, ty, param.span) if ok else None
        ok = _check_input(param, ty.inner, sink)
        return EntryParam(index, param.name, ParamRole.INPUT, ty, param.span) if ok else None
    sink.add(
        error(
            codes.INVALID_PARAMETER,
            f"`{param.type.span.text}` is not a supported entry parameter type",
            param.type.span,
            "unsupported parameter",
            notes=(
                "entry parameters are `&mut Tensor<E, S>` outputs, `&Tensor<E, S>` inputs, "
                "scalars or (in an `unsafe fn`) raw pointers `*mut E`",
            ),
        )
    )
    return None


def _addressable(param: A.Param, ty: SemType, sink: DiagnosticSink) -> bool:
    """Host data has whole bytes per element: `f4e2m1fn` and `i4` exist only in kernels."""
    elem = element_of(ty) or (ty.elem if isinstance(ty, (PointerTy, MappedTy)) else None)
    if elem is None or elem.addressable:
        return True
    sink.add(
        error(
            codes.UNSUPPORTED_TYPE,
            f"entry parameter `{param.name}` has `{elem}` elements (narrower than a byte)",
            param.type.span,
            f"`{elem}` is {elem.bits} bits wide",
            notes=(f"`{elem}` values exist only inside kernels, made by `unpack`",),
            help=(
                "pass packed bytes (`f4e2m1fnx2` or `u8`) and `unpack` them in the kernel"
                if elem.is_float
                else "pass bytes (`u8`) and `unpack` them in the kernel",
            ),
        )
    )
    return False


def _check_mapped(param: A.Param, mapped: MappedTy, sink: DiagnosticSink) -> bool:
    """cuTile Rust's schedule: a map entry per axis, 0 (OWNED: one work item spans the
    whole axis) or a positive group size; the streamed (non-OWNED) axes are walked
    row-major except the trailing two, which are swizzled in groups of their entries,
    so every leading streamed entry is 1 (a rank-1 stream's map is [1])."""
    tile = TensorTy(mapped.elem, mapped.tile)
    if not _check_output(param, tile, sink):
        return False
    if DYNAMIC in tile.shape:
        sink.add(
            error(
                codes.OUTPUT_SHAPE_DYNAMIC,
                f"the tile shape of mapped output `{param.name}` must be static",
                param.type.span,
                f"tile shape [{', '.join(map(str, tile.shape))}]",
                notes=("its stores write whole tiles, which have static shapes",),
            )
        )
        return False
    if not check_tile_shape(tile.shape, param.type.span, f"output `{param.name}`", sink):
        return False
    problem = _map_problem(mapped)
    if problem is None:
        return True
    code, message, note = problem
    sink.add(
        error(
            code,
            f"mapped output `{param.name}`: {message}",
            param.type.span,
            f"map shape {list(mapped.map_shape)}",
            notes=(note,),
        )
    )
    return False


def _map_problem(mapped: MappedTy) -> tuple[codes.DiagnosticCode, str, str] | None:
    groups = mapped.map_shape
    rank_note = "the map has one entry per axis of the tile"
    if len(groups) != mapped.rank:
        return codes.OUTPUT_RANK, f"needs a rank-{mapped.rank} map shape", rank_note
    owned_note = "0 marks an OWNED axis (each work item spans all of it), n > 0 a group size"
    negative = next((a for a, g in enumerate(groups) if g < 0), None)
    if negative is not None:
        message = f"map axis {negative} is {groups[negative]}, not OWNED (0) or positive"
        return codes.GENERIC_ARGUMENT, message, owned_note
    streamed = [g for g in groups if g != 0]
    if not streamed:
        message = "the map needs at least one streamed (non-OWNED) axis"
        return codes.GENERIC_ARGUMENT, message, owned_note
    leading = next((a for a, g in enumerate(streamed[:-2]) if g != 1), None)
    swizzle_note = "the schedule groups only the trailing two streamed axes"
    if leading is not None:
        message = f"leading map axis {leading} must be 1, got {streamed[leading]}"
        return codes.GENERIC_ARGUMENT, message, swizzle_note
    if len(streamed) == 1 and streamed != [1]:
        message = f"a rank-1 stream's map must be [1], got [{streamed[0]}]"
        return codes.GENERIC_ARGUMENT, message, swizzle_note
    return None


def _check_output(param: A.Param, tensor: TensorTy, sink: DiagnosticSink) -> bool:
    span = param.type.span
    if not 1 <= tensor.rank <= MAX_OUTPUT_RANK:
        sink.add(
            error(
                codes.OUTPUT_RANK,
                f"partitioned output `{param.name}` has rank {tensor.rank}",
                span,
                f"rank {tensor.rank} output",
                notes=(
                    "an output is partitioned over the 3-D launch grid, so its rank must be "
                    "1, 2 or 3",
                ),
                help=("reshape the output on the host, or write it through an `unsafe` view",),
            )
        )
        return False
    bad = [d for d in tensor.shape if d <= 0 and d != DYNAMIC]
    if bad:
        sink.add(
            error(
                codes.TILE_NOT_POWER_OF_TWO,
                f"tile dimension {bad[0]} of output `{param.name}` is not positive",
                span,
                f"tile shape [{', '.join(map(str, tensor.shape))}]",
                notes=("for `&mut Tensor<E, S>`, `S` is the tile each block writes",),
            )
        )
        return False
    return True


def check_tile_shape(shape: tuple[int, ...], span: A.Span, what: str, sink: DiagnosticSink) -> bool:
    bad = [d for d in shape if not is_power_of_two(d)]
    if bad:
        sink.add(
            error(
                codes.TILE_NOT_POWER_OF_TWO,
                f"tile dimension {bad[0]} of {what} is not a positive power of two",
                span,
                f"tile shape [{', '.join(map(str, shape))}]",
                notes=(
                    "Tile IR tiles have power-of-two extents; the tensor itself may have any "
                    "size (the last tile is masked)",
                ),
            )
        )
        return False
    return True


def _check_input(param: A.Param, tensor: TensorTy, sink: DiagnosticSink) -> bool:
    bad = [d for d in tensor.shape if d != DYNAMIC and d <= 0]
    if bad:
        sink.add(
            error(
                codes.GENERIC_ARGUMENT,
                f"input `{param.name}` declares extent {bad[0]}",
                param.type.span,
                "invalid extent",
                notes=("extents are positive, or -1 for a dynamic extent",),
            )
        )
        return False
    return True


def static_extents(param: EntryParam) -> tuple[int | None, ...]:
    """The extents of a tensor parameter known at compile time (None: given at launch).
    An output's type gives its tile, not its extent."""
    tensor = param.tensor
    if param.role.is_output:
        return (None,) * tensor.rank
    return tuple(None if e == DYNAMIC else e for e in tensor.shape)


def _with_preconditions(
    function: A.Function,
    params: tuple[EntryParam, ...],
    options: EntryOptions,
    sink: DiagnosticSink,
) -> EntryOptions:
    assert function.entry is not None
    option = next((o for o in function.entry.options if o.key == "preconditions" and o.value), None)
    if option is None or option.value is None:
        return options
    tensors = {p.name: (p.index, static_extents(p)) for p in params if p.role.is_tensor}
    parsed = parse_preconditions(option.value, tensors, sink)
    return replace(options, preconditions=parsed)


def _entry_options(
    function: A.Function, resolver: TypeResolver, sink: DiagnosticSink
) -> EntryOptions:
    assert function.entry is not None
    values: dict[str, bool] = {}
    hints: tuple[ArchHints, ...] = ()
    seen: set[str] = set()
    for option in function.entry.options:
        if option.key in seen:
            sink.add(
                error(
                    codes.INVALID_ENTRY_OPTION,
                    f"entry option `{option.key}` is given twice",
                    option.span,
                    "repeated option",
                )
            )
            continue
        seen.add(option.key)
        if option.key not in _KNOWN_OPTIONS:
            sink.add(
                error(
                    codes.INVALID_ENTRY_OPTION,
                    f"unknown entry option `{option.key}`",
                    option.span,
                    "unknown option",
                    notes=("known options: " + ", ".join(_KNOWN_OPTIONS),),
                )
            )
        elif option.value is None:
            sink.add(
                error(
                    codes.INVALID_ENTRY_OPTION,
                    f"entry option `{option.key}` needs a value",
                    option.span,
                    "bare flag",
                    help=(f"write `{option.key} = true`",),
                )
            )
        elif option.key in _BOOL_OPTIONS:
            value = _bool_option(option, resolver, sink)
            if value is not None:
                values[option.key] = value
        elif option.key == "optimization_hints":
            hints = parse_optimization_hints(option.value, resolver.env, sink)
    unchecked = values.get("unchecked_accesses", False)
    if unchecked and not function.is_unsafe:
        sink.add(
            error(
                codes.INVALID_ENTRY_OPTION,
                "`unchecked_accesses = true` requires an `unsafe fn` entry",
                function.name_span,
                "declare this function `unsafe fn`",
            )
        )
    return EntryOptions(
        unchecked, values.get("deny_in_kernel_checks", False), optimization_hints=hints
    )


def _bool_option(
    option: A.EntryOption, resolver: TypeResolver, sink: DiagnosticSink
) -> bool | None:
    assert option.value is not None
    try:
        value = eval_const(option.value, resolver.env)
    except Exception:
        value = None
    if isinstance(value, bool):
        return value
    sink.add(
        error(
            codes.INVALID_ENTRY_OPTION,
            f"entry option `{option.key}` takes `true` or `false`",
            option.value.span,
            "expected a bool",
        )
    )
    return None
