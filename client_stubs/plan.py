"""Check a launch's arguments against a contract and pack its parameter buffer, without a GPU.

`plan_launch(contract, args)` does everything a launch needs except the driver call: it binds
each argument to its contract param, checks kind, device residency, dtype, rank, shapes, output
tiles, the specialization assumptions and output exclusivity, derives the grid from the
partitioned outputs (or, for a persistent kernel, takes (num_tile_blocks, 1, 1) from its
`MappedPartition`s), evaluates the contract's launch checks (bounds obligations hoisted out of
the kernel) on the shapes and that grid, and packs the ABI slots into one bytes buffer. Any
failure raises a `LaunchError` subclass naming the kernel, the parameter, the expected and the
actual value (a failed launch check: its cause and both evaluated sides).
"""

from __future__ import annotations

import numbers
import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from client_stubs.contract import (
    POINTER,
    SCALAR,
    TENSOR_OUT,
    TENSOR_OUT_MAPPED,
    AssumptionSpec,
    ContractSpec,
    LaunchCheckSpec,
    ParamSpec,
    validate_contract,
)
from client_stubs.dtypes import dtype, int_range, pack_ctype
from client_stubs.errors import (
    ArgumentKindError,
    ArityError,
    AssumptionError,
    DeviceMismatchError,
    DTypeMismatchError,
    EmptyOutputError,
    GridLimitError,
    GridMismatchError,
    HostArgumentError,
    LaunchCheckError,
    LaunchGridError,
    MapShapeMismatchError,
    MovedArgumentError,
    MovedTensorError,
    NegativeStrideError,
    NumTileBlocksError,
    OutputRankError,
    OverlapError,
    RankMismatchError,
    ScalarValueError,
    SelfOverlapError,
    ShapeMismatchError,
    SlotValueError,
    TileShapeMismatchError,
)
from client_stubs.interop import GPU_DEVICE_TYPES, describe
from client_stubs.pending import Access
from client_stubs.tensor import DeviceTensor, MappedPartition, Partition, TensorLayout
from protos.generated.cutile.compile.v1 import contract_pb2

I32_MAX = (1 << 31) - 1
GRID_LIMITS = (I32_MAX, 65535, 65535)  # cuLaunchKernel gridDim limits


@dataclass(frozen=True)
class BoundArg:
    """One argument bound to its contract param: a tensor layout or a scalar value."""

    param: ParamSpec
    layout: TensorLayout | None  # tensors
    tile_shape: tuple[int, ...]  # outputs
    value: int | float | bool | None  # scalars; raw pointers: the address
    num_tile_blocks: int = 0  # mapped outputs: the persistent grid they ask for


@dataclass(frozen=True)
class LaunchPlan:
    """Everything `cuLaunchKernel` needs, computed and checked on the host."""

    kernel: str
    entry_symbol: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem_bytes: int
    param_buffer: bytes
    slot_offsets: tuple[int, ...]
    device: int | None  # the tensors' device; None when no tensor is passed
    results: tuple[object, ...]  # the arguments as given, handed back after the launch
    keep_alive: tuple[object, ...]  # owners of every tensor's memory
    accesses: tuple[Access, ...] = ()  # the bytes each tensor argument reads or writes


