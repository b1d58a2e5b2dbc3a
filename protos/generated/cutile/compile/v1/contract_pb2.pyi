from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ParamKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PARAM_KIND_UNSPECIFIED: _ClassVar[ParamKind]
    PARAM_KIND_TENSOR_IN: _ClassVar[ParamKind]
    PARAM_KIND_TENSOR_OUT: _ClassVar[ParamKind]
    PARAM_KIND_SCALAR: _ClassVar[ParamKind]
    PARAM_KIND_TENSOR_OUT_MAPPED: _ClassVar[ParamKind]
    PARAM_KIND_POINTER: _ClassVar[ParamKind]

class SlotRole(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SLOT_ROLE_UNSPECIFIED: _ClassVar[SlotRole]
    SLOT_ROLE_PTR: _ClassVar[SlotRole]
    SLOT_ROLE_DIM: _ClassVar[SlotRole]
    SLOT_ROLE_STRIDE: _ClassVar[SlotRole]
    SLOT_ROLE_PART_DIM: _ClassVar[SlotRole]
    SLOT_ROLE_PART_STRIDE: _ClassVar[SlotRole]
    SLOT_ROLE_VALUE: _ClassVar[SlotRole]

class AssumptionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ASSUMPTION_KIND_UNSPECIFIED: _ClassVar[AssumptionKind]
    ASSUMPTION_KIND_BASE_ALIGN: _ClassVar[AssumptionKind]
    ASSUMPTION_KIND_DIM_DIV: _ClassVar[AssumptionKind]
    ASSUMPTION_KIND_STRIDE_DIV: _ClassVar[AssumptionKind]
    ASSUMPTION_KIND_STRIDE_ONE: _ClassVar[AssumptionKind]
    ASSUMPTION_KIND_NONNEG: _ClassVar[AssumptionKind]
    ASSUMPTION_KIND_STATIC_DIM: _ClassVar[AssumptionKind]
    ASSUMPTION_KIND_FITS_I32: _ClassVar[AssumptionKind]
    ASSUMPTION_KIND_SLAB_DIV: _ClassVar[AssumptionKind]
PARAM_KIND_UNSPECIFIED: ParamKind
PARAM_KIND_TENSOR_IN: ParamKind
PARAM_KIND_TENSOR_OUT: ParamKind
PARAM_KIND_SCALAR: ParamKind
PARAM_KIND_TENSOR_OUT_MAPPED: ParamKind
PARAM_KIND_POINTER: ParamKind
SLOT_ROLE_UNSPECIFIED: SlotRole
SLOT_ROLE_PTR: SlotRole
SLOT_ROLE_DIM: SlotRole
SLOT_ROLE_STRIDE: SlotRole
SLOT_ROLE_PART_DIM: SlotRole
SLOT_ROLE_PART_STRIDE: SlotRole
SLOT_ROLE_VALUE: SlotRole
ASSUMPTION_KIND_UNSPECIFIED: AssumptionKind
ASSUMPTION_KIND_BASE_ALIGN: AssumptionKind
ASSUMPTION_KIND_DIM_DIV: AssumptionKind
ASSUMPTION_KIND_STRIDE_DIV: AssumptionKind
ASSUMPTION_KIND_STRIDE_ONE: AssumptionKind
ASSUMPTION_KIND_NONNEG: AssumptionKind
ASSUMPTION_KIND_STATIC_DIM: AssumptionKind
ASSUMPTION_KIND_FITS_I32: AssumptionKind
ASSUMPTION_KIND_SLAB_DIV: AssumptionKind

class LaunchContract(_message.Message):
    __slots__ = ("schema_version", "kernel", "target", "params", "abi", "grid", "launch", "assumptions", "safety", "specialization", "launch_checks")
    SCHEMA_VERSION_FIELD_NUMBER: _ClassVar[int]
    KERNEL_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    ABI_FIELD_NUMBER: _ClassVar[int]
    GRID_FIELD_NUMBER: _ClassVar[int]
    LAUNCH_FIELD_NUMBER: _ClassVar[int]
    ASSUMPTIONS_FIELD_NUMBER: _ClassVar[int]
    SAFETY_FIELD_NUMBER: _ClassVar[int]
    SPECIALIZATION_FIELD_NUMBER: _ClassVar[int]
    LAUNCH_CHECKS_FIELD_NUMBER: _ClassVar[int]
    schema_version: int
    kernel: KernelIdentity
    target: Target
    params: _containers.RepeatedCompositeFieldContainer[Param]
    abi: _containers.RepeatedCompositeFieldContainer[AbiSlot]
    grid: GridRule
    launch: LaunchConfig
    assumptions: _containers.RepeatedCompositeFieldContainer[Assumption]
    safety: Safety
    specialization: Specialization
    launch_checks: _containers.RepeatedCompositeFieldContainer[LaunchCheck]
    def __init__(self, schema_version: _Optional[int] = ..., kernel: _Optional[_Union[KernelIdentity, _Mapping]] = ..., target: _Optional[_Union[Target, _Mapping]] = ..., params: _Optional[_Iterable[_Union[Param, _Mapping]]] = ..., abi: _Optional[_Iterable[_Union[AbiSlot, _Mapping]]] = ..., grid: _Optional[_Union[GridRule, _Mapping]] = ..., launch: _Optional[_Union[LaunchConfig, _Mapping]] = ..., assumptions: _Optional[_Iterable[_Union[Assumption, _Mapping]]] = ..., safety: _Optional[_Union[Safety, _Mapping]] = ..., specialization: _Optional[_Union[Specialization, _Mapping]] = ..., launch_checks: _Optional[_Iterable[_Union[LaunchCheck, _Mapping]]] = ...) -> None: ...

class Quantity(_message.Message):
    __slots__ = ("constant", "dim", "tile_count", "grid_axis", "slab_tiles")
    CONSTANT_FIELD_NUMBER: _ClassVar[int]
    DIM_FIELD_NUMBER: _ClassVar[int]
    TILE_COUNT_FIELD_NUMBER: _ClassVar[int]
    GRID_AXIS_FIELD_NUMBER: _ClassVar[int]
    SLAB_TILES_FIELD_NUMBER: _ClassVar[int]
    constant: int
    dim: ParamAxis
    tile_count: TileCount
    grid_axis: int
    slab_tiles: TileCount
    def __init__(self, constant: _Optional[int] = ..., dim: _Optional[_Union[ParamAxis, _Mapping]] = ..., tile_count: _Optional[_Union[TileCount, _Mapping]] = ..., grid_axis: _Optional[int] = ..., slab_tiles: _Optional[_Union[TileCount, _Mapping]] = ...) -> None: ...

class ParamAxis(_message.Message):
    __slots__ = ("param", "axis")
    PARAM_FIELD_NUMBER: _ClassVar[int]
    AXIS_FIELD_NUMBER: _ClassVar[int]
    param: int
    axis: int
    def __init__(self, param: _Optional[int] = ..., axis: _Optional[int] = ...) -> None: ...

class TileCount(_message.Message):
    __slots__ = ("param", "axis", "tile")
    PARAM_FIELD_NUMBER: _ClassVar[int]
    AXIS_FIELD_NUMBER: _ClassVar[int]
    TILE_FIELD_NUMBER: _ClassVar[int]
    param: int
    axis: int
    tile: int
    def __init__(self, param: _Optional[int] = ..., axis: _Optional[int] = ..., tile: _Optional[int] = ...) -> None: ...

class LaunchCheck(_message.Message):
    __slots__ = ("lhs", "rhs", "cause")
    LHS_FIELD_NUMBER: _ClassVar[int]
    RHS_FIELD_NUMBER: _ClassVar[int]
    CAUSE_FIELD_NUMBER: _ClassVar[int]
    lhs: Quantity
    rhs: Quantity
    cause: str
    def __init__(self, lhs: _Optional[_Union[Quantity, _Mapping]] = ..., rhs: _Optional[_Union[Quantity, _Mapping]] = ..., cause: _Optional[str] = ...) -> None: ...

class KernelIdentity(_message.Message):
    __slots__ = ("module", "function", "entry_symbol", "source_sha256", "compiler_version")
    MODULE_FIELD_NUMBER: _ClassVar[int]
    FUNCTION_FIELD_NUMBER: _ClassVar[int]
    ENTRY_SYMBOL_FIELD_NUMBER: _ClassVar[int]
    SOURCE_SHA256_FIELD_NUMBER: _ClassVar[int]
    COMPILER_VERSION_FIELD_NUMBER: _ClassVar[int]
    module: str
    function: str
    entry_symbol: str
    source_sha256: str
    compiler_version: str
    def __init__(self, module: _Optional[str] = ..., function: _Optional[str] = ..., entry_symbol: _Optional[str] = ..., source_sha256: _Optional[str] = ..., compiler_version: _Optional[str] = ...) -> None: ...

class Target(_message.Message):
    __slots__ = ("sm", "tileiras_version", "bytecode_version", "opt_level", "host_arch")
    SM_FIELD_NUMBER: _ClassVar[int]
    TILEIRAS_VERSION_FIELD_NUMBER: _ClassVar[int]
    BYTECODE_VERSION_FIELD_NUMBER: _ClassVar[int]
    OPT_LEVEL_FIELD_NUMBER: _ClassVar[int]
    HOST_ARCH_FIELD_NUMBER: _ClassVar[int]
    sm: str
    tileiras_version: str
    bytecode_version: str
    opt_level: int
    host_arch: str
    def __init__(self, sm: _Optional[str] = ..., tileiras_version: _Optional[str] = ..., bytecode_version: _Optional[str] = ..., opt_level: _Optional[int] = ..., host_arch: _Optional[str] = ...) -> None: ...

class Param(_message.Message):
    __slots__ = ("index", "name", "kind", "dtype", "rank", "declared_shape", "tile_shape", "map_shape")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    DTYPE_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    DECLARED_SHAPE_FIELD_NUMBER: _ClassVar[int]
    TILE_SHAPE_FIELD_NUMBER: _ClassVar[int]
    MAP_SHAPE_FIELD_NUMBER: _ClassVar[int]
    index: int
    name: str
    kind: ParamKind
    dtype: str
    rank: int
    declared_shape: _containers.RepeatedScalarFieldContainer[int]
    tile_shape: _containers.RepeatedScalarFieldContainer[int]
    map_shape: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, index: _Optional[int] = ..., name: _Optional[str] = ..., kind: _Optional[_Union[ParamKind, str]] = ..., dtype: _Optional[str] = ..., rank: _Optional[int] = ..., declared_shape: _Optional[_Iterable[int]] = ..., tile_shape: _Optional[_Iterable[int]] = ..., map_shape: _Optional[_Iterable[int]] = ...) -> None: ...

