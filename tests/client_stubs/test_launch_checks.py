"""Launch checks: bounds obligations the compiler hoisted out of a kernel (`lhs <= rhs` over
constants, dims, tile counts and the grid), validated with the contract and evaluated on the
host before every launch; a failed one raises `LaunchCheckError` and nothing reaches the GPU."""

from __future__ import annotations

import pytest

import client_stubs
from client_stubs import (
    ContractError,
    DeviceTensor,
    Kernel,
    LaunchCheckError,
    LaunchError,
    SlotValueError,
    plan_launch,
    validate_contract,
)
from client_stubs.contract import (
    CONSTANT,
    DIM,
    GRID_AXIS,
    TILE_COUNT,
    LaunchCheckSpec,
    QuantitySpec,
)
from protos.generated.cutile.compile.v1 import contract_pb2 as pb
from tests.client_stubs.fake_driver import CUBIN

Z, X, Y = 0x7F00_0000_0000, 0x7F10_0000_0000, 0x7F20_0000_0000
CAUSE = "part_x.load index on axis 0"


# ---- quantities -------------------------------------------------------------------------


def const(value: int) -> pb.Quantity:
    return pb.Quantity(constant=value)


def dim(param: int, axis: int) -> pb.Quantity:
    return pb.Quantity(dim=pb.ParamAxis(param=param, axis=axis))


def tiles(param: int, axis: int, tile: int) -> pb.Quantity:
    return pb.Quantity(tile_count=pb.TileCount(param=param, axis=axis, tile=tile))


def grid(axis: int) -> pb.Quantity:
    return pb.Quantity(grid_axis=axis)


def gemm(kit, *checks: tuple[pb.Quantity, pb.Quantity, str]) -> pb.LaunchContract:
    """`gemm(z: &mut Tensor<f32, {[128, 64]}>, x: &Tensor<f32, {[-1, -1]}>,
    y: &Tensor<f32, {[-1, -1]}>, k: i32)` with `checks` as (lhs, rhs, cause)."""
    P = kit.P
    contract = kit.build(
        "gemm",
        [
            P("z", kit.OUT, "f32", [128, 64]),
            P("x", kit.IN, "f32", [-1, -1]),
            P("y", kit.IN, "f32", [-1, -1]),
            P("k", kit.SCALAR, "i32"),
        ],
    )
    for lhs, rhs, cause in checks:
        contract.launch_checks.add(lhs=lhs, rhs=rhs, cause=cause)
    return contract


def gemm_args(m: int = 512, n: int = 256, x_rows: int = 512, k: int = 64) -> list[object]:
    """z (m, n) in tiles of 128 x 64: grid (ceil(m / 128), ceil(n / 64), 1)."""
    return [
        DeviceTensor(Z, (m, n)).partition([128, 64]),
        DeviceTensor(X, (x_rows, k)),
        DeviceTensor(Y, (k, n)),
        k,
    ]


# ---- validation -------------------------------------------------------------------------


def test_every_quantity_kind_is_parsed(kit) -> None:
    spec = validate_contract(
        gemm(kit, (grid(0), tiles(1, 0, 128), CAUSE), (const(-1), dim(2, 1), "y axis 1"))
    )
    assert spec.launch_checks == (
        LaunchCheckSpec(
            QuantitySpec(GRID_AXIS, axis=0), QuantitySpec(TILE_COUNT, 1, 0, 128), CAUSE
        ),
        LaunchCheckSpec(QuantitySpec(CONSTANT, value=-1), QuantitySpec(DIM, 2, 1), "y axis 1"),
    )


def test_a_contract_without_launch_checks_has_none(add) -> None:
    assert validate_contract(add).launch_checks == ()


def _unset_lhs(contract: pb.LaunchContract) -> None:
    contract.launch_checks.add(rhs=const(1), cause="no lhs")


