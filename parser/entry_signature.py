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
from parser import messages
from parser.diagnostics import Diagnostic, DiagnosticSink
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
        sink.add(messages.ENTRY_RETURNS_A_VALUE.at(function.return_type.span))
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
            not_unsafe = ((function.name_span, "this entry is not `unsafe`"),)
            sink.add(
                messages.POINTER_PARAMETER_NOT_UNSAFE.at(
                    param.type_span, not_unsafe, name=param.name, function=function.name
                )
            )


def _check_single_grid(params: tuple[EntryParam, ...], sink: DiagnosticSink) -> None:
    """A persistent kernel's grid is the host's choice; it cannot also be derived from a
    partitioned output."""
    mapped = [p for p in params if p.role is ParamRole.MAPPED_OUTPUT]
    plain = [p for p in params if p.role is ParamRole.OUTPUT]
    if mapped and plain:
        persistent = ((mapped[0].span, "this output makes the kernel persistent"),)
        sink.add(
            messages.PARTITIONED_OUTPUT_OF_PERSISTENT_KERNEL.at(
                plain[0].span, persistent, name=plain[0].name
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
    sink.add(messages.UNSUPPORTED_PARAMETER_TYPE.at(param.type.span, written=param.type.span.text))
    return None


def _addressable(param: A.Param, ty: SemType, sink: DiagnosticSink) -> bool:
    """Host data has whole bytes per element: `f4e2m1fn` and `i4` exist only in kernels."""
    elem = element_of(ty) or (ty.elem if isinstance(ty, (PointerTy, MappedTy)) else None)
    if elem is None or elem.addressable:
        return True
    entry = (
        messages.SUB_BYTE_FLOAT_PARAMETER if elem.is_float else messages.SUB_BYTE_INTEGER_PARAMETER
    )
    sink.add(entry.at(param.type.span, name=param.name, elem=elem, bits=elem.bits))
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
            messages.MAPPED_TILE_SHAPE_DYNAMIC.at(
                param.type.span, name=param.name, shape=", ".join(map(str, tile.shape))
            )
        )
        return False
    if not check_tile_shape(tile.shape, param.type.span, f"output `{param.name}`", sink):
        return False
    problem = _map_problem(param, mapped)
    if problem is None:
        return True
    sink.add(problem)
    return False


def _map_problem(param: A.Param, mapped: MappedTy) -> Diagnostic | None:
    groups = mapped.map_shape
    where = {"name": param.name, "map_shape": list(groups)}
    if len(groups) != mapped.rank:
        return messages.MAP_RANK_MISMATCH.at(param.type.span, rank=mapped.rank, **where)
    negative = next((a for a, g in enumerate(groups) if g < 0), None)
    if negative is not None:
        return messages.MAP_AXIS_NEGATIVE.at(
            param.type.span, axis=negative, group=groups[negative], **where
        )
    streamed = [g for g in groups if g != 0]
    if not streamed:
        return messages.MAP_WITHOUT_STREAMED_AXIS.at(param.type.span, **where)
    leading = next((a for a, g in enumerate(streamed[:-2]) if g != 1), None)
    if leading is not None:
        return messages.MAP_LEADING_AXIS_NOT_ONE.at(
            param.type.span, axis=leading, group=streamed[leading], **where
        )
    if len(streamed) == 1 and streamed != [1]:
        return messages.MAP_SINGLE_STREAM_NOT_ONE.at(param.type.span, group=streamed[0], **where)
    return None


def _check_output(param: A.Param, tensor: TensorTy, sink: DiagnosticSink) -> bool:
    span = param.type.span
    if not 1 <= tensor.rank <= MAX_OUTPUT_RANK:
        sink.add(messages.OUTPUT_RANK_OUT_OF_RANGE.at(span, name=param.name, rank=tensor.rank))
        return False
    bad = [d for d in tensor.shape if d <= 0 and d != DYNAMIC]
    if bad:
        shape = ", ".join(map(str, tensor.shape))
        sink.add(
            messages.OUTPUT_TILE_DIM_NOT_POSITIVE.at(span, dim=bad[0], name=param.name, shape=shape)
        )
        return False
    return True


def check_tile_shape(shape: tuple[int, ...], span: A.Span, what: str, sink: DiagnosticSink) -> bool:
    bad = [d for d in shape if not is_power_of_two(d)]
    if bad:
        shown = ", ".join(map(str, shape))
        sink.add(
            messages.DECLARED_TILE_NOT_POWER_OF_TWO.at(span, dim=bad[0], what=what, shape=shown)
        )
        return False
    return True


def _check_input(param: A.Param, tensor: TensorTy, sink: DiagnosticSink) -> bool:
    bad = [d for d in tensor.shape if d != DYNAMIC and d <= 0]
    if bad:
        sink.add(
            messages.INPUT_EXTENT_NOT_POSITIVE.at(param.type.span, name=param.name, extent=bad[0])
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
            sink.add(messages.ENTRY_OPTION_TWICE.at(option.span, key=option.key))
            continue
        seen.add(option.key)
        if option.key not in _KNOWN_OPTIONS:
            sink.add(
                messages.UNKNOWN_ENTRY_OPTION.at(
                    option.span, key=option.key, known=", ".join(_KNOWN_OPTIONS)
                )
            )
        elif option.value is None:
            sink.add(messages.ENTRY_OPTION_WITHOUT_VALUE.at(option.span, key=option.key))
        elif option.key in _BOOL_OPTIONS:
            value = _bool_option(option, resolver, sink)
            if value is not None:
                values[option.key] = value
        elif option.key == "optimization_hints":
            hints = parse_optimization_hints(option.value, resolver.env, sink)
    unchecked = values.get("unchecked_accesses", False)
    if unchecked and not function.is_unsafe:
        sink.add(messages.UNCHECKED_ACCESSES_NOT_UNSAFE.at(function.name_span))
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
    sink.add(messages.ENTRY_OPTION_NOT_BOOL.at(option.value.span, key=option.key))
    return None
