"""Validate a `LaunchContract` message once and turn it into plain, fast Python data.

`validate_contract` fails closed: an unknown schema version, enum value, dtype, ctype or an
inconsistent ABI raises `ContractError`, because launching from a contract we do not fully
understand could corrupt memory. The same holds for a launch check (a bounds obligation the
compiler hoisted to the host) that names a missing param, axis or grid axis, or no quantity.
"""

from __future__ import annotations

import itertools
import struct
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from client_stubs.dtypes import CTYPE_SIZES, DTYPES, struct_code
from client_stubs.errors import ContractError
from protos.generated.cutile.compile.v1 import contract_pb2

SUPPORTED_SCHEMA_VERSIONS = frozenset({1})
# what a cubin needs to wait for prior grids (`waits_for_prior_grids`): the gdc ops of Tile IR
# bytecode 13.4, and dependent launches, from sm_90
EARLY_LAUNCH_MIN_BYTECODE = (13, 4)
EARLY_LAUNCH_MIN_SM = 90
# the most bytes of kernel parameters the driver takes (CUDA 12.1+, Volta and newer): a larger
# buffer is never launchable, and a hostile contract must not make the host allocate it
PARAM_BUFFER_LIMIT = 32764
_U64_MAX = 2**64 - 1

# Param kinds and slot roles as short strings (the proto enums, without prefixes).
TENSOR_IN = "TENSOR_IN"
TENSOR_OUT = "TENSOR_OUT"
TENSOR_OUT_MAPPED = "TENSOR_OUT_MAPPED"
SCALAR = "SCALAR"
POINTER = "POINTER"  # a raw device address (`*mut E` of an `unsafe fn` entry)
OUTPUT_KINDS = frozenset({TENSOR_OUT, TENSOR_OUT_MAPPED})
_KINDS = {
    contract_pb2.PARAM_KIND_TENSOR_IN: TENSOR_IN,
    contract_pb2.PARAM_KIND_TENSOR_OUT: TENSOR_OUT,
    contract_pb2.PARAM_KIND_SCALAR: SCALAR,
    contract_pb2.PARAM_KIND_TENSOR_OUT_MAPPED: TENSOR_OUT_MAPPED,
    contract_pb2.PARAM_KIND_POINTER: POINTER,
}
# Grid modes (GridRule.Mode without the prefix).
FROM_OUTPUTS = "FROM_OUTPUTS"
PERSISTENT = "PERSISTENT"
HOST = "HOST"  # no output defines the grid: the launch passes `grid=(x, y, z)`
_GRID_MODES = {
    contract_pb2.GridRule.MODE_FROM_OUTPUTS: FROM_OUTPUTS,
    contract_pb2.GridRule.MODE_PERSISTENT: PERSISTENT,
    contract_pb2.GridRule.MODE_HOST: HOST,
}
_ROLES = {
    contract_pb2.SLOT_ROLE_PTR: "PTR",
    contract_pb2.SLOT_ROLE_DIM: "DIM",
    contract_pb2.SLOT_ROLE_STRIDE: "STRIDE",
    contract_pb2.SLOT_ROLE_PART_DIM: "PART_DIM",
    contract_pb2.SLOT_ROLE_PART_STRIDE: "PART_STRIDE",
    contract_pb2.SLOT_ROLE_VALUE: "VALUE",
}
_ROLE_KINDS = {  # a mapped output's slots are exactly those of a partitioned output
    "PTR": (TENSOR_IN, TENSOR_OUT, TENSOR_OUT_MAPPED, POINTER),
    "DIM": (TENSOR_IN, TENSOR_OUT, TENSOR_OUT_MAPPED),
    "STRIDE": (TENSOR_IN, TENSOR_OUT, TENSOR_OUT_MAPPED),
    "PART_DIM": (TENSOR_OUT, TENSOR_OUT_MAPPED),
    "PART_STRIDE": (TENSOR_OUT, TENSOR_OUT_MAPPED),
    "VALUE": (SCALAR,),
}
_AXIS_ROLES = frozenset({"DIM", "STRIDE", "PART_DIM", "PART_STRIDE"})
# the slot types a role may have, as the compiler emits them (lowering/abi.py): a device
# address is u64, an extent or stride a signed index (i32, or i64 for dims past i32); a
# VALUE slot has its scalar's own dtype. Any other type has the kernel read another type's
# bits (a dim as a float's, an address as a double's).
_ROLE_CTYPES: dict[str, tuple[str, ...]] = {
    "PTR": ("u64",),
    **{role: ("i32", "i64") for role in _AXIS_ROLES},
}
_KIND_ROLES = {  # the slots of each param kind, in ABI order (an axis role: one per axis)
    kind: tuple(role for role, kinds in _ROLE_KINDS.items() if kind in kinds)
    for kind in (TENSOR_IN, TENSOR_OUT, TENSOR_OUT_MAPPED, SCALAR, POINTER)
}
_ASSUMPTIONS = {
    contract_pb2.ASSUMPTION_KIND_BASE_ALIGN: "BASE_ALIGN",
    contract_pb2.ASSUMPTION_KIND_DIM_DIV: "DIM_DIV",
    contract_pb2.ASSUMPTION_KIND_STRIDE_DIV: "STRIDE_DIV",
    contract_pb2.ASSUMPTION_KIND_STRIDE_ONE: "STRIDE_ONE",
    contract_pb2.ASSUMPTION_KIND_NONNEG: "NONNEG",
    contract_pb2.ASSUMPTION_KIND_STATIC_DIM: "STATIC_DIM",
    contract_pb2.ASSUMPTION_KIND_FITS_I32: "FITS_I32",
    contract_pb2.ASSUMPTION_KIND_SLAB_DIV: "SLAB_DIV",
}
_AXIS_ASSUMPTIONS = frozenset({"DIM_DIV", "STRIDE_DIV", "STRIDE_ONE", "STATIC_DIM", "SLAB_DIV"})
_POSITIVE_VALUE_ASSUMPTIONS = frozenset({"BASE_ALIGN", "DIM_DIV", "STRIDE_DIV", "SLAB_DIV"})
_SCALAR_ASSUMPTIONS = frozenset({"NONNEG", "FITS_I32"})