def plan_launch(
    contract: contract_pb2.LaunchContract | ContractSpec,
    args: Sequence[object],
    *,
    stream: int | None = None,
    grid: Sequence[int] | None = None,
) -> LaunchPlan:
    """Check `args` against `contract` and compute the grid and packed parameter buffer.
    `grid` is given exactly when no output defines it (a raw-pointer kernel)."""
    spec = contract if isinstance(contract, ContractSpec) else validate_contract(contract)
    kernel = spec.function or spec.entry_symbol
    if len(args) != len(spec.params):
        names = ", ".join(p.name for p in spec.params)
        raise ArityError(kernel, None, f"{len(spec.params)} arguments ({names})", len(args))
    bound = [_bind(kernel, p, a, stream) for p, a in zip(spec.params, args, strict=False)]
    device = _common_device(kernel, bound)
    for assumption in spec.assumptions:
        _check_assumption(kernel, assumption, bound[assumption.param])
    _check_exclusive_outputs(kernel, bound)
    grid_params = [bound[i] for i in spec.grid_outputs]
    if spec.host_grid:
        launch_grid = _host_grid(kernel, grid)
    elif grid is not None:
        raise LaunchGridError(
            kernel, None, "no grid argument", tuple(grid), "its outputs define the grid"
        )
    elif spec.persistent:
        launch_grid = _persistent_grid(kernel, grid_params)
    else:
        launch_grid = _grid(kernel, grid_params)
    grid = launch_grid
    clustered = spec.host_grid or spec.persistent
    if clustered and grid[0] % spec.cluster_blocks:
        raise GridLimitError(
            kernel,
            grid_params[0].param.name if grid_params else None,
            f"grid axis 0 a multiple of the cubin's cluster of {spec.cluster_blocks} tile blocks",
            grid[0],
        )
    if spec.launch_checks:
        _check_launch(kernel, spec, bound, grid)
    if not clustered:
        grid = _cluster_grid(kernel, grid, spec.cluster_blocks, grid_params[0].param.name)
    return LaunchPlan(
        kernel=kernel,
        entry_symbol=spec.entry_symbol,
        grid=grid,
        block=spec.block,
        shared_mem_bytes=spec.shared_mem_bytes,
        param_buffer=_pack(kernel, spec, bound),
        slot_offsets=spec.slot_offsets,
        device=device,
        results=tuple(args),
        keep_alive=tuple(b.layout.owner for b in bound if b.layout is not None),
        accesses=_accesses(kernel, bound),
    )


def _accesses(kernel: str, bound: list[BoundArg]) -> tuple[Access, ...]:
    found = []
    for b in bound:
        if b.layout is None:
            continue
        lo, hi = b.layout.byte_extent
        if lo != hi:
            writes = b.param.is_output or b.param.kind == POINTER  # a raw pointer may write
            found.append(Access(lo, hi, b.layout.device, writes, kernel, b.param.name))
    return tuple(found)


# ---- binding ------------------------------------------------------------------------------


def _bind(kernel: str, param: ParamSpec, arg: object, stream: int | None) -> BoundArg:
    if param.kind == SCALAR:
        return BoundArg(param, None, (), _scalar(kernel, param, arg))
    if param.kind == POINTER:
        return _pointer(kernel, param, arg)
    if param.kind == TENSOR_OUT:
        layout, tiles = _output_layout(kernel, param, arg)
        _check_tensor(kernel, param, layout)
        _check_output(kernel, param, layout, tiles)
        return BoundArg(param, layout, tiles, None)
    if param.kind == TENSOR_OUT_MAPPED:
        mapped = _mapped_output(kernel, param, arg)
        layout, tiles = mapped.layout, mapped.tile_shape
        _check_tensor(kernel, param, layout)
        _check_output(kernel, param, layout, tiles)
        _check_mapped(kernel, param, mapped)
        return BoundArg(param, layout, tiles, None, mapped.num_tile_blocks)
    layout = _input_layout(kernel, param, arg, stream)
    _check_tensor(kernel, param, layout)
    _check_input_shape(kernel, param, layout)
    return BoundArg(param, layout, (), None)


def _pointer(kernel: str, param: ParamSpec, arg: object) -> BoundArg:
    """A raw pointer: a `DeviceTensor` of the pointee dtype (its base address; its memory
    is then tracked as written by the launch) or a non-zero device address as an int."""
    expected = f"a {param.dtype} DeviceTensor or a device address (int)"
    if isinstance(arg, DeviceTensor):
        if arg.moved:
            raise MovedArgumentError(
                kernel, param.name, expected, "a tensor moved into a Partition"
            )
        layout = arg.layout
        _check_allocated(kernel, param, layout)
        if layout.dtype != param.dtype:
            raise DTypeMismatchError(kernel, param.name, param.dtype, layout.dtype)
        _check_address_space(kernel, param, layout)
        return BoundArg(param, layout, (), layout.ptr)
    if isinstance(arg, numbers.Integral) and not isinstance(arg, bool):
        address = int(arg)
        if not 0 < address < 1 << 64:
            raise ScalarValueError(
                kernel, param.name, "a device address in [1, 2^64)", _shown(address)
            )
        return BoundArg(param, None, (), address)
    _reject_host(kernel, param, arg, expected)
    raise ArgumentKindError(kernel, param.name, expected, _type_name(arg))