@pytest.mark.parametrize(
    ("lhs", "rhs", "message"),
    [
        (dim(4, 0), const(1), "dim param 4 does not exist"),
        (const(1), tiles(9, 0, 8), "tile_count param 9 does not exist"),
        (dim(3, 0), const(1), "dim refers to scalar `k`, not a tensor"),
        (const(1), tiles(3, 0, 8), "tile_count refers to scalar `k`"),
        (dim(1, 2), const(1), "dim axis 2 out of range for `x` of rank 2"),
        (const(1), tiles(0, 5, 8), "tile_count axis 5 out of range for `z` of rank 2"),
        (tiles(1, 0, 0), const(1), "needs a positive tile, got 0"),
        (tiles(1, 0, -128), const(1), "needs a positive tile, got -128"),
        (grid(3), const(1), "grid axis 3 is not 0, 1 or 2"),
        (pb.Quantity(), const(1), "lhs: no quantity"),
        (const(1), pb.Quantity(), "rhs: no quantity"),
    ],
)
def test_malformed_launch_checks_are_refused(kit, lhs, rhs, message: str) -> None:
    contract = gemm(kit, (const(0), const(0), "fine"), (lhs, rhs, "bad check"))
    with pytest.raises(ContractError, match="launch check 1 \\(bad check\\)") as info:
        validate_contract(contract)
    assert message in str(info.value) and "`gemm`" in str(info.value)


def test_a_check_without_a_side_is_refused(kit) -> None:
    contract = gemm(kit)
    _unset_lhs(contract)
    with pytest.raises(ContractError, match="launch check 0 \\(no lhs\\): lhs: no quantity"):
        validate_contract(contract)


def test_a_kernel_with_a_malformed_check_cannot_be_built(kit) -> None:
    with pytest.raises(ContractError):
        Kernel(CUBIN, gemm(kit, (grid(7), const(1), "bad")))


# ---- evaluation -------------------------------------------------------------------------


def test_passing_checks_of_every_kind_plan_normally(kit) -> None:
    contract = gemm(
        kit,
        (grid(0), tiles(1, 0, 128), CAUSE),  # 4 <= ceil(512 / 128) = 4
        (grid(1), tiles(2, 1, 64), "y columns"),  # 4 <= 4
        (grid(2), const(1), "no third axis"),  # 1 <= 1
        (dim(1, 1), dim(2, 0), "x.k == y.k"),  # 64 <= 64
        (dim(2, 0), dim(1, 1), "y.k == x.k"),
        (const(-5), dim(1, 0), "negative constants are fine"),
    )
    plan = plan_launch(contract, gemm_args())
    assert plan.grid == (4, 4, 1)
    unchecked = plan_launch(gemm(kit), gemm_args())
    assert (plan.grid, plan.param_buffer) == (unchecked.grid, unchecked.param_buffer)


def test_the_failure_message_names_the_kernel_cause_and_both_sides(kit) -> None:
    contract = gemm(kit, (grid(0), tiles(1, 0, 128), CAUSE))
    with pytest.raises(LaunchCheckError) as info:
        plan_launch(contract, gemm_args(m=512, x_rows=300))  # ceil(300 / 128) = 3 < 4 blocks
    assert str(info.value) == (
        "kernel `gemm`: launch check failed: ceil(dim(x, 0) / 128) = 3 must be >= "
        "grid axis 0 = 4 (part_x.load index on axis 0)"
    )
    error = info.value
    assert isinstance(error, LaunchError) and error.kernel == "gemm" and error.param is None
    assert (error.lhs, error.lhs_value, error.rhs, error.rhs_value) == (
        "grid axis 0",
        4,
        "ceil(dim(x, 0) / 128)",
        3,
    )
    assert error.cause == CAUSE


@pytest.mark.parametrize(
    ("lhs", "rhs", "text"),
    [
        (dim(1, 1), dim(2, 0), "dim(y, 0) = 32 must be >= dim(x, 1) = 64"),
        (const(100), dim(1, 1), "dim(x, 1) = 64 must be >= 100"),
        (dim(1, 1), const(63), "63 must be >= dim(x, 1) = 64"),
        (tiles(2, 1, 64), const(3), "3 must be >= ceil(dim(y, 1) / 64) = 4"),
        (grid(1), const(3), "3 must be >= grid axis 1 = 4"),
        (const(2), grid(2), "grid axis 2 = 1 must be >= 2"),
        (const(2), const(1), "1 must be >= 2"),
    ],
)
def test_each_quantity_kind_can_fail(kit, lhs, rhs, text: str) -> None:
    contract = gemm(kit, (lhs, rhs, "why"))
    args = gemm_args()
    args[2] = DeviceTensor(Y, (32, 256))  # y.k = 32 while x.k = 64
    with pytest.raises(LaunchCheckError) as info:
        plan_launch(contract, args)
    assert str(info.value) == f"kernel `gemm`: launch check failed: {text} (why)"


