"""Hand-built launch contracts and fake device tensors for the client tests (no GPU needed)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest

from client_stubs.dtypes import ctype_size
from protos.generated.cutile.compile.v1 import contract_pb2 as pb
from tests.client_stubs.fake_driver import fake_driver  # noqa: F401  (a shared fixture)
from tests.client_stubs.fake_service import service  # noqa: F401  (a shared fixture)

IN, OUT, SCALAR = pb.PARAM_KIND_TENSOR_IN, pb.PARAM_KIND_TENSOR_OUT, pb.PARAM_KIND_SCALAR
MAPPED = pb.PARAM_KIND_TENSOR_OUT_MAPPED
POINTER = pb.PARAM_KIND_POINTER


@dataclass(frozen=True)
class P:
    """A param for `build_contract`; `shape` is the declared shape (inputs) or tile (outputs);
    a MAPPED output takes its map shape from `extra["map_shape"]`."""

    name: str
    kind: int
    dtype: str = "f32"
    shape: Sequence[int] = ()
    index_ctype: str = "i32"
    extra: dict[str, object] = field(default_factory=dict)


def build_contract(
    function: str,
    params: Sequence[P],
    assumptions: Sequence[tuple[int, int, int, int]] = (),
    generics: Sequence[tuple[str, str]] = (),
    sm: str = "sm_90",
) -> pb.LaunchContract:
    """A contract whose ABI follows cuTile Rust: ptr, dims, strides (+ part dims/strides for
    outputs; the scalar value for scalars), natural alignment in declaration order."""
    c = pb.LaunchContract(schema_version=1)
    c.kernel.module = "kernel"
    c.kernel.function = function
    c.kernel.entry_symbol = f"{function}_entry"
    c.target.sm = sm
    c.target.host_arch = "x86_64"
    offset = 0

    def slot(param: int, role: int, axis: int, ctype: str) -> None:
        nonlocal offset
        size = ctype_size(ctype)
        offset = (offset + size - 1) // size * size
        c.abi.add(param=param, role=role, axis=axis, ctype=ctype, offset=offset, size=size)
        offset += size

    for index, p in enumerate(params):
        rank = len(p.shape) if p.kind not in (SCALAR, POINTER) else 0
        param = c.params.add(index=index, name=p.name, kind=p.kind, dtype=p.dtype, rank=rank)
        if p.kind == IN:
            param.declared_shape.extend(p.shape)
        elif p.kind in (OUT, MAPPED):
            param.tile_shape.extend(p.shape)
        if p.kind == MAPPED:
            param.map_shape.extend(p.extra.get("map_shape", [1] * rank))  # type: ignore[arg-type]
        for role, axis, ctype in _slots(p, rank):
            slot(index, role, axis, ctype)
    c.grid.mode = _grid_mode(params)
    c.grid.output_params.extend(i for i, p in enumerate(params) if p.kind in (OUT, MAPPED))
    c.launch.block.extend([1, 1, 1])
    c.launch.shared_mem_bytes = 0
    c.launch.param_buffer_bytes = offset
    for param, kind, axis, value in assumptions:
        c.assumptions.add(param=param, kind=kind, axis=axis, value=value)
    c.safety.outputs_exclusive = True
    for name, value in generics:
        c.specialization.generics.add(name=name, value=value)
    return c


def _slots(p: P, rank: int) -> list[tuple[int, int, str]]:
    """(role, axis, ctype) of each ABI slot of `p`, in order."""
    if p.kind == SCALAR:
        return [(pb.SLOT_ROLE_VALUE, 0, p.dtype)]
    slots = [(pb.SLOT_ROLE_PTR, 0, "u64")]
    if p.kind == POINTER:
        return slots
    roles = [pb.SLOT_ROLE_DIM, pb.SLOT_ROLE_STRIDE]
    if p.kind in (OUT, MAPPED):
        roles += [pb.SLOT_ROLE_PART_DIM, pb.SLOT_ROLE_PART_STRIDE]
    return slots + [(role, axis, p.index_ctype) for role in roles for axis in range(rank)]


def _grid_mode(params: Sequence[P]) -> int:
    """Persistent with a mapped output; from the host for raw pointers and no output."""
    kinds = {p.kind for p in params}
    if MAPPED in kinds:
        return pb.GridRule.MODE_PERSISTENT
    if POINTER in kinds and OUT not in kinds:
        return pb.GridRule.MODE_HOST
    return pb.GridRule.MODE_FROM_OUTPUTS


def add_contract(dtype: str = "f32", block: int = 128) -> pb.LaunchContract:
    """`add<B>(z: &mut Tensor<E,{[B]}>, x: &Tensor<E,{[-1]}>, y: &Tensor<E,{[-1]}>)`."""
    return build_contract(
        "add",
        [P("z", OUT, dtype, [block]), P("x", IN, dtype, [-1]), P("y", IN, dtype, [-1])],
        generics=[("B", str(block))],
    )


def saxpy_contract(dtype: str = "f32", block: int = 128) -> pb.LaunchContract:
    """`saxpy<B>(a: E, x: &Tensor<E,{[-1]}>, y: &mut Tensor<E,{[B]}>)`."""
    return build_contract(
        "saxpy",
        [P("a", SCALAR, dtype), P("x", IN, dtype, [-1]), P("y", OUT, dtype, [block])],
        generics=[("B", str(block))],
    )


def copy_persistent_contract(
    dtype: str = "f32", tile: Sequence[int] = (64, 64), map_shape: Sequence[int] = (4, 1)
) -> pb.LaunchContract:
    """`copy_persistent<E, BM, BN, MAP>(mut z: MappedPartitionMut<E, {[BM, BN]}, MAP>,
    x: &Tensor<E, {[-1, -1]}>)`, with the assumptions the compiler records."""
    assumptions = []
    for param in (0, 1):
        assumptions += [
            (param, pb.ASSUMPTION_KIND_BASE_ALIGN, 0, 16),
            (param, pb.ASSUMPTION_KIND_NONNEG, 0, 0),
            (param, pb.ASSUMPTION_KIND_FITS_I32, 0, 0),
            (param, pb.ASSUMPTION_KIND_STRIDE_ONE, 1, 1),
        ]
    return build_contract(
        "copy_persistent",
        [
            P("z", MAPPED, dtype, list(tile), extra={"map_shape": list(map_shape)}),
            P("x", IN, dtype, [-1, -1]),
        ],
        assumptions=assumptions,
        generics=[
            ("E", dtype),
            ("BM", str(tile[0])),
            ("BN", str(tile[1])),
            ("MAP", f"[{map_shape[0]}, {map_shape[1]}]"),
        ],
    )


def scale_ptr_contract(block: int = 1024) -> pb.LaunchContract:
    """`unsafe fn scale_ptr<B>(y: *mut f32, x: *const f32, a: f32, len: i32)` (host grid)."""
    return build_contract(
        "scale_ptr",
        [P("y", POINTER), P("x", POINTER), P("a", SCALAR, "f32"), P("len", SCALAR, "i32")],
        generics=[("B", str(block))],
    )


@pytest.fixture
def kit() -> SimpleNamespace:
    """The builders above, for tests (fixtures work under any pytest import mode)."""
    return SimpleNamespace(
        P=P,
        IN=IN,
        OUT=OUT,
        MAPPED=MAPPED,
        SCALAR=SCALAR,
        build=build_contract,
        add=add_contract,
        saxpy=saxpy_contract,
        copy_persistent=copy_persistent_contract,
        POINTER=POINTER,
        scale_ptr=scale_ptr_contract,
    )


@pytest.fixture
def add() -> pb.LaunchContract:
    return add_contract()


@pytest.fixture
def saxpy() -> pb.LaunchContract:
    return saxpy_contract()


@pytest.fixture
def persistent() -> pb.LaunchContract:
    return copy_persistent_contract()