class AbiSlot(_message.Message):
    __slots__ = ("param", "role", "axis", "ctype", "offset", "size")
    PARAM_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    AXIS_FIELD_NUMBER: _ClassVar[int]
    CTYPE_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    param: int
    role: SlotRole
    axis: int
    ctype: str
    offset: int
    size: int
    def __init__(self, param: _Optional[int] = ..., role: _Optional[_Union[SlotRole, str]] = ..., axis: _Optional[int] = ..., ctype: _Optional[str] = ..., offset: _Optional[int] = ..., size: _Optional[int] = ...) -> None: ...

class GridRule(_message.Message):
    __slots__ = ("mode", "output_params")
    class Mode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        MODE_UNSPECIFIED: _ClassVar[GridRule.Mode]
        MODE_FROM_OUTPUTS: _ClassVar[GridRule.Mode]
        MODE_PERSISTENT: _ClassVar[GridRule.Mode]
        MODE_HOST: _ClassVar[GridRule.Mode]
    MODE_UNSPECIFIED: GridRule.Mode
    MODE_FROM_OUTPUTS: GridRule.Mode
    MODE_PERSISTENT: GridRule.Mode
    MODE_HOST: GridRule.Mode
    MODE_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_PARAMS_FIELD_NUMBER: _ClassVar[int]
    mode: GridRule.Mode
    output_params: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, mode: _Optional[_Union[GridRule.Mode, str]] = ..., output_params: _Optional[_Iterable[int]] = ...) -> None: ...