def test_a_check_without_a_cause_has_no_parenthesis(kit) -> None:
    with pytest.raises(LaunchCheckError) as info:
        plan_launch(gemm(kit, (const(1), const(0), "")), gemm_args())
    assert str(info.value) == "kernel `gemm`: launch check failed: 0 must be >= 1"


def test_tile_counts_round_up(kit) -> None:
    contract = gemm(kit, (grid(0), tiles(1, 0, 128), CAUSE))
    assert plan_launch(contract, gemm_args(m=385, x_rows=385)).grid[0] == 4  # both ceil to 4
    with pytest.raises(LaunchCheckError, match="= 3 must be >= grid axis 0 = 4"):
        plan_launch(contract, gemm_args(m=385, x_rows=384))


def test_grid_axes_beyond_the_outputs_rank_are_one(kit) -> None:
    P = kit.P
    contract = kit.build("scale", [P("z", kit.OUT, "f32", [128]), P("x", kit.IN, "f32", [-1])])
    for axis in (1, 2):
        contract.launch_checks.add(lhs=grid(axis), rhs=const(1), cause=f"axis {axis}")
    contract.launch_checks.add(lhs=grid(0), rhs=tiles(1, 0, 128), cause="x tiles")
    z, x = DeviceTensor(Z, 1000).partition([128]), DeviceTensor(X, 1000)
    assert plan_launch(contract, [z, x]).grid == (8, 1, 1)
    contract.launch_checks.add(lhs=const(2), rhs=grid(1), cause="needs two rows")
    with pytest.raises(LaunchCheckError, match="grid axis 1 = 1 must be >= 2 \\(needs two rows"):
        plan_launch(contract, [z, x])


def test_a_clustered_cubin_gets_its_ctas_and_checks_see_tile_blocks(kit) -> None:
    """`num_cta_in_cga = 2`: a tile block is a cluster of 2 CTAs, so one tile block per
    output tile is a grid of twice the tiles on axis 0, in CTAs; launch checks (and the
    kernel's block ids) count tile blocks."""
    contract = gemm(kit, (grid(0), tiles(1, 0, 128), CAUSE))
    contract.launch.cluster_blocks = 2
    assert plan_launch(contract, gemm_args(m=385, x_rows=385)).grid == (8, 4, 1)
    with pytest.raises(LaunchCheckError, match="= 3 must be >= grid axis 0 = 4"):
        plan_launch(contract, gemm_args(m=385, x_rows=384))


def test_the_first_failing_check_is_reported(kit) -> None:
    contract = gemm(kit, (const(0), const(1), "ok"), (const(2), const(1), "first"))
    contract.launch_checks.add(lhs=const(3), rhs=const(1), cause="second")
    with pytest.raises(LaunchCheckError, match=r"\(first\)$"):
        plan_launch(contract, gemm_args())


def test_checks_run_before_packing(kit) -> None:
    """A failed check is reported even where packing would also fail (a dim beyond i32)."""
    contract = gemm(kit, (dim(1, 0), const(10), "x rows"))
    big = gemm_args(x_rows=1 << 31)
    with pytest.raises(LaunchCheckError, match="10 must be >= dim\\(x, 0\\) = 2147483648"):
        plan_launch(contract, big)
    with pytest.raises(SlotValueError):  # without the check, packing refuses it
        plan_launch(gemm(kit), big)


def test_persistent_grid_is_num_tile_blocks_one_one(kit) -> None:
    contract = kit.copy_persistent()  # z: tiles 64 x 64, map [4, 1]; x: [-1, -1]
    contract.launch_checks.add(lhs=grid(0), rhs=tiles(1, 0, 64), cause="x row tiles")
    contract.launch_checks.add(lhs=grid(1), rhs=const(1), cause="one row of blocks")
    contract.launch_checks.add(lhs=grid(2), rhs=const(1), cause="one layer of blocks")
    z = DeviceTensor(Z, (1000, 300)).partition([64, 64])  # 16 x 5 = 80 tiles
    x = DeviceTensor(X, (1000, 300))
    plan = plan_launch(contract, [z.map([4, 1], 16), x])
    assert plan.grid == (16, 1, 1)
    z = plan.results[0].unmap()
    with pytest.raises(LaunchCheckError) as info:
        plan_launch(contract, [z.map([4, 1], 17), x])  # 17 blocks, ceil(1000 / 64) = 16
    assert str(info.value) == (
        "kernel `copy_persistent`: launch check failed: ceil(dim(x, 0) / 64) = 16 must be >= "
        "grid axis 0 = 17 (x row tiles)"
    )