def _output_layout(
    kernel: str, param: ParamSpec, arg: object
) -> tuple[TensorLayout, tuple[int, ...]]:
    expected = f"a Partition of a {param.dtype} tensor with tiles {list(param.tile_shape)}"
    if isinstance(arg, MappedPartition):
        raise ArgumentKindError(
            kernel,
            param.name,
            expected,
            "a MappedPartition",
            "this output is not a MappedPartitionMut; pass the Partition (mapped.unmap())",
        )
    if isinstance(arg, Partition):
        try:
            return arg.layout, arg.tile_shape
        except MovedTensorError as exc:
            raise MovedArgumentError(
                kernel, param.name, expected, "a consumed Partition", str(exc)
            ) from None
    if isinstance(arg, DeviceTensor):
        if arg.moved:
            raise MovedArgumentError(
                kernel, param.name, expected, "a tensor already moved into a Partition"
            )
        raise ArgumentKindError(
            kernel,
            param.name,
            expected,
            "an unpartitioned DeviceTensor",
            f"pass tensor.partition({list(param.tile_shape)})",
        )
    _reject_host(kernel, param, arg, expected)
    raise ArgumentKindError(
        kernel,
        param.name,
        expected,
        _type_name(arg),
        "wrap it with DeviceTensor.wrap(obj).partition(tile_shape)",
    )


def _mapped_output(kernel: str, param: ParamSpec, arg: object) -> MappedPartition:
    """The `MappedPartition` a persistent kernel's mapped output needs."""
    tiles, groups = list(param.tile_shape), list(param.map_shape)
    expected = f"a MappedPartition of a {param.dtype} tensor with tiles {tiles}, map {groups}"
    how = f"pass tensor.partition({tiles}).map({groups}, num_tile_blocks)"
    if isinstance(arg, MappedPartition):
        if arg.moved:
            raise MovedArgumentError(
                kernel, param.name, expected, "a consumed MappedPartition", "use what unmap() gave"
            )
        return arg
    if isinstance(arg, Partition):
        if arg.moved:
            raise MovedArgumentError(
                kernel, param.name, expected, "a moved or consumed Partition", how
            )
        raise ArgumentKindError(
            kernel,
            param.name,
            expected,
            "a Partition without a map",
            f"this output is a MappedPartitionMut; pass partition.map({groups}, num_tile_blocks)",
        )
    if isinstance(arg, DeviceTensor):
        if arg.moved:
            raise MovedArgumentError(
                kernel, param.name, expected, "a tensor already moved into a Partition"
            )
        raise ArgumentKindError(kernel, param.name, expected, "an unpartitioned DeviceTensor", how)
    _reject_host(kernel, param, arg, expected)
    raise ArgumentKindError(kernel, param.name, expected, _type_name(arg), how)


def _check_mapped(kernel: str, param: ParamSpec, mapped: MappedPartition) -> None:
    if mapped.map_shape != param.map_shape:
        raise MapShapeMismatchError(
            kernel,
            param.name,
            list(param.map_shape),
            list(mapped.map_shape),
            "the kernel was compiled for this MAP; map the partition with it",
        )
    tiles = mapped.work_items
    if not 1 <= mapped.num_tile_blocks <= tiles:
        raise NumTileBlocksError(
            kernel,
            param.name,
            f"1 <= num_tile_blocks <= {tiles} (the output's work items)",
            mapped.num_tile_blocks,
        )