@dataclass(frozen=True)
class ParamSpec:
    index: int
    name: str
    kind: str  # TENSOR_IN | TENSOR_OUT | TENSOR_OUT_MAPPED | SCALAR | POINTER
    dtype: str
    rank: int
    declared_shape: tuple[int, ...]  # inputs; -1 = any extent
    tile_shape: tuple[int, ...]  # outputs (mapped ones too); -1: any partition tile extent
    map_shape: tuple[int, ...] = ()  # mapped outputs: the schedule's swizzle groups

    @property
    def is_output(self) -> bool:
        return self.kind in OUTPUT_KINDS


@dataclass(frozen=True)
class SlotSpec:
    param: int
    role: str  # PTR | DIM | STRIDE | PART_DIM | PART_STRIDE | VALUE
    axis: int
    ctype: str
    offset: int
    size: int


@dataclass(frozen=True)
class AssumptionSpec:
    param: int
    kind: str  # BASE_ALIGN | DIM_DIV | STRIDE_DIV | STRIDE_ONE | NONNEG | STATIC_DIM |
    # FITS_I32 | SLAB_DIV
    axis: int
    value: int

    def describe(self, param_name: str) -> str:
        texts = {
            "BASE_ALIGN": f"address of `{param_name}` % {self.value} == 0",
            "DIM_DIV": f"dim({param_name}, {self.axis}) % {self.value} == 0",
            "STRIDE_DIV": f"stride({param_name}, {self.axis}) % {self.value} == 0",
            "STRIDE_ONE": f"stride({param_name}, {self.axis}) == 1",
            "NONNEG": f"every dim and stride of `{param_name}` >= 0",
            "STATIC_DIM": f"dim({param_name}, {self.axis}) == {self.value}",
            "FITS_I32": f"dims, strides and element span of `{param_name}` fit in i32",
            "SLAB_DIV": f"tile({param_name}, {self.axis}) % {self.value} == 0",
        }
        return texts[self.kind]


# Quantity kinds (the `Quantity.value` oneof's field names).
CONSTANT = "constant"
DIM = "dim"
TILE_COUNT = "tile_count"
GRID_AXIS = "grid_axis"
SLAB_TILES = "slab_tiles"


