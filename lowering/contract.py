"""The launch contract as domain data, built from the entry's ABI and specialization.

This is what travels with every cubin (as the `LaunchContract` protobuf message; the
service converts). A host launches from it without running the compiler.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

SCHEMA_VERSION = 1


class ParamKind(enum.Enum):
    TENSOR_IN = 1
    TENSOR_OUT = 2
    SCALAR = 3
    TENSOR_OUT_MAPPED = 4
    POINTER = 5  # `*mut E` of an `unsafe fn` entry: one raw device address


class SlotRole(enum.Enum):
    PTR = 1
    DIM = 2
    STRIDE = 3
    PART_DIM = 4
    PART_STRIDE = 5
    VALUE = 6


class AssumptionKind(enum.Enum):
    BASE_ALIGN = 1
    DIM_DIV = 2
    STRIDE_DIV = 3
    STRIDE_ONE = 4
    NONNEG = 5
    STATIC_DIM = 6
    FITS_I32 = 7
    SLAB_DIV = 8  # an output's partition tile (param, axis) % value == 0


@dataclass(frozen=True)
class ContractParam:
    index: int
    name: str
    kind: ParamKind
    dtype: str  # cuTile element name: "f32", "bf16", "u8", "bool", ...
    rank: int = 0
    declared_shape: tuple[int, ...] = ()  # inputs; -1 = dynamic
    tile_shape: tuple[int, ...] = ()  # outputs
    map_shape: tuple[int, ...] = ()  # mapped outputs: the schedule's swizzle groups


@dataclass(frozen=True)
class AbiSlot:
    param: int
    role: SlotRole
    axis: int
    ctype: str  # "u64", "i32", "f32", ...
    offset: int
    size: int


@dataclass(frozen=True)
class Assumption:
    param: int
    kind: AssumptionKind
    axis: int = 0
    value: int = 0


@dataclass(frozen=True)
class Quantity:
    """A launch-known integer: a constant, a tensor extent, a tile count or a grid axis.
    Exactly one of the fields is set."""

    constant: int | None = None
    dim: tuple[int, int] | None = None  # (param, axis)
    tile_count: tuple[int, int, int] | None = None  # (param, axis, tile): ceil(dim / tile)
    grid_axis: int | None = None
    # (param, axis, tile): an output's partition tile extent on axis (dynamic in its type)
    # divided by tile, rounded down: the sub-tiles of each block's slab
    slab_tiles: tuple[int, int, int] | None = None

    def __str__(self) -> str:
        if self.dim is not None:
            return f"dim(param {self.dim[0]}, {self.dim[1]})"
        if self.tile_count is not None:
            param, axis, tile = self.tile_count
            return f"ceil(dim(param {param}, {axis}) / {tile})"
        if self.slab_tiles is not None:
            param, axis, tile = self.slab_tiles
            return f"tile(param {param}, {axis}) / {tile}"
        if self.grid_axis is not None:
            return f"grid[{self.grid_axis}]"
        return str(self.constant)


@dataclass(frozen=True)
class LaunchCheck:
    """Holds when lhs <= rhs; `cause` names the access that needs it."""

    lhs: Quantity
    rhs: Quantity
    cause: str


@dataclass(frozen=True)
class SafetySummary:
    unchecked_accesses: bool = False
    checks_discharged: int = 0
    checks_hoisted_to_host: int = 0
    checks_hoisted_to_preheader: int = 0
    checks_in_place: int = 0
    outputs_exclusive: bool = True


@dataclass(frozen=True)
class LaunchContract:
    module: str
    function: str
    entry_symbol: str
    source_sha256: str
    compiler_version: str
    sm: str  # the arch (the launch contract's wire name)
    tileiras_version: str
    bytecode_version: str
    opt_level: int
    host_arch: str
    params: tuple[ContractParam, ...]
    abi: tuple[AbiSlot, ...]
    grid_outputs: tuple[int, ...]  # params whose partitions define the grid
    param_buffer_bytes: int
    assumptions: tuple[Assumption, ...]
    safety: SafetySummary
    generics: tuple[tuple[str, str], ...]  # (name, value) in declaration order
    launch_checks: tuple[LaunchCheck, ...] = ()
    block: tuple[int, int, int] = (1, 1, 1)
    shared_mem_bytes: int = 0
    cluster_blocks: int = 1  # CTAs per tile block (the arch's `num_cta_in_cga`)
    # the kernel waits for prior grids before touching memory (a host may launch it early)
    waits_for_prior_grids: bool = False
    # an occupancy variant: hosts take it only for launches of at least this many tile
    # blocks (`lowering.default_occupancy`); 0: any launch
    min_tile_blocks: int = 0
    # the entry takes an occupancy variant's hint (`lowering.default_occupancy`)
    takes_occupancy_variant: bool = False
    schema_version: int = SCHEMA_VERSION

    @property
    def persistent(self) -> bool:
        """A mapped output: the host chooses the grid (num_tile_blocks, 1, 1)."""
        return any(p.kind is ParamKind.TENSOR_OUT_MAPPED for p in self.params)

    @property
    def host_grid(self) -> bool:
        """No output defines the grid: the host passes it at launch."""
        return not self.grid_outputs