class LaunchConfig(_message.Message):
    __slots__ = ("block", "shared_mem_bytes", "param_buffer_bytes", "cluster_blocks", "waits_for_prior_grids", "min_tile_blocks", "takes_occupancy_variant")
    BLOCK_FIELD_NUMBER: _ClassVar[int]
    SHARED_MEM_BYTES_FIELD_NUMBER: _ClassVar[int]
    PARAM_BUFFER_BYTES_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_BLOCKS_FIELD_NUMBER: _ClassVar[int]
    WAITS_FOR_PRIOR_GRIDS_FIELD_NUMBER: _ClassVar[int]
    MIN_TILE_BLOCKS_FIELD_NUMBER: _ClassVar[int]
    TAKES_OCCUPANCY_VARIANT_FIELD_NUMBER: _ClassVar[int]
    block: _containers.RepeatedScalarFieldContainer[int]
    shared_mem_bytes: int
    param_buffer_bytes: int
    cluster_blocks: int
    waits_for_prior_grids: bool
    min_tile_blocks: int
    takes_occupancy_variant: bool
    def __init__(self, block: _Optional[_Iterable[int]] = ..., shared_mem_bytes: _Optional[int] = ..., param_buffer_bytes: _Optional[int] = ..., cluster_blocks: _Optional[int] = ..., waits_for_prior_grids: _Optional[bool] = ..., min_tile_blocks: _Optional[int] = ..., takes_occupancy_variant: _Optional[bool] = ...) -> None: ...

