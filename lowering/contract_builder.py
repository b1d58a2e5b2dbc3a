"""Build the launch contract from the entry signature, its ABI and the assumptions made."""

from __future__ import annotations

from lowering.abi import SlotLayout
from lowering.bounds_ledger import BoundsLedger
from lowering.contract import (
    Assumption,
    AssumptionKind,
    ContractParam,
    LaunchCheck,
    LaunchContract,
    ParamKind,
    Quantity,
    SafetySummary,
)
from parser.entry_signature import EntryParam, EntrySignature, ParamRole
from parser.preconditions import ExtentDivisible, SameExtent, StrideDivisible
from parser.types import Elem, GenericValue, MappedTy, PointerTy, ScalarTy

_KINDS = {
    ParamRole.INPUT: ParamKind.TENSOR_IN,
    ParamRole.OUTPUT: ParamKind.TENSOR_OUT,
    ParamRole.MAPPED_OUTPUT: ParamKind.TENSOR_OUT_MAPPED,
    ParamRole.SCALAR: ParamKind.SCALAR,
    ParamRole.POINTER: ParamKind.POINTER,
}


def format_generic(value: GenericValue) -> str:
    if isinstance(value, Elem):
        return value.value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


def _contract_param(param: EntryParam) -> ContractParam:
    kind = _KINDS[param.role]
    if param.role is ParamRole.SCALAR:
        assert isinstance(param.type, ScalarTy)
        return ContractParam(param.index, param.name, kind, param.type.elem.value)
    if param.role is ParamRole.POINTER:
        assert isinstance(param.type, PointerTy)
        return ContractParam(param.index, param.name, kind, param.type.elem.value)
    tensor = param.tensor
    if param.role is ParamRole.MAPPED_OUTPUT:
        assert isinstance(param.type, MappedTy)
        return ContractParam(
            param.index,
            param.name,
            kind,
            tensor.elem.value,
            tensor.rank,
            tile_shape=tensor.shape,
            map_shape=param.type.map_shape,
        )
    if param.role is ParamRole.OUTPUT:
        return ContractParam(
            param.index, param.name, kind, tensor.elem.value, tensor.rank, tile_shape=tensor.shape
        )
    return ContractParam(
        param.index, param.name, kind, tensor.elem.value, tensor.rank, declared_shape=tensor.shape
    )


def build_contract(
    *,
    module_path: tuple[str, ...],
    function: str,
    symbol: str,
    signature: EntrySignature,
    generics: tuple[tuple[str, GenericValue], ...],
    abi: tuple[SlotLayout, ...],
    param_buffer_bytes: int,
    assumptions: tuple[Assumption, ...],
    bounds: BoundsLedger,
    source_sha256: str,
    compiler_version: str,
    arch: str,
    tileiras_version: str,
    bytecode_version: str,
    opt_level: int,
    host_arch: str,
    raw_memory: bool = False,
    waits_for_prior_grids: bool = False,
    min_tile_blocks: int = 0,
    takes_occupancy_variant: bool = False,
) -> LaunchContract:
    return LaunchContract(
        module="::".join(module_path),
        function=function,
        entry_symbol=symbol,
        source_sha256=source_sha256,
        compiler_version=compiler_version,
        sm=arch,
        tileiras_version=tileiras_version,
        bytecode_version=bytecode_version,
        opt_level=opt_level,
        host_arch=host_arch,
        params=tuple(_contract_param(p) for p in signature.params),
        abi=tuple(layout.slot for layout in abi),
        grid_outputs=tuple(p.index for p in signature.outputs),
        param_buffer_bytes=param_buffer_bytes,
        assumptions=(*assumptions, *_precondition_assumptions(signature)),
        safety=SafetySummary(
            unchecked_accesses=signature.options.unchecked_accesses
            or _unmarked_raw_memory(signature, raw_memory),
            checks_discharged=bounds.discharged,
            checks_hoisted_to_host=bounds.hoisted,
            checks_hoisted_to_preheader=bounds.preheader,
            checks_in_place=bounds.in_place,
        ),
        launch_checks=(*_precondition_checks(signature), *bounds.launch_checks),
        generics=tuple((name, format_generic(value)) for name, value in generics),
        cluster_blocks=_cluster_blocks(signature, arch),
        waits_for_prior_grids=waits_for_prior_grids,
        min_tile_blocks=min_tile_blocks,
        takes_occupancy_variant=takes_occupancy_variant,
    )


def _unmarked_raw_memory(signature: EntrySignature, raw_memory: bool) -> bool:
    """Raw memory accesses (`int_to_ptr` pointers, globals written weakly) are as unchecked
    as `unchecked_accesses = true`; through pointer parameters the host already refuses
    the kernel without `allow_unchecked=True` (they are `PARAM_KIND_POINTER`)."""
    return raw_memory and not any(p.role is ParamRole.POINTER for p in signature.params)


def _cluster_blocks(signature: EntrySignature, arch: str) -> int:
    """The `num_cta_in_cga` hint the cubin for `arch` was compiled with (1: none)."""
    hints = (h for h in signature.options.optimization_hints if h.arch == arch)
    return next((h.num_cta_in_cga or 1 for h in hints), 1)


def _precondition_checks(signature: EntrySignature) -> tuple[LaunchCheck, ...]:
    """`dim(a, i) == dim(b, j)`: the host verifies both directions before launch."""
    checks: list[LaunchCheck] = []
    for condition in signature.options.preconditions:
        if isinstance(condition, SameExtent):
            first, second = Quantity(dim=condition.first), Quantity(dim=condition.second)
            cause = f"precondition {condition.text}"
            checks += [LaunchCheck(first, second, cause), LaunchCheck(second, first, cause)]
    return tuple(checks)


def _precondition_assumptions(signature: EntrySignature) -> tuple[Assumption, ...]:
    """`dim(t, k) % d == 0` and `stride(t, k) % d == 0` are assumptions the host verifies
    like any other."""
    kinds = {ExtentDivisible: AssumptionKind.DIM_DIV, StrideDivisible: AssumptionKind.STRIDE_DIV}
    return tuple(
        Assumption(c.param, kinds[type(c)], c.axis, c.divisor)
        for c in signature.options.preconditions
        if not isinstance(c, SameExtent)
    )