# ---- the launcher and its memoized plans ------------------------------------------------


def test_launch_check_error_is_exported() -> None:
    assert "LaunchCheckError" in client_stubs.__all__
    assert client_stubs.LaunchCheckError is LaunchCheckError
    assert issubclass(LaunchCheckError, LaunchError)


def test_a_failed_check_reaches_nothing(kit, fake_driver) -> None:
    kernel = Kernel(CUBIN, gemm(kit, (grid(0), tiles(1, 0, 128), CAUSE)))
    with pytest.raises(LaunchCheckError):
        kernel(*gemm_args(x_rows=300))
    assert fake_driver.calls == []
    kernel(*gemm_args())
    assert fake_driver.names().count("launch") == 1
    launch = next(a for name, a in fake_driver.calls if name == "launch")
    assert launch[1] == (4, 4, 1)


def _count_plans(monkeypatch) -> list[int]:
    from client_stubs import launcher

    calls: list[int] = []
    real = launcher.plan_launch
    monkeypatch.setattr(launcher, "plan_launch", lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


def test_a_memoized_plan_is_reused_only_for_the_same_shapes(kit, fake_driver, monkeypatch):
    calls = _count_plans(monkeypatch)
    kernel = Kernel(CUBIN, gemm(kit, (grid(0), tiles(1, 0, 128), CAUSE)))
    good = gemm_args()
    kernel(*good)
    kernel(*good)
    assert len(calls) == 1 and fake_driver.names().count("launch") == 2
    # The same output and scalars with a shorter x: new layout, so the checks run again.
    bad = [good[0], DeviceTensor(X, (300, 64)), good[2], good[3]]
    with pytest.raises(LaunchCheckError, match="= 3 must be >= grid axis 0 = 4"):
        kernel(*bad)
    assert len(calls) == 2 and fake_driver.names().count("launch") == 2
    # A failed plan is never memoized: each retry re-evaluates and fails again.
    with pytest.raises(LaunchCheckError):
        kernel(*bad)
    with pytest.raises(LaunchCheckError):
        kernel.plan(*bad)
    assert len(calls) == 4 and fake_driver.names().count("launch") == 2
    # The good arguments still launch (re-planned: the memo holds the last successful plan
    # only for the arguments it was made for).
    kernel(*good)
    assert fake_driver.names().count("launch") == 3


def test_a_memoized_plan_is_not_reused_for_a_larger_grid(kit, fake_driver, monkeypatch):
    calls = _count_plans(monkeypatch)
    contract = gemm(kit, (grid(0), tiles(1, 0, 128), CAUSE))
    kernel = Kernel(CUBIN, contract)
    x, y = DeviceTensor(X, (512, 64)), DeviceTensor(Y, (64, 256))
    z = DeviceTensor(Z, (512, 256))
    kernel(z.partition([128, 64]), x, y, 64)
    bigger = DeviceTensor(Z, (640, 256)).partition([128, 64])  # grid axis 0 = 5 > 4 tiles of x
    with pytest.raises(LaunchCheckError, match="grid axis 0 = 5"):
        kernel(bigger, x, y, 64)
    assert len(calls) == 2 and fake_driver.names().count("launch") == 1


def test_a_memoized_persistent_plan_rechecks_a_new_num_tile_blocks(kit, fake_driver, monkeypatch):
    calls = _count_plans(monkeypatch)
    contract = kit.copy_persistent()
    contract.launch_checks.add(lhs=grid(0), rhs=const(16), cause="at most 16 blocks")
    kernel = Kernel(CUBIN, contract)
    x = DeviceTensor(X, (1000, 300))
    mapped = DeviceTensor(Z, (1000, 300)).partition([64, 64]).map([4, 1], 16)
    kernel(mapped, x)
    kernel(mapped, x)
    assert len(calls) == 1 and fake_driver.names().count("launch") == 2
    remapped = mapped.unmap().map([4, 1], 17)  # same tensor and tiles, one more block
    with pytest.raises(LaunchCheckError, match="16 must be >= grid axis 0 = 17"):
        kernel(remapped, x)
    assert len(calls) == 2 and fake_driver.names().count("launch") == 2