class Assumption(_message.Message):
    __slots__ = ("param", "kind", "axis", "value")
    PARAM_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    AXIS_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    param: int
    kind: AssumptionKind
    axis: int
    value: int
    def __init__(self, param: _Optional[int] = ..., kind: _Optional[_Union[AssumptionKind, str]] = ..., axis: _Optional[int] = ..., value: _Optional[int] = ...) -> None: ...

class Safety(_message.Message):
    __slots__ = ("unchecked_accesses", "checks_discharged", "checks_hoisted_to_host", "checks_hoisted_to_preheader", "checks_in_place", "outputs_exclusive")
    UNCHECKED_ACCESSES_FIELD_NUMBER: _ClassVar[int]
    CHECKS_DISCHARGED_FIELD_NUMBER: _ClassVar[int]
    CHECKS_HOISTED_TO_HOST_FIELD_NUMBER: _ClassVar[int]
    CHECKS_HOISTED_TO_PREHEADER_FIELD_NUMBER: _ClassVar[int]
    CHECKS_IN_PLACE_FIELD_NUMBER: _ClassVar[int]
    OUTPUTS_EXCLUSIVE_FIELD_NUMBER: _ClassVar[int]
    unchecked_accesses: bool
    checks_discharged: int
    checks_hoisted_to_host: int
    checks_hoisted_to_preheader: int
    checks_in_place: int
    outputs_exclusive: bool
    def __init__(self, unchecked_accesses: _Optional[bool] = ..., checks_discharged: _Optional[int] = ..., checks_hoisted_to_host: _Optional[int] = ..., checks_hoisted_to_preheader: _Optional[int] = ..., checks_in_place: _Optional[int] = ..., outputs_exclusive: _Optional[bool] = ...) -> None: ...

class Specialization(_message.Message):
    __slots__ = ("generics",)
    GENERICS_FIELD_NUMBER: _ClassVar[int]
    generics: _containers.RepeatedCompositeFieldContainer[GenericBinding]
    def __init__(self, generics: _Optional[_Iterable[_Union[GenericBinding, _Mapping]]] = ...) -> None: ...

class GenericBinding(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: str
    def __init__(self, name: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