def _input_layout(kernel: str, param: ParamSpec, arg: object, stream: int | None) -> TensorLayout:
    expected = f"a {param.dtype} device tensor"
    if isinstance(arg, DeviceTensor):
        if arg.moved:
            raise MovedArgumentError(
                kernel,
                param.name,
                expected,
                "a tensor moved into a Partition",
                "call partition.unpartition() first",
            )
        return arg.layout
    if isinstance(arg, (Partition, MappedPartition)):
        raise ArgumentKindError(
            kernel,
            param.name,
            expected,
            f"a {type(arg).__name__}",
            "only outputs (&mut) take partitions",
        )
    _reject_host(kernel, param, arg, expected)
    try:
        descriptor = describe(arg, stream)
    except (TypeError, BufferError, ValueError) as exc:
        raise ArgumentKindError(kernel, param.name, expected, _type_name(arg), str(exc)) from None
    if descriptor is None:
        raise ArgumentKindError(kernel, param.name, expected, _type_name(arg))
    if descriptor.device_type not in GPU_DEVICE_TYPES:
        raise HostArgumentError(
            kernel,
            param.name,
            "GPU memory",
            f"{_type_name(arg)} on {descriptor.device_name}",
            "copy it with DeviceTensor.from_numpy(...)",
        )
    return TensorLayout(
        descriptor.ptr,
        descriptor.shape,
        descriptor.strides,
        descriptor.dtype,
        descriptor.device_id,
        descriptor.owner,
    )


def _reject_host(kernel: str, param: ParamSpec, arg: object, expected: str) -> None:
    if isinstance(arg, (np.ndarray, list, tuple)) or (
        hasattr(arg, "__array_interface__") and not hasattr(arg, "__cuda_array_interface__")
    ):
        raise HostArgumentError(
            kernel,
            param.name,
            f"{expected} in GPU memory",
            f"host array {_type_name(arg)}",
            "copy it with DeviceTensor.from_numpy(...)",
        )


def _type_name(arg: object) -> str:
    kind = type(arg)
    return (
        f"{kind.__module__}.{kind.__qualname__}"
        if kind.__module__ != "builtins"
        else (kind.__qualname__)
    )


# ---- per-argument checks ------------------------------------------------------------------


def _check_allocated(kernel: str, param: ParamSpec, layout: TensorLayout) -> None:
    """Memory `DeviceTensor.free()` gave back (through any view of it) may belong to another
    tensor by now: never launched on. A memoized launch of it is checked again (`free()`
    counts a move) and refused here."""
    if layout.freed:
        raise MovedArgumentError(
            kernel,
            param.name,
            "a tensor of allocated device memory",
            "a tensor whose memory was freed",
            "DeviceTensor.free() gave it back to the allocator, which may have handed it out again",
        )


def _check_tensor(kernel: str, param: ParamSpec, layout: TensorLayout) -> None:
    _check_allocated(kernel, param, layout)
    if layout.dtype != param.dtype:
        raise DTypeMismatchError(kernel, param.name, param.dtype, layout.dtype)
    if layout.ndim != param.rank:
        raise RankMismatchError(kernel, param.name, param.rank, layout.ndim)
    if any(s < 0 for s in layout.strides):
        raise NegativeStrideError(kernel, param.name, "strides >= 0", list(layout.strides))
    _check_address_space(kernel, param, layout)


def _check_address_space(kernel: str, param: ParamSpec, layout: TensorLayout) -> None:
    """Every byte of the view in [0, 2^64): no device address space holds any other (a
    pointer near 2^64 with a large extent, a negative stride reaching below 0). Checked once,
    when the launch is planned: the byte extent is cached on the layout."""
    lo, hi = layout.byte_extent
    if lo < 0 or hi > 1 << 64:
        raise ArgumentKindError(
            kernel,
            param.name,
            "a view of device memory inside the 64-bit address space [0, 2^64)",
            "a view with bytes outside the 64-bit address space",
            f"address {layout.ptr:#x}, shape {list(layout.shape)}, strides {list(layout.strides)}",
        )


def _check_output(
    kernel: str, param: ParamSpec, layout: TensorLayout, tiles: tuple[int, ...]
) -> None:
    if not 1 <= layout.ndim <= 3:
        raise OutputRankError(kernel, param.name, "rank 1..3", layout.ndim)
    wanted = param.tile_shape
    same_rank = len(tiles) == len(wanted)
    if not same_rank or any(w not in (-1, t) for w, t in zip(wanted, tiles, strict=False)):
        expected = [("*" if w == -1 else w) for w in wanted]
        raise TileShapeMismatchError(kernel, param.name, expected, list(tiles))
    if any(d == 0 for d in layout.shape):
        raise EmptyOutputError(kernel, param.name, "every extent > 0", list(layout.shape))


