"""Mapped (persistent) outputs on the host: `partition.map(map_shape, num_tile_blocks)`,
contracts with TENSOR_OUT_MAPPED params and the PERSISTENT grid mode, and launches whose
grid is (num_tile_blocks, 1, 1). No GPU: fake device pointers and a recording driver."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from client_stubs import (
    ArgumentKindError,
    AssumptionError,
    ContractError,
    DeviceTensor,
    DTypeMismatchError,
    EmptyOutputError,
    GridLimitError,
    GridMismatchError,
    HostArgumentError,
    Kernel,
    LaunchError,
    MappedPartition,
    MapShapeMismatchError,
    MovedArgumentError,
    MovedTensorError,
    NegativeStrideError,
    NumTileBlocksError,
    OverlapError,
    Partition,
    RankMismatchError,
    SelfOverlapError,
    TileShapeMismatchError,
    plan_launch,
    validate_contract,
)
from client_stubs.contract import PERSISTENT, TENSOR_OUT_MAPPED
from protos.generated.cutile.compile.v1 import contract_pb2 as pb
from tests.client_stubs.fake_driver import CUBIN, packed_params

Z, X, W = 0x7F00_0000_0000, 0x7F10_0000_0000, 0x7F20_0000_0000
M, N = 1000, 300  # 16 x 5 = 80 tiles of 64 x 64
TILES = 80


def fake(ptr: int, shape: tuple[int, ...] = (M, N), dtype: str = "f32", **kw) -> DeviceTensor:
    return DeviceTensor(ptr, shape, dtype=dtype, **kw)


def mapped(ptr: int = Z, blocks: int = 7, map_shape=(4, 1), **kw) -> MappedPartition:
    return fake(ptr, **kw).partition([64, 64]).map(map_shape, blocks)


# ----------------------------------------------------------------------------- the host API


def test_map_moves_a_partition_into_a_mapped_partition() -> None:
    tensor = fake(Z)
    part = tensor.partition([64, 64])
    layout = part.layout
    m = part.map([4, 1], 7)
    assert isinstance(m, MappedPartition)
    assert m.map_shape == (4, 1) and m.num_tile_blocks == 7
    assert m.tile_shape == (64, 64) and m.grid == (16, 5) and m.num_tiles == TILES
    assert m.layout is layout and m.shape == (M, N) and m.ptr == Z and m.dtype == "f32"
    assert m.strides == (N, 1) and m.ndim == 2 and m.device == 0
    assert part.moved and tensor.moved and not m.moved
    with pytest.raises(MovedTensorError, match="unmap"):
        part.layout  # noqa: B018
    with pytest.raises(MovedTensorError, match="unmap"):
        part.unpartition()
    with pytest.raises(MovedTensorError):
        part.map([4, 1], 7)  # a moved partition cannot be mapped twice
    assert "MappedPartition(shape=(1000, 300)" in repr(m) and "moved" in repr(part)


def test_unmap_gives_the_same_partition_back_and_consumes_the_mapped_one() -> None:
    tensor = fake(Z)
    part = tensor.partition([64, 64])
    m = part.map([1, 4], 3)
    assert m.unmap() is part
    assert not part.moved and part.layout.ptr == Z
    assert m.moved and "consumed" in repr(m)
    with pytest.raises(MovedTensorError, match="consumed"):
        m.layout  # noqa: B018
    with pytest.raises(MovedTensorError):
        m.unmap()
    remapped = part.map([1, 1], TILES)
    assert remapped.unpartition() is tensor
    assert not tensor.moved and tensor.shape == (M, N)


def test_map_accepts_numpy_integers_and_a_scalar_map_for_rank_one() -> None:
    m = fake(Z, (4096,)).partition(1024).map(1, np.int64(2))
    assert m.map_shape == (1,) and m.num_tile_blocks == 2 and type(m.num_tile_blocks) is int


@pytest.mark.parametrize(
    ("map_shape", "blocks", "message"),
    [
        ([4], 7, "rank 1"),
        ([4, 1, 1], 7, "rank 3"),
        ([0, 0], 7, "at least one group"),
        ([-1, 1], 7, "non-negative"),
        ([4, 1], 0, "positive integer"),
        ([4, 1], -3, "positive integer"),
        ([4, 1], 2.0, "positive integer"),
        ([4, 1], True, "positive integer"),
    ],
)
def test_map_validates_its_arguments(map_shape, blocks, message: str) -> None:
    part = fake(Z).partition([64, 64])
    with pytest.raises(ValueError, match=message):
        part.map(map_shape, blocks)
    assert not part.moved  # a failed map moves nothing


# ----------------------------------------------------------------------------- contracts


def test_a_persistent_contract_validates(persistent) -> None:
    spec = validate_contract(persistent)
    assert spec.persistent and spec.grid_mode == PERSISTENT
    z, x = spec.params
    assert z.kind == TENSOR_OUT_MAPPED and z.is_output and not x.is_output
    assert z.tile_shape == (64, 64) and z.map_shape == (4, 1)
    assert x.map_shape == ()
    assert spec.grid_outputs == (0,)
    assert [s.role for s in spec.slots if s.param == 0] == [
        "PTR",
        *["DIM"] * 2,
        *["STRIDE"] * 2,
        *["PART_DIM"] * 2,
        *["PART_STRIDE"] * 2,
    ]


def test_the_default_grid_params_of_a_persistent_contract_are_its_mapped_outputs(persistent):
    del persistent.grid.output_params[:]
    assert validate_contract(persistent).grid_outputs == (0,)


def _owned(contract: pb.LaunchContract, axis: int) -> None:
    contract.params[0].map_shape[axis] = 0


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda c: c.params[0].ClearField("map_shape"), "map shape"),
        (lambda c: c.params[0].map_shape.append(1), "map shape"),
        (lambda c: c.params[0].map_shape.__setitem__(0, -1), "map shape"),
        (lambda c: c.params[0].map_shape.__setitem__(0, 0) or _owned(c, 1), "map shape"),
        (lambda c: c.params[1].map_shape.extend([1, 1]), "only a mapped output"),
        (lambda c: setattr(c.grid, "mode", pb.GridRule.MODE_FROM_OUTPUTS), "cannot launch"),
        (lambda c: c.grid.output_params.__setitem__(0, 1), "not an output"),
        (lambda c: setattr(c.params[0], "rank", 4), "rank"),
    ],
)
def test_malformed_persistent_contracts_are_refused(persistent, mutate, message: str) -> None:
    mutate(persistent)
    with pytest.raises(ContractError, match=message):
        validate_contract(persistent)


def test_a_persistent_grid_cannot_launch_a_partitioned_output(kit) -> None:
    contract = kit.build(
        "mixed",
        [
            kit.P("z", kit.MAPPED, "f32", [64, 64], extra={"map_shape": [4, 1]}),
            kit.P("w", kit.OUT, "f32", [64, 64]),
            kit.P("x", kit.IN, "f32", [-1, -1]),
        ],
    )
    with pytest.raises(ContractError, match="PERSISTENT cannot launch the TENSOR_OUT param"):
        validate_contract(contract)


def test_a_persistent_contract_needs_a_mapped_output(add) -> None:
    add.grid.mode = pb.GridRule.MODE_PERSISTENT
    with pytest.raises(ContractError, match="cannot launch"):
        validate_contract(add)


# ----------------------------------------------------------------------------- packing and grid


@pytest.mark.parametrize("blocks", [1, 7, 79, TILES])
def test_the_grid_is_num_tile_blocks(persistent, blocks: int) -> None:
    plan = plan_launch(persistent, [mapped(blocks=blocks), fake(X)])
    assert plan.grid == (blocks, 1, 1)


def test_slots_are_packed_exactly_like_a_partitioned_output(persistent, kit) -> None:
    z, x = mapped(blocks=7), fake(X)
    plan = plan_launch(persistent, [z, x])
    expected = struct.pack("<QiiiiiiiiQiiii", Z, M, N, N, 1, 64, 64, N, 1, X, M, N, N, 1)
    assert plan.param_buffer == expected
    plain = kit.build(
        "copy",
        [kit.P("z", kit.OUT, "f32", [64, 64]), kit.P("x", kit.IN, "f32", [-1, -1])],
    )
    twin = plan_launch(plain, [fake(Z).partition([64, 64]), fake(X)])
    assert twin.param_buffer == plan.param_buffer and twin.slot_offsets == plan.slot_offsets
    assert twin.grid == (16, 5, 1) and plan.grid == (7, 1, 1)
    assert plan.results[0] is z and plan.results[1] is x


def test_two_mapped_outputs_must_agree_on_the_grid(kit) -> None:
    contract = kit.build(
        "two",
        [
            kit.P("a", kit.MAPPED, "f32", [64, 64], extra={"map_shape": [1, 4]}),
            kit.P("b", kit.MAPPED, "f32", [64, 64], extra={"map_shape": [1, 4]}),
            kit.P("x", kit.IN, "f32", [-1, -1]),
        ],
    )
    ok = plan_launch(contract, [mapped(Z, 9, (1, 4)), mapped(W, 9, (1, 4)), fake(X)])
    assert ok.grid == (9, 1, 1)
    with pytest.raises(GridMismatchError) as info:
        plan_launch(contract, [mapped(Z, 9, (1, 4)), mapped(W, 8, (1, 4)), fake(X)])
    assert info.value.param == "b" and "num_tile_blocks 9 (from `a`)" in str(info.value)


# ----------------------------------------------------------------------------- rejected launches


@pytest.mark.parametrize("blocks", [2, 6, 8])
def test_a_clustered_cubin_launches_whole_clusters_only(persistent, blocks: int) -> None:
    persistent.launch.cluster_blocks = 2
    assert plan_launch(persistent, [mapped(blocks=blocks), fake(X)]).grid == (blocks, 1, 1)
    with pytest.raises(GridLimitError) as info:
        plan_launch(persistent, [mapped(blocks=blocks + 1), fake(X)])
    assert info.value.param == "z" and info.value.actual == blocks + 1
    assert "multiple of the cubin's cluster of 2 tile blocks" in str(info.value)


@pytest.mark.parametrize("blocks", [TILES + 1, 132, 10_000])
def test_more_tile_blocks_than_tiles_is_rejected(persistent, blocks: int) -> None:
    with pytest.raises(NumTileBlocksError) as info:
        plan_launch(persistent, [mapped(blocks=blocks), fake(X)])
    error = info.value
    assert error.param == "z" and error.actual == blocks
    assert f"1 <= num_tile_blocks <= {TILES}" in str(error)
    assert isinstance(error, LaunchError)


def test_an_owned_axis_is_one_work_item(persistent) -> None:
    """Map [1, 0]: axis 1 is OWNED, so the 16 x 5 tiles are 16 work items (rows)."""
    persistent.params[0].map_shape[:] = [1, 0]
    owned = mapped(blocks=16, map_shape=(1, 0))
    assert owned.work_items == 16 and owned.num_tiles == TILES
    assert plan_launch(persistent, [owned, fake(X)]).grid == (16, 1, 1)
    with pytest.raises(NumTileBlocksError, match="1 <= num_tile_blocks <= 16"):
        plan_launch(persistent, [mapped(blocks=17, map_shape=(1, 0)), fake(X)])


def test_the_map_shape_must_be_the_contracts(persistent) -> None:
    with pytest.raises(MapShapeMismatchError) as info:
        plan_launch(persistent, [mapped(map_shape=(1, 4)), fake(X)])
    assert info.value.expected == [4, 1] and info.value.actual == [1, 4]
    assert "compiled for this MAP" in str(info.value)


def test_a_plain_partition_for_a_mapped_output_is_a_clear_error(persistent) -> None:
    with pytest.raises(ArgumentKindError) as info:
        plan_launch(persistent, [fake(Z).partition([64, 64]), fake(X)])
    text = str(info.value)
    assert "a Partition without a map" in text and "partition.map([4, 1], num_tile_blocks)" in text


def test_a_mapped_partition_for_a_partitioned_output_is_a_clear_error(add) -> None:
    m = fake(Z, (4096,)).partition([128]).map([1], 4)
    with pytest.raises(ArgumentKindError) as info:
        plan_launch(add, [m, fake(X, (4096,)), fake(W, (4096,))])
    assert "a MappedPartition" in str(info.value) and "unmap()" in str(info.value)


def test_a_mapped_partition_for_an_input_or_a_scalar_is_rejected(add, saxpy) -> None:
    m = fake(Z, (4096,)).partition([128]).map([1], 4)
    with pytest.raises(ArgumentKindError, match="only outputs"):
        plan_launch(add, [fake(W, (4096,)).partition([128]), m, fake(X, (4096,))])
    m2 = fake(W, (4096,)).partition([128]).map([1], 4)
    with pytest.raises(ArgumentKindError):
        plan_launch(saxpy, [m2, fake(X, (4096,)), fake(Z, (4096,)).partition([128])])


@pytest.mark.parametrize(
    ("arg", "error", "text"),
    [
        (lambda: fake(Z), ArgumentKindError, "tensor.partition([64, 64]).map([4, 1]"),
        (lambda: np.zeros((M, N), np.float32), HostArgumentError, "GPU memory"),
        (lambda: 3.0, ArgumentKindError, "MappedPartition"),
    ],
)
def test_other_arguments_for_a_mapped_output(persistent, arg, error, text: str) -> None:
    with pytest.raises(error, match=None) as info:
        plan_launch(persistent, [arg(), fake(X)])
    assert text in str(info.value)


def test_consumed_and_moved_arguments_are_ownership_errors(persistent) -> None:
    m = mapped()
    part = m.unmap()
    with pytest.raises(MovedArgumentError, match="consumed MappedPartition"):
        plan_launch(persistent, [m, fake(X)])
    m2 = part.map([4, 1], 7)
    with pytest.raises(MovedArgumentError, match="moved or consumed Partition"):
        plan_launch(persistent, [part, fake(X)])
    tensor = fake(Z)
    tensor.partition([64, 64])
    with pytest.raises(MovedArgumentError):
        plan_launch(persistent, [tensor, fake(X)])
    assert plan_launch(persistent, [m2, fake(X)]).grid == (7, 1, 1)


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda: mapped(dtype="f16"), DTypeMismatchError),
        (lambda: fake(Z, (4096,)).partition([64]).map([4], 7), RankMismatchError),
        (lambda: fake(Z).partition([64, 32]).map([4, 1], 7), TileShapeMismatchError),
        (lambda: fake(Z, (0, N)).partition([64, 64]).map([4, 1], 1), EmptyOutputError),
        (lambda: fake(Z, strides=(-N, 1)).partition([64, 64]).map([4, 1], 7), NegativeStrideError),
        (lambda: fake(Z, strides=(1, 1)).partition([64, 64]).map([4, 1], 7), SelfOverlapError),
        (lambda: fake(Z + 4).partition([64, 64]).map([4, 1], 7), AssumptionError),
        (lambda: fake(Z, strides=(2 * N, 2)).partition([64, 64]).map([4, 1], 7), AssumptionError),
        (lambda: fake(X + 64).partition([64, 64]).map([4, 1], 7), OverlapError),
    ],
    ids=[
        "dtype",
        "rank",
        "tile",
        "empty",
        "negative-stride",
        "self-overlap",
        "misaligned",
        "stride-not-one",
        "overlaps-input",
    ],
)
def test_the_usual_output_checks_apply_to_mapped_outputs(persistent, make, error) -> None:
    with pytest.raises(error) as info:
        plan_launch(persistent, [make(), fake(X)])
    assert info.value.param == "z"


# ----------------------------------------------------------------------------- Kernel.launch


def test_kernel_launches_with_the_persistent_grid(persistent, fake_driver) -> None:
    kernel = Kernel(CUBIN, persistent)
    assert kernel.persistent and kernel.map_shape("z") == (4, 1) and kernel.map_shape(0) == (4, 1)
    with pytest.raises(ValueError, match="not a mapped output"):
        kernel.map_shape("x")
    z, x = mapped(blocks=7), fake(X)
    result = kernel(z, x, stream=5)
    assert result[0] is z and result[1] is x
    (launch,) = [a for name, a in fake_driver.calls if name == "launch"]
    _, grid, block, _, stream, address = launch
    assert (grid, block, stream) == ((7, 1, 1), (1, 1, 1), 5)
    assert packed_params(address, 8) == struct.pack("<Q", Z)


def test_a_rejected_persistent_launch_reaches_nothing(persistent, fake_driver) -> None:
    kernel = Kernel(CUBIN, persistent)
    with pytest.raises(ArgumentKindError):
        kernel(fake(Z).partition([64, 64]), fake(X))
    with pytest.raises(NumTileBlocksError):
        kernel(mapped(blocks=TILES + 1), fake(X))
    assert fake_driver.calls == []


def test_remapping_with_another_grid_replans(persistent, fake_driver) -> None:
    kernel = Kernel(CUBIN, persistent)
    tensor, x = fake(Z), fake(X)
    z = tensor.partition([64, 64]).map([4, 1], 1)
    kernel(z, x)
    kernel(z, x)  # the memoized plan
    z = z.unmap().map([4, 1], 40)
    kernel(z, x)
    grids = [a[1] for name, a in fake_driver.calls if name == "launch"]
    assert grids == [(1, 1, 1), (1, 1, 1), (40, 1, 1)]
    part = z.unmap()
    with pytest.raises(ArgumentKindError):
        kernel(part, x)  # the memo must not hand back the mapped plan for a plain Partition
    assert isinstance(part, Partition)


def test_a_compiled_persistent_contract_round_trips_and_plans(tileiras) -> None:
    from lowering.pipeline import CompileRequest, Stage, compile_kernel
    from parser.spans import SourceFile
    from service.convert import contract_to_proto
    from tests.parser.support import EXAMPLES

    source = SourceFile("persistent_gemm.rs", (EXAMPLES / "persistent_gemm.rs").read_text())
    generics = (("E", "f32"), ("BM", "64"), ("BN", "64"), ("MAP", "[4, 1]"))
    result = compile_kernel(
        CompileRequest((source,), "copy_persistent", generics), stop_after=Stage.CUBIN
    )
    assert result.ok, [d.message for d in result.diagnostics]
    contract = contract_to_proto(result.contract)
    assert contract.grid.mode == pb.GridRule.MODE_PERSISTENT
    spec = validate_contract(contract)
    assert spec.persistent and spec.params[0].map_shape == (4, 1)
    plan = plan_launch(spec, [mapped(Z, 7), fake(X)])
    assert plan.grid == (7, 1, 1)
    assert len(plan.param_buffer) == spec.param_buffer_bytes
    with pytest.raises(MapShapeMismatchError):
        plan_launch(spec, [mapped(Z, 7, (1, 4)), fake(X)])


def test_a_bundle_built_by_cutile_compile_launches_copy_persistent(
    tileiras, tmp_path, fake_driver
) -> None:
    from client_stubs import Bundle
    from service.cli.batch import main as cutile_compile
    from tests.gpu.build_artifacts import REPO

    source = str(REPO / "rust_examples" / "persistent_gemm.rs")
    generics = "copy_persistent:E=f32,BM=64,BN=64,MAP=[1, 4]"
    argv = [source, "--entry", "copy_persistent", "--generics", generics, "--no-cache"]
    assert cutile_compile([*argv, "--arch", "sm_90", "-o", str(tmp_path)]) == 0
    kernel = Bundle.open(tmp_path).kernel("copy_persistent", {"MAP": "[1, 4]"})
    assert kernel.persistent and kernel.map_shape("z") == (1, 4)
    z, x = fake(Z).partition([64, 64]).map(kernel.map_shape("z"), 11), fake(X)
    kernel(z, x)
    # cutile-compile builds kernels that wait for prior grids: the host launches them early
    (launch,) = [a for name, a in fake_driver.calls if name == "launch_early"]
    assert launch[1] == (11, 1, 1)
    assert z.unpartition().shape == (M, N)