@dataclass(frozen=True)
class QuantitySpec:
    """A launch-known integer: a constant, a tensor param's extent along an axis, the tile
    count ceil(dim / tile) along it, the launch grid's extent along axis 0..2, or an
    output's partition tile extent along an axis divided by a tile (rounded down)."""

    kind: str  # constant | dim | tile_count | grid_axis | slab_tiles
    param: int = 0  # dim, tile_count, slab_tiles
    axis: int = 0  # dim, tile_count, slab_tiles: the param's axis; grid_axis: the grid axis
    value: int = 0  # constant: the value; tile_count, slab_tiles: the tile extent

    def evaluate(
        self,
        shapes: Sequence[tuple[int, ...] | None],
        grid: Sequence[int],
        tiles: Sequence[tuple[int, ...]] = (),
    ) -> int:
        """The quantity's value, given each param's shape (None for scalars), the grid and
        each param's partition tile (outputs)."""
        if self.kind == CONSTANT:
            return self.value
        if self.kind == GRID_AXIS:
            return grid[self.axis]
        if self.kind == SLAB_TILES:
            return tiles[self.param][self.axis] // self.value
        shape = shapes[self.param]
        assert shape is not None  # validated: dim and tile_count name tensor params
        extent = shape[self.axis]
        return extent if self.kind == DIM else -(-extent // self.value)

    def describe(self, params: Sequence[ParamSpec]) -> str:
        if self.kind == CONSTANT:
            return str(self.value)
        if self.kind == GRID_AXIS:
            return f"grid axis {self.axis}"
        if self.kind == SLAB_TILES:
            return f"tile({params[self.param].name}, {self.axis}) / {self.value}"
        dim = f"dim({params[self.param].name}, {self.axis})"
        return dim if self.kind == DIM else f"ceil({dim} / {self.value})"


@dataclass(frozen=True)
class LaunchCheckSpec:
    """A bounds obligation hoisted out of the kernel: holds when `lhs <= rhs`."""

    lhs: QuantitySpec
    rhs: QuantitySpec
    cause: str


@dataclass(frozen=True)
class ContractSpec:
    """A validated launch contract, flattened for the per-launch fast path."""

    function: str
    module: str
    entry_symbol: str
    sm: str
    host_arch: str
    params: tuple[ParamSpec, ...]
    slots: tuple[SlotSpec, ...]
    grid_outputs: tuple[int, ...]  # FROM_OUTPUTS: outputs; PERSISTENT: the mapped outputs
    block: tuple[int, int, int]
    shared_mem_bytes: int
    param_buffer_bytes: int
    assumptions: tuple[AssumptionSpec, ...]
    unchecked_accesses: bool
    generics: tuple[tuple[str, str], ...]
    grid_mode: str = FROM_OUTPUTS  # PERSISTENT: grid = (num_tile_blocks, 1, 1) from the host
    launch_checks: tuple[LaunchCheckSpec, ...] = ()  # each must hold before every launch
    # CTAs per tile block: a host or persistent grid must be a multiple of it on axis 0;
    # an output-derived grid (one tile block per tile) is scaled by it on axis 0
    cluster_blocks: int = 1
    # the kernel waits for prior grids before touching memory: launched early (PDL)
    waits_for_prior_grids: bool = False
    # an occupancy variant: among a kernel's variants, taken only for launches of at least
    # this many tile blocks (0: any)
    min_tile_blocks: int = 0
    # the entry takes an occupancy variant's hint: a served kernel asks for one
    takes_occupancy_variant: bool = False

    @property
    def persistent(self) -> bool:
        return self.grid_mode == PERSISTENT

    @property
    def host_grid(self) -> bool:
        """The launch passes the grid (a raw-pointer kernel with no output)."""
        return self.grid_mode == HOST

    @property
    def raw_pointers(self) -> tuple[str, ...]:
        """The names of the raw-pointer params (their accesses are not bounds-checked)."""
        return tuple(p.name for p in self.params if p.kind == POINTER)

    @cached_property
    def slot_offsets(self) -> tuple[int, ...]:
        return tuple(s.offset for s in self.slots)

    @cached_property
    def packer(self) -> struct.Struct | None:
        """One precompiled `struct.Struct` for the whole parameter buffer (padding included),
        or None when a slot needs custom packing (bf16, fp8)."""
        return slots_struct(self.slots, self.param_buffer_bytes)


def slots_struct(slots: tuple[SlotSpec, ...], buffer_bytes: int) -> struct.Struct | None:
    """A little-endian struct packing `slots` (sorted, non-overlapping) into `buffer_bytes`."""
    fmt = ["<"]
    position = 0
    for slot in slots:
        code = struct_code(slot.ctype)
        if code is None:
            return None
        fmt.append("x" * (slot.offset - position) + code)
        position = slot.offset + slot.size
    fmt.append("x" * (buffer_bytes - position))
    packer = struct.Struct("".join(fmt))
    return packer if packer.size == buffer_bytes else None


def validate_contract(contract: contract_pb2.LaunchContract) -> ContractSpec:
    """Check a contract's internal consistency and flatten it; `ContractError` when it is not."""
    if contract.schema_version not in SUPPORTED_SCHEMA_VERSIONS:
        raise ContractError(
            f"launch contract schema_version {contract.schema_version} is not supported "
            f"(this client knows {sorted(SUPPORTED_SCHEMA_VERSIONS)})"
        )
    name = contract.kernel.function or contract.kernel.entry_symbol
    if not contract.kernel.entry_symbol:
        raise ContractError(f"contract of `{name}` has no entry_symbol")
    params = tuple(_param(name, position, p) for position, p in enumerate(contract.params))
    slots = tuple(_slot(name, params, s) for s in contract.abi)
    _check_slot_coverage(name, params, slots)
    buffer_bytes = _buffer_bytes(name, contract.launch.param_buffer_bytes, slots)
    grid_mode, grid_outputs = _grid(name, contract.grid, params)
    block = tuple(contract.launch.block) or (1, 1, 1)
    if len(block) != 3 or any(b <= 0 for b in block):
        raise ContractError(f"contract of `{name}`: block {tuple(block)} is not 3 positive dims")
    if contract.launch.waits_for_prior_grids:
        _check_prior_grid_wait(name, contract.target)
    return ContractSpec(
        function=contract.kernel.function,
        module=contract.kernel.module,
        entry_symbol=contract.kernel.entry_symbol,
        sm=contract.target.sm,
        host_arch=contract.target.host_arch,
        params=params,
        slots=slots,
        grid_outputs=grid_outputs,
        block=(block[0], block[1], block[2]),
        shared_mem_bytes=contract.launch.shared_mem_bytes,
        param_buffer_bytes=buffer_bytes,
        assumptions=tuple(_assumption(name, params, a) for a in contract.assumptions),
        unchecked_accesses=contract.safety.unchecked_accesses,
        generics=tuple((g.name, g.value) for g in contract.specialization.generics),
        grid_mode=grid_mode,
        cluster_blocks=max(1, contract.launch.cluster_blocks),
        waits_for_prior_grids=contract.launch.waits_for_prior_grids,
        min_tile_blocks=contract.launch.min_tile_blocks,
        takes_occupancy_variant=contract.launch.takes_occupancy_variant,
        launch_checks=tuple(
            _launch_check(name, params, position, check)
            for position, check in enumerate(contract.launch_checks)
        ),
    )


def _check_prior_grid_wait(kernel: str, target: contract_pb2.Target) -> None:
    """A kernel said to wait for prior grids is launched early, so its cubin must have the
    wait: bytecode 13.4 or later (the first with it) for sm_90 or later (the first with
    dependent launches; tileiras drops the wait below)."""
    numbers = (_ascii_number(n) for n in target.bytecode_version.split("."))
    version = tuple(n for n in numbers if n is not None)
    sm = _ascii_number(target.sm.removeprefix("sm_").rstrip("af")) or 0
    if version < EARLY_LAUNCH_MIN_BYTECODE or sm < EARLY_LAUNCH_MIN_SM:
        raise ContractError(
            f"contract of `{kernel}` says it waits for prior grids, but its cubin is bytecode "
            f"{target.bytecode_version or '?'} for {target.sm or '?'} (the wait needs bytecode "
            "13.4 or later and sm_90 or later)"
        )


def _ascii_number(text: str) -> int | None:
    """`text` as a number when it is ASCII digits only (str.isdigit alone takes "²" and
    "١٣"), else None; past u64, u64's largest (what the Rust host parses it as)."""
    if not (text.isascii() and text.isdigit()):
        return None
    digits = text.lstrip("0")
    return min(int(digits or "0"), _U64_MAX) if len(digits) <= 20 else _U64_MAX


def _param(kernel: str, position: int, p: contract_pb2.Param) -> ParamSpec:
    where = f"contract of `{kernel}`: param {position} `{p.name}`"
    if p.index != position:
        raise ContractError(f"{where}: index {p.index} differs from its position {position}")
    if p.kind not in _KINDS:
        raise ContractError(f"{where}: unknown kind {p.kind}")
    if p.dtype not in DTYPES:
        raise ContractError(f"{where}: unknown dtype {p.dtype!a}")
    kind = _KINDS[p.kind]
    declared, tiles, groups = tuple(p.declared_shape), tuple(p.tile_shape), tuple(p.map_shape)
    _check_shapes(where, kind, p.rank, declared, tiles, groups)
    return ParamSpec(position, p.name, kind, p.dtype, p.rank, declared, tiles, groups)


def _check_shapes(
    where: str,
    kind: str,
    rank: int,
    declared: tuple[int, ...],
    tiles: tuple[int, ...],
    groups: tuple[int, ...],
) -> None:
    if kind in OUTPUT_KINDS:
        if not 1 <= rank <= 3:
            raise ContractError(f"{where}: output rank {rank} is not 1..3")
        any_extent = -1 if kind == TENSOR_OUT else None  # a partitioned output's -1: any tile
        if len(tiles) != rank or any(t <= 0 and t != any_extent for t in tiles):
            raise ContractError(f"{where}: tile shape {tiles} does not fit rank {rank}")
    elif kind == TENSOR_IN:
        if len(declared) != rank or any(d < -1 for d in declared):
            raise ContractError(f"{where}: declared shape {declared} does not fit rank {rank}")
    elif rank or declared or tiles:
        raise ContractError(f"{where}: a {kind.lower()} has no rank or shape")
    if kind == TENSOR_OUT_MAPPED:
        if len(groups) != rank or any(g < 0 for g in groups) or not any(groups):
            raise ContractError(f"{where}: map shape {groups} does not fit rank {rank}")
    elif groups:
        raise ContractError(f"{where}: only a mapped output has a map shape, got {groups}")


def _slot(kernel: str, params: tuple[ParamSpec, ...], s: contract_pb2.AbiSlot) -> SlotSpec:
    where = f"contract of `{kernel}`: ABI slot at offset {s.offset}"
    if s.param >= len(params):
        raise ContractError(f"{where}: param {s.param} does not exist")
    param = params[s.param]
    role = _ROLES.get(s.role)
    if role is None:
        raise ContractError(f"{where}: unknown role {s.role}")
    if param.kind not in _ROLE_KINDS[role]:
        raise ContractError(f"{where}: role {role} is invalid for {param.kind} `{param.name}`")
    if role in _AXIS_ROLES and s.axis >= param.rank:
        raise ContractError(f"{where}: axis {s.axis} out of range for rank {param.rank}")
    if s.ctype not in CTYPE_SIZES:
        raise ContractError(f"{where}: unknown ctype {s.ctype!a}")
    if s.size != CTYPE_SIZES[s.ctype]:
        raise ContractError(
            f"{where}: size {s.size} differs from {s.ctype}'s {CTYPE_SIZES[s.ctype]}"
        )
    if s.offset % s.size:
        raise ContractError(f"{where}: offset is not naturally aligned for {s.ctype}")
    allowed = _ROLE_CTYPES.get(role, (param.dtype,))
    if s.ctype not in allowed:
        raise ContractError(
            f"{where}: a {role} slot of {param.kind} `{param.name}` must be "
            f"{' or '.join(allowed)}, got {s.ctype}"
        )
    return SlotSpec(s.param, role, s.axis, s.ctype, s.offset, s.size)


def _check_slot_coverage(
    kernel: str, params: tuple[ParamSpec, ...], slots: tuple[SlotSpec, ...]
) -> None:
    """Every param has each slot its kind needs, once (kernelParams must hold exactly the
    cubin's parameters: a missing slot would have the driver read past them)."""
    counts = Counter((s.param, s.role, s.axis if s.role in _AXIS_ROLES else 0) for s in slots)
    for param in params:
        for role in _KIND_ROLES[param.kind]:
            for axis in range(param.rank) if role in _AXIS_ROLES else (0,):
                count = counts[param.index, role, axis]
                if count != 1:
                    where = f" for axis {axis}" if role in _AXIS_ROLES else ""
                    have = "no" if count == 0 else str(count)
                    raise ContractError(
                        f"contract of `{kernel}`: param {param.index} `{param.name}` has "
                        f"{have} {role} slot{'s' if count > 1 else ''}{where}, where it needs one"
                    )


def _buffer_bytes(kernel: str, declared: int, slots: tuple[SlotSpec, ...]) -> int:
    end = 0
    for previous, slot in itertools.pairwise(slots):
        if slot.offset < previous.offset + previous.size:
            raise ContractError(
                f"contract of `{kernel}`: ABI slots at offsets {previous.offset} "
                f"and {slot.offset} overlap or are out of order"
            )
    if slots:
        end = slots[-1].offset + slots[-1].size
    if declared and declared < end:
        raise ContractError(
            f"contract of `{kernel}`: param_buffer_bytes {declared} < {end} needed by the ABI slots"
        )
    size = declared or end
    if size > PARAM_BUFFER_LIMIT:
        raise ContractError(
            f"contract of `{kernel}`: a parameter buffer of {size} bytes is past the driver's "
            f"limit of {PARAM_BUFFER_LIMIT} bytes of kernel parameters"
        )
    return size


def _grid(
    kernel: str, grid: contract_pb2.GridRule, params: tuple[ParamSpec, ...]
) -> tuple[str, tuple[int, ...]]:
    """The grid mode and the params that define the grid.

    FROM_OUTPUTS takes the grid from partitioned (TENSOR_OUT) outputs; PERSISTENT takes
    (num_tile_blocks, 1, 1) from the mapped outputs' `MappedPartition`s. A contract that
    mixes the two (a mapped output under FROM_OUTPUTS, or a partitioned output under
    PERSISTENT, whose tiles a persistent grid would not cover) is refused, and so is one
    whose `output_params` (empty: every output) leave an output out or name one twice: the
    grid is checked against the listed outputs only, and the blocks write every output."""
    mode = _GRID_MODES.get(grid.mode)
    if mode is None:
        raise ContractError(f"contract of `{kernel}`: unsupported grid mode {grid.mode}")
    if mode == HOST:
        return mode, _host_grid(kernel, grid, params)
    kind = TENSOR_OUT_MAPPED if mode == PERSISTENT else TENSOR_OUT
    other = TENSOR_OUT if mode == PERSISTENT else TENSOR_OUT_MAPPED
    stray = [p.name for p in params if p.kind == other]
    if stray:
        raise ContractError(
            f"contract of `{kernel}`: grid mode {mode} cannot launch the {other} "
            f"param(s) {', '.join(f'`{n}`' for n in stray)}"
        )
    every = tuple(p.index for p in params if p.kind == kind)
    outputs = tuple(grid.output_params) or every
    if not outputs:
        raise ContractError(f"contract of `{kernel}`: no output defines the launch grid")
    for index in outputs:
        if index >= len(params) or params[index].kind != kind:
            raise ContractError(
                f"contract of `{kernel}`: grid param {index} is not an output ({kind} for "
                f"grid mode {mode})"
            )
    if sorted(outputs) != list(every):
        raise ContractError(
            f"contract of `{kernel}`: grid params {list(outputs)} are not each {kind} param "
            f"once ({list(every)})"
        )
    return mode, outputs


def _host_grid(
    kernel: str, grid: contract_pb2.GridRule, params: tuple[ParamSpec, ...]
) -> tuple[int, ...]:
    """HOST: the launch passes the grid; no output may rely on one derived from it."""
    outputs = [p.name for p in params if p.is_output]
    if outputs or grid.output_params:
        named = ", ".join(f"`{n}`" for n in outputs) or f"params {list(grid.output_params)}"
        raise ContractError(
            f"contract of `{kernel}`: grid mode HOST cannot launch the output(s) {named}"
        )
    return ()


def _assumption(
    kernel: str, params: tuple[ParamSpec, ...], a: contract_pb2.Assumption
) -> AssumptionSpec:
    where = f"contract of `{kernel}`: assumption on param {a.param}"
    if a.param >= len(params):
        raise ContractError(f"{where}: param does not exist")
    kind = _ASSUMPTIONS.get(a.kind)
    if kind is None:
        raise ContractError(f"{where}: unknown assumption kind {a.kind}")
    param = params[a.param]
    if param.kind == POINTER:
        raise ContractError(f"{where}: {kind} does not apply to raw pointer `{param.name}`")
    if param.kind == SCALAR and kind not in _SCALAR_ASSUMPTIONS:
        raise ContractError(f"{where}: {kind} does not apply to scalar `{param.name}`")
    if kind in _AXIS_ASSUMPTIONS and a.axis >= param.rank:
        raise ContractError(f"{where}: {kind} axis {a.axis} out of range for rank {param.rank}")
    if kind in _POSITIVE_VALUE_ASSUMPTIONS and a.value <= 0:
        raise ContractError(f"{where}: {kind} needs a positive value, got {a.value}")
    if kind == "SLAB_DIV" and param.kind != TENSOR_OUT:
        raise ContractError(f"{where}: {kind} applies to an output, not `{param.name}`")
    return AssumptionSpec(a.param, kind, a.axis, a.value)


def _launch_check(
    kernel: str, params: tuple[ParamSpec, ...], position: int, check: contract_pb2.LaunchCheck
) -> LaunchCheckSpec:
    where = f"contract of `{kernel}`: launch check {position}"
    if check.cause:
        where += f" ({check.cause})"
    lhs = _quantity(f"{where}: lhs", params, check.lhs)
    rhs = _quantity(f"{where}: rhs", params, check.rhs)
    return LaunchCheckSpec(lhs, rhs, check.cause)


def _quantity(where: str, params: tuple[ParamSpec, ...], q: contract_pb2.Quantity) -> QuantitySpec:
    kind = q.WhichOneof("value")
    if kind is None:
        raise ContractError(f"{where}: no quantity (constant, dim, tile_count, ...) set")
    if kind == CONSTANT:
        return QuantitySpec(CONSTANT, value=q.constant)
    if kind == GRID_AXIS:
        if q.grid_axis >= 3:
            raise ContractError(f"{where}: grid axis {q.grid_axis} is not 0, 1 or 2")
        return QuantitySpec(GRID_AXIS, axis=q.grid_axis)
    if kind not in (DIM, TILE_COUNT, SLAB_TILES):
        raise ContractError(f"{where}: unknown quantity kind {kind!r}")
    ref = q.dim if kind == DIM else q.tile_count if kind == TILE_COUNT else q.slab_tiles
    if ref.param >= len(params):
        raise ContractError(f"{where}: {kind} param {ref.param} does not exist")
    param = params[ref.param]
    if param.kind == SCALAR:
        raise ContractError(f"{where}: {kind} refers to scalar `{param.name}`, not a tensor")
    if ref.axis >= param.rank:
        raise ContractError(
            f"{where}: {kind} axis {ref.axis} out of range for `{param.name}` of rank {param.rank}"
        )
    if kind == DIM:
        return QuantitySpec(DIM, param=ref.param, axis=ref.axis)
    if ref.tile <= 0:  # type: ignore[union-attr]
        raise ContractError(
            f"{where}: {kind} of `{param.name}` needs a positive tile, got {ref.tile}"  # type: ignore[union-attr]
        )
    if kind == SLAB_TILES and param.kind != TENSOR_OUT:
        raise ContractError(f"{where}: slab_tiles refers to `{param.name}`, not an output")
    return QuantitySpec(kind, param=ref.param, axis=ref.axis, value=ref.tile)  # type: ignore[union-attr]