def _check_input_shape(kernel: str, param: ParamSpec, layout: TensorLayout) -> None:
    for want, got in zip(param.declared_shape, layout.shape, strict=False):
        if want != -1 and want != got:
            expected = [("*" if d == -1 else d) for d in param.declared_shape]
            raise ShapeMismatchError(kernel, param.name, expected, list(layout.shape))


def _scalar(kernel: str, param: ParamSpec, arg: object) -> int | float | bool:
    if isinstance(arg, np.generic) and np.ndim(arg) == 0:
        arg = arg.item()
    kind = dtype(param.dtype)
    expected = f"a {param.dtype} scalar"
    if isinstance(arg, (DeviceTensor, Partition, MappedPartition)) or not isinstance(
        arg, numbers.Number
    ):
        raise ArgumentKindError(kernel, param.name, expected, _type_name(arg))
    if kind.kind == "b":
        if isinstance(arg, bool) or (isinstance(arg, numbers.Integral) and int(arg) in (0, 1)):
            return bool(arg)
        raise ScalarValueError(kernel, param.name, expected, _shown(arg))
    if kind.is_integer:
        if isinstance(arg, bool) or not isinstance(arg, numbers.Integral):
            raise ScalarValueError(kernel, param.name, expected, repr(arg))
        low, high = int_range(param.dtype)
        if not low <= int(arg) <= high:
            raise ScalarValueError(
                kernel, param.name, f"{param.dtype} in [{low}, {high}]", _shown(int(arg))
            )
        return int(arg)
    if isinstance(arg, bool) or not isinstance(arg, numbers.Real):
        raise ScalarValueError(kernel, param.name, expected, repr(arg))
    try:
        return float(arg)
    except OverflowError as exc:  # an int (or Fraction) beyond the largest double
        actual = f"{_type_name(arg)} beyond the float range"
        raise ScalarValueError(kernel, param.name, expected, actual, str(exc)) from None


def _shown(value: object) -> str:
    """`repr(value)`, or the size of an int of more than 128 bits (no scalar holds one, and
    Python refuses to print one of more than 4300 digits)."""
    if isinstance(value, numbers.Integral) and int(value).bit_length() > 128:
        return f"an int of {int(value).bit_length()} bits"
    return repr(value)


def _common_device(kernel: str, bound: list[BoundArg]) -> int | None:
    device: int | None = None
    first = ""
    for b in bound:
        if b.layout is None:
            continue
        if device is None:
            device, first = b.layout.device, b.param.name
        elif b.layout.device != device:
            raise DeviceMismatchError(
                kernel, b.param.name, f"device {device} (as `{first}`)", f"device {b.layout.device}"
            )
    return device


# ---- assumptions --------------------------------------------------------------------------


def _check_assumption(kernel: str, a: AssumptionSpec, b: BoundArg) -> None:
    if a.kind == "SLAB_DIV":
        holds = b.tile_shape[a.axis] % a.value == 0
    elif b.layout is None:
        holds = _scalar_assumption_holds(a, b.value)
    else:
        holds = _tensor_assumption_holds(a, b.layout)
    if not holds:
        raise AssumptionError(
            kernel,
            b.param.name,
            a.describe(b.param.name),
            _assumption_actual(a, b),
            "the kernel assumes it (a declared precondition or request facts); pass arguments "
            "that meet it, or use a variant compiled without it",
        )


def _scalar_assumption_holds(a: AssumptionSpec, value: object) -> bool:
    number = value if isinstance(value, (int, float)) else 0
    if a.kind == "NONNEG":
        return number >= 0
    return isinstance(number, float) or -(1 << 31) <= number <= I32_MAX


def _element_span(layout: TensorLayout) -> int:
    return sum((d - 1) * s for d, s in zip(layout.shape, layout.strides, strict=False) if d) + 1


def _tensor_assumption_holds(a: AssumptionSpec, layout: TensorLayout) -> bool:
    kind = a.kind
    if kind == "BASE_ALIGN":
        return layout.ptr % a.value == 0
    if kind == "DIM_DIV":
        return layout.shape[a.axis] % a.value == 0
    if kind == "STRIDE_DIV":
        return layout.strides[a.axis] % a.value == 0
    if kind == "STRIDE_ONE":
        return layout.strides[a.axis] == 1
    if kind == "STATIC_DIM":
        return layout.shape[a.axis] == a.value
    if kind == "NONNEG":
        return min((*layout.shape, *layout.strides), default=0) >= 0
    return max((*layout.shape, *layout.strides, _element_span(layout)), default=0) <= I32_MAX


def _assumption_actual(a: AssumptionSpec, b: BoundArg) -> object:
    """What the argument has instead (only computed for the error message)."""
    layout = b.layout
    if layout is None:
        return b.value
    texts = {
        "BASE_ALIGN": lambda: f"address {layout.ptr:#x}",
        "DIM_DIV": lambda: f"dim {layout.shape[a.axis]}",
        "STATIC_DIM": lambda: f"dim {layout.shape[a.axis]}",
        "STRIDE_DIV": lambda: f"stride {layout.strides[a.axis]}",
        "STRIDE_ONE": lambda: f"stride {layout.strides[a.axis]}",
        "NONNEG": lambda: f"shape {layout.shape}, strides {layout.strides}",
        "SLAB_DIV": lambda: f"partition tile {list(b.tile_shape)}",
    }
    if a.kind in texts:
        return texts[a.kind]()
    return f"shape {layout.shape}, strides {layout.strides}, element span {_element_span(layout)}"


# ---- aliasing -----------------------------------------------------------------------------


def elements_disjoint(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """True when distinct indices address distinct elements (conservative: may reject some
    exotic interleaved layouts that are in fact disjoint, never accepts a colliding one)."""
    axes = sorted((abs(s), d) for d, s in zip(shape, strides, strict=False) if d > 1)
    reach = 0  # largest offset reachable by the smaller-stride axes
    for stride, extent in axes:
        if stride <= reach:
            return False
        reach += (extent - 1) * stride
    return True


def _check_exclusive_outputs(kernel: str, bound: list[BoundArg]) -> None:
    for out in bound:
        if not out.param.is_output or out.layout is None:
            continue
        layout = out.layout
        if not elements_disjoint(layout.shape, layout.strides):
            raise SelfOverlapError(
                kernel,
                out.param.name,
                "strides that give every element its own address",
                f"shape {list(layout.shape)} with strides {list(layout.strides)}",
            )
        lo, hi = layout.byte_extent
        for other in bound:
            if other is out or other.layout is None or lo == hi:
                continue
            other_lo, other_hi = other.layout.byte_extent
            if other_lo < hi and lo < other_hi:
                raise OverlapError(
                    kernel,
                    out.param.name,
                    "memory not shared with any other argument",
                    f"bytes [{lo:#x}, {hi:#x}) overlapping `{other.param.name}` "
                    f"[{other_lo:#x}, {other_hi:#x})",
                )


# ---- grid ---------------------------------------------------------------------------------


def _grid(kernel: str, outputs: list[BoundArg]) -> tuple[int, int, int]:
    grid: tuple[int, int, int] | None = None
    first = ""
    for out in outputs:
        assert out.layout is not None
        axes = [-(-d // t) for d, t in zip(out.layout.shape, out.tile_shape, strict=False)]
        this = (*axes, *([1] * (3 - len(axes))))
        candidate = (this[0], this[1], this[2])
        if grid is None:
            grid, first = candidate, out.param.name
            for axis, (size, limit) in enumerate(zip(candidate, GRID_LIMITS, strict=False)):
                if size > limit:
                    raise GridLimitError(
                        kernel, out.param.name, f"grid axis {axis} <= {limit}", size
                    )
        elif candidate != grid:
            raise GridMismatchError(
                kernel, out.param.name, f"grid {grid} (from `{first}`)", f"grid {candidate}"
            )
    assert grid is not None
    return grid


def _cluster_grid(
    kernel: str, tiles: tuple[int, int, int], cluster: int, first: str
) -> tuple[int, int, int]:
    """The CUDA grid for one tile block per output tile: with a cluster of `cluster` CTAs
    per tile block (the cubin's `num_cta_in_cga`) the grid counts CTAs, so axis 0 grows by
    that factor and the block ids (cluster ids) still cover exactly the tiles."""
    if cluster == 1:
        return tiles
    ctas = tiles[0] * cluster
    if ctas > GRID_LIMITS[0]:
        raise GridLimitError(
            kernel, first, f"grid axis 0 <= {GRID_LIMITS[0]} CTAs ({cluster} per tile)", ctas
        )
    return (ctas, tiles[1], tiles[2])


def _host_grid(kernel: str, grid: Sequence[int] | None) -> tuple[int, int, int]:
    """The grid a raw-pointer kernel is launched with: three positive ints within CUDA's
    limits (nothing else bounds what its blocks touch: that is the caller's promise)."""
    if grid is None:
        raise LaunchGridError(
            kernel,
            None,
            "grid=(x, y, z)",
            "no grid",
            "no output defines this kernel's grid; pass it to the launch",
        )
    axes = tuple(grid)
    if len(axes) != 3 or not all(_is_int(a) for a in axes):
        raise LaunchGridError(kernel, None, "three ints (x, y, z)", axes)
    for axis, (size, limit) in enumerate(zip(axes, GRID_LIMITS, strict=True)):
        if not 1 <= size <= limit:
            raise LaunchGridError(kernel, None, f"1 <= grid axis {axis} <= {limit}", size)
    return (int(axes[0]), int(axes[1]), int(axes[2]))


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _persistent_grid(kernel: str, mapped: list[BoundArg]) -> tuple[int, int, int]:
    """(num_tile_blocks, 1, 1); every mapped output must ask for the same number."""
    blocks, first = mapped[0].num_tile_blocks, mapped[0].param.name
    for out in mapped[1:]:
        if out.num_tile_blocks != blocks:
            raise GridMismatchError(
                kernel,
                out.param.name,
                f"num_tile_blocks {blocks} (from `{first}`)",
                f"num_tile_blocks {out.num_tile_blocks}",
            )
    if blocks > GRID_LIMITS[0]:
        raise GridLimitError(kernel, first, f"grid axis 0 <= {GRID_LIMITS[0]}", blocks)
    return (blocks, 1, 1)


# ---- launch checks ------------------------------------------------------------------------


def _check_launch(
    kernel: str, spec: ContractSpec, bound: list[BoundArg], grid: tuple[int, int, int]
) -> None:
    """Every hoisted bounds obligation `lhs <= rhs`, on the bound shapes and the final grid."""
    shapes = [b.layout.shape if b.layout is not None else None for b in bound]
    tiles = [b.tile_shape for b in bound]
    for check in spec.launch_checks:
        lhs = check.lhs.evaluate(shapes, grid, tiles)
        rhs = check.rhs.evaluate(shapes, grid, tiles)
        if lhs > rhs:
            _fail_launch_check(kernel, spec, check, lhs, rhs)


def _fail_launch_check(
    kernel: str, spec: ContractSpec, check: LaunchCheckSpec, lhs: int, rhs: int
) -> None:
    raise LaunchCheckError(
        kernel,
        check.lhs.describe(spec.params),
        lhs,
        check.rhs.describe(spec.params),
        rhs,
        check.cause,
    )


# ---- packing ------------------------------------------------------------------------------


def _slot_value(role: str, axis: int, b: BoundArg) -> int | float | bool:
    if role == "VALUE" or b.param.kind == POINTER:
        assert b.value is not None
        return b.value
    assert b.layout is not None
    if role == "PTR":
        return b.layout.ptr
    if role == "DIM":
        return b.layout.shape[axis]
    if role == "PART_DIM":
        return b.tile_shape[axis]
    return b.layout.strides[axis]  # STRIDE and PART_STRIDE


def _pack(kernel: str, spec: ContractSpec, bound: list[BoundArg]) -> bytes:
    values = [_slot_value(slot.role, slot.axis, bound[slot.param]) for slot in spec.slots]
    packer = spec.packer
    if packer is not None:
        try:
            return packer.pack(*values)
        except (struct.error, OverflowError, TypeError):
            pass  # the slot-by-slot path below names the offending slot
    buffer = bytearray(spec.param_buffer_bytes)
    for slot, value in zip(spec.slots, values, strict=True):
        try:
            pack_ctype(slot.ctype, value, buffer, slot.offset)
        except (OverflowError, TypeError, struct.error) as exc:
            raise SlotValueError(
                kernel,
                bound[slot.param].param.name,
                f"{slot.role} axis {slot.axis} representable as {slot.ctype}",
                value,
                str(exc),
            ) from None
    return bytes(buffer)
